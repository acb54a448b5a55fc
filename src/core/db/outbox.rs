//! The outboxes (webhook deliveries, mails): rows that wait to be sent, claimed by one worker
//! at a time under a lease, tried until they end, and pruned once ended. What both tables
//! share is done here once.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, UpdateMany};

use super::now_millis;

/// Claims up to `limit` rows of an outbox `table` (webhook deliveries, mails) in `status`,
/// due by `due_by`, for `token` until `lease_until`, unless another worker holds a claim that
/// has not run out at `now`: of several workers, each row goes to one (PostgreSQL skips rows
/// another is claiming; SQLite runs the UPDATE as one write transaction).
pub(crate) async fn claim(
    db: &impl ConnectionTrait,
    table: &str,
    status: &str,
    window: (DateTime<Utc>, DateTime<Utc>),
    limit: u64,
    token: &str,
    lease_until: DateTime<Utc>,
) -> Result<(), DbErr> {
    let backend = db.get_database_backend();
    let (p, lock) = match backend {
        sea_orm::DatabaseBackend::Postgres => (["$1", "$2", "$3", "$4", "$5"], " FOR UPDATE SKIP LOCKED"),
        _ => (["?", "?", "?", "?", "?"], ""),
    };
    let sql = format!(
        "UPDATE {table} SET claim_token = {}, claimed_until = {} WHERE seq IN (\
         SELECT seq FROM {table} WHERE status = {} AND next_attempt_at <= {} \
         AND (claimed_until IS NULL OR claimed_until < {}) ORDER BY next_attempt_at LIMIT {limit}{lock})",
        p[0], p[1], p[2], p[3], p[4]
    );
    let (due_by, now) = (now_millis(window.0), now_millis(window.1));
    let values = [token.into(), now_millis(lease_until).into(), status.into(), due_by.into(), now.into()];
    db.execute(sea_orm::Statement::from_sql_and_values(backend, sql, values)).await?;
    Ok(())
}

/// How many rows one statement of a prune deletes.
const PRUNE_BATCH: u64 = 1000;

/// Deletes, a batch at a time, the rows of an outbox (`table`, whose rows wait in status
/// `waiting`) that ended before `before`, and first their attempts (`attempts`, naming their
/// row in `owner`); answers how many rows went. An ended row no longer changes, so both
/// statements of a batch pick the same rows.
pub(crate) async fn prune(
    db: &impl ConnectionTrait,
    (table, waiting): (&str, &str),
    (attempts, owner): (&str, &str),
    before: DateTime<Utc>,
) -> Result<u64, DbErr> {
    let backend = db.get_database_backend();
    let p = match backend {
        sea_orm::DatabaseBackend::Postgres => ["$1", "$2", "$3"],
        _ => ["?", "?", "?"],
    };
    let ended = format!(
        "FROM {table} WHERE status <> {} AND next_attempt_at < {} AND updated_at < {} ORDER BY seq LIMIT {PRUNE_BATCH}",
        p[0], p[1], p[2]
    );
    let values = || {
        let before = now_millis(before);
        [waiting.into(), before.into(), before.into()]
    };
    let mut pruned = 0;
    loop {
        let sql = format!("DELETE FROM {attempts} WHERE {owner} IN (SELECT id {ended})");
        db.execute(sea_orm::Statement::from_sql_and_values(backend, sql, values())).await?;
        let sql = format!("DELETE FROM {table} WHERE seq IN (SELECT seq {ended})");
        let gone = db.execute(sea_orm::Statement::from_sql_and_values(backend, sql, values())).await?.rows_affected();
        pruned += gone;
        if gone < PRUNE_BATCH {
            return Ok(pruned);
        }
    }
}

/// The columns every outbox table has alike.
pub(crate) struct Columns<C> {
    pub id: C,
    pub status: C,
    pub attempts: C,
    pub next_attempt_at: C,
    pub claim_token: C,
    pub claimed_until: C,
    /// The answer's code (an HTTP status, an SMTP reply).
    pub last_code: C,
    pub last_error: C,
    pub updated_at: C,
}

/// How an attempt at an outbox row ended.
pub(crate) struct Ended<'a> {
    /// The row's status after it.
    pub status: &'a str,
    pub at: DateTime<Utc>,
    /// When it is tried again (`None`: it is not).
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub code: Option<i32>,
    pub error: Option<String>,
}

/// The update that ends an attempt at the row `id` claimed under `token`: its status, one
/// more attempt, when it is tried again, the answer's code and error, and the claim let go.
/// It changes nothing once another worker took over a claim that ran out.
pub(crate) fn end_attempt<E: EntityTrait>(
    c: &Columns<E::Column>,
    id: &str,
    token: &str,
    ended: &Ended,
) -> UpdateMany<E> {
    let at = now_millis(ended.at);
    E::update_many()
        .col_expr(c.status, Expr::value(ended.status))
        .col_expr(c.attempts, Expr::col(c.attempts).add(1))
        .col_expr(c.next_attempt_at, Expr::value(now_millis(ended.next_attempt_at.unwrap_or(at))))
        .col_expr(c.claim_token, Expr::value(Option::<String>::None))
        .col_expr(c.claimed_until, Expr::value(Option::<DateTime<Utc>>::None))
        .col_expr(c.last_code, Expr::value(ended.code))
        .col_expr(c.last_error, Expr::value(ended.error.clone()))
        .col_expr(c.updated_at, Expr::value(at))
        .filter(c.id.eq(id))
        .filter(c.claim_token.eq(token))
}
