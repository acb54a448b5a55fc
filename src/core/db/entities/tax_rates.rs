use sea_orm::entity::prelude::*;

use crate::domain::tax::TaxCategory;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "tax_rates")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub seq: i64,
    #[sea_orm(unique)]
    pub id: String,
    pub shop_id: i64,
    #[sea_orm(column_type = "Text")]
    pub name: String,
    /// In ten-thousandths of a percent (19 % is 190,000).
    pub percentage: i64,
    pub category: TaxCategory,
    pub country: Option<String>,
    #[sea_orm(column_type = "Text", nullable)]
    pub exemption_reason: Option<String>,
    pub archived_at: Option<DateTimeUtc>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
