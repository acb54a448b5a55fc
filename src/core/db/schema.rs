//! The schema's version: which of paydesk's migrations a database has, applying the pending
//! ones, refusing a database that a newer paydesk migrated, and rehearsing the pending ones for
//! review (`paydesk migrate --dry-run`).
//!
//! Each migration is applied in a transaction of its own that first records its version, on
//! SQLite as on PostgreSQL: a process killed in the middle leaves the migration wholly
//! undone, and two processes migrating at once never apply one twice (the second finds the
//! version taken and skips it).

use migration::{Migrator, MigratorTrait, SchemaManager};
use sea_orm::sea_query::{Alias, OnConflict, Query};
use sea_orm::{ConnectionTrait, DatabaseConnection, DbErr, Statement, TransactionTrait};

use crate::domain::schema::Standing;

/// The table where the applied migrations are recorded.
pub const MIGRATIONS: &str = "seaql_migrations";

/// The names of this paydesk's migrations, oldest first.
pub fn known() -> Vec<String> {
    Migrator::migrations().iter().map(|m| m.name().to_string()).collect()
}

/// The migrations recorded in `db`, oldest first (their table is made when missing).
pub async fn applied(db: &(impl ConnectionTrait + TransactionTrait)) -> Result<Vec<String>, DbErr> {
    install(db).await?;
    migrations(db).await
}

/// Makes the migrations' table when it is missing. On PostgreSQL under a transaction's
/// advisory lock: two processes making it at once (one of them killed while its statement
/// still ran on the server) wait for each other, where `CREATE TABLE IF NOT EXISTS` alone
/// collides in the catalog ("duplicate key … pg_type_typname_nsp_index").
async fn install(db: &(impl ConnectionTrait + TransactionTrait)) -> Result<(), DbErr> {
    #[allow(clippy::disallowed_methods)] // before the table super::begin writes exists
    let txn = db.begin().await?;
    if txn.get_database_backend() == sea_orm::DatabaseBackend::Postgres {
        txn.execute_unprepared("SELECT pg_advisory_xact_lock(1885436260, hashtext(current_schema() || ' install'))")
            .await?;
    }
    Migrator::install(&txn).await?;
    txn.commit().await
}

/// Whether the migrations' table exists (an empty database has none).
pub async fn has_migrations(db: &impl ConnectionTrait) -> Result<bool, DbErr> {
    Ok(super::backup::tables(db).await?.iter().any(|t| t == MIGRATIONS))
}

/// The migrations a database has, oldest first, without creating their table.
pub async fn migrations(db: &impl ConnectionTrait) -> Result<Vec<String>, DbErr> {
    if !has_migrations(db).await? {
        return Ok(Vec::new());
    }
    let sql = format!("SELECT version FROM {} ORDER BY version", MIGRATIONS);
    let rows = db.query_all(Statement::from_string(db.get_database_backend(), sql)).await?;
    rows.iter().map(|r| r.try_get::<String>("", "version")).collect()
}

/// Where `db` stands against this paydesk.
pub async fn standing(db: &(impl ConnectionTrait + TransactionTrait)) -> Result<Standing, DbErr> {
    Ok(Standing::of(&known(), &applied(db).await?))
}

/// Where `db` stands, refused (naming both versions) when a newer paydesk migrated it.
async fn known_standing(db: &(impl ConnectionTrait + TransactionTrait)) -> Result<Standing, DbErr> {
    let standing = standing(db).await?;
    match standing.newer() {
        Some(message) => Err(DbErr::Custom(message)),
        None => Ok(standing),
    }
}

/// Applies the pending migrations, each in its own transaction; returns the names applied.
pub async fn apply_pending(db: &DatabaseConnection) -> Result<Vec<String>, DbErr> {
    let standing = known_standing(db).await?;
    let mut done = Vec::new();
    for migration in Migrator::migrations() {
        if !standing.pending.iter().any(|name| name == migration.name()) {
            continue;
        }
        #[allow(clippy::disallowed_methods)] // before the table super::begin writes exists
        let txn = db.begin().await?;
        // The record first: a write, so the transaction holds SQLite's write lock from its
        // first statement, and the claim another process migrating at once loses.
        if !record(&txn, migration.name()).await? {
            txn.rollback().await?;
            continue;
        }
        tracing::debug!(migration = migration.name(), "applying a migration");
        migration.up(&SchemaManager::new(&txn)).await?;
        txn.commit().await?;
        done.push(migration.name().to_string());
    }
    Ok(done)
}

/// Records `version` as applied; false when it already is.
async fn record(db: &impl ConnectionTrait, version: &str) -> Result<bool, DbErr> {
    let now = chrono::Utc::now().timestamp();
    let insert = Query::insert()
        .into_table(Alias::new(MIGRATIONS))
        .columns([Alias::new("version"), Alias::new("applied_at")])
        .values_panic([version.into(), now.into()])
        .on_conflict(OnConflict::column(Alias::new("version")).do_nothing().to_owned())
        .to_owned();
    Ok(db.execute(db.get_database_backend().build(&insert)).await?.rows_affected() == 1)
}

/// A pending migration rehearsed: its name, the statements it ran and how long it took.
#[derive(Debug)]
pub struct Rehearsed {
    /// The migration.
    pub name: String,
    /// What it wrote: every statement but the reads it made to decide.
    pub statements: Vec<String>,
    /// How long it ran on this database.
    pub elapsed: std::time::Duration,
}

/// Runs the pending migrations inside one transaction that is then rolled back, collecting
/// the statements each ran (`statements` hands over those logged since it was last called).
/// The database is left as it was; while it runs it holds the locks the migrations take.
pub async fn rehearse(
    db: &DatabaseConnection,
    statements: impl Fn() -> Vec<String>,
) -> Result<(Standing, Vec<Rehearsed>), DbErr> {
    #[allow(clippy::disallowed_methods)] // before the table super::begin writes exists
    let txn = db.begin().await?;
    Migrator::install(&txn).await?;
    // A write first, so that SQLite takes its write lock now rather than fail to upgrade a
    // read later.
    let hold = format!("UPDATE {MIGRATIONS} SET applied_at = applied_at WHERE 1 = 0");
    txn.execute(Statement::from_string(txn.get_database_backend(), hold)).await?;
    let standing = known_standing(&txn).await?;
    let mut rehearsed = Vec::new();
    for migration in Migrator::migrations() {
        if !standing.pending.iter().any(|name| name == migration.name()) {
            continue;
        }
        statements();
        let started = std::time::Instant::now();
        migration.up(&SchemaManager::new(&txn)).await?;
        let elapsed = started.elapsed();
        let written = statements().into_iter().filter(|s| !is_read(s)).collect();
        rehearsed.push(Rehearsed { name: migration.name().to_string(), statements: written, elapsed });
    }
    txn.rollback().await?;
    Ok((standing, rehearsed))
}

/// Whether a statement only reads (what a migration asks before it decides).
fn is_read(sql: &str) -> bool {
    let first = sql.split_whitespace().next().unwrap_or("").to_ascii_uppercase();
    matches!(first.as_str(), "SELECT" | "PRAGMA" | "WITH" | "SHOW" | "EXPLAIN")
}
