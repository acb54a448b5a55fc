//! The summaries kept for the dashboard's overview: money taken per quarter hour
//! (`payment_totals`) and subscriptions per state (`subscription_counts`). Triggers on
//! `payments` and `subscriptions` append a row of change (`fresh`) in the same transaction
//! as every write, so writers never wait on a shared row; readers sum the rows of each key,
//! and [`compact`] folds the changes into one row per key.

use sea_orm::{ConnectionTrait, DatabaseBackend, DatabaseConnection, DbErr, Statement};

/// A summary table: the columns that key a row and the columns summed.
struct Summary {
    table: &'static str,
    keys: &'static str,
    sums: &'static [&'static str],
}

const SUMMARIES: [Summary; 2] = [
    Summary { table: "payment_totals", keys: "shop_id, bucket, currency, test", sums: &["net", "payments"] },
    Summary { table: "subscription_counts", keys: "shop_id, state", sums: &["subscriptions"] },
];

/// Folds every key's rows of change into one row, keeping every sum; answers how many keys
/// were folded. Safe beside writers and other instances compacting: on PostgreSQL the rows
/// are taken and summed in one statement (rows another compaction took first are skipped,
/// changes written meanwhile wait for the next run); on SQLite the one writer does both
/// steps in one transaction.
pub async fn compact(db: &DatabaseConnection) -> Result<u64, DbErr> {
    let txn = crate::db::begin(db).await?;
    let backend = txn.get_database_backend();
    let mut folded = 0;
    for Summary { table, keys, sums } in SUMMARIES {
        let summed = sums.iter().map(|c| format!("sum({c})")).collect::<Vec<_>>().join(", ");
        let sums = sums.join(", ");
        let changed = format!("({keys}) IN (SELECT {keys} FROM {table} WHERE fresh)");
        let statements = match backend {
            DatabaseBackend::Postgres => vec![format!(
                "WITH gone AS (DELETE FROM {table} WHERE {changed} RETURNING {keys}, {sums}) \
                 INSERT INTO {table} ({keys}, {sums}, fresh) SELECT {keys}, {summed}, false FROM gone GROUP BY {keys}"
            )],
            _ => {
                let same_key =
                    keys.split(", ").map(|k| format!("n.{k} = {table}.{k}")).collect::<Vec<_>>().join(" AND ");
                vec![
                    format!(
                        "INSERT INTO {table} ({keys}, {sums}, fresh) SELECT {keys}, {summed}, false FROM {table} \
                         WHERE {changed} GROUP BY {keys}"
                    ),
                    // Every row of those keys but the sum just added, the newest.
                    format!(
                        "DELETE FROM {table} WHERE {changed} \
                         AND seq < (SELECT max(n.seq) FROM {table} n WHERE {same_key})"
                    ),
                ]
            }
        };
        for (i, sql) in statements.into_iter().enumerate() {
            let done = txn.execute(Statement::from_string(backend, sql)).await?;
            if i == 0 {
                folded += done.rows_affected();
            }
        }
    }
    txn.commit().await?;
    Ok(folded)
}
