use sea_orm::entity::prelude::*;

use crate::domain::currency::Currency;
use crate::domain::vocab::RefundStatus;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "refunds")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub seq: i64,
    #[sea_orm(unique)]
    pub id: String,
    pub shop_id: i64,
    pub payment_id: String,
    pub amount: i64,
    pub currency: Currency,
    pub reason: Option<String>,
    pub status: RefundStatus,
    pub test: bool,
    pub acquirer_reference: Option<String>,
    pub failure_code: Option<String>,
    pub failure_message: Option<String>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
