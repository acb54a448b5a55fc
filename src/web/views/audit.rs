//! A record of the audit trail as the API shows it.

use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::timestamp;
use crate::domain::audit::{ActorKind, Outcome, Record};

/// One action of the shop's audit trail: who did what to which object, from where, with
/// what outcome. Records are never changed; each carries the hash of the one before it.
#[derive(Serialize, ToSchema)]
#[schema(as = AuditEvent)]
pub struct AuditEventView {
    id: String,
    /// Always `audit_event`.
    #[schema(example = "audit_event")]
    object: &'static str,
    /// The record's place in the shop's trail, from 1.
    sequence: i64,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    created_at: String,
    actor: AuditActor,
    /// `object.verb`: `user.logged_in`, `api_key.rotated`, `webhook_endpoint.updated`…
    #[schema(example = "webhook_endpoint.updated")]
    action: String,
    /// The kind of object acted on (`user`, `shop`, `webhook_endpoint`, `processor`, `route`…).
    target_type: Option<String>,
    target_id: Option<String>,
    /// The fields changed: a secret's values are never shown, only `(secret)`.
    changes: Vec<AuditChange>,
    outcome: Outcome,
    /// The client's address, `User-Agent` and request id, where there was a request.
    ip_address: Option<String>,
    user_agent: Option<String>,
    request_id: Option<String>,
    /// SHA-256 of the previous record's hash and this record (hex).
    hash: String,
    previous_hash: String,
    shop_id: i64,
}

/// Who acted.
#[derive(Serialize, ToSchema)]
struct AuditActor {
    #[serde(rename = "type")]
    kind: ActorKind,
    /// The user's id (`usr_…`), a subscriber's customer id; `null` for the API key and the operator.
    id: Option<String>,
    /// The user's e-mail address, the processor's name.
    name: Option<String>,
    /// A user's role when they acted.
    role: Option<String>,
}

/// One field changed.
#[derive(Serialize, ToSchema)]
struct AuditChange {
    field: String,
    /// The value before (any JSON; `null` when there was none).
    before: Value,
    /// The value after.
    after: Value,
}

impl From<&Record> for AuditEventView {
    fn from(r: &Record) -> Self {
        let e = &r.entry;
        AuditEventView {
            id: r.id.clone(),
            object: "audit_event",
            sequence: r.seq,
            created_at: timestamp(r.at),
            actor: AuditActor {
                kind: e.actor.kind,
                id: e.actor.id.clone(),
                name: e.actor.label.clone(),
                role: e.actor.role.map(|role| role.as_str().to_string()),
            },
            action: e.action.clone(),
            target_type: e.object.as_ref().map(|o| o.0.clone()),
            target_id: e.object.as_ref().map(|o| o.1.clone()),
            changes: e
                .changes
                .iter()
                .map(|c| AuditChange { field: c.field.clone(), before: c.before.clone(), after: c.after.clone() })
                .collect(),
            outcome: e.outcome,
            ip_address: e.origin.address.clone(),
            user_agent: e.origin.user_agent.clone(),
            request_id: e.origin.request_id.clone(),
            hash: r.hash.clone(),
            previous_hash: r.prev_hash.clone(),
            shop_id: e.shop_id,
        }
    }
}
