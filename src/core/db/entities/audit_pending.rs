use sea_orm::entity::prelude::*;

use crate::domain::audit::{ActorKind, Outcome};

/// An audit record written with its change and not yet in its shop's chain: the sealer
/// numbers and chains it into `audit_events` and deletes it here (see `db::audit::seal`).
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "audit_pending")]
pub struct Model {
    /// The order the records were written in, which their chain follows.
    #[sea_orm(primary_key)]
    pub n: i64,
    pub id: String,
    pub shop_id: i64,
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
    #[sea_orm(column_type = "Text")]
    pub changes: String,
    pub outcome: Outcome,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
