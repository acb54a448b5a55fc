//! Cancels, pauses and resumes, each one guarded update that a charge in flight or another
//! change wins against.

use super::*;

/// Cancels by the merchant, if the subscription has not ended yet: one guarded update, so a
/// cancel that succeeded is final (the engine's next save finds the state changed and
/// stands down). Answers the cancelled subscription and its timeline line, for the caller
/// to store in the same transaction; `None` when it had already ended.
pub async fn cancel(
    txn: &impl ConnectionTrait,
    sub: &Model,
    reason: Option<String>,
    at_period_end: bool,
    now: DateTime<Utc>,
) -> Result<Option<(Model, events::ActiveModel)>, DbErr> {
    let at = crate::db::now_millis(now);
    // Ended with its period as asked, it keeps saying so (as Stripe's does); cancelled now,
    // a cancel that waited for the period end is over.
    let mut update = Entity::update_many()
        .col_expr(Column::State, Expr::value(State::Canceled))
        .col_expr(Column::RenewAt, Expr::value(Option::<DateTime<Utc>>::None))
        .col_expr(Column::CancelAtPeriodEnd, Expr::value(at_period_end));
    // A reason given earlier (when it was set to end with its period) stays unless a new one is.
    if reason.is_some() {
        update = update.col_expr(Column::CancelReason, Expr::value(reason));
    }
    let result = update
        .col_expr(Column::CancelledAt, Expr::value(Some(at)))
        .col_expr(Column::UpdatedAt, Expr::value(at))
        .filter(Column::Id.eq(sub.id.as_str()))
        .filter(Column::State.is_in(State::OPEN))
        .exec(txn)
        .await?;
    if result.rows_affected != 1 {
        return Ok(None);
    }
    let sub = Entity::find().filter(Column::Id.eq(sub.id.as_str())).one(txn).await?;
    let Some(sub) = sub else { return Ok(None) };
    let from = events::Entity::find()
        .filter(events::Column::SubscriptionId.eq(sub.id.as_str()))
        .order_by_desc(events::Column::Seq)
        .one(txn)
        .await?
        .map(|e| e.to_state);
    let line = event_row(&sub, from, (sub.state, None), None, sub.cancel_reason.clone(), now);
    Ok(Some((sub, line)))
}

/// Marks a subscription in its trial or a paid period to end when that period does, without
/// another charge, keeping the `reason` for then; answers it marked, `None` if it was marked
/// already or is in no such state any more (the lost race).
pub async fn cancel_at_period_end(
    db: &impl ConnectionTrait,
    sub: &Model,
    reason: Option<String>,
    now: DateTime<Utc>,
) -> Result<Option<Model>, DbErr> {
    let mut update = Entity::update_many().col_expr(Column::CancelAtPeriodEnd, Expr::value(true));
    if reason.is_some() {
        update = update.col_expr(Column::CancelReason, Expr::value(reason));
    }
    guarded(
        db,
        &sub.id,
        now,
        update,
        Condition::all()
            .add(Column::State.is_in([State::Trial, State::Active]))
            .add(Column::CancelAtPeriodEnd.eq(false)),
    )
    .await
}

/// Withdraws a cancel at the end of the period of a subscription still in its trial or a
/// paid period (its reminders are looked at again); answers it, `None` if there was none to
/// withdraw.
pub async fn withdraw_cancellation(
    db: &impl ConnectionTrait,
    sub: &Model,
    now: DateTime<Utc>,
) -> Result<Option<Model>, DbErr> {
    let update = Entity::update_many()
        .col_expr(Column::CancelAtPeriodEnd, Expr::value(false))
        .col_expr(Column::CancelReason, Expr::value(Option::<String>::None))
        .col_expr(Column::RemindAt, Expr::value(Option::<DateTime<Utc>>::None));
    guarded(
        db,
        &sub.id,
        now,
        update,
        Condition::all()
            .add(Column::State.is_in([State::Trial, State::Active]))
            .add(Column::CancelAtPeriodEnd.eq(true)),
    )
    .await
}

/// When a pause ends by itself and how the subscription goes on then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResumePlan {
    pub at: Option<DateTime<Utc>>,
    pub billing: ResumeBilling,
}

/// Pauses a subscription in its trial, a paid period or its retries at once (or sets when a
/// paused one resumes), if no money is in flight for it and it is not set to end with its
/// period; answers it, `None` when it lost that race or is in no such state.
pub async fn pause_now(
    db: &impl ConnectionTrait,
    sub: &Model,
    resume: ResumePlan,
    now: DateTime<Utc>,
) -> Result<Option<Model>, DbErr> {
    let at = crate::db::now_millis(now);
    let resume_at = resume.at.map(crate::db::now_millis);
    let mut update = Entity::update_many()
        .col_expr(Column::State, Expr::value(State::Paused))
        .col_expr(Column::RenewAt, Expr::value(resume_at))
        .col_expr(Column::ResumeAt, Expr::value(resume_at))
        .col_expr(Column::ResumeBilling, Expr::value(Some(resume.billing)))
        .col_expr(Column::PauseAtPeriodEnd, Expr::value(false));
    // Asked again while paused, it only moves the resume.
    if sub.state != State::Paused {
        update = update.col_expr(Column::PausedAt, Expr::value(Some(at)));
    }
    guarded(
        db,
        &sub.id,
        now,
        update,
        Condition::all()
            .add(Column::State.eq(sub.state))
            .add(Column::State.is_in(State::PAUSABLE.iter().copied().chain([State::Paused])))
            .add(Column::CancelAtPeriodEnd.eq(false))
            .add(idle()),
    )
    .await
}

/// Sets a subscription in its trial or a paid period to pause when that period ends (or
/// changes when it resumes then); answers it, `None` when it is in no such state or is set
/// to end with its period.
pub async fn pause_at_period_end(
    db: &impl ConnectionTrait,
    sub: &Model,
    resume: ResumePlan,
    now: DateTime<Utc>,
) -> Result<Option<Model>, DbErr> {
    let update = Entity::update_many()
        .col_expr(Column::PauseAtPeriodEnd, Expr::value(true))
        .col_expr(Column::ResumeAt, Expr::value(resume.at.map(crate::db::now_millis)))
        .col_expr(Column::ResumeBilling, Expr::value(Some(resume.billing)));
    guarded(
        db,
        &sub.id,
        now,
        update,
        Condition::all()
            .add(Column::State.is_in([State::Trial, State::Active]))
            .add(Column::CancelAtPeriodEnd.eq(false)),
    )
    .await
}

/// Withdraws a pause set for the end of the period, while it is still to come; answers the
/// subscription, `None` if there was none to withdraw.
pub async fn withdraw_pause(
    db: &impl ConnectionTrait,
    sub: &Model,
    now: DateTime<Utc>,
) -> Result<Option<Model>, DbErr> {
    let update = Entity::update_many()
        .col_expr(Column::PauseAtPeriodEnd, Expr::value(false))
        .col_expr(Column::ResumeAt, Expr::value(Option::<DateTime<Utc>>::None))
        .col_expr(Column::ResumeBilling, Expr::value(Option::<ResumeBilling>::None));
    guarded(
        db,
        &sub.id,
        now,
        update,
        Condition::all().add(Column::State.is_in([State::Trial, State::Active])).add(Column::PauseAtPeriodEnd.eq(true)),
    )
    .await
}

/// The engine pauses a subscription whose paid period it was set to pause from has ended,
/// while it holds the claim `token`: until its resume date, if it has one.
pub async fn pause_from_period_end(
    db: &impl ConnectionTrait,
    sub: &Model,
    token: &str,
    progress: &Progress,
    now: DateTime<Utc>,
) -> Result<Option<Model>, DbErr> {
    let at = crate::db::now_millis(now);
    let update = Entity::update_many()
        .col_expr(Column::State, Expr::value(progress.state))
        .col_expr(Column::RenewAt, Expr::value(progress.renew_at.map(crate::db::now_millis)))
        .col_expr(Column::PauseAtPeriodEnd, Expr::value(false))
        .col_expr(Column::PausedAt, Expr::value(Some(at)))
        .col_expr(Column::ClaimToken, Expr::value(Option::<String>::None))
        .col_expr(Column::ClaimedUntil, Expr::value(Option::<DateTime<Utc>>::None));
    guarded(
        db,
        &sub.id,
        now,
        update,
        Condition::all()
            .add(Column::ClaimToken.eq(token))
            .add(Column::State.eq(sub.state))
            .add(Column::PauseAtPeriodEnd.eq(true)),
    )
    .await
}

/// Who resumes a paused subscription: the engine holding its claim (its resume date came),
/// or a merchant while no engine holds it.
pub enum Resumer<'a> {
    Engine(&'a str),
    Merchant,
}

/// Resumes a paused subscription with `progress` counted from `anchor`, if it is still
/// paused and `by` may: the engine by its claim, a merchant while nothing is in flight.
/// `claim` keeps it claimed for a charge made at once; else it is left to the engine.
pub async fn resume(
    db: &impl ConnectionTrait,
    sub: &Model,
    by: Resumer<'_>,
    (progress, anchor): (&Progress, crate::domain::billing::Anchor),
    claim: Option<(&str, DateTime<Utc>)>,
    now: DateTime<Utc>,
) -> Result<Option<Model>, DbErr> {
    let mut row = <ActiveModel as Default>::default();
    set_progress(&mut row, progress);
    row.anchor_at = Set(Some(crate::db::now_millis(anchor.at)));
    row.anchor_period = Set(anchor.period);
    row.pause_at_period_end = Set(false);
    row.resume_at = Set(None);
    row.resume_billing = Set(None);
    row.remind_at = Set(None);
    row.claim_token = Set(claim.map(|c| c.0.to_string()));
    row.claimed_until = Set(claim.map(|c| crate::db::now_millis(c.1)));
    let held = match by {
        Resumer::Engine(token) => Condition::all().add(Column::ClaimToken.eq(token)),
        Resumer::Merchant => idle(),
    };
    let update = Entity::update_many().set(row);
    guarded(db, &sub.id, now, update, Condition::all().add(Column::State.eq(State::Paused)).add(held)).await
}
