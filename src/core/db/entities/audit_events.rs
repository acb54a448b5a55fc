use sea_orm::entity::prelude::*;

use crate::domain::audit::{ActorKind, Outcome};

/// One action of a shop's audit trail (see `domain::audit`): never updated, deleted only
/// when older than the retention.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "audit_events")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub shop_id: i64,
    /// The record's place in its shop's chain, from 1.
    pub seq: i64,
    pub at: DateTimeUtc,
    pub actor_kind: ActorKind,
    pub actor_id: Option<String>,
    pub actor_label: Option<String>,
    pub actor_role: Option<String>,
    pub address: Option<String>,
    #[sea_orm(column_type = "Text", nullable)]
    pub user_agent: Option<String>,
    pub request_id: Option<String>,
    pub action: String,
    pub object_type: Option<String>,
    pub object_id: Option<String>,
    /// The fields changed, as a JSON array of `{field, before, after}`.
    #[sea_orm(column_type = "Text")]
    pub changes: String,
    pub outcome: Outcome,
    pub prev_hash: String,
    pub hash: String,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
