use sea_orm::entity::prelude::*;

use crate::domain::card::Behaviour;

/// One entry of a test subscription's card schedule: from `effective_from` on, the card
/// behaves as `outcome` (until a later entry).
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "test_card_outcomes")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub seq: i64,
    pub subscription_id: String,
    pub effective_from: DateTimeUtc,
    pub outcome: Behaviour,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
