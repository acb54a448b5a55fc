use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "webhook_endpoints")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub seq: i64,
    #[sea_orm(unique)]
    pub id: String,
    pub shop_id: i64,
    #[sea_orm(column_type = "Text")]
    pub url: String,
    #[sea_orm(column_type = "Text", nullable)]
    pub description: Option<String>,
    /// The event types it receives, space-separated; `*` for every type.
    #[sea_orm(column_type = "Text")]
    pub enabled_events: String,
    pub enabled: bool,
    /// The `whsec_` signing secret, sealed.
    #[sea_orm(column_type = "Text")]
    pub secret_sealed: String,
    /// The secret before the last rotation, still signing until `previous_secret_until`.
    #[sea_orm(column_type = "Text", nullable)]
    pub previous_secret_sealed: Option<String>,
    pub previous_secret_until: Option<DateTimeUtc>,
    /// Since when every delivery has failed (none while deliveries succeed).
    pub failing_since: Option<DateTimeUtc>,
    #[sea_orm(column_type = "Text", nullable)]
    pub disabled_reason: Option<String>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
