use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::{ConnectionTrait, DatabaseBackend};

use crate::m20261205_000040_search::{SEARCHED, folded, sqlite_triggers};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// On SQLite, a new row's words go into its table's FTS5 index shortly after its insert
/// instead of in the insert's own transaction: FTS5 writes what a transaction added as a new
/// segment of the index at its commit, about half of the pages a product's create wrote. The
/// server indexes the rows added since, many at a time, every 50 ms, and a search
/// does so first; `search_marks` holds, for each index, the last row it holds. Rows at or
/// before the mark are kept in their index as they change and go, by triggers; the others wait
/// for it. PostgreSQL's word indexes are indexes of the table, and stay as they are.
///
/// This rests on the rows' `seq` being `AUTOINCREMENT`: a new row is always numbered after
/// every row before it, so after the mark. A rebuild of these tables must keep it (and
/// `sqlite_sequence`), or a row numbered at or below the mark would never be indexed.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        if manager.get_database_backend() == DatabaseBackend::Postgres {
            return Ok(());
        }
        let mut statements = vec![
            "CREATE TABLE search_marks (name TEXT NOT NULL PRIMARY KEY, seq INTEGER NOT NULL) WITHOUT ROWID".to_owned(),
        ];
        for (table, search, columns) in SEARCHED {
            statements.push(format!(
                "INSERT INTO search_marks (name, seq) SELECT '{search}', coalesce(max(seq), 0) FROM {table}"
            ));
            statements.extend(["insert", "update", "delete"].map(|on| format!("DROP TRIGGER {search}_{on}")));
            let marked = format!(" WHEN old.seq <= (SELECT seq FROM search_marks WHERE name = '{search}')");
            let [_, update, delete] = sqlite_triggers(table, search, columns, &marked);
            statements.extend([update, delete]);
        }
        run(manager, &statements).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        if manager.get_database_backend() == DatabaseBackend::Postgres {
            return Ok(());
        }
        let mut statements = Vec::new();
        for (table, search, columns) in SEARCHED {
            statements.push(catch_up_sql(table, search, columns));
            statements.extend(["update", "delete"].map(|on| format!("DROP TRIGGER {search}_{on}")));
            statements.extend(sqlite_triggers(table, search, columns, ""));
        }
        statements.push("DROP TABLE search_marks".to_owned());
        run(manager, &statements).await
    }
}

/// Runs `statements` as one call on one connection, inside a savepoint (a transaction of its
/// own when the migration runs outside one): a running server's catch-up cannot come between
/// the change of the triggers and that of the marks, and index a row twice.
async fn run(manager: &SchemaManager<'_>, statements: &[String]) -> Result<(), DbErr> {
    let db = manager.get_connection();
    let script = format!("SAVEPOINT search_behind; {}; RELEASE search_behind", statements.join("; "));
    if let Err(e) = db.execute_unprepared(&script).await {
        db.execute_unprepared("ROLLBACK TO search_behind; RELEASE search_behind").await.ok();
        return Err(e);
    }
    Ok(())
}

/// Indexes the rows of `table` after its mark in `search`, up to the `seq` bound as `?1`, and
/// moves the mark there (two statements; in a transaction that holds the write lock).
pub fn sqlite_catch_up(table: &str, search: &str, columns: &[&str]) -> [String; 2] {
    let list = columns.join(", ");
    [
        format!(
            "INSERT INTO {search}(rowid, {list}) SELECT seq, {} FROM {table} \
             WHERE seq > (SELECT seq FROM search_marks WHERE name = '{search}') AND seq <= ?1",
            folded(table, columns)
        ),
        format!("UPDATE search_marks SET seq = max(seq, ?1) WHERE name = '{search}'"),
    ]
}

/// Indexes every row of `table` after its mark (the mark itself is dropped after).
fn catch_up_sql(table: &str, search: &str, columns: &[&str]) -> String {
    format!(
        "INSERT INTO {search}(rowid, {}) SELECT seq, {} FROM {table} \
         WHERE seq > (SELECT seq FROM search_marks WHERE name = '{search}')",
        columns.join(", "),
        folded(table, columns)
    )
}
