//! The shops that requests name, kept in memory: every API request authenticates one, every
//! pay page and dashboard page shows one, and asking the database each time cost a query per
//! request.
//!
//! A cached shop is never used after the row changed. This instance forgets a shop as it
//! writes it; on PostgreSQL a trigger on `shops` notifies every instance (`LISTEN
//! paydesk_shops`), which forget it as the notification arrives, and a key rotation answers
//! only once its own instance has heard its notification (PostgreSQL sends it to every
//! listener at the commit). While an instance is not listening (starting, or its listening
//! connection was lost) it caches nothing and asks the database every time.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use sea_orm::sqlx::postgres::PgListener;
use sea_orm::{ConnectionTrait, DbErr};
use subtle::ConstantTimeEq;

use crate::db::entities::shops::Model;
use crate::db::shops as shop_db;
use crate::domain::account::ShopSettings;
use crate::state::AppState;

/// The channel of the trigger on `shops` (migration m20261124_000012).
pub const CHANNEL: &str = "paydesk_shops";

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

/// The shop, if `secret_key` is its key. Takes the same time whether or not the shop exists.
pub async fn authenticate(state: &AppState, shop_id: i64, secret_key: &str) -> Result<Option<Arc<Model>>, DbErr> {
    let given = shop_db::digest(secret_key);
    let shop = find(state, shop_id).await?;
    let stored = shop.as_ref().map_or("", |s| s.secret_digest.as_str());
    let matches: bool = given.as_bytes().ct_eq(stored.as_bytes()).into();
    Ok(shop.filter(|_| matches))
}

/// Runs `write`, a change of the shop's row, and forgets the shop here at once; when
/// `until_heard`, answers once this instance also heard the change's notification (every
/// other instance is sent it at the same moment).
pub async fn changing<T>(
    state: &AppState,
    shop_id: i64,
    until_heard: bool,
    write: impl Future<Output = Result<T, DbErr>>,
) -> Result<T, DbErr> {
    let before = state.shops.heard_count(shop_id);
    let written = write.await;
    state.shops.forget(shop_id);
    if until_heard && written.is_ok() && state.db.get_database_backend() == sea_orm::DatabaseBackend::Postgres {
        state.shops.await_heard(shop_id, before).await;
    }
    written
}

/// Changes the shop's name, URL and display time zone.
pub async fn update_settings(
    state: &AppState,
    shop: Model,
    settings: &ShopSettings,
    now: DateTime<Utc>,
) -> Result<Model, DbErr> {
    let id = shop.id;
    changing(state, id, false, shop_db::update_settings(&state.db, shop, settings, now)).await
}

/// Sets where the shop's notifications go by default.
pub async fn set_notification_url(
    state: &AppState,
    shop_id: i64,
    url: Option<String>,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    changing(state, shop_id, false, shop_db::set_notification_url(&state.db, shop_id, url, now)).await
}

/// Listens for changes of shops made by any instance, for as long as the process runs;
/// while not listening the cache is unused. PostgreSQL only.
pub async fn listen(state: AppState) {
    let url = state.config.database_url.clone();
    loop {
        match PgListener::connect(&url).await {
            Ok(mut listener) => {
                if let Err(e) = listener.listen(CHANNEL).await {
                    tracing::warn!(error = %e, "could not listen for shop changes; shops are read every time");
                } else {
                    // Anything changed before now is read afresh.
                    state.shops.reset(true);
                    while let Ok(Some(notification)) = listener.try_recv().await {
                        match notification.payload().parse::<i64>() {
                            Ok(shop_id) => state.shops.hear(shop_id),
                            Err(_) => state.shops.reset(true),
                        }
                    }
                    tracing::warn!("lost the connection listening for shop changes; shops are read every time");
                }
            }
            Err(e) => tracing::warn!(error = %e, "could not listen for shop changes; shops are read every time"),
        }
        state.shops.reset(false);
        if state.lifecycle.is_stopping() {
            return;
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// Whether `db` needs a listener for the cache to be used (PostgreSQL).
pub fn needs_listener(db: &impl ConnectionTrait) -> bool {
    db.get_database_backend() == sea_orm::DatabaseBackend::Postgres
}
