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
//!
//! The engine's steps, a file each:
//! - here: a run ([`run_due`]), its batches, leases and the shops' acquirers;
//! - [`due`]: claiming what is due and working out what each subscription owes;
//! - [`charges`]: taking over what an earlier run left, writing the payment rows, asking the
//!   acquirer;
//! - [`record`]: recording the answers, the new schedules and transitions, the timeline;
//! - [`pages`]: payments made on a page (paydesk's or the processor's) settled outside a run,
//!   and the subscriptions they open or pay;
//! - [`clocks`]: advancing test clocks.

mod charges;
mod clocks;
mod due;
mod pages;
mod record;

use charges::*;
pub use clocks::advance_clock;
use clocks::*;
use due::*;
pub use due::{DueCharge, charge_claimed, due_charge, start, take_card};
pub use pages::{Late, charge_of, late_success, leave, record_answer, settle, settle_interrupted};
pub use record::resume_reason;
use record::*;

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sea_orm::{ConnectionTrait, DatabaseBackend, DbErr};

use std::sync::Arc;

use crate::db::entities::{payments, plans, products, subscription_events, subscriptions, test_clocks};
use crate::db::payments::NewPayment;
use crate::db::subscriptions::NewSubscription;
use crate::db::{self};
use crate::domain::billing::{self as rules, Due, Outcome, Progress, ResumeBilling, Terms};
use crate::domain::checkout as checkout_rules;
use crate::domain::coupon;
use crate::domain::currency::Currency;
use crate::domain::event::EventType;
use crate::domain::ids::random_hex;
use crate::domain::pending;
use crate::domain::plan_change;
use crate::domain::tax::{ChargeTax, Taxing};
use crate::domain::vocab::{PaymentStatus, TransactionType};
use crate::external::acquirer::{Acquirer, Behaviour, CardRef, ChargeRequest, IfUnsent, Outcome as ChargeOutcome};
use crate::external::telemetry;
use crate::services::events;
use crate::services::mail::reminders;
use crate::services::taxes::{Buyer, Taxes};
use crate::web::error::AppError;
use crate::web::state::AppState;

/// The failure code of a renewal the bank wants the customer to confirm.
pub const NEEDS_CUSTOMER: &str = "authentication_required";

/// How many due subscriptions one claim takes.
const BATCH: u64 = 500;

/// Running work renews its lease (`PAYDESK_LEASE_SECONDS`, a minute by default) this many
/// times per lease, so a slow moment never lets another run take it over while it lives.
const RENEWALS_PER_LEASE: i32 = 4;

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
    /// Subscriptions ended at the end of the paid period they were cancelled for.
    pub canceled: usize,
}

impl std::ops::AddAssign for Report {
    fn add_assign(&mut self, other: Report) {
        self.charged += other.charged;
        self.succeeded += other.succeeded;
        self.expired += other.expired;
        self.canceled += other.canceled;
    }
}

/// The end of a lease taken now.
fn lease_from_now(state: &AppState) -> DateTime<Utc> {
    Utc::now() + state.config.lease
}

/// Renews a lease while it lives; stops when dropped.
struct Renewer(tokio::task::JoinHandle<()>);

impl Renewer {
    fn start<F, Fut>(state: &AppState, renew: F) -> Self
    where
        F: Fn(DateTime<Utc>) -> Fut + Send + 'static,
        Fut: Future<Output = Result<(), DbErr>> + Send,
    {
        let lease = state.config.lease;
        let every = (lease / RENEWALS_PER_LEASE).to_std().unwrap_or(std::time::Duration::from_secs(1));
        Renewer(tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                let renew = renew(Utc::now() + lease);
                if let Err(e) = renew.await {
                    tracing::warn!(error = %e, "renewing a lease failed");
                }
            }
        }))
    }
}

impl Drop for Renewer {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// One run of the engine at `now` over the real-time subscriptions (not those on test
/// clocks): claims what is due, batch by batch, and bills it. On PostgreSQL, several
/// workers claim and bill batches side by side. It also resumes the advances of test clocks
/// whose instance stopped mid-way, and settles payments an interrupted request left
/// `processing`.
pub async fn run_due(state: &AppState, now: DateTime<Utc>) -> Result<Report, AppError> {
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
        report += done.map_err(|e| AppError::Internal(format!("billing worker: {e}")))??;
    }
    report += resume_clocks(state).await?;
    settle_interrupted(state, Utc::now()).await?;
    Ok(report)
}

/// The acquirers of the shops a run meets, by shop and mode, each looked up once.
#[derive(Default)]
struct Acquirers(HashMap<(i64, bool), Option<Arc<dyn Acquirer>>>);

impl Acquirers {
    /// The acquirer of the shop's test or live payments; `None` when the shop's processor
    /// has no account for them (or it cannot be opened: that is logged).
    async fn of(&mut self, state: &AppState, shop_id: i64, test: bool) -> Result<Option<Arc<dyn Acquirer>>, DbErr> {
        if let Some(found) = self.0.get(&(shop_id, test)) {
            return Ok(found.clone());
        }
        let found = match crate::services::processors::acquirer(state, shop_id, test).await {
            Ok(found) => found,
            Err(AppError::Db(e)) => return Err(e),
            Err(e) => {
                tracing::error!(shop = shop_id, error = %e, "the shop's processor cannot be used");
                None
            }
        };
        self.0.insert((shop_id, test), found.clone());
        Ok(found)
    }
}

async fn claim_and_bill(state: &AppState, now: DateTime<Utc>) -> Result<Report, DbErr> {
    let mut report = Report::default();
    loop {
        let token = random_hex(12);
        // Leases are real time, whatever the run's: they are renewed and judged in it.
        let wall = Utc::now();
        let lease = wall + state.config.lease;
        // A stopping instance finishes the batch it holds and claims no more.
        if state.lifecycle.is_stopping() {
            return Ok(report);
        }
        let batch = db::subscriptions::claim_due(&state.db, now, wall, BATCH, &token, lease).await?;
        if batch.is_empty() {
            return Ok(report);
        }
        report += bill(state, batch, now, false, &token).await?.0;
    }
}
