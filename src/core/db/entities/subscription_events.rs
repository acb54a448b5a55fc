use sea_orm::entity::prelude::*;

use crate::domain::billing::State;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "subscription_events")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub seq: i64,
    #[sea_orm(unique)]
    pub id: String,
    pub shop_id: i64,
    pub subscription_id: String,
    pub from_state: Option<State>,
    pub to_state: State,
    pub payment_id: Option<String>,
    pub reason: Option<String>,
    pub renew_at: Option<DateTimeUtc>,
    pub occurred_at: DateTimeUtc,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
