use sea_orm::entity::prelude::*;

use crate::domain::currency::Currency;
use crate::domain::tax::TaxBehavior;
use crate::domain::vocab::{Language, TransactionType};

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "products")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub seq: i64,
    #[sea_orm(unique)]
    pub id: String,
    pub shop_id: i64,
    pub name: String,
    #[sea_orm(column_type = "Text")]
    pub description: String,
    pub currency: Currency,
    pub amount: i64,
    pub quantity: Option<i64>,
    pub infinite: bool,
    pub visible_fields: String,
    pub test: bool,
    pub immortal: bool,
    pub expired_at: Option<DateTimeUtc>,
    #[sea_orm(column_type = "Text", nullable)]
    pub return_url: Option<String>,
    #[sea_orm(column_type = "Text", nullable)]
    pub notification_url: Option<String>,
    pub language: Language,
    pub transaction_type: TransactionType,
    /// The shop's rate its sales are taxed at; none for untaxed sales.
    pub tax_rate_id: Option<String>,
    pub tax_behavior: TaxBehavior,
    /// When the merchant archived it: its link then takes no payments.
    pub archived_at: Option<DateTimeUtc>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
