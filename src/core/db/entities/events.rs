use sea_orm::entity::prelude::*;

use crate::domain::event::EventType;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "events")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub seq: i64,
    #[sea_orm(unique)]
    pub id: String,
    pub shop_id: i64,
    #[sea_orm(column_name = "type")]
    pub kind: EventType,
    pub object_id: String,
    pub test: bool,
    /// The object as the API showed it at that moment (JSON).
    pub data: String,
    /// For a capture, void or refund of a payment: the child transaction it reports, as JSON
    /// (`{"uid", "amount"}`), for bePaid-style notifications.
    pub child_transaction: Option<String>,
    /// Whether its deliveries were queued (by a worker, soon after it was recorded).
    pub fanned_out: bool,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
