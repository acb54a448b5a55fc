use sea_orm::entity::prelude::*;

use crate::domain::currency::Currency;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "payment_totals")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub seq: i64,
    pub shop_id: i64,
    /// The quarter hour's start, in seconds since the epoch.
    pub bucket: i64,
    pub currency: Currency,
    pub test: bool,
    /// Money taken, net of refunds.
    pub net: i64,
    /// Payments that took it.
    pub payments: i64,
    /// A change not yet folded into its key's sum (`db::summaries::compact`).
    pub fresh: bool,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
