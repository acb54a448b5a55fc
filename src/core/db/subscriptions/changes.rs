//! Plan changes and discounts.

use super::*;

/// Ends a pending plan change while the engine holds the claim `token`: to `plan_id` with
/// `progress` counted from `anchor` (or, without a plan, dropped: the subscription goes on
/// with `progress`), with its charge `payment_id` if it had one; the claim is given up.
/// `None` when another change won.
pub async fn settle_change(
    db: &impl ConnectionTrait,
    sub: &Model,
    token: &str,
    (progress, anchor): (&Progress, crate::domain::billing::Anchor),
    plan_id: Option<&str>,
    payment_id: Option<&str>,
    now: DateTime<Utc>,
) -> Result<Option<Model>, DbErr> {
    let mut row = <ActiveModel as Default>::default();
    set_progress(&mut row, progress);
    if let Some(id) = payment_id {
        row.last_payment_id = Set(Some(id.to_string()));
    }
    match plan_id {
        Some(plan_id) => set_plan(&mut row, plan_id, anchor),
        None => clear_change(&mut row),
    }
    row.claim_token = Set(None);
    row.claimed_until = Set(None);
    let update = Entity::update_many().set(row);
    guarded(
        db,
        &sub.id,
        now,
        update,
        Condition::all().add(Column::ClaimToken.eq(token)).add(Column::State.eq(sub.state)),
    )
    .await
}

/// Puts a row on `plan_id`, its periods counted from `anchor` (its reminders follow the new
/// plan), with no change pending any more.
pub(super) fn set_plan(row: &mut ActiveModel, plan_id: &str, anchor: crate::domain::billing::Anchor) {
    row.plan_id = Set(plan_id.to_string());
    row.anchor_at = Set(Some(crate::db::now_millis(anchor.at)));
    row.anchor_period = Set(anchor.period);
    row.remind_at = Set(None);
    clear_change(row);
}

/// No plan change pending on a row any more.
pub(super) fn clear_change(row: &mut ActiveModel) {
    row.change_plan_id = Set(None);
    row.change_id = Set(None);
    row.change_amount = Set(None);
    row.change_at = Set(None);
}

/// A subscription a merchant's plan change may take: in its trial or a paid period, on the
/// plan and in the period `sub` was read in (what the change was worked out from; a renewal
/// meanwhile makes it stale), no change being charged, nothing in flight.
pub(super) fn changeable(sub: &Model) -> Condition {
    Condition::all()
        .add(Column::Id.eq(sub.id.as_str()))
        .add(Column::State.eq(sub.state))
        .add(Column::State.is_in([State::Trial, State::Active]))
        .add(Column::PlanId.eq(sub.plan_id.as_str()))
        .add(Column::Period.eq(sub.period))
        .add(Column::PaidCycles.eq(sub.paid_cycles))
        .add(Column::ChangeAmount.is_null())
        .add(idle())
}

/// What a merchant asks of a plan change.
pub struct ChangeAsk<'a> {
    pub plan_id: &'a str,
    pub change_id: &'a str,
    /// Asked now: the prorated amount to charge (0: none), prorated at `at`.
    pub now: Option<(i64, DateTime<Utc>)>,
}

/// Sets a change to another plan on a subscription in its trial or a paid period whose plan
/// and period are still those of `sub` (what the change was worked out from), no change
/// pending and nothing in flight. Asked now with an amount
/// to charge, it is claimed under `claim` and due at once (its charge is made under the
/// change's key); asked for the period end, it waits for it. `None` when it lost that race.
pub async fn ask_change(
    db: &impl ConnectionTrait,
    sub: &Model,
    ask: ChangeAsk<'_>,
    claim: Option<(&str, DateTime<Utc>)>,
    now: DateTime<Utc>,
) -> Result<Option<Model>, DbErr> {
    let mut update = Entity::update_many()
        .col_expr(Column::ChangePlanId, Expr::value(Some(ask.plan_id)))
        .col_expr(Column::ChangeId, Expr::value(Some(ask.change_id)))
        .col_expr(Column::ChangeAmount, Expr::value(ask.now.map(|n| n.0)))
        .col_expr(Column::ChangeAt, Expr::value(ask.now.map(|n| crate::db::now_millis(n.1))));
    if let (Some((_, at)), Some((token, until))) = (ask.now, claim) {
        update = update
            .col_expr(Column::RenewAt, Expr::value(Some(crate::db::now_millis(at))))
            .col_expr(Column::ClaimToken, Expr::value(Some(token)))
            .col_expr(Column::ClaimedUntil, Expr::value(Some(crate::db::now_millis(until))));
    }
    guarded(db, &sub.id, now, update, Condition::all().add(changeable(sub))).await
}

/// Switches the plan of a subscription in its trial or a paid period at once, with nothing
/// to charge (a trial, or a change that costs nothing more), if its plan is still
/// `sub.plan_id` and nothing is in flight; `None` when it lost that race.
pub async fn switch_plan(
    db: &impl ConnectionTrait,
    sub: &Model,
    plan_id: &str,
    (progress, anchor): (&Progress, crate::domain::billing::Anchor),
    now: DateTime<Utc>,
) -> Result<Option<Model>, DbErr> {
    let mut row = <ActiveModel as Default>::default();
    set_progress(&mut row, progress);
    set_plan(&mut row, plan_id, anchor);
    let update = Entity::update_many().set(row);
    guarded(db, &sub.id, now, update, Condition::all().add(changeable(sub))).await
}

/// Withdraws a change set for the period end; answers the subscription, `None` if there was
/// none.
pub async fn withdraw_change(
    db: &impl ConnectionTrait,
    sub: &Model,
    now: DateTime<Utc>,
) -> Result<Option<Model>, DbErr> {
    let update = Entity::update_many()
        .col_expr(Column::ChangePlanId, Expr::value(Option::<String>::None))
        .col_expr(Column::ChangeId, Expr::value(Option::<String>::None));
    guarded(
        db,
        &sub.id,
        now,
        update,
        Condition::all().add(Column::ChangePlanId.is_not_null()).add(Column::ChangeAmount.is_null()),
    )
    .await
}

/// Gives a subscription that has not ended and has no discount the coupon's: from the plan
/// periods it has paid, for `periods` of them (`None`: for ever). `None` when it ended or has
/// one (the lost race).
pub async fn apply_discount(
    db: &impl ConnectionTrait,
    sub: &Model,
    coupon_id: &str,
    periods: Option<i32>,
    now: DateTime<Utc>,
) -> Result<Option<Model>, DbErr> {
    let update = Entity::update_many()
        .col_expr(Column::CouponId, Expr::value(Some(coupon_id)))
        .col_expr(Column::DiscountFrom, Expr::col(Column::PaidCycles).into())
        .col_expr(Column::DiscountPeriods, Expr::value(periods));
    guarded(
        db,
        &sub.id,
        now,
        update,
        Condition::all().add(Column::CouponId.is_null()).add(Column::State.is_in(State::OPEN)),
    )
    .await
}

/// Takes a subscription's discount away; `None` if it had none.
pub async fn remove_discount(
    db: &impl ConnectionTrait,
    sub: &Model,
    now: DateTime<Utc>,
) -> Result<Option<Model>, DbErr> {
    let update = Entity::update_many()
        .col_expr(Column::CouponId, Expr::value(Option::<String>::None))
        .col_expr(Column::DiscountFrom, Expr::value(Option::<i32>::None))
        .col_expr(Column::DiscountPeriods, Expr::value(Option::<i32>::None));
    guarded(db, &sub.id, now, update, Condition::all().add(Column::CouponId.is_not_null())).await
}
