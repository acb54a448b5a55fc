use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "customers")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub seq: i64,
    #[sea_orm(unique)]
    pub id: String,
    pub shop_id: i64,
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub address: Option<String>,
    pub city: Option<String>,
    pub country: Option<String>,
    pub zip: Option<String>,
    pub state: Option<String>,
    pub phone: Option<String>,
    /// The company the customer buys for, named on their invoices.
    #[sea_orm(column_type = "Text", nullable)]
    pub company: Option<String>,
    /// Their VAT id, normalised (vat_id.rs): with their country, it decides a reverse charge.
    pub vat_id: Option<String>,
    pub email: String,
    pub ip: String,
    pub external_id: Option<String>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
