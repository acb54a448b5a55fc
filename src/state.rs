//! What every handler and the billing engine can reach: the database, the configuration,
//! the acquirer and the API's credential locks.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};

use sea_orm::DatabaseConnection;

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
