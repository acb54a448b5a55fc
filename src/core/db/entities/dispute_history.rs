use sea_orm::entity::prelude::*;

use crate::domain::dispute::{DisputeStage, DisputeStatus, DisputeStep};

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "dispute_history")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub seq: i64,
    pub dispute_id: String,
    pub at: DateTimeUtc,
    /// Where the dispute stood after this step.
    pub stage: DisputeStage,
    pub status: DisputeStatus,
    pub step: DisputeStep,
    /// The money a funds step moved.
    pub amount: Option<i64>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
