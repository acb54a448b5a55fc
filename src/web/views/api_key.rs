//! The API key object.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use super::timestamp;
use crate::db::entities::api_keys;
use crate::domain::api_key::Permissions;

/// An API key as the API returns it; its `secret` only in the answer that made it.
#[derive(Serialize, ToSchema)]
#[schema(as = ApiKey)]
pub struct ApiKeyView {
    id: String,
    /// `api_key`.
    #[schema(example = "api_key")]
    object: &'static str,
    name: String,
    /// The start of the secret, to tell keys apart (`sk_ab12`); none for a key made before
    /// paydesk kept it.
    #[schema(example = "sk_ab12")]
    prefix: Option<String>,
    /// The secret (`sk_…`): in the answer that made the key only, never again.
    #[serde(skip_serializing_if = "Option::is_none")]
    secret: Option<String>,
    /// Whether it is the shop's standard key: the one its notifications carry (Basic auth).
    /// It is never restricted and cannot be revoked, only rolled.
    standard: bool,
    /// `active`, `expired` or `revoked`.
    #[schema(example = "active")]
    status: &'static str,
    /// Access per resource (`none`, `read` or `write`) of a restricted key, a resource left
    /// out being `none`; `null` for a key without restrictions.
    #[schema(value_type = Option<Object>, example = json!({"payments": "read", "refunds": "write"}))]
    permissions: Option<BTreeMap<&'static str, &'static str>>,
    /// The networks (CIDR) it may be used from; `null` for anywhere.
    #[schema(example = json!(["203.0.113.0/24"]))]
    networks: Option<Vec<String>>,
    /// When it stops working (its expiry, or the end of a roll's overlap).
    #[schema(format = DateTime, example = "2026-12-14T10:15:30.123Z")]
    expires_at: Option<String>,
    #[schema(format = DateTime)]
    revoked_at: Option<String>,
    /// The key that succeeded it, once rolled.
    rolled_to: Option<String>,
    /// Its last use (written at most once a minute) and the address it came from.
    #[schema(format = DateTime)]
    last_used_at: Option<String>,
    last_used_from: Option<String>,
    /// Who made it: a user's e-mail address, a key's name, `paydesk`.
    created_by: String,
    shop_id: i64,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    created_at: String,
}

impl ApiKeyView {
    /// The key as it is at `now`; `standard` when it is the shop's standard key.
    pub fn new(k: &api_keys::Model, standard: bool, now: DateTime<Utc>, secret: Option<String>) -> Self {
        let status = crate::db::api_keys::status(k, now);
        let permissions = Permissions::from_stored(k.permissions.as_deref())
            .0
            .map(|given| given.into_iter().map(|(r, a)| (r.as_str(), a.as_str())).collect());
        ApiKeyView {
            id: k.id.clone(),
            object: "api_key",
            name: k.name.clone(),
            prefix: k.prefix.clone(),
            secret,
            standard,
            status,
            permissions,
            networks: k.networks.as_ref().map(|n| n.split_whitespace().map(str::to_string).collect()),
            expires_at: k.expires_at.map(timestamp),
            revoked_at: k.revoked_at.map(timestamp),
            rolled_to: k.rolled_to.clone(),
            last_used_at: k.last_used_at.map(timestamp),
            last_used_from: k.last_used_from.clone(),
            created_by: k.created_by.clone(),
            shop_id: k.shop_id,
            created_at: timestamp(k.created_at),
        }
    }
}
