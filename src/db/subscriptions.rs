//! Stored subscriptions, and the claims that let several engines share the work safely.

use chrono::{DateTime, Utc};
use std::collections::HashMap;

use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{
    ActiveModelTrait, ActiveValue::NotSet, ColumnTrait, Condition, ConnectionTrait, DatabaseBackend, DbErr,
    EntityTrait, IntoActiveModel, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Set, Statement, TryIntoModel,
};

use super::entities::subscription_events as events;
use super::entities::subscriptions::{ActiveModel, Column, Entity, Model};
use super::entities::test_card_outcomes as outcomes;
use super::{ListError, Listed, Page, ShopOwned};
use crate::domain::billing::{Progress, ResumeBilling, State};
use crate::domain::card::{Behaviour, CardRef};
use crate::domain::ids::{EVENT, SUBSCRIPTION, new_id};
use crate::domain::subscription::SubscriptionFilter;

impl ShopOwned for Entity {
    const SEQ: Column = Column::Seq;
    const ID: Column = Column::Id;
    const SHOP: Column = Column::ShopId;
    fn public_id(row: &Model) -> &str {
        &row.id
    }
}

impl ShopOwned for events::Entity {
    const SEQ: events::Column = events::Column::Seq;
    const ID: events::Column = events::Column::Id;
    const SHOP: events::Column = events::Column::ShopId;
    fn public_id(row: &events::Model) -> &str {
        &row.id
    }
}

/// A subscription to be stored.
/// A page of the shop's subscriptions that pass `filter`, newest first.
pub async fn list(
    db: &impl ConnectionTrait,
    shop_id: i64,
    page: &Page,
    filter: &SubscriptionFilter,
) -> Result<Listed<Model>, ListError> {
    let mut condition = Condition::all();
    if let Some(state) = filter.state {
        condition = condition.add(Column::State.eq(state));
    }
    if let Some(plan) = &filter.plan {
        condition = condition.add(Column::PlanId.eq(plan.as_str()));
    }
    if let Some(customer) = &filter.customer {
        condition = condition.add(Column::CustomerId.eq(customer.as_str()));
    }
    super::list_where::<Entity>(db, shop_id, page, condition).await
}

/// A page of a subscription's timeline, newest first.
pub async fn events_page(
    db: &impl ConnectionTrait,
    shop_id: i64,
    subscription_id: &str,
    page: &Page,
) -> Result<Listed<events::Model>, ListError> {
    let condition = Condition::all().add(events::Column::SubscriptionId.eq(subscription_id));
    super::list_where::<events::Entity>(db, shop_id, page, condition).await
}

/// A subscription's whole timeline, newest first.
pub async fn timeline(
    db: &impl ConnectionTrait,
    shop_id: i64,
    subscription_id: &str,
) -> Result<Vec<events::Model>, DbErr> {
    events::Entity::find()
        .filter(events::Column::ShopId.eq(shop_id))
        .filter(events::Column::SubscriptionId.eq(subscription_id))
        .order_by_desc(events::Column::Seq)
        .all(db)
        .await
}

/// Counts the shop's subscriptions in each state.
pub async fn count_by_state(db: &impl ConnectionTrait, shop_id: i64) -> Result<Vec<(State, i64)>, DbErr> {
    // Kept by triggers on `subscriptions` as rows of change, summed here (`db::summaries`).
    use super::entities::subscription_counts::{Column as C, Entity as Counts};
    Counts::find()
        .select_only()
        .column(C::State)
        .column_as(super::summed(C::Subscriptions), "subscriptions")
        .filter(C::ShopId.eq(shop_id))
        .group_by(C::State)
        .having(super::summed(C::Subscriptions).ne(0))
        .order_by_asc(C::State)
        .into_tuple()
        .all(db)
        .await
}

pub struct NewSubscription {
    /// The id its asker chose (a dashboard form's one-time id), else a new one.
    pub id: Option<String>,
    pub shop_id: i64,
    pub plan_id: String,
    pub customer_id: String,
    pub test: bool,
    pub test_clock_id: Option<String>,
    pub tracking_id: Option<String>,
    pub return_url: Option<String>,
    pub notification_url: Option<String>,
    pub additional_data: Option<String>,
    pub progress: Progress,
}

/// Stores a new subscription (in `redirecting` until its card is known); its first
/// timeline line is the caller's (`events::created`).
pub async fn insert(db: &impl ConnectionTrait, new: NewSubscription, now: DateTime<Utc>) -> Result<Model, DbErr> {
    let now = super::now_millis(now);
    let mut row = ActiveModel {
        seq: NotSet,
        id: Set(new.id.unwrap_or_else(|| new_id(SUBSCRIPTION))),
        shop_id: Set(new.shop_id),
        plan_id: Set(new.plan_id),
        customer_id: Set(new.customer_id),
        test: Set(new.test),
        test_clock_id: Set(new.test_clock_id),
        tracking_id: Set(new.tracking_id),
        return_url: Set(new.return_url),
        notification_url: Set(new.notification_url),
        additional_data: Set(new.additional_data),
        card_token: Set(None),
        card_brand: Set(None),
        card_last4: Set(None),
        card_exp_month: Set(None),
        card_exp_year: Set(None),
        card_holder: Set(None),
        started_at: Set(None),
        trial_ends_at: Set(None),
        anchor_at: Set(None),
        last_payment_id: Set(None),
        cancel_reason: Set(None),
        cancelled_at: Set(None),
        cancel_at_period_end: Set(false),
        claim_token: Set(None),
        claimed_until: Set(None),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    };
    set_progress(&mut row, &new.progress);
    row.insert(db).await
}

fn set_progress(row: &mut ActiveModel, p: &Progress) {
    row.state = Set(p.state);
    row.period = Set(p.period);
    row.paid_cycles = Set(p.paid_cycles);
    row.failed_attempts = Set(p.failed_attempts);
    row.has_success = Set(p.has_success);
    row.renew_at = Set(p.renew_at.map(super::now_millis));
    row.active_to = Set(p.active_to.map(super::now_millis));
}

/// The subscription as a guarded update left it, when that update changed it (one row);
/// `None` when it lost its race.
async fn changed(db: &impl ConnectionTrait, rows: u64, id: &str) -> Result<Option<Model>, DbErr> {
    if rows != 1 {
        return Ok(None);
    }
    Entity::find().filter(Column::Id.eq(id)).one(db).await
}

impl Model {
    /// What the subscription charges next, and when; `None` when it charges no more (it
    /// ended, ends with its period, or waits for its customer).
    pub fn next_charge(
        &self,
        plan: &super::entities::plans::Model,
        coupon: Option<&super::entities::coupons::Model>,
    ) -> Option<(i64, DateTime<Utc>)> {
        let progress = self.progress();
        let (Some(at), true) = (progress.renew_at, progress.state.is_billing() && !self.cancel_at_period_end) else {
            return None;
        };
        match crate::domain::billing::due(&crate::domain::billing::Terms::from(&plan.fields()), &progress) {
            crate::domain::billing::Due::Charge { amount, period, .. } => {
                // Its discount, while it lasts, comes off a plan period's charge.
                let coupon =
                    coupon.filter(|c| period >= 0 && self.discounted() && self.coupon_id.as_ref() == Some(&c.id));
                Some((amount - coupon.map_or(0, |c| crate::domain::coupon::discount(amount, c.off())), at))
            }
            _ => None,
        }
    }

    /// Where its periods are counted from (`fallback` before its card arrived).
    pub fn anchor(&self, fallback: DateTime<Utc>) -> crate::domain::billing::Anchor {
        crate::domain::billing::Anchor { at: self.anchor_at.unwrap_or(fallback), period: self.anchor_period }
    }

    /// How many more plan periods its discount takes off; `None` for ever (or no discount).
    pub fn discount_periods_left(&self) -> Option<i32> {
        self.discount_periods.map(|n| n - (self.paid_cycles - self.discount_from.unwrap_or(0)))
    }

    /// Whether its discount applies to the charge of the next plan period.
    pub fn discounted(&self) -> bool {
        self.coupon_id.is_some()
            && crate::domain::coupon::applies(self.paid_cycles, self.discount_from.unwrap_or(0), self.discount_periods)
    }

    /// The billing progress, as the domain rules see it.
    pub fn progress(&self) -> Progress {
        Progress {
            state: self.state,
            period: self.period,
            paid_cycles: self.paid_cycles,
            failed_attempts: self.failed_attempts,
            has_success: self.has_success,
            renew_at: self.renew_at,
            active_to: self.active_to,
            cancel_at_period_end: self.cancel_at_period_end,
            pause_at_period_end: self.pause_at_period_end,
            change_now: self.change_amount.filter(|_| self.change_plan_id.is_some()),
            change_at_period_end: self.change_plan_id.is_some() && self.change_amount.is_none(),
        }
    }

    /// Whether it was created with its card and started at once (its timeline then begins
    /// with its first charge rather than a wait for a card).
    pub fn created_with_card(&self) -> bool {
        self.started_at == Some(self.created_at)
    }

    /// The stored card, once the customer gave one.
    pub fn card(&self) -> Option<CardRef> {
        Some(CardRef {
            token: self.card_token.clone()?,
            brand: self.card_brand.clone()?,
            last4: self.card_last4.clone()?,
            exp_month: self.card_exp_month?,
            exp_year: self.card_exp_year?,
            holder: self.card_holder.clone().unwrap_or_default(),
        })
    }
}

/// Sets the stored card's columns on a row about to be written.
fn set_card_columns(row: &mut ActiveModel, card: &CardRef) {
    row.card_token = Set(Some(card.token.clone()));
    row.card_brand = Set(Some(card.brand.clone()));
    row.card_last4 = Set(Some(card.last4.clone()));
    row.card_exp_month = Set(Some(card.exp_month));
    row.card_exp_year = Set(Some(card.exp_year));
    row.card_holder = Set(Some(card.holder.clone()));
}

/// Sets the card and the start of billing on a row about to be written.
pub fn set_card(row: &mut ActiveModel, card: &CardRef, started_at: DateTime<Utc>, anchor_at: DateTime<Utc>) {
    set_card_columns(row, card);
    row.started_at = Set(Some(super::now_millis(started_at)));
    row.anchor_at = Set(Some(super::now_millis(anchor_at)));
}

/// How a subscription starts: when, where its periods count from, and when its trial ends
/// (where its first plan period begins, if its plan has a trial).
pub struct Start {
    pub at: DateTime<Utc>,
    pub anchor_at: DateTime<Utc>,
    pub trial_ends_at: Option<DateTime<Utc>>,
}

/// Records the card and the start of billing, and claims the subscription for its first
/// charge, if, and only if, it is still waiting for its card: of two submits of one card
/// form, one starts it. `None` when another request started it first.
pub async fn start(
    db: &impl ConnectionTrait,
    sub: Model,
    card: &CardRef,
    start: Start,
    claim: (&str, DateTime<Utc>),
) -> Result<Option<Model>, DbErr> {
    let started_at = start.at;
    let mut row = sub.clone().into_active_model();
    set_card(&mut row, card, started_at, start.anchor_at);
    row.trial_ends_at = Set(start.trial_ends_at.map(super::now_millis));
    row.claim_token = Set(Some(claim.0.to_string()));
    row.claimed_until = Set(Some(super::now_millis(claim.1)));
    row.updated_at = Set(super::now_millis(started_at));
    let result = Entity::update_many()
        .set(row)
        .filter(Column::Id.eq(sub.id.as_str()))
        .filter(Column::State.eq(State::Redirecting))
        .filter(Column::StartedAt.is_null())
        .exec(db)
        .await?;
    changed(db, result.rows_affected, &sub.id).await
}

/// Takes a new card for a started subscription waiting for its customer (the bank asked for
/// them on a renewal) or in its retries (the customer pays what is overdue with another
/// card), and claims it for the charge the customer makes now, if, and only if, it still
/// waits and no engine holds it: of two submits, one goes on. `None` otherwise.
pub async fn take_card(
    db: &impl ConnectionTrait,
    sub: Model,
    card: &CardRef,
    now: DateTime<Utc>,
    claim: (&str, DateTime<Utc>),
) -> Result<Option<Model>, DbErr> {
    let mut row = sub.clone().into_active_model();
    set_card_columns(&mut row, card);
    row.claim_token = Set(Some(claim.0.to_string()));
    row.claimed_until = Set(Some(super::now_millis(claim.1)));
    row.updated_at = Set(super::now_millis(now));
    let result = Entity::update_many()
        .set(row)
        .filter(Column::Id.eq(sub.id.as_str()))
        .filter(
            Condition::any()
                .add(
                    Condition::all()
                        .add(Column::State.eq(State::Redirecting))
                        .add(Column::StartedAt.is_not_null())
                        .add(Column::RenewAt.is_null()),
                )
                .add(Column::State.eq(State::FailedAttempt)),
        )
        .filter(
            Condition::any().add(Column::ClaimedUntil.is_null()).add(Column::ClaimedUntil.lt(super::now_millis(now))),
        )
        .exec(db)
        .await?;
    changed(db, result.rows_affected, &sub.id).await
}

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
        row.cancelled_at = Set(Some(super::now_millis(now)));
        row.cancel_reason = Set(Some(reason.into()));
    }
    row.claim_token = Set(None);
    row.claimed_until = Set(None);
    row.updated_at = Set(super::now_millis(now));
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
    let at = super::now_millis(now);
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
    let result = update
        .col_expr(Column::UpdatedAt, Expr::value(super::now_millis(now)))
        .filter(Column::Id.eq(sub.id.as_str()))
        .filter(Column::State.is_in([State::Trial, State::Active]))
        .filter(Column::CancelAtPeriodEnd.eq(false))
        .exec(db)
        .await?;
    changed(db, result.rows_affected, &sub.id).await
}

/// Withdraws a cancel at the end of the period of a subscription still in its trial or a
/// paid period (its reminders are looked at again); answers it, `None` if there was none to
/// withdraw.
pub async fn withdraw_cancellation(
    db: &impl ConnectionTrait,
    sub: &Model,
    now: DateTime<Utc>,
) -> Result<Option<Model>, DbErr> {
    let result = Entity::update_many()
        .col_expr(Column::CancelAtPeriodEnd, Expr::value(false))
        .col_expr(Column::CancelReason, Expr::value(Option::<String>::None))
        .col_expr(Column::RemindAt, Expr::value(Option::<DateTime<Utc>>::None))
        .col_expr(Column::UpdatedAt, Expr::value(super::now_millis(now)))
        .filter(Column::Id.eq(sub.id.as_str()))
        .filter(Column::State.is_in([State::Trial, State::Active]))
        .filter(Column::CancelAtPeriodEnd.eq(true))
        .exec(db)
        .await?;
    changed(db, result.rows_affected, &sub.id).await
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
        .col_expr(Column::ClaimedUntil, Expr::value(super::now_millis(lease_until)))
        .filter(Column::Id.is_in(ids))
        .filter(Column::State.is_in(State::SCHEDULED.map(State::as_str)))
        .filter(Column::RenewAt.lte(super::now_millis(due_by)))
        .filter(Column::ClaimedUntil.is_null().or(Column::ClaimedUntil.lt(super::now_millis(now))))
        .exec(db)
        .await?;
    Entity::find().filter(Column::ClaimToken.eq(token)).order_by_asc(Column::RenewAt).all(db).await
}

/// Extends the claims of `token` to `lease_until` (while a long batch still runs).
pub async fn renew_claims(db: &impl ConnectionTrait, token: &str, lease_until: DateTime<Utc>) -> Result<(), DbErr> {
    Entity::update_many()
        .col_expr(Column::ClaimedUntil, Expr::value(super::now_millis(lease_until)))
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

/// Adds to a test subscription's card schedule: from `from` on, the card behaves as
/// `outcome` (an entry at the same moment is replaced, in one statement, whatever runs at once).
pub async fn schedule_test_outcome(
    db: &impl ConnectionTrait,
    subscription_id: &str,
    outcome: Behaviour,
    from: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    let entry = outcomes::ActiveModel {
        seq: NotSet,
        subscription_id: Set(subscription_id.to_string()),
        effective_from: Set(super::now_millis(from)),
        outcome: Set(outcome),
        created_at: Set(super::now_millis(now)),
    };
    let upsert = OnConflict::columns([outcomes::Column::SubscriptionId, outcomes::Column::EffectiveFrom])
        .update_columns([outcomes::Column::Outcome, outcomes::Column::CreatedAt])
        .to_owned();
    outcomes::Entity::insert(entry).on_conflict(upsert).exec_without_returning(db).await?;
    Ok(())
}

/// The card schedules of `subscription_ids`, each in time order.
pub async fn test_outcomes_of(
    db: &impl ConnectionTrait,
    subscription_ids: &[&str],
) -> Result<HashMap<String, Vec<outcomes::Model>>, DbErr> {
    let mut schedules: HashMap<String, Vec<outcomes::Model>> = HashMap::new();
    if subscription_ids.is_empty() {
        return Ok(schedules);
    }
    let entries = outcomes::Entity::find()
        .filter(outcomes::Column::SubscriptionId.is_in(subscription_ids.iter().copied()))
        .order_by_asc(outcomes::Column::EffectiveFrom)
        .all(db)
        .await?;
    for entry in entries {
        schedules.entry(entry.subscription_id.clone()).or_default().push(entry);
    }
    Ok(schedules)
}

/// Claims up to `limit` real-time subscriptions due at `now` for `lease` (and those whose first
/// charge a stopped request left unfinished, once its claim ran out): of several engines
/// (or overlapping runs), each row goes to one. PostgreSQL skips rows another engine is
/// claiming; SQLite runs each UPDATE as one write transaction.
///
/// The two kinds are claimed by two statements, each walking its part of the index of due
/// subscriptions (one statement with an `OR` of both read every real-time subscription).
pub async fn claim_due(
    db: &impl ConnectionTrait,
    now: DateTime<Utc>,
    limit: u64,
    token: &str,
    lease_until: DateTime<Utc>,
) -> Result<Vec<Model>, DbErr> {
    let backend = db.get_database_backend();
    let (p, lock) = match backend {
        DatabaseBackend::Postgres => (["$1", "$2", "$3", "$4"], " FOR UPDATE SKIP LOCKED"),
        _ => (["?", "?", "?", "?"], ""),
    };
    let billing = State::SCHEDULED.map(|s| format!("'{}'", s.as_str())).join(", ");
    // Each kind's condition. A start whose first charge's answer is not known yet waits for
    // its next lookup; one waiting for its customer to confirm a renewal (a charge made, no
    // time set) is not the engine's until they come back.
    let kinds = [
        format!("state IN ({billing}) AND renew_at <= {}", p[3]),
        format!(
            "state = 'redirecting' AND started_at IS NOT NULL \
             AND ((renew_at IS NULL AND last_payment_id IS NULL) OR renew_at <= {})",
            p[3]
        ),
    ];
    let now = super::now_millis(now);
    let mut claimed = 0;
    for kind in kinds {
        if claimed >= limit {
            break;
        }
        let sql = format!(
            "UPDATE subscriptions SET claim_token = {}, claimed_until = {} WHERE seq IN (\
             SELECT seq FROM subscriptions WHERE test_clock_id IS NULL AND {kind} \
             AND (claimed_until IS NULL OR claimed_until < {}) ORDER BY renew_at LIMIT {}{lock})",
            p[0],
            p[1],
            p[2],
            limit - claimed
        );
        let values = vec![token.into(), super::now_millis(lease_until).into(), now.into(), now.into()];
        claimed += db.execute(Statement::from_sql_and_values(backend, sql, values)).await?.rows_affected();
    }
    Entity::find().filter(Column::ClaimToken.eq(token)).order_by_asc(Column::RenewAt).all(db).await
}

/// Makes a subscription waiting for its next lookup due at `now` (its processor has news
/// of the charge); one on a test clock keeps the clock's time.
pub async fn due_now(db: &impl ConnectionTrait, id: &str, now: DateTime<Utc>) -> Result<(), DbErr> {
    let at = super::now_millis(now);
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
        .filter(Column::State.is_in(State::SCHEDULED.map(State::as_str)))
        .filter(Column::RenewAt.lte(super::now_millis(now)))
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
            .filter(Column::State.is_in(State::SCHEDULED.map(State::as_str)))
            .filter(Column::RenewAt.lte(super::now_millis(until)))
    };
    let next: Option<Option<DateTime<Utc>>> =
        due().select_only().column(Column::RenewAt).order_by_asc(Column::RenewAt).into_tuple().one(db).await?;
    let Some(at) = next.flatten() else { return Ok(Vec::new()) };
    due().filter(Column::RenewAt.eq(at)).order_by_asc(Column::Seq).limit(limit).all(db).await
}

/// One line of a subscription's timeline: a change of state, or a charge, at `occurred_at`
/// (the subscription's time: its test clock's, else the real one).
pub fn event_row(
    sub: &Model,
    from: Option<State>,
    progress_or_state: (State, Option<DateTime<Utc>>),
    payment_id: Option<String>,
    reason: Option<String>,
    occurred_at: DateTime<Utc>,
) -> events::ActiveModel {
    let (to, renew_at) = progress_or_state;
    events::ActiveModel {
        seq: NotSet,
        id: Set(new_id(EVENT)),
        shop_id: Set(sub.shop_id),
        subscription_id: Set(sub.id.clone()),
        from_state: Set(from),
        to_state: Set(to),
        payment_id: Set(payment_id),
        reason: Set(reason),
        renew_at: Set(renew_at.map(super::now_millis)),
        occurred_at: Set(super::now_millis(occurred_at)),
        created_at: Set(super::now_millis(Utc::now())),
    }
}

/// Stores timeline lines.
pub async fn insert_events(db: &impl ConnectionTrait, rows: Vec<events::ActiveModel>) -> Result<(), DbErr> {
    for chunk in rows.chunks(500) {
        events::Entity::insert_many(chunk.to_vec()).exec_without_returning(db).await?;
    }
    Ok(())
}

/// Subscriptions in their trial or a paid period whose reminders are to be looked at by
/// `now` (never looked at, or due again), on the clock `clock_id` or in real time; those due
/// for a charge are left to the engine (their reminders are moot).
pub async fn reminders_due(
    db: &impl ConnectionTrait,
    clock_id: Option<&str>,
    now: DateTime<Utc>,
    limit: u64,
) -> Result<Vec<Model>, DbErr> {
    let now = super::now_millis(now);
    let on_clock = match clock_id {
        Some(id) => Column::TestClockId.eq(id),
        None => Column::TestClockId.is_null(),
    };
    Entity::find()
        .filter(on_clock)
        .filter(Column::State.is_in([State::Trial, State::Active]))
        .filter(Column::RemindAt.is_null().or(Column::RemindAt.lte(now)))
        .filter(Column::RenewAt.gt(now))
        .order_by_asc(Column::Seq)
        .limit(limit)
        .all(db)
        .await
}

/// When each of these subscriptions' reminders are looked at next.
pub async fn set_remind_at(db: &impl ConnectionTrait, next: &[(String, DateTime<Utc>)]) -> Result<(), DbErr> {
    for (id, at) in next {
        Entity::update_many()
            .col_expr(Column::RemindAt, Expr::value(Some(super::now_millis(*at))))
            .filter(Column::Id.eq(id.as_str()))
            .exec(db)
            .await?;
    }
    Ok(())
}

/// The earliest moment after `after` and up to `until` when a reminder of a subscription on
/// the clock falls due.
pub async fn next_remind_on_clock(
    db: &impl ConnectionTrait,
    clock_id: &str,
    after: DateTime<Utc>,
    until: DateTime<Utc>,
) -> Result<Option<DateTime<Utc>>, DbErr> {
    let next: Option<Option<DateTime<Utc>>> = Entity::find()
        .select_only()
        .column(Column::RemindAt)
        .filter(Column::TestClockId.eq(clock_id))
        .filter(Column::State.is_in([State::Trial, State::Active]))
        .filter(Column::RemindAt.gt(super::now_millis(after)))
        .filter(Column::RemindAt.lte(super::now_millis(until)))
        .order_by_asc(Column::RemindAt)
        .into_tuple()
        .one(db)
        .await?;
    Ok(next.flatten())
}

/// The customer's subscriptions at the shop, newest first (at most `limit`).
pub async fn of_customer(
    db: &impl ConnectionTrait,
    shop_id: i64,
    customer_id: &str,
    limit: u64,
) -> Result<Vec<Model>, DbErr> {
    Entity::find()
        .filter(Column::ShopId.eq(shop_id))
        .filter(Column::CustomerId.eq(customer_id))
        .order_by_desc(Column::Seq)
        .limit(limit)
        .all(db)
        .await
}

/// Saves a new card on a subscription in its trial, a paid period or its retries (its
/// reminders are looked at again; a charge being made meanwhile keeps the card it was
/// asked with); answers it, `None` if it is in no such state.
pub async fn replace_card(
    db: &impl ConnectionTrait,
    sub: &Model,
    card: &CardRef,
    now: DateTime<Utc>,
) -> Result<Option<Model>, DbErr> {
    let mut row = <ActiveModel as Default>::default();
    set_card_columns(&mut row, card);
    row.remind_at = Set(None);
    row.updated_at = Set(super::now_millis(now));
    let result = Entity::update_many()
        .set(row)
        .filter(Column::Id.eq(sub.id.as_str()))
        .filter(Column::State.is_in([State::Trial, State::Active, State::FailedAttempt, State::Paused]))
        .exec(db)
        .await?;
    changed(db, result.rows_affected, &sub.id).await
}

/// Whether the subscription is in `state` with no engine holding it (an unexpired claim);
/// the check is a write, so it waits for a claim being taken at the same moment.
pub async fn unclaimed(db: &impl ConnectionTrait, id: &str, state: State, now: DateTime<Utc>) -> Result<bool, DbErr> {
    let result = Entity::update_many()
        .col_expr(Column::UpdatedAt, Expr::col(Column::UpdatedAt).into())
        .filter(Column::Id.eq(id))
        .filter(Column::State.eq(state))
        .filter(
            Condition::any().add(Column::ClaimedUntil.is_null()).add(Column::ClaimedUntil.lt(super::now_millis(now))),
        )
        .exec(db)
        .await?;
    Ok(result.rows_affected == 1)
}

/// Neither held by an engine (an unexpired claim, in real time) nor waiting for the answer
/// of a charge: no money is in flight for it, so a pause or a resume cannot cross a charge.
fn idle() -> Condition {
    let unclaimed = Condition::any()
        .add(Column::ClaimedUntil.is_null())
        .add(Column::ClaimedUntil.lt(super::now_millis(Utc::now())));
    let unanswered = Expr::cust(
        "NOT EXISTS (SELECT 1 FROM payments WHERE payments.subscription_id = subscriptions.id \
         AND payments.status = 'processing' AND payments.billing_key IS NOT NULL AND payments.amount > 0)",
    );
    Condition::all().add(unclaimed).add(unanswered)
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
    let at = super::now_millis(now);
    let resume_at = resume.at.map(super::now_millis);
    let mut update = Entity::update_many()
        .col_expr(Column::State, Expr::value(State::Paused))
        .col_expr(Column::RenewAt, Expr::value(resume_at))
        .col_expr(Column::ResumeAt, Expr::value(resume_at))
        .col_expr(Column::ResumeBilling, Expr::value(Some(resume.billing)))
        .col_expr(Column::PauseAtPeriodEnd, Expr::value(false))
        .col_expr(Column::UpdatedAt, Expr::value(at));
    // Asked again while paused, it only moves the resume.
    if sub.state != State::Paused {
        update = update.col_expr(Column::PausedAt, Expr::value(Some(at)));
    }
    let result = update
        .filter(Column::Id.eq(sub.id.as_str()))
        .filter(Column::State.eq(sub.state))
        .filter(Column::State.is_in(State::PAUSABLE.iter().copied().chain([State::Paused])))
        .filter(Column::CancelAtPeriodEnd.eq(false))
        .filter(idle())
        .exec(db)
        .await?;
    changed(db, result.rows_affected, &sub.id).await
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
    let result = Entity::update_many()
        .col_expr(Column::PauseAtPeriodEnd, Expr::value(true))
        .col_expr(Column::ResumeAt, Expr::value(resume.at.map(super::now_millis)))
        .col_expr(Column::ResumeBilling, Expr::value(Some(resume.billing)))
        .col_expr(Column::UpdatedAt, Expr::value(super::now_millis(now)))
        .filter(Column::Id.eq(sub.id.as_str()))
        .filter(Column::State.is_in([State::Trial, State::Active]))
        .filter(Column::CancelAtPeriodEnd.eq(false))
        .exec(db)
        .await?;
    changed(db, result.rows_affected, &sub.id).await
}

/// Withdraws a pause set for the end of the period, while it is still to come; answers the
/// subscription, `None` if there was none to withdraw.
pub async fn withdraw_pause(
    db: &impl ConnectionTrait,
    sub: &Model,
    now: DateTime<Utc>,
) -> Result<Option<Model>, DbErr> {
    let result = Entity::update_many()
        .col_expr(Column::PauseAtPeriodEnd, Expr::value(false))
        .col_expr(Column::ResumeAt, Expr::value(Option::<DateTime<Utc>>::None))
        .col_expr(Column::ResumeBilling, Expr::value(Option::<ResumeBilling>::None))
        .col_expr(Column::UpdatedAt, Expr::value(super::now_millis(now)))
        .filter(Column::Id.eq(sub.id.as_str()))
        .filter(Column::State.is_in([State::Trial, State::Active]))
        .filter(Column::PauseAtPeriodEnd.eq(true))
        .exec(db)
        .await?;
    changed(db, result.rows_affected, &sub.id).await
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
    let at = super::now_millis(now);
    let result = Entity::update_many()
        .col_expr(Column::State, Expr::value(progress.state))
        .col_expr(Column::RenewAt, Expr::value(progress.renew_at.map(super::now_millis)))
        .col_expr(Column::PauseAtPeriodEnd, Expr::value(false))
        .col_expr(Column::PausedAt, Expr::value(Some(at)))
        .col_expr(Column::ClaimToken, Expr::value(Option::<String>::None))
        .col_expr(Column::ClaimedUntil, Expr::value(Option::<DateTime<Utc>>::None))
        .col_expr(Column::UpdatedAt, Expr::value(at))
        .filter(Column::Id.eq(sub.id.as_str()))
        .filter(Column::ClaimToken.eq(token))
        .filter(Column::State.eq(sub.state))
        .filter(Column::PauseAtPeriodEnd.eq(true))
        .exec(db)
        .await?;
    changed(db, result.rows_affected, &sub.id).await
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
    row.anchor_at = Set(Some(super::now_millis(anchor.at)));
    row.anchor_period = Set(anchor.period);
    row.pause_at_period_end = Set(false);
    row.resume_at = Set(None);
    row.resume_billing = Set(None);
    row.remind_at = Set(None);
    row.claim_token = Set(claim.map(|c| c.0.to_string()));
    row.claimed_until = Set(claim.map(|c| super::now_millis(c.1)));
    row.updated_at = Set(super::now_millis(now));
    let held = match by {
        Resumer::Engine(token) => Condition::all().add(Column::ClaimToken.eq(token)),
        Resumer::Merchant => idle(),
    };
    let result = Entity::update_many()
        .set(row)
        .filter(Column::Id.eq(sub.id.as_str()))
        .filter(Column::State.eq(State::Paused))
        .filter(held)
        .exec(db)
        .await?;
    changed(db, result.rows_affected, &sub.id).await
}

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
    row.updated_at = Set(super::now_millis(now));
    let result = Entity::update_many()
        .set(row)
        .filter(Column::Id.eq(sub.id.as_str()))
        .filter(Column::ClaimToken.eq(token))
        .filter(Column::State.eq(sub.state))
        .exec(db)
        .await?;
    changed(db, result.rows_affected, &sub.id).await
}

/// Puts a row on `plan_id`, its periods counted from `anchor` (its reminders follow the new
/// plan), with no change pending any more.
fn set_plan(row: &mut ActiveModel, plan_id: &str, anchor: crate::domain::billing::Anchor) {
    row.plan_id = Set(plan_id.to_string());
    row.anchor_at = Set(Some(super::now_millis(anchor.at)));
    row.anchor_period = Set(anchor.period);
    row.remind_at = Set(None);
    clear_change(row);
}

/// No plan change pending on a row any more.
fn clear_change(row: &mut ActiveModel) {
    row.change_plan_id = Set(None);
    row.change_id = Set(None);
    row.change_amount = Set(None);
    row.change_at = Set(None);
}

/// A subscription a merchant's plan change may take: in its trial or a paid period, on the
/// plan and in the period `sub` was read in (what the change was worked out from; a renewal
/// meanwhile makes it stale), no change being charged, nothing in flight.
fn changeable(sub: &Model) -> Condition {
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
        .col_expr(Column::ChangeAt, Expr::value(ask.now.map(|n| super::now_millis(n.1))))
        .col_expr(Column::UpdatedAt, Expr::value(super::now_millis(now)));
    if let (Some((_, at)), Some((token, until))) = (ask.now, claim) {
        update = update
            .col_expr(Column::RenewAt, Expr::value(Some(super::now_millis(at))))
            .col_expr(Column::ClaimToken, Expr::value(Some(token)))
            .col_expr(Column::ClaimedUntil, Expr::value(Some(super::now_millis(until))));
    }
    let result = update.filter(changeable(sub)).exec(db).await?;
    changed(db, result.rows_affected, &sub.id).await
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
    row.updated_at = Set(super::now_millis(now));
    let result = Entity::update_many().set(row).filter(changeable(sub)).exec(db).await?;
    changed(db, result.rows_affected, &sub.id).await
}

/// Withdraws a change set for the period end; answers the subscription, `None` if there was
/// none.
pub async fn withdraw_change(
    db: &impl ConnectionTrait,
    sub: &Model,
    now: DateTime<Utc>,
) -> Result<Option<Model>, DbErr> {
    let result = Entity::update_many()
        .col_expr(Column::ChangePlanId, Expr::value(Option::<String>::None))
        .col_expr(Column::ChangeId, Expr::value(Option::<String>::None))
        .col_expr(Column::UpdatedAt, Expr::value(super::now_millis(now)))
        .filter(Column::Id.eq(sub.id.as_str()))
        .filter(Column::ChangePlanId.is_not_null())
        .filter(Column::ChangeAmount.is_null())
        .exec(db)
        .await?;
    changed(db, result.rows_affected, &sub.id).await
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
    let result = Entity::update_many()
        .col_expr(Column::CouponId, Expr::value(Some(coupon_id)))
        .col_expr(Column::DiscountFrom, Expr::col(Column::PaidCycles).into())
        .col_expr(Column::DiscountPeriods, Expr::value(periods))
        .col_expr(Column::UpdatedAt, Expr::value(super::now_millis(now)))
        .filter(Column::Id.eq(sub.id.as_str()))
        .filter(Column::CouponId.is_null())
        .filter(Column::State.is_in(State::OPEN))
        .exec(db)
        .await?;
    changed(db, result.rows_affected, &sub.id).await
}

/// Takes a subscription's discount away; `None` if it had none.
pub async fn remove_discount(
    db: &impl ConnectionTrait,
    sub: &Model,
    now: DateTime<Utc>,
) -> Result<Option<Model>, DbErr> {
    let result = Entity::update_many()
        .col_expr(Column::CouponId, Expr::value(Option::<String>::None))
        .col_expr(Column::DiscountFrom, Expr::value(Option::<i32>::None))
        .col_expr(Column::DiscountPeriods, Expr::value(Option::<i32>::None))
        .col_expr(Column::UpdatedAt, Expr::value(super::now_millis(now)))
        .filter(Column::Id.eq(sub.id.as_str()))
        .filter(Column::CouponId.is_not_null())
        .exec(db)
        .await?;
    changed(db, result.rows_affected, &sub.id).await
}
