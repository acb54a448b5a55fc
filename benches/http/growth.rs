//! Tables grown to 10k, 100k and 1M rows: copies of one real row of each table, made inside
//! the database (a recursive CTE on SQLite, generate_series on PostgreSQL) so that a million
//! rows take seconds.

use paydesk::db::entities::{customers, documents, payments, products, subscriptions};
use sea_orm::{ConnectionTrait, DatabaseConnection, EntityTrait, IdenStatic, Iterable, Statement};

use crate::server::Backend;

/// Copies the row `template` of `E`'s table as rows number `from..to`, ids `<template>_<n>`;
/// `overrides` replaces a column's value by an SQL expression (over `t`, the template row).
pub async fn copy<E: EntityTrait>(
    db: &DatabaseConnection,
    backend: Backend,
    template: &str,
    from: u64,
    to: u64,
    overrides: &[(&str, &str)],
) {
    if from >= to {
        return;
    }
    let table = E::default().table_name().to_string();
    let columns: Vec<String> =
        E::Column::iter().map(|c| c.as_str().to_string()).filter(|c| !matches!(c.as_str(), "seq" | "id")).collect();
    let names = columns.iter().map(|c| format!("\"{c}\"")).collect::<Vec<_>>().join(", ");
    let values = columns
        .iter()
        .map(|c| overrides.iter().find(|(name, _)| name == c).map_or(format!("t.\"{c}\""), |(_, v)| v.to_string()))
        .collect::<Vec<_>>()
        .join(", ");
    let (last, first) = (to - 1, from);
    let sql = match backend {
        Backend::Sqlite => format!(
            "WITH RECURSIVE s(i) AS (SELECT {first} UNION ALL SELECT i + 1 FROM s WHERE i < {last}) \
             INSERT INTO {table} (id, {names}) SELECT t.id || '_' || s.i, {values} FROM {table} t, s \
             WHERE t.id = '{template}'"
        ),
        Backend::Postgres => format!(
            "INSERT INTO {table} (id, {names}) SELECT t.id || '_' || s.i, {values} \
             FROM {table} t, generate_series({first}, {last}) AS s(i) WHERE t.id = '{template}'"
        ),
    };
    db.execute_unprepared(&sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// Templates of the grown tables.
pub struct Templates {
    pub product: String,
    pub customer: String,
    pub payment: String,
    pub subscription: String,
    /// The template payment's invoice.
    pub invoice: String,
}

/// Grows every table from `from` to `to` rows of copies (the ledger of MRR with them, see
/// [`ledger`]), as a shop's year would hold them:
/// each product and customer named apart (copy `i` is the product `<name> <i>x` and the
/// customer `c<i>.<e-mail>`), and the payments 30 seconds apart, newest first, every tenth
/// declined, the `i`th paid by the `i`th customer, and invoiced (the failed ones too: the
/// invoices are as many as the other rows), numbered on from its series' last.
pub async fn grow(db: &DatabaseConnection, backend: Backend, t: &Templates, from: u64, to: u64) {
    copy::<products::Entity>(db, backend, &t.product, from, to, &[("name", "t.name || ' ' || s.i || 'x'")]).await;
    copy::<customers::Entity>(db, backend, &t.customer, from, to, &[("email", "'c' || s.i || '.' || t.email")]).await;
    let older = match backend {
        Backend::Sqlite => "strftime('%Y-%m-%dT%H:%M:%f', t.created_at, '-' || (s.i * 30) || ' seconds') || '+00:00'",
        Backend::Postgres => "t.created_at - make_interval(secs => s.i * 30)",
    };
    let customer = format!("'{}_' || s.i", t.customer);
    // A year's payments are settled: the simulated card network and the late lookup of
    // declined ones have long done with them (copied pending, they kept the server's workers
    // writing through every measurement).
    let payment = [
        ("billing_key", "NULL"),
        ("network_at", "NULL"),
        ("recheck_at", "NULL"),
        ("created_at", older),
        ("status", "CASE WHEN s.i % 10 = 0 THEN 'failed' ELSE t.status END"),
        ("customer_id", customer.as_str()),
    ];
    copy::<payments::Entity>(db, backend, &t.payment, from, to, &payment).await;
    copy::<subscriptions::Entity>(db, backend, &t.subscription, from, to, &[]).await;
    invoices(db, backend, t, from, to, older).await;
    ledger(db, backend, t, from, to).await;
    // The triggers added a row of change per copy: fold them, as the scheduler does every
    // minute.
    paydesk::db::summaries::compact(db).await.unwrap();
    settle(db, backend).await;
}

/// Copies the template invoice as rows `from..to`, for the payments and customers of the
/// same numbers, numbered on from its series' last number (which moves past them).
async fn invoices(db: &DatabaseConnection, backend: Backend, t: &Templates, from: u64, to: u64, older: &str) {
    let series = format!(
        "FROM document_series s JOIN documents d ON d.shop_id = s.shop_id AND d.kind = s.kind AND d.test = s.test \
         WHERE d.id = '{}'",
        t.invoice
    );
    let sql = format!("SELECT s.last_issued {series}");
    let row = db.query_one(Statement::from_string(db.get_database_backend(), sql)).await.unwrap().unwrap();
    let last: i64 = row.try_get_by_index(0).unwrap();
    let number = format!("{} + s.i", last - from as i64 + 1);
    let text = format!("replace(t.number_text, CAST(t.number AS TEXT), CAST({number} AS TEXT))");
    let customer = format!("'{}_' || s.i", t.customer);
    let issued = older.replace("created_at", "issued_at");
    let invoice = [
        ("number", number.as_str()),
        ("number_text", text.as_str()),
        ("source", "t.source || '_' || s.i"),
        ("payment_id", "t.payment_id || '_' || s.i"),
        ("customer_id", customer.as_str()),
        ("issued_at", issued.as_str()),
    ];
    copy::<documents::Entity>(db, backend, &t.invoice, from, to, &invoice).await;
    let moved = (to - from) as i64;
    let sql = format!(
        "UPDATE document_series SET last_issued = last_issued + {moved}, next_number = last_issued + {moved} + 1 \
         WHERE (shop_id, kind, test) IN (SELECT s.shop_id, s.kind, s.test {series})"
    );
    db.execute_unprepared(&sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// Brings the database's statistics up to its rows, as it would be in production a minute
/// after a burst of writes: without it a planner that last looked at an empty table guesses
/// it small (PostgreSQL then sorted 6,000 products for a page of 51, 16 ms a page).
pub async fn settle(db: &DatabaseConnection, backend: Backend) {
    match backend {
        // As autovacuum does after such growth (folding deleted as many rows as it added).
        Backend::Postgres => {
            db.execute_unprepared("VACUUM ANALYZE").await.unwrap();
        }
        // As the server does within moments of the writes, their words indexed (a server
        // started on the copies would otherwise index them while it is measured); as the
        // scheduler does every hour; and the copies went through the write-ahead log in one
        // transaction: fold it into the database, as SQLite's automatic checkpoints do over
        // time, before measuring.
        Backend::Sqlite => {
            paydesk::db::search_index::catch_up(db).await.unwrap();
            paydesk::db::optimize(db).await.unwrap();
            db.execute_unprepared("PRAGMA wal_checkpoint(TRUNCATE)").await.unwrap();
        }
    }
}

/// Makes `n` copies of the template subscription due (renewal at their creation time), or as
/// many as there are; answers how many.
pub async fn make_due(db: &DatabaseConnection, template: &str, n: u64) -> u64 {
    let sql = format!(
        "UPDATE subscriptions SET renew_at = created_at, active_to = created_at WHERE seq IN \
         (SELECT seq FROM subscriptions WHERE id LIKE '{template}\\_%' ESCAPE '\\' AND renew_at > created_at \
          ORDER BY seq LIMIT {n})"
    );
    db.execute_unprepared(&sql).await.unwrap_or_else(|e| panic!("{sql}: {e}")).rows_affected()
}

/// Grows the ledger of MRR movements with the subscriptions' copies `from..to`, as a year of
/// a shop's subscriptions would have made it: each copy's customer (the customer copy of the
/// same number) came in (`new`, 9.90) at a time spread over the year before `now`, every tenth
/// churned 20 days later (where that is past), and every seventh moved up to 29.90 ten days in.
/// Times are whole seconds, written as the server writes them (RFC 3339, no fraction).
pub async fn ledger(db: &DatabaseConnection, backend: Backend, t: &Templates, from: u64, to: u64) {
    if from >= to {
        return;
    }
    let (last, first) = (to - 1, from);
    let rows = match backend {
        Backend::Sqlite => {
            format!("WITH RECURSIVE s(i) AS (SELECT {first} UNION ALL SELECT i + 1 FROM s WHERE i < {last})")
        }
        Backend::Postgres => String::new(),
    };
    let series = match backend {
        Backend::Sqlite => "s".to_string(),
        Backend::Postgres => format!("generate_series({first}, {last}) AS s(i)"),
    };
    let at = |days: u64| match backend {
        Backend::Sqlite => format!(
            "strftime('%Y-%m-%dT%H:%M:%S', 'now', '-' || ((s.i * 7919) % 31536000) || ' seconds', '+{days} days') || '+00:00'"
        ),
        Backend::Postgres => {
            format!(
                "date_trunc('second', now()) - make_interval(secs => (s.i::bigint * 7919) % 31536000) + make_interval(days => {days})"
            )
        }
    };
    let customer = format!("'{}_' || s.i", t.customer);
    let subscription = format!("'{}_' || s.i", t.subscription);
    let columns = "shop_id, test, currency, customer_id, subscription_id, event_id, kind, mrr, paused, subscribers, \
                   mrr_after, paused_after, occurred_at";
    let template = format!(
        "SELECT x.shop_id, x.test, p.currency FROM subscriptions x JOIN plans p ON p.id = x.plan_id WHERE x.id = '{}'",
        t.subscription
    );
    for (kind, mrr, subscribers, after, days, which) in [
        ("new", 990, 1, 990, 0, "1 = 1"),
        ("expansion", 2000, 0, 2990, 10, "s.i % 7 = 0"),
        ("churn", -990, -1, 0, 20, "s.i % 10 = 0 AND s.i % 7 <> 0"),
    ] {
        let when = at(days);
        let past = match backend {
            Backend::Sqlite => format!("{when} < strftime('%Y-%m-%dT%H:%M:%S', 'now') || '+00:00'"),
            Backend::Postgres => format!("{when} < now()"),
        };
        let sql = format!(
            "{rows} INSERT INTO mrr_movements ({columns}) SELECT t.shop_id, t.test, t.currency, {customer}, {subscription}, \
             'evt_bench_{kind}_' || s.i, '{kind}', {mrr}, 0, {subscribers}, {after}, 0, {when} \
             FROM ({template}) t, {series} WHERE {which} AND {past}"
        );
        db.execute_unprepared(&sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
}
