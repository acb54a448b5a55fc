//! The shops that requests name, kept in memory: every API request names one, every pay page
//! and dashboard page shows one, and asking the database each time cost a query per request.
//! An API request's key is not kept: it is read by its digest at each request (one lookup of
//! a unique index), so a revoked or expired key is refused everywhere at once.
//!
//! This instance forgets a shop as it writes it (also when the request is cancelled
//! mid-write); on PostgreSQL a trigger on `shops` notifies every instance (`LISTEN
//! paydesk_shops`) at the commit, and each forgets the shop as the notification arrives
//! (milliseconds) and confirms with a notification of its own (`ack:<instance>:<shop>`); a
//! key rotation or other change of a shop answers once every instance heard alive lately
//! confirmed, so the old key is refused everywhere when the new one is shown. An instance
//! checks its listening connection with a heartbeat notification (`ping:<instance>`, which
//! also tells the others it is alive) every few seconds; while it is not listening (starting,
//! reconnecting, or the heartbeat went unanswered) it caches nothing.
//! Whatever happens, a kept shop is read afresh after a minute.

use crate::domain::audit::Entry;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use sea_orm::sqlx::postgres::PgListener;
use sea_orm::{ConnectionTrait, DbErr};
use subtle::ConstantTimeEq;

use crate::db::entities::api_keys::Model as ApiKey;
use crate::db::entities::shops::Model;
use crate::db::shops as shop_db;
use crate::domain::account::ShopSettings;
use crate::web::state::AppState;

/// The channel of the trigger on `shops` (migration m20261124_000012).
pub const CHANNEL: &str = "paydesk_shops";

/// How often an instance checks that its listening connection still hears.
const HEARTBEAT: Duration = Duration::from_secs(5);

/// The shop with this id.
pub async fn find(state: &AppState, shop_id: i64) -> Result<Option<Arc<Model>>, DbErr> {
    if let Some(shop) = state.shops.cached(shop_id) {
        return Ok(Some(shop));
    }
    let before = state.shops.forgettings();
    let Some(shop) = shop_db::find(&state.db, shop_id).await?.map(Arc::new) else {
        return Ok(None);
    };
    state.shops.keep(&shop, before);
    Ok(Some(shop))
}

/// The zone a shop's times are shown in: its own setting, else the instance's.
pub fn zone(state: &AppState, shop: &Model) -> chrono_tz::Tz {
    shop.timezone.as_deref().and_then(|z| z.parse().ok()).unwrap_or(state.config.timezone)
}

/// The shop, if `secret_key` is one of its keys that works now: the key is found by its
/// digest (one lookup of a unique index, whatever the number of keys), the digests compared
/// in constant time. A revoked or expired key is refused at once on every instance, since
/// keys are not kept in memory.
pub async fn authenticate(
    state: &AppState,
    shop_id: i64,
    secret_key: &str,
    now: DateTime<Utc>,
) -> Result<Option<(Arc<Model>, ApiKey)>, DbErr> {
    let given = shop_db::digest(secret_key);
    let key = crate::db::api_keys::by_digest(&state.db, &given).await?;
    let stored = key.as_ref().map_or("", |k| k.digest.as_str());
    let matches: bool = given.as_bytes().ct_eq(stored.as_bytes()).into();
    match key.filter(|k| matches && k.shop_id == shop_id && crate::db::api_keys::usable(k, now)) {
        Some(key) => Ok(find(state, shop_id).await?.map(|shop| (shop, key))),
        None => Ok(None),
    }
}

/// Runs `write`, a change of the shop's row, and forgets the shop here once it is done or
/// abandoned (a request cancelled mid-write may still commit).
pub async fn changing<T>(
    state: &AppState,
    shop_id: i64,
    write: impl Future<Output = Result<T, DbErr>>,
) -> Result<T, DbErr> {
    struct Forget<'a>(&'a AppState, i64);
    impl Drop for Forget<'_> {
        fn drop(&mut self) {
            self.0.shops.forget(self.1);
        }
    }
    let _forget = Forget(state, shop_id);
    write.await
}

/// Replaces the shop's secret key with `stored`, if `shop`'s is still the one stored;
/// whether it did. On PostgreSQL a rotation answers once every instance listening confirmed
/// it forgot the shop (see the module's description).
pub async fn rotate_secret(
    state: &AppState,
    shop: Model,
    stored: shop_db::StoredSecret,
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<bool, DbErr> {
    let id = shop.id;
    let before = state.shops.heard_before(id);
    let rotated = changing(state, id, shop_db::rotate_secret(&state.db, shop, stored, audit, now)).await?;
    if rotated {
        heard(state, &before).await;
    }
    Ok(rotated)
}

/// On PostgreSQL, waits until this instance and every other one listening confirmed they
/// forgot the shop since `before`, or a short while passed.
async fn heard(state: &AppState, before: &crate::web::state::HeardBefore) {
    if needs_listener(&state.db) {
        state.shops.await_heard(before).await;
    }
}

/// Changes the shop's name, URL and display time zone; answers once the change was heard
/// (see [`rotate_secret`]).
pub async fn update_settings(
    state: &AppState,
    shop_id: i64,
    settings: &ShopSettings,
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<Option<Model>, DbErr> {
    let id = shop_id;
    let before = state.shops.heard_before(id);
    let updated = changing(state, id, shop_db::update_settings(&state.db, id, settings, audit, now)).await?;
    heard(state, &before).await;
    Ok(updated)
}

/// Sets where the shop's notifications go by default; answers once the change was heard.
pub async fn set_notification_url(
    state: &AppState,
    shop_id: i64,
    url: Option<String>,
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    let before = state.shops.heard_before(shop_id);
    changing(state, shop_id, shop_db::set_notification_url(&state.db, shop_id, url, audit, now)).await?;
    heard(state, &before).await;
    Ok(())
}

/// Sets whether the shop requires two-step login of every user; answers once the change was
/// heard.
pub async fn require_two_step(
    state: &AppState,
    shop_id: i64,
    required: bool,
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    let before = state.shops.heard_before(shop_id);
    changing(state, shop_id, shop_db::set_two_step_required(&state.db, shop_id, required, audit, now)).await?;
    heard(state, &before).await;
    Ok(())
}

/// Sets how many minutes the shop's dashboard sessions live unused; answers once the change
/// was heard.
pub async fn set_session_idle(
    state: &AppState,
    shop_id: i64,
    minutes: i32,
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    let before = state.shops.heard_before(shop_id);
    changing(state, shop_id, shop_db::set_session_idle(&state.db, shop_id, minutes, audit, now)).await?;
    heard(state, &before).await;
    Ok(())
}

/// Listens for changes of shops made by any instance, until the instance stops; while not
/// listening the cache is unused. PostgreSQL only.
pub async fn listen(state: AppState) {
    let ping = format!("ping:{}", state.shops.me());
    loop {
        match shop_db::listener(&state.config.database_url, CHANNEL).await {
            Ok(mut listener) => hear(&state, &mut listener, &ping).await,
            Err(e) => tracing::warn!(error = %e, "could not listen for shop changes; shops are read every time"),
        }
        state.shops.reset(false);
        if state.lifecycle.is_stopping() {
            return;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// Hears notifications until the connection is lost or stops answering this instance's own
/// heartbeat (sent through the pool every [`HEARTBEAT`], due back before the next one).
async fn hear(state: &AppState, listener: &mut PgListener, ping: &str) {
    // Anything changed before now is read afresh.
    state.shops.reset(true);
    let mut heartbeat = tokio::time::interval(HEARTBEAT);
    let mut answered = true;
    loop {
        tokio::select! {
            // A stopping instance lets its connection go at once.
            () = state.lifecycle.stopping() => return,
            received = listener.try_recv() => match received {
                Ok(Some(notification)) => match notification.payload() {
                    payload if payload == ping => answered = true,
                    payload if payload.starts_with("ping:") => state.shops.peer_alive(&payload[5..]),
                    payload if payload.starts_with("ack:") => {
                        // This instance's own confirmations were counted as it heard the change.
                        if let Some((peer, shop_id)) = payload[4..].split_once(':')
                            && peer != state.shops.me()
                            && let Ok(shop_id) = shop_id.parse()
                        {
                            state.shops.confirmed(peer, shop_id);
                        }
                    }
                    payload => match payload.parse::<i64>() {
                        Ok(shop_id) => {
                            state.shops.confirmed(state.shops.me(), shop_id);
                            let ack = format!("ack:{}:{shop_id}", state.shops.me());
                            tokio::spawn(notify(state.db.clone(), ack));
                        }
                        Err(_) => state.shops.reset(true),
                    },
                },
                _ => break,
            },
            _ = heartbeat.tick() => {
                if !answered {
                    break;
                }
                answered = false;
                if notify(state.db.clone(), ping.to_string()).await.is_err() {
                    break;
                }
            }
        }
    }
    tracing::warn!("stopped hearing shop changes; shops are read every time until listening again");
}

/// Sends `payload` to every instance listening (through the pool, not the listener).
async fn notify(db: sea_orm::DatabaseConnection, payload: String) -> Result<(), DbErr> {
    shop_db::notify(&db, CHANNEL, &payload).await
}

/// Whether `db` needs a listener for the cache to be used (PostgreSQL).
pub fn needs_listener(db: &impl ConnectionTrait) -> bool {
    db.get_database_backend() == sea_orm::DatabaseBackend::Postgres
}
