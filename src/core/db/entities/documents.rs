use sea_orm::entity::prelude::*;

use crate::domain::currency::Currency;
use crate::domain::invoice::{DocumentKind, DocumentLanguage};

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "documents")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub seq: i64,
    #[sea_orm(unique)]
    pub id: String,
    pub shop_id: i64,
    pub kind: DocumentKind,
    pub test: bool,
    pub number: i64,
    /// The number as printed: the series' prefix at issue, and the number.
    pub number_text: String,
    /// What it was issued for (`payment:pay_…`, `refund:rfd_…`, `dispute:dsp_…`): unique.
    #[sea_orm(unique)]
    pub source: String,
    pub payment_id: Option<String>,
    /// A credit note's invoice.
    pub invoice_id: Option<String>,
    pub customer_id: Option<String>,
    pub subscription_id: Option<String>,
    pub currency: Currency,
    pub net_total: i64,
    pub tax_total: i64,
    pub gross_total: i64,
    pub language: DocumentLanguage,
    pub issued_at: DateTimeUtc,
    /// `domain::invoice::Content` as JSON, as issued.
    #[sea_orm(column_type = "Text")]
    pub content: String,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
