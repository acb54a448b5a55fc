//! SQLite's word indexes (FTS5) catch up with their tables: a new row's words are indexed
//! shortly after its insert, many rows to a transaction, rather than in the insert's own
//! transaction, where FTS5 wrote them as a segment of their own at each commit (about half of
//! a create's pages). The server catches up every 50 ms, and every search first
//! (migration `m20261205_000044_search_behind`). PostgreSQL's word indexes are indexes of
//! their tables, and need none of this.

use sea_orm::{ConnectionTrait, DatabaseBackend, DatabaseConnection, DbErr, Statement};

use super::txn;

/// At most this many rows' words are indexed in one transaction, so that writers wait for a
/// catch-up only briefly.
const BATCH: i64 = 1_000;

/// Indexes the words of every row added to a searched table before this call (none on
/// PostgreSQL); answers how many rows.
pub async fn catch_up(db: &DatabaseConnection) -> Result<u64, DbErr> {
    if db.get_database_backend() != DatabaseBackend::Sqlite {
        return Ok(0);
    }
    let mut indexed = 0;
    for ((table, search, columns), (mark, last)) in migration::SEARCHED.into_iter().zip(behind(db).await?) {
        let [insert, update] = migration::sqlite_catch_up(table, search, columns);
        let mut from = mark;
        while from < last {
            let to = last.min(from + BATCH);
            let txn = txn::begin(db).await?;
            let added =
                txn.execute(Statement::from_sql_and_values(DatabaseBackend::Sqlite, &insert, [to.into()])).await?;
            txn.execute(Statement::from_sql_and_values(DatabaseBackend::Sqlite, &update, [to.into()])).await?;
            txn.commit().await?;
            indexed += added.rows_affected();
            from = to;
        }
    }
    Ok(indexed)
}

/// Like [`catch_up`], before a search: should SQLite's write lock stay taken past the busy
/// timeout (another process's long write), the search goes on and may miss the rows of the
/// last moments, rather than fail.
pub async fn before_search(db: &DatabaseConnection) {
    if let Err(e) = catch_up(db).await {
        tracing::warn!(error = %e, "searching without the words of the newest rows: they could not be indexed");
    }
}

/// For each of [`migration::SEARCHED`], the last row its index holds and its table's last row.
async fn behind(db: &DatabaseConnection) -> Result<Vec<(i64, i64)>, DbErr> {
    let columns: Vec<String> = migration::SEARCHED
        .iter()
        .map(|(table, search, _)| {
            format!("(SELECT seq FROM search_marks WHERE name = '{search}'), (SELECT max(seq) FROM {table})")
        })
        .collect();
    let sql = format!("SELECT {}", columns.join(", "));
    let row = db
        .query_one(Statement::from_string(DatabaseBackend::Sqlite, sql))
        .await?
        .ok_or(DbErr::RecordNotFound("the search indexes' marks".into()))?;
    (0..migration::SEARCHED.len())
        .map(|i| {
            // A table without a mark (none should lack one) is left as it is.
            let mark = row.try_get_by_index::<Option<i64>>(2 * i)?.unwrap_or(i64::MAX);
            let last = row.try_get_by_index::<Option<i64>>(2 * i + 1)?.unwrap_or(0);
            Ok((mark, last))
        })
        .collect()
}
