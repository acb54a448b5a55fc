use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "idempotency_keys")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub seq: i64,
    pub shop_id: i64,
    pub key: String,
    pub request: String,
    pub fingerprint: String,
    pub status: Option<i32>,
    #[sea_orm(column_type = "Text", nullable)]
    pub body: Option<String>,
    pub locked_until: DateTimeUtc,
    pub created_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
