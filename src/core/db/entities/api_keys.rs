use sea_orm::entity::prelude::*;

/// A shop's API key (see `db::api_keys`).
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "api_keys")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub seq: i64,
    #[sea_orm(unique)]
    pub id: String,
    pub shop_id: i64,
    #[sea_orm(column_type = "Text")]
    pub name: String,
    /// The start of the secret, to tell keys apart; none for a key made before it was kept.
    pub prefix: Option<String>,
    /// SHA-256 of the secret, in hex: what a request's key is found by.
    #[sea_orm(unique)]
    pub digest: String,
    /// Who made it, as the audit trail names them.
    #[sea_orm(column_type = "Text")]
    pub created_by: String,
    pub created_at: DateTimeUtc,
    pub expires_at: Option<DateTimeUtc>,
    pub revoked_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
