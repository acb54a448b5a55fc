//! What every handler and the billing engine can reach: the database, the configuration,
//! the acquirer and the API's credential locks.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};

use sea_orm::DatabaseConnection;

use crate::acquirer::{Acquirer, SimulatedAcquirer};
use crate::config::Config;

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
}

impl AppState {
    /// The state of a server: the built-in simulated acquirer, live use as configured.
    pub fn new(db: DatabaseConnection, config: Config) -> Self {
        let acquirer = Arc::new(SimulatedAcquirer::new(config.simulated_live));
        AppState { db, config: Arc::new(config), acquirer, api_locks: Default::default() }
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
