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
    /// A restricted key's access per resource, as JSON (`{"payments": "read"}`); none for a
    /// key without restrictions.
    #[sea_orm(column_type = "Text", nullable)]
    pub permissions: Option<String>,
    /// The networks it may be used from, CIDR, space-separated; none for anywhere.
    #[sea_orm(column_type = "Text", nullable)]
    pub networks: Option<String>,
    /// The key that succeeded it when it was rolled.
    #[sea_orm(column_type = "Text", nullable)]
    pub rolled_to: Option<String>,
    /// The sealed secret of the successor of the shop's standard key, until it becomes the key
    /// the shop's notifications carry.
    #[sea_orm(column_type = "Text", nullable)]
    pub sealed: Option<String>,
    pub last_used_at: Option<DateTimeUtc>,
    #[sea_orm(column_type = "Text", nullable)]
    pub last_used_from: Option<String>,
    /// When its owners were told it expires.
    pub warned_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
