use sea_orm::entity::prelude::*;

use crate::domain::vocab::ClockStatus;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "test_clocks")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub seq: i64,
    #[sea_orm(unique)]
    pub id: String,
    pub shop_id: i64,
    pub name: Option<String>,
    pub frozen_time: DateTimeUtc,
    pub status: ClockStatus,
    pub advance_to: Option<DateTimeUtc>,
    pub lease_token: Option<String>,
    pub lease_until: Option<DateTimeUtc>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
