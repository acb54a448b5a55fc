use sea_orm::entity::prelude::*;

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
    pub currency: String,
    pub amount: i64,
    pub quantity: Option<i64>,
    pub infinite: bool,
    pub visible_fields: String,
    pub test: bool,
    pub immortal: bool,
    pub expired_at: Option<DateTimeUtc>,
    #[sea_orm(column_type = "Text", nullable)]
    pub return_url: Option<String>,
    pub language: String,
    pub transaction_type: String,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
