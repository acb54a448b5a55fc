//! Stored subscriptions, and the claims that let several engines share the work safely.

mod cards;
mod changes;
mod claims;
mod lifecycle;
mod reminders;

pub use cards::*;
pub use changes::*;
pub use claims::*;
pub use lifecycle::*;
pub use reminders::*;

use chrono::{DateTime, Utc};
use std::collections::HashMap;

use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{
    ActiveModelTrait, ActiveValue::NotSet, ColumnTrait, Condition, ConnectionTrait, DatabaseBackend, DbErr,
    EntityTrait, IntoActiveModel, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Set, Statement, TryIntoModel,
    UpdateMany,
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
        card_fingerprint: Set(None),
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

/// One guarded change of the subscription `id`, in one statement: `update`'s columns (and
/// `updated_at`) are written only where `guard` still holds. Answers the subscription as
/// saved (the statement's `RETURNING`), `None` when the guard no longer held: another change
/// won the race.
async fn guarded(
    db: &impl ConnectionTrait,
    id: &str,
    now: DateTime<Utc>,
    update: UpdateMany<Entity>,
    guard: Condition,
) -> Result<Option<Model>, DbErr> {
    let update = update.col_expr(Column::UpdatedAt, Expr::value(super::now_millis(now))).filter(Column::Id.eq(id));
    super::update_returning(db, update.filter(guard)).await
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
            fingerprint: self.card_fingerprint.clone(),
        })
    }
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

/// The shop's open subscriptions paid with the card of `payment` (of its mode: test or live),
/// whatever their token (the card's fingerprint; its token for cards kept before
/// fingerprints), and `id` if it is open: what a dispute of the payment ends.
pub async fn paid_with(
    db: &impl ConnectionTrait,
    payment: &super::entities::payments::Model,
    id: Option<&str>,
) -> Result<Vec<Model>, DbErr> {
    let mut which = Condition::any();
    if let Some(id) = id {
        which = which.add(Column::Id.eq(id));
    }
    if !payment.card_token.is_empty() {
        which = which.add(Column::CardToken.eq(payment.card_token.as_str()));
    }
    if let Some(fingerprint) = &payment.card_fingerprint {
        which = which.add(Column::CardFingerprint.eq(fingerprint.as_str()));
    }
    if which.is_empty() {
        return Ok(Vec::new());
    }
    Entity::find()
        .filter(Column::ShopId.eq(payment.shop_id))
        .filter(Column::Test.eq(payment.test))
        .filter(Column::State.is_in(State::OPEN))
        .filter(which)
        .order_by_asc(Column::Seq)
        .all(db)
        .await
}
