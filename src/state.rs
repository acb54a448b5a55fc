//! What every handler and the billing engine can reach: the database, the configuration,
//! the acquirer and the API's credential locks.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};

use sea_orm::{ConnectionTrait, DatabaseConnection};

use crate::db::entities::shops::Model;

use crate::acquirer::{Acquirer, SimulatedAcquirer};
use crate::config::Config;
use crate::outbound::Outbound;
use crate::vault::Vault;

/// What every handler can reach.
#[derive(Clone)]
pub struct AppState {
    /// The database (SQLite or PostgreSQL).
    pub db: DatabaseConnection,
    /// Checked configuration.
    pub config: Arc<Config>,
    /// Who moves the money.
    pub acquirer: Arc<dyn Acquirer>,
    /// Addresses refused for a while after too many wrong API credentials.
    pub api_locks: Arc<Locks>,
    /// Seals and opens the secrets kept at rest.
    pub vault: Vault,
    /// The HTTP client of webhook deliveries.
    pub outbound: Outbound,
    /// Whether the instance is stopping, and the background work it waits for.
    pub lifecycle: Arc<Lifecycle>,
    /// The shops requests name, kept in memory.
    pub shops: Arc<ShopCache>,
}

impl AppState {
    /// The state of a server: the built-in simulated acquirer, live use as configured, the
    /// vault of the configured key-encryption key (made beside an SQLite database on first
    /// use); fails with one line when that key cannot be read or made.
    pub fn new(db: DatabaseConnection, config: Config) -> Result<Self, String> {
        let acquirer = Arc::new(SimulatedAcquirer::new(config.simulated_live));
        let vault = Vault::load(&config.kek)?;
        let outbound = Outbound::new(config.webhooks_allow_private);
        crate::telemetry::metrics();
        Ok(AppState {
            shops: Arc::new(ShopCache::new(db.get_database_backend() != sea_orm::DatabaseBackend::Postgres)),
            db,
            config: Arc::new(config),
            acquirer,
            api_locks: Default::default(),
            vault,
            outbound,
            lifecycle: Default::default(),
        })
    }
}

/// Addresses refused for a while after too many wrong credentials (this instance's view of
/// the failures counted in the database).
#[derive(Debug, Default)]
pub struct Locks(Mutex<HashMap<IpAddr, DateTime<Utc>>>);

impl Locks {
    /// How long `address` must still wait, if it is locked.
    pub fn wait(&self, address: IpAddr, now: DateTime<Utc>) -> Option<std::time::Duration> {
        let locks = self.0.lock().ok()?;
        let until = *locks.get(&address)?;
        (until > now).then(|| (until - now).to_std().ok()).flatten()
    }

    /// Locks `address` for `wait` from `now`.
    pub fn lock(&self, address: IpAddr, now: DateTime<Utc>, wait: std::time::Duration) {
        if let Ok(mut locks) = self.0.lock() {
            locks.retain(|_, until| *until > now);
            locks.insert(address, now + chrono::Duration::from_std(wait).unwrap_or_default());
        }
    }
}

/// A stop in progress, and the background work (billing runs, delivery batches) that it
/// lets finish: work takes a [`Working`] mark while it runs and checks
/// [`Lifecycle::is_stopping`] between batches; the stop waits until no mark is held.
#[derive(Debug)]
pub struct Lifecycle {
    stop: tokio::sync::watch::Sender<bool>,
    work: tokio::sync::RwLock<()>,
}

/// Held by background work while it runs.
pub type Working<'a> = tokio::sync::RwLockReadGuard<'a, ()>;

impl Default for Lifecycle {
    fn default() -> Self {
        Lifecycle { stop: tokio::sync::watch::Sender::new(false), work: Default::default() }
    }
}

impl Lifecycle {
    /// Begins the stop: no new work starts.
    pub fn stop(&self) {
        self.stop.send_replace(true);
    }

    /// Whether the stop has begun.
    pub fn is_stopping(&self) -> bool {
        *self.stop.borrow()
    }

    /// Resolves when the stop begins.
    pub async fn stopping(&self) {
        let mut watch = self.stop.subscribe();
        let _ = watch.wait_for(|stopping| *stopping).await;
    }

    /// A mark for work about to start; `None` once the stop has begun.
    pub async fn work(&self) -> Option<Working<'_>> {
        if self.is_stopping() {
            return None;
        }
        let working = self.work.read().await;
        // The stop may have begun (and drained) while this waited.
        (!self.is_stopping()).then_some(working)
    }

    /// Resolves when no work runs any more (call after [`Lifecycle::stop`]).
    pub async fn drained(&self) {
        drop(self.work.write().await);
    }
}

/// At most this many shops are kept; past it the cache starts over.
const CAPACITY: usize = 10_000;

/// How long a key rotation waits for its own notification before answering anyway.
const HEARD_WAIT: Duration = Duration::from_secs(2);

/// The oldest a kept shop may be: whatever a lost notification or a cancelled write left
/// behind is read afresh after this.
const MAX_AGE: Duration = Duration::from_secs(60);

/// Shops by id, kept by [`crate::shops`], and whether changes made elsewhere reach this
/// instance.
#[derive(Debug)]
pub struct ShopCache {
    shops: Mutex<HashMap<i64, (Arc<Model>, std::time::Instant)>>,
    /// Whether an entry may be used: always on SQLite (one instance writes the file), on
    /// PostgreSQL only while this instance listens for changes.
    usable: AtomicBool,
    /// Counts every forgetting: a shop read before one is not stored after it.
    forgotten: AtomicU64,
    /// Notifications heard, by shop: what a rotation waits for.
    heard: Mutex<HashMap<i64, u64>>,
    heard_signal: tokio::sync::Notify,
}

impl ShopCache {
    /// A cache usable from the start (SQLite) or only once listening (PostgreSQL).
    pub fn new(usable: bool) -> ShopCache {
        ShopCache {
            shops: Mutex::default(),
            usable: AtomicBool::new(usable),
            forgotten: AtomicU64::new(0),
            heard: Mutex::default(),
            heard_signal: tokio::sync::Notify::new(),
        }
    }

    /// The kept shop, unless the cache may not be used or it is older than [`MAX_AGE`].
    pub fn cached(&self, shop_id: i64) -> Option<Arc<Model>> {
        if !self.usable.load(Ordering::Acquire) {
            return None;
        }
        let shops = self.shops.lock().ok()?;
        let (shop, kept) = shops.get(&shop_id)?;
        (kept.elapsed() < MAX_AGE).then(|| shop.clone())
    }

    /// Keeps `shop` as read when the count of forgettings was `before`, unless something was
    /// forgotten since (the row read may already be stale).
    pub fn keep(&self, shop: &Arc<Model>, before: u64) {
        if !self.usable.load(Ordering::Acquire) {
            return;
        }
        let Ok(mut shops) = self.shops.lock() else { return };
        if self.forgotten.load(Ordering::Acquire) != before {
            return;
        }
        if shops.len() >= CAPACITY {
            shops.clear();
        }
        shops.insert(shop.id, (shop.clone(), std::time::Instant::now()));
    }

    /// How many times something was forgotten so far.
    pub fn forgettings(&self) -> u64 {
        self.forgotten.load(Ordering::Acquire)
    }

    /// Forgets one shop (it changed).
    pub fn forget(&self, shop_id: i64) {
        if let Ok(mut shops) = self.shops.lock() {
            self.forgotten.fetch_add(1, Ordering::AcqRel);
            shops.remove(&shop_id);
        }
    }

    /// Forgets every shop, and sets whether entries may be used from now on.
    pub fn reset(&self, usable: bool) {
        if let Ok(mut shops) = self.shops.lock() {
            self.forgotten.fetch_add(1, Ordering::AcqRel);
            self.usable.store(usable, Ordering::Release);
            shops.clear();
        }
    }

    /// Notifications heard about `shop_id` so far.
    pub fn heard_count(&self, shop_id: i64) -> u64 {
        self.heard.lock().map(|h| h.get(&shop_id).copied().unwrap_or(0)).unwrap_or(0)
    }

    /// A notification about `shop_id` arrived: forgets it and wakes rotations waiting.
    pub fn hear(&self, shop_id: i64) {
        self.forget(shop_id);
        if let Ok(mut heard) = self.heard.lock() {
            *heard.entry(shop_id).or_default() += 1;
        }
        self.heard_signal.notify_waiters();
    }

    /// Waits until a notification about `shop_id` beyond the `before`th was heard (or a
    /// while passed, or this instance does not listen).
    pub async fn await_heard(&self, shop_id: i64, before: u64) {
        let wait = async {
            loop {
                let signal = self.heard_signal.notified();
                if self.heard_count(shop_id) > before || !self.usable.load(Ordering::Acquire) {
                    return;
                }
                signal.await;
            }
        };
        let _ = tokio::time::timeout(HEARD_WAIT, wait).await;
    }
}
