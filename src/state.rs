//! What every handler and the billing engine can reach: the database, the configuration,
//! the acquirer and the API's credential locks.

use std::sync::Arc;

use sea_orm::DatabaseConnection;

use crate::acquirer::{Acquirer, SimulatedAcquirer};
use crate::auth::Locks;
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
