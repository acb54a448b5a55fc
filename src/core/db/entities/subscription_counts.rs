use sea_orm::entity::prelude::*;

use crate::domain::billing::State;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "subscription_counts")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub seq: i64,
    pub shop_id: i64,
    pub state: State,
    /// Subscriptions of the shop in this state.
    pub subscriptions: i64,
    /// A change not yet folded into its key's sum (`db::summaries::compact`).
    pub fresh: bool,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
