use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "processor_events")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub shop_id: i64,
    /// The processor's id of the event (Stripe's `evt_…`).
    #[sea_orm(primary_key, auto_increment = false)]
    pub event_id: String,
    /// Until when the delivery that claimed it is acting on it.
    pub claimed_until: DateTimeUtc,
    /// When it was acted on; a later delivery of it changes nothing.
    pub done_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
