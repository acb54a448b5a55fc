//! The billing engine: charges what falls due, records each attempt, and schedules what
//! follows with the rules of [`crate::domain::billing`].
//!
//! Each charge is at most once: a due subscription is claimed by one engine at a time (an
//! atomic UPDATE; `FOR UPDATE SKIP LOCKED` on PostgreSQL), its payment row is written before
//! the acquirer is asked under a key unique per subscription, period and attempt, and that
//! key is also the acquirer's idempotency key. After a crash the claim runs out, the next
//! run finds the payment row, and asks again with the same key instead of charging anew.

use std::collections::HashMap;

use chrono::{DateTime, Duration, Utc};
use sea_orm::DbErr;

use crate::acquirer::{Behaviour, ChargeRequest};
use crate::app::AppState;
use crate::db::entities::{plans, subscriptions, test_clocks};
use crate::db::payments::NewPayment;
use crate::db::{self};
use crate::domain::billing::{self as rules, Due, Outcome, Terms};
use crate::domain::ids::random_hex;
use crate::domain::vocab::{PaymentStatus, TransactionType};

/// How many due subscriptions one claim takes.
const BATCH: u64 = 200;
/// How long a claim holds before another engine may take the subscription over.
const LEASE_MINUTES: i64 = 10;
/// Most events one clock advance runs (a guard against advancing an hourly plan by decades).
const MAX_CLOCK_EVENTS: usize = 100_000;

/// What one run did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Report {
    pub charged: usize,
    pub succeeded: usize,
    pub expired: usize,
}

/// One run of the engine at `now` over the real-time subscriptions (not those on test
/// clocks): claims what is due, batch by batch, and bills it.
pub async fn run_due(state: &AppState, now: DateTime<Utc>) -> Result<Report, DbErr> {
    let mut report = Report::default();
    let mut plans = Plans::default();
    loop {
        let token = random_hex(12);
        let lease = now.max(Utc::now()) + Duration::minutes(LEASE_MINUTES);
        let batch = db::subscriptions::claim_due(&state.db, now, BATCH, &token, lease).await?;
        if batch.is_empty() {
            return Ok(report);
        }
        for sub in batch {
            bill(state, sub, now, false, &mut plans, &mut report).await?;
        }
    }
}

/// Runs everything due on `clock` up to `to`, in time order, each at its own due time.
pub async fn advance_clock(state: &AppState, clock: &test_clocks::Model, to: DateTime<Utc>) -> Result<Report, DbErr> {
    let mut report = Report::default();
    let mut plans = Plans::default();
    let mut events = 0;
    loop {
        let due = db::subscriptions::due_on_clock(&state.db, &clock.id, to, BATCH).await?;
        let Some(at) = due.first().and_then(|s| s.renew_at) else { break };
        db::test_clocks::set_time(&state.db, &clock.id, at, false, Utc::now()).await?;
        for sub in due.into_iter().filter(|s| s.renew_at == Some(at)) {
            bill(state, sub, at, false, &mut plans, &mut report).await?;
            events += 1;
        }
        if events >= MAX_CLOCK_EVENTS {
            break;
        }
    }
    db::test_clocks::set_time(&state.db, &clock.id, to, true, Utc::now()).await?;
    Ok(report)
}

/// The first charge of a subscription whose card just arrived, with the customer present.
pub async fn start(
    state: &AppState,
    sub: subscriptions::Model,
    card: &crate::acquirer::CardRef,
    now: DateTime<Utc>,
) -> Result<subscriptions::Model, DbErr> {
    let mut plans = Plans::default();
    let plan = plans.get(state, &sub.plan_id).await?;
    let anchor = Terms::from(&plan.fields()).anchor(now, state.config.timezone);
    let sub = db::subscriptions::start(&state.db, sub, card, now, anchor).await?;
    bill(state, sub, now, true, &mut plans, &mut Report::default()).await
}

/// Plans looked up once per run.
#[derive(Default)]
struct Plans(HashMap<String, plans::Model>);

impl Plans {
    async fn get(&mut self, state: &AppState, id: &str) -> Result<plans::Model, DbErr> {
        if let Some(plan) = self.0.get(id) {
            return Ok(plan.clone());
        }
        let plan =
            db::plans::find_public(&state.db, id).await?.ok_or_else(|| DbErr::RecordNotFound(format!("plan {id}")))?;
        self.0.insert(id.to_string(), plan.clone());
        Ok(plan)
    }
}

/// Does what is due for one subscription at `now`: charge (or end) and reschedule.
async fn bill(
    state: &AppState,
    sub: subscriptions::Model,
    now: DateTime<Utc>,
    customer_present: bool,
    plans: &mut Plans,
    report: &mut Report,
) -> Result<subscriptions::Model, DbErr> {
    let plan = plans.get(state, &sub.plan_id).await?;
    let terms = Terms::from(&plan.fields());
    let progress = sub.progress();
    let (amount, period, attempt) = match rules::due(&terms, &progress) {
        Due::Expire => {
            report.expired += 1;
            return db::subscriptions::save_progress(&state.db, sub, &rules::expire(&progress), None, now).await;
        }
        Due::Charge { amount, period, attempt } => (amount, period, attempt),
    };
    let Some(card) = sub.card() else { return Ok(sub) };
    let key = format!("{}:{period}:{attempt}", sub.id);
    let payment = match db::payments::find_by_billing_key(&state.db, &key).await? {
        // Recorded before an interruption: the answer is known, nothing is charged again.
        Some(done) if done.status != PaymentStatus::Processing.as_str() => done,
        found => {
            let payment = match found {
                Some(processing) => processing,
                None => {
                    let new = NewPayment {
                        shop_id: sub.shop_id,
                        product_id: None,
                        plan_id: Some(&sub.plan_id),
                        subscription_id: Some(&sub.id),
                        customer_id: Some(&sub.customer_id),
                        amount,
                        currency: &plan.currency,
                        transaction_type: TransactionType::Payment,
                        test: sub.test,
                        card: &card,
                        billing_key: Some(key.clone()),
                    };
                    db::payments::insert_processing(&state.db, new, now).await?
                }
            };
            let request = ChargeRequest {
                amount,
                currency: &plan.currency,
                capture: true,
                idempotency_key: &key,
                customer_present,
                now,
                simulate: simulated_outcome(&sub, now),
            };
            let outcome = state.acquirer.charge(&card, request).await;
            report.charged += 1;
            db::payments::record_outcome(&state.db, payment, &outcome, now).await?
        }
    };
    let outcome = match PaymentStatus::parse(&payment.status) {
        Some(PaymentStatus::Succeeded) => Outcome::Succeeded,
        Some(PaymentStatus::Failed) => Outcome::Declined,
        _ => Outcome::Error,
    };
    if outcome == Outcome::Succeeded {
        report.succeeded += 1;
    }
    let anchor = sub.anchor_at.unwrap_or(now);
    let next = rules::after_charge(&terms, &progress, outcome, anchor, now, state.config.timezone);
    db::subscriptions::save_progress(&state.db, sub, &next, Some(payment.id), now).await
}

/// The behaviour a test subscription's card was told to take from some moment on.
fn simulated_outcome(sub: &subscriptions::Model, now: DateTime<Utc>) -> Option<Behaviour> {
    let from = sub.test_outcome_from?;
    (sub.test && from <= now).then(|| sub.test_outcome.as_deref().and_then(Behaviour::from_outcome_word)).flatten()
}
