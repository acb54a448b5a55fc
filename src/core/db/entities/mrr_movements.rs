use sea_orm::entity::prelude::*;

use crate::domain::currency::Currency;
use crate::domain::mrr::Kind;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "mrr_movements")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub seq: i64,
    pub shop_id: i64,
    pub test: bool,
    pub currency: Currency,
    pub customer_id: String,
    pub subscription_id: String,
    /// The `subscription.*` event that made it: unique.
    #[sea_orm(unique)]
    pub event_id: String,
    pub kind: Kind,
    /// The change of the customer's MRR, paused MRR, and count as a subscriber (-1, 0, 1).
    pub mrr: i64,
    pub paused: i64,
    pub subscribers: i64,
    /// The subscription's MRR and paused MRR after it.
    pub mrr_after: i64,
    pub paused_after: i64,
    /// The subscription's own time: its test clock's, if it has one.
    pub occurred_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
