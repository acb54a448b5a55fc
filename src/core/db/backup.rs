//! The queries of snapshots: SQLite's `VACUUM INTO` and integrity check, PostgreSQL's
//! exported snapshot, rows per table, a sealed secret to try a key on, and the lock that says
//! a PostgreSQL schema is being served.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use sea_orm::sqlx::sqlite::SqliteConnectOptions;
use sea_orm::{
    AccessMode, ConnectionTrait, DatabaseBackend, DatabaseConnection, DatabaseTransaction, DbErr, IsolationLevel,
    SqlxSqliteConnector, Statement, TransactionTrait,
};

use super::{driver_error, sqlite_functions};

/// SQLite's virtual machine steps between two looks at the deadline.
const STEPS: i32 = 1_000;

/// Writes a consistent copy of the SQLite database to `path` (which must not exist): the
/// copy reads one snapshot of the database while writers go on. Past `deadline` SQLite stops
/// it ("interrupted").
pub async fn vacuum_into(db: &DatabaseConnection, path: &Path, deadline: Instant) -> Result<(), DbErr> {
    let path = path.to_str().ok_or_else(|| DbErr::Custom(format!("{} is not UTF-8", path.display())))?;
    let mut conn = db.get_sqlite_connection_pool().acquire().await.map_err(driver_error)?;
    conn.lock_handle().await.map_err(driver_error)?.set_progress_handler(STEPS, move || Instant::now() < deadline);
    let copied = sea_orm::sqlx::query("VACUUM INTO ?").bind(path).execute(&mut *conn).await;
    conn.lock_handle().await.map_err(driver_error)?.remove_progress_handler();
    copied.map(|_| ()).map_err(driver_error)
}

/// Opens an SQLite file read-only, as a file nothing else writes (a snapshot); its statements
/// stop ("interrupted") past `deadline`.
///
/// Its page cache may grow to the file's size (up to 512 MiB): the integrity check looks each
/// index entry up in its table, and with SQLite's default 2 MB a copy of 154 MB took 2.4
/// million reads of its pages instead of 38,000: minutes on a disk the system does not cache,
/// an hour on a slow one.
pub async fn open_copy(path: &Path, deadline: Instant) -> Result<DatabaseConnection, DbErr> {
    let kib = std::fs::metadata(path).map_or(0, |m| m.len() / 1024).clamp(2048, 512 * 1024);
    let options = SqliteConnectOptions::new()
        .filename(path)
        .read_only(true)
        .immutable(true)
        .pragma("cache_size", format!("-{kib}"));
    let pool = sea_orm::sqlx::sqlite::SqlitePoolOptions::new()
        .max_connections(1)
        .after_connect(move |conn, _| {
            Box::pin(async move {
                sqlite_functions::install(conn).await?;
                conn.lock_handle().await?.set_progress_handler(STEPS, move || Instant::now() < deadline);
                Ok(())
            })
        })
        .connect_with(options)
        .await
        .map_err(driver_error)?;
    Ok(SqlxSqliteConnector::from_sqlx_sqlite_pool(pool))
}

/// The pages an SQLite connection may keep in its cache, in KiB.
pub async fn cache_kib(db: &impl ConnectionTrait) -> Result<i64, DbErr> {
    let row = db.query_one(Statement::from_string(DatabaseBackend::Sqlite, "PRAGMA cache_size")).await?;
    Ok(row.map(|r| r.try_get_by_index::<i64>(0)).transpose()?.map_or(0, |n| -n))
}

/// SQLite's `PRAGMA integrity_check`: `ok`, or the problems found, one per line.
pub async fn integrity_check(db: &impl ConnectionTrait) -> Result<String, DbErr> {
    let rows = db.query_all(Statement::from_string(DatabaseBackend::Sqlite, "PRAGMA integrity_check")).await?;
    let lines: Result<Vec<String>, DbErr> = rows.iter().map(|r| r.try_get_by_index::<String>(0)).collect();
    Ok(lines?.join("\n"))
}

/// The tables of the database (of the current schema on PostgreSQL), by name.
pub async fn tables(db: &impl ConnectionTrait) -> Result<Vec<String>, DbErr> {
    let backend = db.get_database_backend();
    let sql = match backend {
        DatabaseBackend::Postgres => {
            "SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1"
        }
        // Not the search indexes' FTS5 tables ("virtual", "shadow"): they hold no rows of their own.
        _ => {
            "SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY 1"
        }
    };
    let rows = db.query_all(Statement::from_string(backend, sql)).await?;
    rows.iter().map(|r| r.try_get_by_index::<String>(0)).collect()
}

/// Rows per table.
pub async fn counts(db: &impl ConnectionTrait) -> Result<BTreeMap<String, i64>, DbErr> {
    let backend = db.get_database_backend();
    let mut counts = BTreeMap::new();
    for table in tables(db).await? {
        let sql = format!("SELECT COUNT(*) FROM \"{}\"", table.replace('"', "\"\""));
        let row = db.query_one(Statement::from_string(backend, sql)).await?;
        counts.insert(table, row.map(|r| r.try_get_by_index::<i64>(0)).transpose()?.unwrap_or(0));
    }
    Ok(counts)
}

/// Whether `table` has `column` (of the current schema on PostgreSQL).
async fn has_column(db: &impl ConnectionTrait, table: &str, column: &str) -> Result<bool, DbErr> {
    let backend = db.get_database_backend();
    let sql = match backend {
        DatabaseBackend::Postgres => {
            "SELECT COUNT(*) FROM pg_attribute \
             WHERE attrelid = to_regclass(quote_ident($1)) AND attname = $2 AND attnum > 0 AND NOT attisdropped"
        }
        _ => "SELECT COUNT(*) FROM pragma_table_info(?) WHERE name = ?",
    };
    let row = db.query_one(Statement::from_sql_and_values(backend, sql, [table.into(), column.into()])).await?;
    Ok(row.map(|r| r.try_get_by_index::<i64>(0)).transpose()?.unwrap_or(0) > 0)
}

/// A shop's sealed API secret and the digest it is sealed for: something to try a key on
/// (none in a database older than sealed secrets).
pub async fn sealed_secret(db: &impl ConnectionTrait) -> Result<Option<(String, String)>, DbErr> {
    if !has_column(db, "shops", "secret_sealed").await? {
        return Ok(None);
    }
    let sql = "SELECT secret_digest, secret_sealed FROM shops WHERE secret_sealed IS NOT NULL ORDER BY id LIMIT 1";
    let row = db.query_one(Statement::from_string(db.get_database_backend(), sql)).await?;
    row.map(|r| Ok((r.try_get("", "secret_digest")?, r.try_get("", "secret_sealed")?))).transpose()
}

/// The schema PostgreSQL's connections use.
pub async fn current_schema(db: &impl ConnectionTrait) -> Result<String, DbErr> {
    let row = db.query_one(Statement::from_string(DatabaseBackend::Postgres, "SELECT current_schema()::text")).await?;
    row.ok_or_else(|| DbErr::Custom("no current schema".into()))?.try_get_by_index(0)
}

/// Starts a read-only repeatable-read transaction and exports its snapshot, so that
/// `pg_dump --snapshot` sees exactly what the transaction sees.
pub async fn export_snapshot(db: &DatabaseConnection) -> Result<(DatabaseTransaction, String), DbErr> {
    let txn = db.begin_with_config(Some(IsolationLevel::RepeatableRead), Some(AccessMode::ReadOnly)).await?;
    let row = txn.query_one(Statement::from_string(DatabaseBackend::Postgres, "SELECT pg_export_snapshot()")).await?;
    let snapshot = row.ok_or_else(|| DbErr::Custom("PostgreSQL exported no snapshot".into()))?.try_get_by_index(0)?;
    Ok((txn, snapshot))
}

/// The schema of the URL's search path, `None` when it does not exist (yet).
pub async fn search_schema(db: &impl ConnectionTrait) -> Result<Option<String>, DbErr> {
    let row = db.query_one(Statement::from_string(DatabaseBackend::Postgres, "SELECT current_schema()::text")).await?;
    Ok(row.map(|r| r.try_get_by_index::<Option<String>>(0)).transpose()?.flatten())
}

/// `"name"`, quoted as PostgreSQL reads an identifier.
fn quoted(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Renames the schema `from` to `to`.
pub async fn rename_schema(db: &impl ConnectionTrait, from: &str, to: &str) -> Result<(), DbErr> {
    let sql = format!("ALTER SCHEMA {} RENAME TO {}", quoted(from), quoted(to));
    db.execute(Statement::from_string(DatabaseBackend::Postgres, sql)).await.map(|_| ())
}

/// Creates the schema `name`.
pub async fn create_schema(db: &impl ConnectionTrait, name: &str) -> Result<(), DbErr> {
    db.execute(Statement::from_string(DatabaseBackend::Postgres, format!("CREATE SCHEMA {}", quoted(name))))
        .await
        .map(|_| ())
}

/// Drops the schema `name` when it is empty.
pub async fn drop_empty_schema(db: &impl ConnectionTrait, name: &str) -> Result<(), DbErr> {
    let sql = format!("DROP SCHEMA IF EXISTS {}", quoted(name));
    db.execute(Statement::from_string(DatabaseBackend::Postgres, sql)).await.map(|_| ())
}

/// The advisory lock held while a PostgreSQL schema is served: "payd" + 1, and the schema.
const IN_USE: i32 = 1885436261;

/// A connection holding the shared lock that says this schema is served, until dropped.
pub async fn hold_in_use(db: &DatabaseConnection) -> Result<Option<sea_orm::sqlx::PgConnection>, DbErr> {
    if db.get_database_backend() != DatabaseBackend::Postgres {
        return Ok(None);
    }
    let mut conn = db.get_postgres_connection_pool().acquire().await.map_err(driver_error)?;
    let lock = format!("SELECT pg_advisory_lock_shared({IN_USE}, hashtext(current_schema()))");
    sea_orm::sqlx::query(&lock).execute(&mut *conn).await.map_err(driver_error)?;
    Ok(Some(conn.detach()))
}

/// Whether an instance serves the PostgreSQL schema `schema` (holds [`hold_in_use`]'s lock).
pub async fn served(db: &DatabaseConnection, schema: &str) -> Result<bool, DbErr> {
    let mut conn = db.get_postgres_connection_pool().acquire().await.map_err(driver_error)?;
    let free: bool = sea_orm::sqlx::query_scalar(&format!("SELECT pg_try_advisory_lock({IN_USE}, hashtext($1))"))
        .bind(schema)
        .fetch_one(&mut *conn)
        .await
        .map_err(driver_error)?;
    if free {
        let unlock = format!("SELECT pg_advisory_unlock({IN_USE}, hashtext($1))");
        sea_orm::sqlx::query(&unlock).bind(schema).execute(&mut *conn).await.map_err(driver_error)?;
    }
    Ok(!free)
}
