use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "mail_attempts")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub seq: i64,
    pub mail_id: String,
    pub shop_id: i64,
    pub at: DateTimeUtc,
    /// The SMTP server's reply code, when it answered.
    pub code: Option<i32>,
    pub latency_ms: i64,
    #[sea_orm(column_type = "Text", nullable)]
    pub error: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
