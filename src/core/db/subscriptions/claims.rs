//! The engine's claims: what is due is claimed by one run at a time under a token and a
//! lease, and its progress saved only while that claim holds.

use super::*;

/// Saves the progress after a charge (or the end) and gives up the claim, if, and only if,
/// the engine still holds the claim `token` and the subscription is still in the state the
/// engine read: a cancel (or another engine that took over an expired claim) wins, and this
/// one stands down. `None` when it lost.
pub async fn save_progress(
    db: &impl ConnectionTrait,
    sub: Model,
    token: &str,
    progress: &Progress,
    last_payment_id: Option<String>,
    now: DateTime<Utc>,
) -> Result<Option<Model>, DbErr> {
    let read_state = sub.state;
    let mut row = sub.into_active_model();
    set_progress(&mut row, progress);
    if let Some(id) = last_payment_id {
        row.last_payment_id = Set(Some(id));
    }
    if let Some(reason) = crate::domain::billing::end_reason(progress) {
        row.cancelled_at = Set(Some(crate::db::now_millis(now)));
        row.cancel_reason = Set(Some(reason.into()));
    }
    row.claim_token = Set(None);
    row.claimed_until = Set(None);
    row.updated_at = Set(crate::db::now_millis(now));
    let id = row.id.clone().unwrap();
    let result = Entity::update_many()
        .set(row.clone())
        .filter(Column::Id.eq(id.as_str()))
        .filter(Column::ClaimToken.eq(token))
        .filter(Column::State.eq(read_state))
        .exec(db)
        .await?;
    if result.rows_affected != 1 {
        return Ok(None);
    }
    row.try_into_model().map(Some)
}

/// Claims these subscriptions (of a test clock's advance) for `token` until `lease_until`,
/// if they are still due by `due_by` (a pause or a moved resume since they were read leaves
/// them alone) and no other run holds an unexpired claim on them; answers the claimed ones.
pub async fn claim_ids(
    db: &impl ConnectionTrait,
    ids: Vec<String>,
    due_by: DateTime<Utc>,
    token: &str,
    lease_until: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<Vec<Model>, DbErr> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    Entity::update_many()
        .col_expr(Column::ClaimToken, Expr::value(token))
        .col_expr(Column::ClaimedUntil, Expr::value(crate::db::now_millis(lease_until)))
        .filter(Column::Id.is_in(ids))
        .filter(Column::State.is_in(State::SCHEDULED.map(State::as_str)))
        .filter(Column::RenewAt.lte(crate::db::now_millis(due_by)))
        .filter(Column::ClaimedUntil.is_null().or(Column::ClaimedUntil.lt(crate::db::now_millis(now))))
        .exec(db)
        .await?;
    Entity::find().filter(Column::ClaimToken.eq(token)).order_by_asc(Column::RenewAt).all(db).await
}

/// Extends the claims of `token` to `lease_until` (while a long batch still runs).
pub async fn renew_claims(db: &impl ConnectionTrait, token: &str, lease_until: DateTime<Utc>) -> Result<(), DbErr> {
    Entity::update_many()
        .col_expr(Column::ClaimedUntil, Expr::value(crate::db::now_millis(lease_until)))
        .filter(Column::ClaimToken.eq(token))
        .exec(db)
        .await?;
    Ok(())
}

/// Of these subscriptions, the ids still claimed by `token` and still billing (or waiting
/// for their first charge): the gate each charge passes just before the acquirer is asked,
/// so nothing is charged once a cancel has committed.
pub async fn still_billing(
    db: &impl ConnectionTrait,
    ids: Vec<String>,
    token: &str,
) -> Result<std::collections::HashSet<String>, DbErr> {
    let mut open = State::BILLING.to_vec();
    open.push(State::Redirecting);
    let found: Vec<String> = Entity::find()
        .select_only()
        .column(Column::Id)
        .filter(Column::Id.is_in(ids))
        .filter(Column::ClaimToken.eq(token))
        .filter(Column::State.is_in(open.into_iter().map(State::as_str)))
        .into_tuple()
        .all(db)
        .await?;
    Ok(found.into_iter().collect())
}

/// Claims up to `limit` real-time subscriptions due by `due_by` until `lease_until` (and those whose first
/// charge a stopped request left unfinished, once its claim ran out): of several engines
/// (or overlapping runs), each row goes to one. PostgreSQL skips rows another engine is
/// claiming; SQLite runs each UPDATE as one write transaction.
///
/// The two kinds are claimed by two statements, each walking its part of the index of due
/// subscriptions (one statement with an `OR` of both read every real-time subscription).
///
/// Whether another claim ran out is judged at `now`, the real time that claims are taken and
/// renewed in; a run dated later (after downtime, or in a test) only sees more rows due. Judged
/// at the run's time, a lease its holder had just renewed looked long gone, and a second worker
/// took the subscription it was charging.
pub async fn claim_due(
    db: &impl ConnectionTrait,
    due_by: DateTime<Utc>,
    now: DateTime<Utc>,
    limit: u64,
    token: &str,
    lease_until: DateTime<Utc>,
) -> Result<Vec<Model>, DbErr> {
    let backend = db.get_database_backend();
    let claim = Claim { token, lease_until, now, due_by };
    let mut claimed = 0;
    for kind in [Due::Scheduled, Due::Unfinished] {
        if claimed >= limit {
            break;
        }
        claimed += db.execute(claim.statement(backend, kind, limit - claimed)).await?.rows_affected();
    }
    Entity::find().filter(Column::ClaimToken.eq(token)).order_by_asc(Column::RenewAt).all(db).await
}

/// What [`claim_due`] claims: the subscriptions due (scheduled states), or the starts whose
/// first charge a stopped request left unfinished.
#[derive(Debug, Clone, Copy)]
pub enum Due {
    Scheduled,
    Unfinished,
}

/// A claim [`claim_due`] takes: for `token` until `lease_until`, of what is due by `due_by`
/// and not claimed by another run at `now`.
pub struct Claim<'a> {
    pub token: &'a str,
    pub lease_until: DateTime<Utc>,
    pub now: DateTime<Utc>,
    pub due_by: DateTime<Utc>,
}

impl Claim<'_> {
    /// The statement claiming up to `limit` of the `kind` due, the earliest due first, read in
    /// the order of a partial index that holds only what the engine acts on.
    pub fn statement(&self, backend: DatabaseBackend, kind: Due, limit: u64) -> Statement {
        let (p, lock) = match backend {
            DatabaseBackend::Postgres => (["$1", "$2", "$3", "$4"], " FOR UPDATE SKIP LOCKED"),
            _ => (["?", "?", "?", "?"], ""),
        };
        // SQLite's planner would rather sort what the index of due subscriptions finds, a sort
        // of everything due for each batch.
        let index = match (backend, kind) {
            (DatabaseBackend::Sqlite, Due::Scheduled) => " INDEXED BY ix_subscriptions_due_order",
            _ => "",
        };
        // A start whose first charge's answer is not known yet waits for its next lookup; one
        // waiting for its customer to confirm a renewal (a charge made, no time set) is not the
        // engine's until they come back.
        let condition = match kind {
            Due::Scheduled => format!("{} AND renew_at <= {}", scheduled(), p[3]),
            Due::Unfinished => format!(
                "state = 'redirecting' AND started_at IS NOT NULL \
                 AND ((renew_at IS NULL AND last_payment_id IS NULL) OR renew_at <= {})",
                p[3]
            ),
        };
        let sql = format!(
            "UPDATE subscriptions SET claim_token = {}, claimed_until = {} WHERE seq IN (\
             SELECT seq FROM subscriptions{index} WHERE test_clock_id IS NULL \
             AND (claimed_until IS NULL OR claimed_until < {}) AND {condition} ORDER BY renew_at LIMIT {limit}{lock})",
            p[0], p[1], p[2],
        );
        let now = |at: DateTime<Utc>| crate::db::now_millis(at);
        // In the order of the text: SQLite's `?` are bound by place.
        let values =
            vec![self.token.into(), now(self.lease_until).into(), now(self.now).into(), now(self.due_by).into()];
        Statement::from_sql_and_values(backend, sql, values)
    }
}

/// Makes a subscription waiting for its next lookup due at `now` (its processor has news
/// of the charge); one on a test clock keeps the clock's time.
pub async fn due_now(db: &impl ConnectionTrait, id: &str, now: DateTime<Utc>) -> Result<(), DbErr> {
    let at = crate::db::now_millis(now);
    Entity::update_many()
        .col_expr(Column::RenewAt, Expr::value(Some(at)))
        .filter(Column::Id.eq(id))
        .filter(Column::TestClockId.is_null())
        .filter(Column::RenewAt.gt(at))
        .exec(db)
        .await?;
    Ok(())
}

/// How many real-time subscriptions are due at `now` and not yet charged.
pub async fn count_due(db: &impl ConnectionTrait, now: DateTime<Utc>) -> Result<u64, DbErr> {
    Entity::find()
        .filter(Column::TestClockId.is_null())
        .filter(Expr::cust(scheduled()))
        .filter(Column::RenewAt.lte(crate::db::now_millis(now)))
        .count(db)
        .await
}

/// The billing subscriptions on a test clock that fall due next (at the earliest due time
/// up to `until`), at most `limit` of them.
pub async fn due_next_on_clock(
    db: &impl ConnectionTrait,
    clock_id: &str,
    until: DateTime<Utc>,
    limit: u64,
) -> Result<Vec<Model>, DbErr> {
    let due = || {
        Entity::find()
            .filter(Column::TestClockId.eq(clock_id))
            .filter(Expr::cust(scheduled()))
            .filter(Column::RenewAt.lte(crate::db::now_millis(until)))
    };
    let next: Option<Option<DateTime<Utc>>> =
        due().select_only().column(Column::RenewAt).order_by_asc(Column::RenewAt).into_tuple().one(db).await?;
    let Some(at) = next.flatten() else { return Ok(Vec::new()) };
    due().filter(Column::RenewAt.eq(at)).order_by_asc(Column::Seq).limit(limit).all(db).await
}

/// `state IN (…)` of [`State::SCHEDULED`], written out as the partial indexes of the engine's
/// order (`ix_subscriptions_due_order`, `ix_subscriptions_clock_order`) say it: SQLite uses
/// such an index only for a query that repeats its condition.
fn scheduled() -> String {
    format!("state IN ({})", State::SCHEDULED.map(|s| format!("'{}'", s.as_str())).join(", "))
}

/// Whether the subscription is in `state` with no engine holding it (an unexpired claim);
/// the check is a write, so it waits for a claim being taken at the same moment.
pub async fn unclaimed(db: &impl ConnectionTrait, id: &str, state: State, now: DateTime<Utc>) -> Result<bool, DbErr> {
    let result = Entity::update_many()
        .col_expr(Column::UpdatedAt, Expr::col(Column::UpdatedAt).into())
        .filter(Column::Id.eq(id))
        .filter(Column::State.eq(state))
        .filter(
            Condition::any()
                .add(Column::ClaimedUntil.is_null())
                .add(Column::ClaimedUntil.lt(crate::db::now_millis(now))),
        )
        .exec(db)
        .await?;
    Ok(result.rows_affected == 1)
}

/// Neither held by an engine (an unexpired claim, in real time) nor waiting for the answer
/// of a charge: no money is in flight for it, so a pause or a resume cannot cross a charge.
pub(super) fn idle() -> Condition {
    let unclaimed = Condition::any()
        .add(Column::ClaimedUntil.is_null())
        .add(Column::ClaimedUntil.lt(crate::db::now_millis(Utc::now())));
    let unanswered = Expr::cust(
        "NOT EXISTS (SELECT 1 FROM payments WHERE payments.subscription_id = subscriptions.id \
         AND payments.status = 'processing' AND payments.billing_key IS NOT NULL AND payments.amount > 0)",
    );
    Condition::all().add(unclaimed).add(unanswered)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_scheduled_states_are_written_as_the_indexes_say_them() {
        assert_eq!(super::scheduled(), migration::SCHEDULED);
    }
}
