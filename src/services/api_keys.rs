//! A shop's API keys: made, restricted, rolled with an overlap, revoked; their last use noted
//! off the request's path; their owners told 7 days before a key stops. A key's secret is
//! shown once, in the answer that made it, and kept as a digest (the standard key's also
//! sealed, for the Basic auth of the shop's notifications).

use chrono::{DateTime, Utc};
use sea_orm::DbErr;

use crate::db::api_keys::{self as key_db, Limits, NewKey, Successor};
pub use crate::db::api_keys::{Refused, is_standard};
use crate::db::entities::api_keys::Model;
use crate::db::events::NewEvent;
use crate::domain::api_key::{KeyFields, WARN_BEFORE, networks_to_stored};
use crate::domain::audit::{Actor, Change, Entry, Origin};
use crate::domain::event::EventType;
use crate::web::error::AppError;
use crate::web::state::AppState;

/// A key just made, with its secret (shown this once).
pub struct Made {
    pub key: Model,
    pub secret: String,
}

/// Makes a key of `fields` for the shop, recorded as `audit`.
pub async fn create(
    state: &AppState,
    shop_id: i64,
    fields: KeyFields,
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<Made, AppError> {
    let (secret, stored) = super::keys::new_secret(&state.vault);
    let key = NewKey {
        shop_id,
        name: fields.name.as_deref().unwrap_or_default(),
        digest: &stored.digest,
        prefix: &stored.prefix,
        created_by: &made_by(audit),
        expires_at: fields.expires_at,
        permissions: fields.permissions.and_then(|p| p.to_stored()),
        networks: fields.networks.as_deref().and_then(networks_to_stored),
    };
    let key = key_db::create(&state.db, key, audit, now).await?;
    Ok(Made { key, secret })
}

/// Sets what `fields` holds of the key's name, permissions and networks.
pub async fn update(
    state: &AppState,
    (shop_id, id): (i64, &str),
    fields: KeyFields,
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<Result<Model, Refused>, DbErr> {
    let limits = Limits {
        name: fields.name,
        permissions: fields.permissions.map(|p| p.to_stored()),
        networks: fields.networks.map(|n| networks_to_stored(&n)),
    };
    key_db::restrict(&state.db, (shop_id, id), limits, audit, now).await
}

/// Rolls the key: its successor (returned with its secret) works at once; the key goes on
/// until `until`. Rolling the standard key moves the shop's notifications to the successor
/// when the old key stops, so every instance forgets the shop then (see [`tend`]).
pub async fn roll(
    state: &AppState,
    (shop_id, id): (i64, &str),
    until: DateTime<Utc>,
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<Result<(Model, Made), Refused>, DbErr> {
    let (secret, stored) = super::keys::new_secret(&state.vault);
    let by = made_by(audit);
    let successor =
        Successor { digest: &stored.digest, prefix: &stored.prefix, sealed: &stored.sealed, created_by: &by };
    let rolled = key_db::roll(&state.db, (shop_id, id), successor, until, audit, now);
    let rolled = super::shops::changing(state, shop_id, rolled).await?;
    Ok(rolled.map(|(old, key)| (old, Made { key, secret })))
}

/// Revokes the key: it stops at once (the standard key is refused unless it was rolled).
pub async fn revoke(
    state: &AppState,
    (shop_id, id): (i64, &str),
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<Result<Model, Refused>, DbErr> {
    let revoked = key_db::revoke(&state.db, (shop_id, id), audit, now);
    super::shops::changing(state, shop_id, revoked).await
}

/// Notes a request's use of `key` from `address`, at most once a minute per key, in a task of
/// its own: the request does not wait for it, and a failure only loses the note.
pub fn note_use(state: &AppState, key: &Model, address: Option<std::net::IpAddr>, now: DateTime<Utc>) {
    if !key_db::use_due(key, now) || !state.key_uses.due(&key.id, now) {
        return;
    }
    let (db, id) = (state.db.clone(), key.id.clone());
    tokio::spawn(crate::db::audit::acting::unattributed(async move {
        if let Err(e) = key_db::used(&db, &id, now, address.map(|a| a.to_string())).await {
            tracing::warn!(error = %e, key = %id, "noting an API key's use failed");
        }
    }));
}

/// The scheduler's rounds: makes the successor of every standard key whose overlap ended the
/// shop's standard key, and tells the owners of each key that stops within 7 days (an
/// `api_key.expiring` event and a mail), once per key. A shop's failure is logged and the
/// round goes on with the others.
pub async fn tend(state: &AppState, now: DateTime<Utc>) -> Result<(), DbErr> {
    for shop_id in key_db::waiting_successors(&state.db).await? {
        if let Err(e) = promote(state, shop_id, now).await {
            tracing::error!(error = %e, shop_id, "making a rolled standard key's successor the standard key failed");
        }
    }
    for key in key_db::expiring(&state.db, now, WARN_BEFORE).await? {
        if let Err(e) = warn(state, &key, now).await {
            tracing::error!(error = %e, key = %key.id, "telling the owners of an expiring API key failed");
        }
    }
    Ok(())
}

/// Makes the shop's waiting successor its standard key if its predecessor stopped (read
/// first: a write transaction only when there is something to do).
async fn promote(state: &AppState, shop_id: i64, now: DateTime<Utc>) -> Result<(), DbErr> {
    let Some(shop) = crate::db::shops::find(&state.db, shop_id).await? else { return Ok(()) };
    if key_db::by_digest(&state.db, &shop.secret_digest).await?.is_some_and(|k| key_db::usable(&k, now)) {
        return Ok(());
    }
    let promote = async {
        let txn = crate::db::begin(&state.db).await?;
        let promoted = key_db::promote(&txn, shop_id, now).await?;
        txn.commit().await?;
        Ok::<bool, DbErr>(promoted)
    };
    if super::shops::changing(state, shop_id, promote).await? {
        tracing::info!(shop_id, "a rolled standard key stopped: its successor now signs notifications");
    }
    Ok(())
}

/// Tells the owners of the shop of `key` that it stops soon, unless someone did.
async fn warn(state: &AppState, key: &Model, now: DateTime<Utc>) -> Result<(), DbErr> {
    let shop = crate::db::shops::find(&state.db, key.shop_id).await?;
    let standard = shop.is_some_and(|s| is_standard(key, &s.secret_digest));
    let txn = crate::db::begin(&state.db).await?;
    if key_db::warned(&txn, &key.id, now).await? {
        let view = crate::web::views::api_key::ApiKeyView::new(key, standard, now, None);
        let event = NewEvent {
            shop_id: key.shop_id,
            kind: EventType::ApiKeyExpiring,
            object_id: key.id.clone(),
            test: false,
            data: serde_json::to_value(&view).unwrap_or_default(),
            child: None,
        };
        crate::db::events::append(&txn, &[event]).await?;
        let ends = Change::of("expires_at", None::<String>, key.expires_at.map(Change::moment));
        let entry = Entry::new(key.shop_id, Actor::system(), Origin::default(), "api_key.expiring")
            .on("api_key", &key.id)
            .changing(vec![ends]);
        crate::db::audit::record(&txn, &entry, now).await?;
    }
    txn.commit().await
}

/// Who made a key, as its row keeps it: the actor of `audit`.
fn made_by(audit: &Entry) -> String {
    audit.actor.label.clone().or_else(|| audit.actor.id.clone()).unwrap_or_else(|| "paydesk".into())
}

/// A refused change of a key as the API answers it.
pub fn refusal(refused: Refused) -> AppError {
    match refused {
        Refused::Gone => AppError::Conflict("This API key no longer works (it was revoked or it expired)".into()),
        Refused::Rolled(to) => AppError::Conflict(format!("This API key was rolled already, to {to}")),
        Refused::Standard => AppError::Conflict(
            "This is the shop's standard key, which its notifications carry: it cannot be restricted or \
             revoked, only rolled"
                .into(),
        ),
    }
}
