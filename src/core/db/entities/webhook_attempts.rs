use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "webhook_attempts")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub seq: i64,
    pub delivery_id: String,
    pub shop_id: i64,
    pub at: DateTimeUtc,
    /// The receiver's HTTP status; none when no answer came (refused, timed out).
    pub status_code: Option<i32>,
    pub latency_ms: i64,
    /// The first bytes of the answer's body.
    #[sea_orm(column_type = "Text", nullable)]
    pub response_head: Option<String>,
    #[sea_orm(column_type = "Text", nullable)]
    pub error: Option<String>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
