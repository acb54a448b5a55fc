//! The subscription object, with its plan, customer and last payment.

use std::collections::HashMap;

use sea_orm::{ConnectionTrait, DbErr};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::customer::CustomerView;
use super::payment::PaymentView;
use super::plan::PlanView;
use super::timestamp;
use crate::config::Config;
use crate::db::entities::{customers, payments, plans, subscriptions, test_card_outcomes};
use crate::db::{self};
use crate::domain::billing::{ResumeBilling, State as SubState, Terms};
use crate::domain::card::Behaviour;
use crate::domain::vocab::PaymentStatus;
use crate::web::urls;

/// What subscriptions' full views show beside their own rows: their plans, customers, last
/// payments and test card schedules, by id.
#[derive(Default)]
pub struct Parts {
    plans: HashMap<String, plans::Model>,
    customers: HashMap<String, customers::Model>,
    payments: HashMap<String, payments::Model>,
    /// By subscription, for each test subscription read (empty when it has none).
    schedules: HashMap<String, Vec<test_card_outcomes::Model>>,
}

impl Parts {
    /// The parts of `subs` (of one shop), with four queries in all.
    pub async fn of(db: &impl ConnectionTrait, subs: &[subscriptions::Model]) -> Result<Parts, DbErr> {
        let mut parts = Parts::default();
        parts.complete(db, subs).await?;
        Ok(parts)
    }

    /// These parts and `plan`, read already.
    pub fn with_plan(mut self, plan: plans::Model) -> Parts {
        self.plans.insert(plan.id.clone(), plan);
        self
    }

    /// These parts and `customer`, if it was read already.
    pub fn with_customer(mut self, customer: Option<customers::Model>) -> Parts {
        if let Some(customer) = customer {
            self.customers.insert(customer.id.clone(), customer);
        }
        self
    }

    /// Reads what `subs` (of one shop) name that is not here yet: a plan or last payment a
    /// change named anew since these parts were read, a subscription not read before. A last
    /// payment still in flight (being charged, or authorized) is read again: it may have
    /// settled meanwhile.
    pub async fn complete(&mut self, db: &impl ConnectionTrait, subs: &[subscriptions::Model]) -> Result<(), DbErr> {
        let Some(shop_id) = subs.first().map(|s| s.shop_id) else { return Ok(()) };
        let missing = |f: &dyn Fn(&subscriptions::Model) -> Option<&str>, have: &dyn Fn(&str) -> bool| {
            let mut ids: Vec<&str> = subs.iter().filter_map(f).filter(|id| !have(id)).collect();
            ids.sort_unstable();
            ids.dedup();
            ids
        };
        let plans = missing(&|s| Some(&s.plan_id), &|id| self.plans.contains_key(id));
        let customers = missing(&|s| Some(&s.customer_id), &|id| self.customers.contains_key(id));
        let settled = |p: &payments::Model| !matches!(p.status, PaymentStatus::Processing | PaymentStatus::Authorized);
        let payments = missing(&|s| s.last_payment_id.as_deref(), &|id| self.payments.get(id).is_some_and(settled));
        let schedules = missing(&|s| s.test.then_some(s.id.as_str()), &|id| self.schedules.contains_key(id));
        if !plans.is_empty() {
            self.plans.extend(db::by_ids::<plans::Entity>(db, shop_id, &plans).await?);
        }
        if !customers.is_empty() {
            self.customers.extend(db::by_ids::<customers::Entity>(db, shop_id, &customers).await?);
        }
        if !payments.is_empty() {
            self.payments.extend(db::by_ids::<payments::Entity>(db, shop_id, &payments).await?);
        }
        if !schedules.is_empty() {
            let mut read = db::subscriptions::test_outcomes_of(db, &schedules).await?;
            for id in schedules {
                self.schedules.insert(id.to_string(), read.remove(id).unwrap_or_default());
            }
        }
        Ok(())
    }
}

/// A subscription as the API returns it.
#[derive(Serialize, ToSchema)]
#[schema(as = Subscription)]
pub struct SubscriptionView {
    id: String,
    state: SubState,
    tracking_id: Option<String>,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    created_at: String,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    updated_at: String,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    renew_at: Option<String>,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    active_to: Option<String>,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    trial_ends_at: Option<String>,
    current_period: Option<Period>,
    plan: Option<PlanView>,
    customer: Option<CustomerView>,
    card: Option<Card>,
    last_transaction: Option<PaymentView>,
    paid_billing_cycles: i32,
    number_failed_payment_attempts: i32,
    cancel_reason: Option<String>,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    cancelled_at: Option<String>,
    /// Cancelled for the end of the paid period: it ends then (`active_to`), uncharged.
    cancel_at_period_end: bool,
    /// Paused from the end of the paid period: it pauses then (`active_to`), uncharged.
    pause_at_period_end: bool,
    /// When it was paused last (while `paused`; also after it resumed).
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    paused_at: Option<String>,
    /// When a pause ends by itself (paused, or set to pause from the period end).
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    resume_at: Option<String>,
    /// How it goes on then (`new_period` or `continue`).
    #[schema(value_type = Option<String>, example = "new_period")]
    resume_billing: Option<ResumeBilling>,
    /// A change to another plan not made yet: when the trial or paid period ends
    /// (`period_end`), or asked now while its charge's answer is awaited (`now`).
    pending_plan_change: Option<PendingChange>,
    /// Its coupon's discount, while it applies: the coupon, and how many more plan periods
    /// it takes off (`null`: for ever).
    discount: Option<DiscountView>,
    test: bool,
    test_clock: Option<String>,
    redirect_url: Option<String>,
    return_url: Option<String>,
    notification_url: Option<String>,
    #[schema(value_type = Object)]
    additional_data: Value,
    shop_id: i64,
    /// Test subscriptions: how the card behaves from which moment on
    /// (`POST /subscriptions/{id}/test_card_outcome`), in time order; empty otherwise.
    test_card_schedule: Vec<ScheduledOutcome>,
}

/// From `from` on (until a later entry), a test subscription's card behaves as `outcome`.
#[derive(Serialize, ToSchema)]
pub struct ScheduledOutcome {
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    from: String,
    outcome: Behaviour,
}

impl From<&test_card_outcomes::Model> for ScheduledOutcome {
    fn from(entry: &test_card_outcomes::Model) -> Self {
        ScheduledOutcome { from: timestamp(entry.effective_from), outcome: entry.outcome }
    }
}

/// A subscription's discount.
#[derive(Serialize, ToSchema)]
#[schema(as = SubscriptionDiscount)]
struct DiscountView {
    coupon: String,
    periods_left: Option<i32>,
}

/// A plan change not made yet.
#[derive(Serialize, ToSchema)]
#[schema(as = PendingPlanChange)]
struct PendingChange {
    plan: String,
    #[schema(value_type = String, example = "period_end")]
    at: &'static str,
    /// Asked now: what its charge is for.
    amount_due: Option<i64>,
}

#[derive(Serialize, ToSchema)]
#[schema(as = BillingPeriod)]
struct Period {
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    start: String,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    end: String,
}

#[derive(Serialize, ToSchema)]
#[schema(as = SavedCard)]
struct Card {
    brand: String,
    last_4: String,
    exp_month: i32,
    exp_year: i32,
}

impl SubscriptionView {
    /// The full view: with its plan, customer and last payment.
    pub async fn load(db: &impl ConnectionTrait, config: &Config, s: &subscriptions::Model) -> Result<Self, DbErr> {
        let mut views = Self::load_all(db, config, std::slice::from_ref(s)).await?;
        views.pop().ok_or_else(|| DbErr::RecordNotFound(s.id.clone()))
    }

    /// The full views of several subscriptions of one shop, with four queries in all.
    pub async fn load_all(
        db: &impl ConnectionTrait,
        config: &Config,
        subs: &[subscriptions::Model],
    ) -> Result<Vec<Self>, DbErr> {
        let mut parts = Parts::default();
        parts.complete(db, subs).await?;
        Ok(subs.iter().map(|s| Self::of(config, s, &parts)).collect())
    }

    /// The full view of `s` from `parts` (which hold what it names).
    pub fn of(config: &Config, s: &subscriptions::Model, parts: &Parts) -> Self {
        let last = s.last_payment_id.as_ref().and_then(|id| parts.payments.get(id));
        let mut view = Self::new(config, s, parts.plans.get(&s.plan_id), parts.customers.get(&s.customer_id), last);
        if let Some(schedule) = parts.schedules.get(&s.id) {
            view.test_card_schedule = schedule.iter().map(ScheduledOutcome::from).collect();
        }
        view
    }

    fn new(
        config: &Config,
        s: &subscriptions::Model,
        plan: Option<&plans::Model>,
        customer: Option<&customers::Model>,
        last: Option<&payments::Model>,
    ) -> Self {
        let sub_state = Some(s.state);
        let tz = config.timezone;
        let current_period = match (plan, s.anchor_at, s.active_to, sub_state) {
            (Some(_), Some(anchor), Some(end), Some(SubState::Trial)) if s.anchor_period == 0 => {
                Some(Period { start: timestamp(s.started_at.unwrap_or(anchor)), end: timestamp(end.min(anchor)) })
            }
            (Some(plan), Some(_), Some(end), Some(SubState::Trial | SubState::Active | SubState::FailedAttempt)) => {
                let (terms, anchor) = (Terms::from(&plan.fields()), s.anchor(end));
                let start = terms.start_of(anchor, (s.period - 1).max(anchor.period), tz);
                Some(Period { start: timestamp(start.min(end)), end: timestamp(end) })
            }
            _ => None,
        };
        // The trial ends where it did, also after a resume counted the periods afresh or a
        // plan change moved it to a plan with other trial terms.
        let trial_ends_at = match (s.trial_ends_at, plan, s.started_at) {
            (Some(at), ..) => Some(timestamp(at)),
            // Started before paydesk kept it: its plan says.
            (None, Some(plan), Some(started)) if plan.trial_amount.is_some() => {
                Some(timestamp(Terms::from(&plan.fields()).anchor(started, tz)))
            }
            _ => None,
        };
        SubscriptionView {
            id: s.id.clone(),
            state: s.state,
            tracking_id: s.tracking_id.clone(),
            created_at: timestamp(s.created_at),
            updated_at: timestamp(s.updated_at),
            renew_at: s.renew_at.map(timestamp),
            active_to: s.active_to.map(timestamp),
            trial_ends_at,
            current_period,
            plan: plan.map(|p| PlanView::new(p, config)),
            customer: customer.map(CustomerView::from),
            card: s.card().map(|c| Card {
                brand: c.brand,
                last_4: c.last4,
                exp_month: c.exp_month,
                exp_year: c.exp_year,
            }),
            last_transaction: last.map(PaymentView::from),
            paid_billing_cycles: s.paid_cycles,
            number_failed_payment_attempts: s.failed_attempts,
            cancel_reason: s.cancel_reason.clone(),
            cancelled_at: s.cancelled_at.map(timestamp),
            cancel_at_period_end: s.cancel_at_period_end,
            pause_at_period_end: s.pause_at_period_end,
            paused_at: s.paused_at.map(timestamp),
            resume_at: s.resume_at.filter(|_| s.state == SubState::Paused || s.pause_at_period_end).map(timestamp),
            resume_billing: s.resume_billing.filter(|_| s.state == SubState::Paused || s.pause_at_period_end),
            discount: s
                .coupon_id
                .as_ref()
                .filter(|_| s.discounted())
                .map(|coupon| DiscountView { coupon: coupon.clone(), periods_left: s.discount_periods_left() }),
            pending_plan_change: s.change_plan_id.as_ref().map(|plan| PendingChange {
                plan: plan.clone(),
                at: if s.change_amount.is_some() { "now" } else { "period_end" },
                amount_due: s.change_amount,
            }),
            test: s.test,
            test_clock: s.test_clock_id.clone(),
            redirect_url: (s.state == SubState::Redirecting).then(|| urls::subscription_pay(config, &s.id)),
            return_url: s.return_url.clone(),
            notification_url: s.notification_url.clone(),
            additional_data: s
                .additional_data
                .as_deref()
                .and_then(|d| serde_json::from_str(d).ok())
                .unwrap_or_else(|| Value::Object(Default::default())),
            shop_id: s.shop_id,
            test_card_schedule: Vec::new(),
        }
    }
}
