use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "shop_sellers")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub shop_id: i64,
    #[sea_orm(column_type = "Text", nullable)]
    pub legal_name: Option<String>,
    #[sea_orm(column_type = "Text", nullable)]
    pub address_line1: Option<String>,
    #[sea_orm(column_type = "Text", nullable)]
    pub address_line2: Option<String>,
    #[sea_orm(column_type = "Text", nullable)]
    pub city: Option<String>,
    #[sea_orm(column_type = "Text", nullable)]
    pub postal_code: Option<String>,
    #[sea_orm(column_type = "Text", nullable)]
    pub country: Option<String>,
    #[sea_orm(column_type = "Text", nullable)]
    pub vat_id: Option<String>,
    #[sea_orm(column_type = "Text", nullable)]
    pub registration_number: Option<String>,
    #[sea_orm(column_type = "Text", nullable)]
    pub invoice_footer: Option<String>,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
