//! The pool: opening the database (SQLite or PostgreSQL) with paydesk's settings, keeping
//! SQLite's statistics current, and closing it whole.

use std::str::FromStr;
use std::time::Duration;

use sea_orm::sqlx::ConnectOptions as _;
use sea_orm::sqlx::postgres::{PgConnectOptions, PgPoolOptions, PgSslMode};
use sea_orm::sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sea_orm::{ConnectionTrait, DatabaseConnection, DbErr, SqlxPostgresConnector, SqlxSqliteConnector};

use super::sqlite_functions;

/// Opens the database at `url`: SQLite in WAL mode with foreign keys and a busy timeout,
/// or PostgreSQL, with at most `connections` connections.
///
/// Connections are not pinged on every checkout (sqlx's default, a round trip per query):
/// only one idle for more than [`PING_AFTER_IDLE`] is checked before use.
pub async fn connect(url: &str, connections: u32) -> Result<DatabaseConnection, DbErr> {
    connect_with(url, connections, false).await
}

/// Like [`connect`], one connection whose statements the driver logs (at debug level) for
/// `paydesk migrate --dry-run` to gather.
pub async fn connect_logged(url: &str) -> Result<DatabaseConnection, DbErr> {
    connect_with(url, 1, true).await
}

/// An error of the driver's own (connecting, a connection of its own) as a connection error.
pub(super) fn driver_error(e: sea_orm::sqlx::Error) -> DbErr {
    DbErr::Conn(sea_orm::RuntimeErr::Internal(e.to_string()))
}

async fn connect_with(url: &str, connections: u32, logged: bool) -> Result<DatabaseConnection, DbErr> {
    if url.starts_with("sqlite:") {
        let options = SqliteConnectOptions::from_str(url)
            .map_err(driver_error)?
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(10))
            .foreign_keys(true)
            .analysis_limit(400)
            .pragma("wal_autocheckpoint", WAL_CHECKPOINT_PAGES.to_string())
            // A page of rows crosses from the connection's thread in one go.
            .row_buffer_size(ROW_BUFFER);
        // An in-memory database ends with its last connection: its connections are kept.
        let in_memory = url.contains(":memory:") || url.contains("mode=memory");
        let file = (!in_memory).then(|| options.get_filename().to_path_buf());
        let pool = SqlitePoolOptions::new()
            .max_connections(connections)
            .test_before_acquire(false)
            .after_connect(|conn, _| Box::pin(sqlite_functions::install(conn)))
            // A connection reads the statistics once, with the schema: one opened before they
            // were last gathered is closed, and a fresh one takes its place.
            .before_acquire(move |_, meta| {
                let current = file.as_deref().and_then(statistics::gathered_since).is_none_or(|since| meta.age < since);
                Box::pin(async move { Ok(current) })
            })
            .connect_with(options)
            .await
            .map_err(driver_error)?;
        Ok(SqlxSqliteConnector::from_sqlx_sqlite_pool(pool))
    } else {
        // The driver logs each statement at debug level unless told not to.
        let mut options = PgConnectOptions::from_str(url).map_err(driver_error)?;
        if same_machine(&options) && !asks_for_tls(url) {
            options = options.ssl_mode(PgSslMode::Disable);
        }
        if !logged {
            options = options.disable_statement_logging();
        }
        let pool = PgPoolOptions::new()
            .max_connections(connections)
            .test_before_acquire(false)
            .before_acquire(|conn, meta| {
                Box::pin(async move {
                    if meta.idle_for > PING_AFTER_IDLE {
                        sea_orm::sqlx::Connection::ping(conn).await?;
                    }
                    Ok(true)
                })
            })
            .connect_with(options)
            .await
            .map_err(driver_error)?;
        Ok(SqlxPostgresConnector::from_sqlx_postgres_pool(pool))
    }
}

/// Whether PostgreSQL runs on this machine: its host a loopback address, `localhost` or a
/// socket's folder. Nothing sent there leaves the machine, so encrypting it protects nothing,
/// and it cost a create on PostgreSQL about a fifth of its time (docs/operating.md).
fn same_machine(options: &PgConnectOptions) -> bool {
    let host = options.get_host();
    let address = host.trim_start_matches('[').trim_end_matches(']').parse::<std::net::IpAddr>();
    host == "localhost" || host.starts_with('/') || address.is_ok_and(|a| a.is_loopback())
}

/// Whether the database's address, or `PGSSLMODE`, says how to use TLS: what it says is done.
fn asks_for_tls(url: &str) -> bool {
    let query = url.split_once('?').map(|(_, q)| q.to_ascii_lowercase()).unwrap_or_default();
    query.split('&').any(|p| p.starts_with("sslmode=") || p.starts_with("ssl-mode="))
        || std::env::var_os("PGSSLMODE").is_some()
}

/// Keeps SQLite's query planner informed: `PRAGMA optimize` gathers the statistics of every
/// table that has none or has grown or shrunk tenfold since (reading at most 400 rows an
/// index). Without them SQLite guessed that a shop's rows are few, and walked a shop's million
/// customers to find the ten a page names instead of using their unique ids. Run at start and
/// hourly; PostgreSQL's autovacuum does this by itself.
///
/// Only the connection that gathers them reads them again: the pool's other connections, which
/// read theirs when they opened, are replaced on their next checkout (see [`connect`]). Kept,
/// a connection opened on a nearly empty database went on planning for one: 1,000 due
/// subscriptions cost five times as much to bill at a million rows as at a thousand.
pub async fn optimize(db: &DatabaseConnection) -> Result<(), DbErr> {
    if db.get_database_backend() != sea_orm::DatabaseBackend::Sqlite {
        return Ok(());
    }
    db.execute_unprepared("PRAGMA optimize = 0x10002").await?;
    let file = db.get_sqlite_connection_pool().connect_options().get_filename().to_path_buf();
    statistics::gathered(file);
    Ok(())
}

/// When this process last gathered the statistics of each SQLite database file.
mod statistics {
    use std::collections::HashMap;
    use std::path::{Path, PathBuf};
    use std::sync::{LazyLock, Mutex};
    use std::time::{Duration, Instant};

    static GATHERED: LazyLock<Mutex<HashMap<PathBuf, Instant>>> = LazyLock::new(Default::default);

    pub fn gathered(file: PathBuf) {
        GATHERED.lock().unwrap_or_else(|e| e.into_inner()).insert(file, Instant::now());
    }

    /// How long ago the statistics of `file` were last gathered, if ever.
    pub fn gathered_since(file: &Path) -> Option<Duration> {
        GATHERED.lock().unwrap_or_else(|e| e.into_inner()).get(file).map(Instant::elapsed)
    }
}

/// Pages of SQLite's write-ahead log (about 1 MiB, a quarter of SQLite's default) past which the
/// writer whose commit passed them copies them into the database itself (a checkpoint), while
/// the writers after it wait. The smaller the checkpoint, the shorter their wait: at 16
/// connections of creates, p99 was 6.7–9.1 ms at 250 pages, 9.1–9.4 ms at 500, 11–13 ms at
/// 1,000 (SQLite's default), and 21–23 ms when a task of the server checkpointed beside the
/// writers every quarter second (docs/performance.md).
pub const WAL_CHECKPOINT_PAGES: u32 = 250;

/// On PostgreSQL, a connection holding the advisory lock of migrations until it is dropped
/// (closed: the lock ends with its session); nothing on SQLite.
pub async fn migration_lock(db: &DatabaseConnection) -> Result<Option<sea_orm::sqlx::PgConnection>, DbErr> {
    if db.get_database_backend() != sea_orm::DatabaseBackend::Postgres {
        return Ok(None);
    }
    let mut conn = db.get_postgres_connection_pool().acquire().await.map_err(driver_error)?;
    // "payd" in ASCII, and the schema migrated: instances of one schema wait for each other.
    let lock = "SELECT pg_advisory_lock(1885436260, hashtext(current_schema()))";
    sea_orm::sqlx::query(lock).execute(&mut *conn).await.map_err(driver_error)?;
    // Out of the pool: dropping it closes the session, which ends the lock.
    Ok(Some(conn.detach()))
}

/// Closes the pool, waiting at most 10 s for connections still in use. On SQLite it first
/// moves the committed pages of the write-ahead log into the database file and empties the
/// log, so that the file alone is whole; the last connection to close removes the `-wal` and
/// `-shm` files.
pub async fn close(db: DatabaseConnection) {
    if db.get_database_backend() == sea_orm::DatabaseBackend::Sqlite
        && let Err(e) = db.execute_unprepared("PRAGMA wal_checkpoint(TRUNCATE)").await
    {
        tracing::warn!(error = %e, "the write-ahead log could not be checkpointed");
    }
    if tokio::time::timeout(Duration::from_secs(10), close_pool(db)).await.is_err() {
        tracing::warn!("connections still in use after 10 s: closing without them");
    }
}

/// Closes every connection of the pool. A connection handed back while the pool closed can
/// land among the idle ones after the pool has closed those (sqlx 0.8 closes idle connections
/// before it waits for the rest, and each returned one frees a turn of the wait): it would
/// then be dropped unclosed with the pool, and an SQLite connection dropped so is closed by
/// its own thread later, which a process that exits right after never lets run, leaving the
/// `-wal` file. So the pool is closed until it holds none.
async fn close_pool(db: DatabaseConnection) {
    if db.get_database_backend() == sea_orm::DatabaseBackend::Sqlite {
        let pool = db.get_sqlite_connection_pool().clone();
        pool.close().await;
        while pool.size() > 0 {
            pool.close().await;
            tokio::task::yield_now().await;
        }
    }
    db.close().await.ok();
}

/// How long a pooled connection may sit idle before it is pinged on checkout.
pub const PING_AFTER_IDLE: Duration = Duration::from_secs(30);

/// Rows an SQLite connection's thread hands over at once (sqlx's default is 50).
pub const ROW_BUFFER: usize = 256;

/// Connections of the pool: (in use, idle).
pub fn pool_use(db: &DatabaseConnection) -> (u64, u64) {
    let (size, idle) = match db.get_database_backend() {
        sea_orm::DatabaseBackend::Postgres => {
            let pool = db.get_postgres_connection_pool();
            (pool.size(), pool.num_idle())
        }
        _ => {
            let pool = db.get_sqlite_connection_pool();
            (pool.size(), pool.num_idle())
        }
    };
    let idle = idle as u64;
    (u64::from(size).saturating_sub(idle), idle)
}
