//! What every handler and the billing engine can reach: the database, the configuration,
//! the acquirer and the API's credential locks.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};

use sea_orm::{ConnectionTrait, DatabaseConnection};

use crate::db::entities::shops::Model;

use crate::config::Config;
use crate::external::acquirer::Acquirer;
use crate::external::acquirer::simulated::SimulatedAcquirer;
use crate::external::outbound::Outbound;
use crate::external::smtp::Mailer;
use crate::external::vault::Vault;

/// What every handler can reach: cloned for every extractor and task, so one shared value.
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

impl std::ops::Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

/// The parts of [`AppState`].
#[derive(Clone)]
pub struct Shared {
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
    /// The HTTP client of calls to addresses the operator configured (Stripe's API URL): it
    /// may reach private addresses, which a merchant's URLs may not.
    pub operator_outbound: Outbound,
    /// Whether the instance is stopping, and the background work it waits for.
    pub lifecycle: Arc<Lifecycle>,
    /// The shops requests name, kept in memory.
    pub shops: Arc<ShopCache>,
    /// The SMTP client of subscriber mails; none when no server is configured.
    pub mailer: Option<Mailer>,
    /// The time dashboard sessions and re-authentication go by.
    pub clock: Clock,
    /// When this instance last wrote each API key's use.
    pub key_uses: Arc<KeyUses>,
}

impl AppState {
    /// The state of a server: the built-in simulated acquirer, live use as configured, the
    /// vault of the configured key-encryption key (made beside an SQLite database on first
    /// use); fails with one line when that key cannot be read or made.
    pub fn new(db: DatabaseConnection, config: Config) -> Result<Self, String> {
        let acquirer = Arc::new(SimulatedAcquirer::new(config.simulated_live));
        let vault = Vault::load(&config.kek)?;
        let outbound = Outbound::new(config.webhooks_allow_private);
        crate::external::telemetry::metrics();
        let mailer = match &config.smtp {
            Some(smtp) => Some(Mailer::new(smtp).map_err(|e| format!("PAYDESK_SMTP_URL: {e}"))?),
            None => None,
        };
        Ok(AppState(Arc::new(Shared {
            mailer,
            shops: Arc::new(ShopCache::new(db.get_database_backend() != sea_orm::DatabaseBackend::Postgres)),
            db,
            config: Arc::new(config),
            acquirer,
            api_locks: Default::default(),
            vault,
            outbound,
            operator_outbound: Outbound::new(true),
            lifecycle: Default::default(),
            clock: Clock::default(),
            key_uses: Default::default(),
        })))
    }

    /// The same state with `acquirer` moving the money.
    pub fn with_acquirer(&self, acquirer: Arc<dyn Acquirer>) -> AppState {
        AppState(Arc::new(Shared { acquirer, ..Shared::clone(self) }))
    }
}

/// The time dashboard sessions go by: the system's, which tests move forward to see sessions
/// and re-authentication expire without waiting.
#[derive(Debug, Default, Clone)]
pub struct Clock(Arc<AtomicI64>);

impl Clock {
    /// Now, by this clock.
    pub fn now(&self) -> DateTime<Utc> {
        Utc::now() + chrono::Duration::seconds(self.0.load(Ordering::Relaxed))
    }

    /// Moves the clock forward by `by`.
    pub fn advance(&self, by: chrono::Duration) {
        self.0.fetch_add(by.num_seconds(), Ordering::Relaxed);
    }
}

/// When this instance last wrote each API key's use, so that requests at once with the same
/// key start one write a minute, not one each (the database's condition keeps it to one a
/// minute across instances).
#[derive(Debug, Default)]
pub struct KeyUses(Mutex<HashMap<String, DateTime<Utc>>>);

impl KeyUses {
    /// Whether a write of `key`'s use at `now` is this instance's to make: none in the
    /// last minute. Says so once, then not until a minute has passed.
    pub fn due(&self, key: &str, now: DateTime<Utc>) -> bool {
        let mut written = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if written.get(key).is_some_and(|at| *at > now - crate::db::api_keys::USE_WRITTEN_EVERY) {
            return false;
        }
        if written.len() > 10_000 {
            written.retain(|_, at| *at > now - crate::db::api_keys::USE_WRITTEN_EVERY);
        }
        written.insert(key.to_string(), now);
        true
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

/// How long a change of a shop waits for every listening instance to confirm it forgot the
/// shop before answering anyway (an instance that stopped meanwhile never confirms).
const HEARD_WAIT: Duration = Duration::from_secs(2);

/// An instance whose heartbeat was heard this recently is waited for by changes of shops.
const PEER_ALIVE: Duration = Duration::from_secs(12);

/// The oldest a kept shop may be: whatever a lost notification or a cancelled write left
/// behind is read afresh after this.
const MAX_AGE: Duration = Duration::from_secs(60);

/// Shops by id, kept by [`crate::services::shops`], and whether changes made elsewhere reach this
/// instance.
#[derive(Debug)]
pub struct ShopCache {
    shops: Mutex<HashMap<i64, (Arc<Model>, std::time::Instant)>>,
    /// Whether an entry may be used: always on SQLite (one instance writes the file), on
    /// PostgreSQL only while this instance listens for changes.
    usable: AtomicBool,
    /// Counts every forgetting: a shop read before one is not stored after it.
    forgotten: AtomicU64,
    /// This instance's name in the notifications it sends (`ping:<me>`, `ack:<me>:<shop>`).
    me: String,
    /// Confirmations that a shop was forgotten, by instance (this one's own hearing of the
    /// change included) and shop: what a change of a shop waits for.
    heard: Mutex<HashMap<(String, i64), u64>>,
    heard_signal: tokio::sync::Notify,
    /// The other listening instances, by when their heartbeat was last heard.
    peers: Mutex<HashMap<String, std::time::Instant>>,
}

/// Where the confirmations of a shop's change stood before it was written.
pub struct HeardBefore {
    shop_id: i64,
    /// Each instance to wait for, and its count of confirmations for the shop so far.
    counts: Vec<(String, u64)>,
}

impl ShopCache {
    /// A cache usable from the start (SQLite) or only once listening (PostgreSQL).
    pub fn new(usable: bool) -> ShopCache {
        ShopCache {
            shops: Mutex::default(),
            usable: AtomicBool::new(usable),
            forgotten: AtomicU64::new(0),
            me: crate::domain::ids::random_hex(8),
            heard: Mutex::default(),
            heard_signal: tokio::sync::Notify::new(),
            peers: Mutex::default(),
        }
    }

    /// This instance's name in the notifications it sends.
    pub fn me(&self) -> &str {
        &self.me
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

    fn heard_count(&self, instance: &str, shop_id: i64) -> u64 {
        let heard = self.heard.lock();
        heard.map(|h| h.get(&(instance.to_string(), shop_id)).copied().unwrap_or(0)).unwrap_or(0)
    }

    /// Before a change of `shop_id`: this instance and every other heard alive lately, with
    /// their confirmations so far.
    pub fn heard_before(&self, shop_id: i64) -> HeardBefore {
        let mut instances = vec![self.me.clone()];
        if let Ok(peers) = self.peers.lock() {
            instances
                .extend(peers.iter().filter(|(_, seen)| seen.elapsed() < PEER_ALIVE).map(|(peer, _)| peer.clone()));
        }
        let counts = instances.into_iter().map(|i| (i.clone(), self.heard_count(&i, shop_id))).collect();
        HeardBefore { shop_id, counts }
    }

    /// Another instance's heartbeat was heard; instances not heard lately are forgotten, with
    /// their confirmations.
    pub fn peer_alive(&self, peer: &str) {
        let Ok(mut peers) = self.peers.lock() else { return };
        peers.retain(|_, seen| seen.elapsed() < PEER_ALIVE);
        peers.insert(peer.to_string(), std::time::Instant::now());
        if let Ok(mut heard) = self.heard.lock() {
            heard.retain(|(instance, _), _| *instance == self.me || peers.contains_key(instance));
        }
    }

    /// `instance` confirmed it forgot `shop_id` (this instance: it heard the change and forgot
    /// it); wakes changes waiting.
    pub fn confirmed(&self, instance: &str, shop_id: i64) {
        if instance == self.me {
            self.forget(shop_id);
        }
        if let Ok(mut heard) = self.heard.lock() {
            *heard.entry((instance.to_string(), shop_id)).or_default() += 1;
        }
        self.heard_signal.notify_waiters();
    }

    /// Waits until every instance in `before` confirmed a change of its shop beyond those
    /// counted there (or [`HEARD_WAIT`] passed, or this instance does not listen).
    pub async fn await_heard(&self, before: &HeardBefore) {
        let wait = async {
            loop {
                let signal = self.heard_signal.notified();
                let all = before.counts.iter().all(|(i, n)| self.heard_count(i, before.shop_id) > *n);
                if all || !self.usable.load(Ordering::Acquire) {
                    return;
                }
                signal.await;
            }
        };
        let _ = tokio::time::timeout(HEARD_WAIT, wait).await;
    }
}
