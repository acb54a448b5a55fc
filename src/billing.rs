//! The billing engine: charges what falls due, records each attempt, and schedules what
//! follows with the rules of [`crate::domain::billing`].
//!
//! Each charge is made at most once. A due subscription is claimed by one engine at a time
//! (an atomic UPDATE; `FOR UPDATE SKIP LOCKED` on PostgreSQL). Its payment row is written
//! before the acquirer is asked, under a key unique per subscription, period and attempt,
//! and that key is also the acquirer's idempotency key. After a crash the claim runs out,
//! the next run finds the payment row and asks again with the same key instead of charging
//! anew; a row that already has its answer is not charged again at all.
//!
//! Work goes batch by batch: one statement writes a batch's payment rows, the acquirer is
//! asked for all of them concurrently, and one transaction records the answers, the new
//! schedules and the timeline. On PostgreSQL several batches run at once.

use std::collections::HashMap;

use chrono::{DateTime, Duration, Utc};
use futures::StreamExt;
use sea_orm::{ColumnTrait, ConnectionTrait, DatabaseBackend, DbErr, EntityTrait, QueryFilter, TransactionTrait};

use crate::acquirer::{Behaviour, CardRef, ChargeRequest};
use crate::app::AppState;
use crate::db::entities::{plans, subscriptions, test_clocks};
use crate::db::payments::NewPayment;
use crate::db::{self};
use crate::domain::billing::{self as rules, Due, Outcome, Progress, Terms};
use crate::domain::ids::random_hex;
use crate::domain::vocab::{PaymentStatus, TransactionType};

/// How many due subscriptions one claim takes.
const BATCH: u64 = 500;
/// How long a claim holds before another engine may take the subscription over.
const LEASE_MINUTES: i64 = 10;
/// Acquirer calls in flight at once.
const CONCURRENT_CHARGES: usize = 64;
/// Most events one clock advance runs (a guard against advancing an hourly plan by decades).
const MAX_CLOCK_EVENTS: usize = 100_000;

/// What one run did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Report {
    /// Charges asked of the acquirer.
    pub charged: usize,
    pub succeeded: usize,
    pub expired: usize,
}

impl std::ops::AddAssign for Report {
    fn add_assign(&mut self, other: Report) {
        self.charged += other.charged;
        self.succeeded += other.succeeded;
        self.expired += other.expired;
    }
}

/// One run of the engine at `now` over the real-time subscriptions (not those on test
/// clocks): claims what is due, batch by batch, and bills it. On PostgreSQL, several
/// workers claim and bill batches side by side.
pub async fn run_due(state: &AppState, now: DateTime<Utc>) -> Result<Report, DbErr> {
    let workers = match state.db.get_database_backend() {
        DatabaseBackend::Postgres => 4,
        _ => 1,
    };
    let mut running = tokio::task::JoinSet::new();
    for _ in 0..workers {
        let state = state.clone();
        running.spawn(async move { claim_and_bill(&state, now).await });
    }
    let mut report = Report::default();
    while let Some(done) = running.join_next().await {
        report += done.map_err(|e| DbErr::Custom(format!("billing worker: {e}")))??;
    }
    Ok(report)
}

async fn claim_and_bill(state: &AppState, now: DateTime<Utc>) -> Result<Report, DbErr> {
    let mut report = Report::default();
    loop {
        let token = random_hex(12);
        let lease = now.max(Utc::now()) + Duration::minutes(LEASE_MINUTES);
        let batch = db::subscriptions::claim_due(&state.db, now, BATCH, &token, lease).await?;
        if batch.is_empty() {
            return Ok(report);
        }
        report += bill(state, batch, now, false).await?.0;
    }
}

/// Runs everything due on `clock` up to `to`, in time order, each at its own due time.
pub async fn advance_clock(state: &AppState, clock: &test_clocks::Model, to: DateTime<Utc>) -> Result<Report, DbErr> {
    let mut report = Report::default();
    let mut events = 0;
    loop {
        let due = db::subscriptions::due_next_on_clock(&state.db, &clock.id, to, BATCH).await?;
        let Some(at) = due.first().and_then(|s| s.renew_at) else { break };
        db::test_clocks::set_time(&state.db, &clock.id, at, false, Utc::now()).await?;
        events += due.len();
        report += bill(state, due, at, false).await?.0;
        if events >= MAX_CLOCK_EVENTS {
            break;
        }
    }
    db::test_clocks::set_time(&state.db, &clock.id, to, true, Utc::now()).await?;
    Ok(report)
}

/// The first charge of a subscription of `plan` whose card just arrived, with the customer
/// present.
pub async fn start(
    state: &AppState,
    plan: &plans::Model,
    sub: subscriptions::Model,
    card: &CardRef,
    now: DateTime<Utc>,
) -> Result<subscriptions::Model, DbErr> {
    let anchor = Terms::from(&plan.fields()).anchor(now, state.config.timezone);
    let sub = db::subscriptions::start(&state.db, sub, card, now, anchor).await?;
    let (_, mut billed) = bill(state, vec![sub], now, true).await?;
    billed.pop().ok_or(DbErr::RecordNotFound("subscription".into()))
}

/// One due charge of a batch.
struct Charge {
    sub: subscriptions::Model,
    terms: Terms,
    progress: Progress,
    amount: i64,
    currency: String,
    card: CardRef,
    key: String,
    payment_id: String,
    /// Known already (recorded before an interruption): no charge is made.
    known: Option<PaymentStatus>,
}

/// Does what is due for `subs` at `now`: charges (or ends) them and reschedules. Answers
/// what it did and the subscriptions as saved.
async fn bill(
    state: &AppState,
    subs: Vec<subscriptions::Model>,
    now: DateTime<Utc>,
    customer_present: bool,
) -> Result<(Report, Vec<subscriptions::Model>), DbErr> {
    let mut report = Report::default();
    let plan_ids: Vec<String> = subs.iter().map(|s| s.plan_id.clone()).collect();
    let plans: HashMap<String, plans::Model> = plans::Entity::find()
        .filter(plans::Column::Id.is_in(plan_ids))
        .all(&state.db)
        .await?
        .into_iter()
        .map(|p| (p.id.clone(), p))
        .collect();

    let mut charges = Vec::new();
    let mut ending = Vec::new();
    for sub in subs {
        let Some(plan) = plans.get(&sub.plan_id) else { continue };
        let terms = Terms::from(&plan.fields());
        let progress = sub.progress();
        match rules::due(&terms, &progress) {
            Due::Expire => ending.push((sub, progress)),
            Due::Charge { amount, period, attempt } => {
                let Some(card) = sub.card() else { continue };
                let key = format!("{}:{period}:{attempt}", sub.id);
                let currency = plan.currency.clone();
                charges.push(Charge {
                    sub,
                    terms,
                    progress,
                    amount,
                    currency,
                    card,
                    key,
                    payment_id: String::new(),
                    known: None,
                });
            }
        }
    }

    // Payment rows first: those an interrupted run left, and one new row for each other charge.
    let keys = charges.iter().map(|c| c.key.clone()).collect();
    let earlier: HashMap<String, _> = db::payments::find_by_billing_keys(&state.db, keys)
        .await?
        .into_iter()
        .filter_map(|p| Some((p.billing_key.clone()?, p)))
        .collect();
    let mut rows = Vec::new();
    for c in &mut charges {
        match earlier.get(&c.key) {
            Some(p) => {
                c.payment_id = p.id.clone();
                c.known = PaymentStatus::parse(&p.status).filter(|s| *s != PaymentStatus::Processing);
            }
            None => {
                let new = NewPayment {
                    shop_id: c.sub.shop_id,
                    product_id: None,
                    plan_id: Some(&c.sub.plan_id),
                    subscription_id: Some(&c.sub.id),
                    customer_id: Some(&c.sub.customer_id),
                    amount: c.amount,
                    currency: &c.currency,
                    transaction_type: TransactionType::Payment,
                    test: c.sub.test,
                    card: &c.card,
                    billing_key: Some(c.key.clone()),
                };
                let row = db::payments::processing_row(new, now);
                c.payment_id = row.id.clone().unwrap();
                rows.push(row);
            }
        }
    }
    db::payments::insert_rows(&state.db, rows).await?;

    // Then the acquirer, for every charge whose answer is not known yet.
    let calls: Vec<_> = charges
        .iter()
        .map(|c| {
            let acquirer = state.acquirer.clone();
            let (card, key, currency) = (c.card.clone(), c.key.clone(), c.currency.clone());
            let (amount, simulate, known) = (c.amount, simulated_outcome(&c.sub, now), c.known.is_some());
            async move {
                if known {
                    return None;
                }
                let request = ChargeRequest {
                    amount,
                    currency: &currency,
                    capture: true,
                    idempotency_key: &key,
                    customer_present,
                    now,
                    simulate,
                };
                Some(acquirer.charge(&card, request).await)
            }
        })
        .collect();
    let answers: Vec<_> = futures::stream::iter(calls).buffered(CONCURRENT_CHARGES).collect().await;

    // Then one transaction: the answers, the new schedules, the timeline.
    let tz = state.config.timezone;
    let txn = state.db.begin().await?;
    let mut saved = Vec::new();
    let mut events = Vec::new();
    for (c, answer) in charges.into_iter().zip(answers) {
        let status = match (&answer, c.known) {
            (Some(outcome), _) => {
                report.charged += 1;
                db::payments::record_by_id(&txn, &c.payment_id, outcome, now).await?
            }
            (None, known) => known.unwrap_or(PaymentStatus::Error),
        };
        let outcome = match status {
            PaymentStatus::Succeeded => Outcome::Succeeded,
            PaymentStatus::Failed => Outcome::Declined,
            _ => Outcome::Error,
        };
        report.succeeded += usize::from(outcome == Outcome::Succeeded);
        let anchor = c.sub.anchor_at.unwrap_or(now);
        let next = rules::after_charge(&c.terms, &c.progress, outcome, anchor, now, tz);
        let from = c.sub.state.clone();
        let sub = db::subscriptions::save_progress(&txn, c.sub, &next, Some(c.payment_id.clone()), now).await?;
        events.push(db::subscriptions::event_row(
            &sub,
            Some(&from),
            (&sub.state, sub.renew_at),
            Some(c.payment_id),
            None,
            now,
        ));
        saved.push(sub);
    }
    for (sub, progress) in ending {
        report.expired += 1;
        let from = sub.state.clone();
        let sub = db::subscriptions::save_progress(&txn, sub, &rules::expire(&progress), None, now).await?;
        events.push(db::subscriptions::event_row(
            &sub,
            Some(&from),
            (&sub.state, None),
            None,
            Some("billing cycles paid".into()),
            now,
        ));
        saved.push(sub);
    }
    db::subscriptions::insert_events(&txn, events).await?;
    txn.commit().await?;
    Ok((report, saved))
}

/// The behaviour a test subscription's card was told to take from some moment on.
fn simulated_outcome(sub: &subscriptions::Model, now: DateTime<Utc>) -> Option<Behaviour> {
    let from = sub.test_outcome_from?;
    (sub.test && from <= now).then(|| sub.test_outcome.as_deref().and_then(Behaviour::from_outcome_word)).flatten()
}
