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

use chrono::{DateTime, Utc};
use sea_orm::{ConnectionTrait, DatabaseBackend, DbErr, TransactionTrait};

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
use crate::domain::vocab::{PaymentStatus, TransactionType};
use crate::external::acquirer::{Acquirer, Behaviour, CardRef, ChargeRequest, IfUnsent, Outcome as ChargeOutcome};
use crate::external::telemetry;
use crate::services::events;
use crate::services::mail::reminders;
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

/// Settles hosted-page payments whose request stopped before the acquirer's answer was
/// recorded, or whose answer is not known yet (each when its next lookup is due): asks the
/// acquirer again under the payment's own key (it looks the charge up, never charging
/// twice), records the answer, gives a finite product its unit back if the payment did not
/// go through, and opens the subscription a plan page's first charge paid for. A customer
/// who never finished authenticating (3-D Secure) within the hour lets the payment expire.
pub async fn settle_interrupted(state: &AppState, now: DateTime<Utc>) -> Result<usize, DbErr> {
    let before = now - state.config.lease * 2;
    let stale = db::payments::interrupted(&state.db, before, now, 500).await?;
    let count = stale.len();
    let mut acquirers = Acquirers::default();
    for payment in stale {
        let settled = settle_with(state, &mut acquirers, payment, IfUnsent::Resend, now).await?;
        tracing::info!(payment = %settled.id, status = %settled.status, "settled an interrupted payment");
    }
    // A renewal still unknown when its subscription ended (cancelled meanwhile): no claim of
    // the engine looks it up any more, so the sweep does, recording what the bank did. One
    // that never reached the processor is not sent now: it is recorded as not charged.
    for payment in db::payments::orphaned_renewals(&state.db, before, now, 500).await? {
        let settled = settle_with(state, &mut acquirers, payment, IfUnsent::GiveUp, now).await?;
        tracing::info!(payment = %settled.id, status = %settled.status, "settled a renewal of an ended subscription");
    }
    // A plan's first charge that went through without its subscription opened (the request
    // or the sweep stopped in between): it opens now.
    for payment in db::payments::paid_unopened(&state.db, before, 100).await? {
        open_paid(state, &payment, now).await?;
    }
    Ok(count)
}

/// Settles one hosted-page payment still `processing` by asking the processor how it ended
/// (a customer back from the processor's page or their bank, a notification): it only looks
/// up, never sends the charge again, since it may still be in flight. Answers the payment as
/// it then stands.
pub async fn settle(state: &AppState, payment: payments::Model, now: DateTime<Utc>) -> Result<payments::Model, DbErr> {
    settle_with(state, &mut Acquirers::default(), payment, IfUnsent::Wait, now).await
}

/// Settles a payment still `processing`; `if_unsent`: what a charge that never reached the
/// processor leads to.
async fn settle_with(
    state: &AppState,
    acquirers: &mut Acquirers,
    payment: payments::Model,
    if_unsent: IfUnsent,
    now: DateTime<Utc>,
) -> Result<payments::Model, DbErr> {
    let acquirer = acquirers.of(state, payment.shop_id, payment.test).await?;
    let (mut outcome, card) = match (&acquirer, &payment.checkout_token) {
        (None, _) => (ChargeOutcome::unknown(), None),
        // Typed on the processor's page: the page says how it ended.
        (Some(acquirer), Some(token)) => acquirer.hosted_outcome(token).await,
        (Some(acquirer), None) => {
            let description = description_of(state, &payment).await?;
            // The customer's charge goes again as first sent: back to the payment's return.
            let back =
                payment.billing_key.is_none().then(|| crate::web::urls::payment_return(&state.config, &payment.id));
            let first = charge_of(&payment, &description, back.as_deref(), now);
            let request = ChargeRequest { again: true, if_unsent, first_sent: Some(payment.created_at), ..first };
            (acquirer.charge(&payment.card(), request).await, None)
        }
    };
    // The customer had an hour at their bank's check (the processor's page closes itself then:
    // it was opened to expire, and says so). Only a processor's word that the payment still
    // waits for them ends it; an unanswered lookup never does.
    // A charge still waiting at the bank is first given up at the processor (where it would
    // not lapse by itself): only once it confirms does the payment fail.
    if let ChargeOutcome::Pending { reference, redirect_url: Some(_) } = &outcome
        && pending::authentication_expired(payment.created_at, now)
        && match (&acquirer, reference) {
            (Some(acquirer), Some(reference)) => acquirer.abandon(reference, &payment.id).await,
            _ => true,
        }
    {
        let message = "The customer did not finish authenticating the payment (3-D Secure) in time.";
        outcome = ChargeOutcome::Declined { code: "payment_expired", message: message.into() };
    }
    settle_as(state, payment, outcome, card, now).await
}

/// A customer left the processor's card page of `payment` without paying (its back link):
/// the page is closed at the processor where it can be, and the payment settled as it then
/// stands. Closed unpaid, it fails and a finite product's unit comes back at once; a page
/// the processor cannot close stays open until it runs out, and so does its hold.
pub async fn leave(state: &AppState, payment: payments::Model, now: DateTime<Utc>) -> Result<payments::Model, DbErr> {
    let acquirer = Acquirers::default().of(state, payment.shop_id, payment.test).await?;
    let (Some(acquirer), Some(token)) = (acquirer, payment.checkout_token.clone()) else {
        return settle(state, payment, now).await;
    };
    let closed = acquirer.close_hosted(&token).await;
    let (outcome, card) = acquirer.hosted_outcome(&token).await;
    let outcome = match outcome {
        ChargeOutcome::Declined { code: "payment_expired", .. } if closed => ChargeOutcome::Declined {
            code: LEFT_THE_PAGE,
            message: "The customer left the processor's page without paying.".into(),
        },
        other => other,
    };
    settle_as(state, payment, outcome, card, now).await
}

/// The failure code of a payment whose customer left the processor's page without paying.
pub const LEFT_THE_PAGE: &str = "payment_canceled";

/// Records how a payment on a page ended, as one step with all it brings.
async fn settle_as(
    state: &AppState,
    payment: payments::Model,
    outcome: ChargeOutcome,
    card: Option<CardRef>,
    now: DateTime<Utc>,
) -> Result<payments::Model, DbErr> {
    // An answer is recorded in the payment's own time (its subscription's clock's); one still
    // unknown is looked up again in real time.
    let at = match &outcome {
        ChargeOutcome::Pending { .. } => now,
        _ => time_of_payment(state, &payment, now).await?,
    };
    // The answer, the unit given back and the payer made a customer are one step: no one
    // sees a payment settled without the rest.
    let txn = state.db.begin().await?;
    let (mut settled, recorded) = record_answer_in(&txn, state, payment, &outcome, card.as_ref(), at).await?;
    let failed = matches!(settled.status, PaymentStatus::Failed | PaymentStatus::Error);
    if recorded
        && failed
        && let Some(product_id) = &settled.product_id
    {
        db::products::release_unit(&txn, product_id).await?;
    }
    // Only a payer whose card went through becomes a customer.
    let paid = recorded && matches!(settled.status, PaymentStatus::Succeeded | PaymentStatus::Authorized);
    if paid && let Some(named) = name_customer(&txn, &settled, at).await? {
        settled = named;
    }
    txn.commit().await?;
    if recorded {
        telemetry::payment(settled.status.as_str(), "hosted");
    }
    if recorded && settled.status == PaymentStatus::Succeeded && settled.billing_key.is_none() {
        open_paid(state, &settled, now).await?;
    }
    Ok(settled)
}

/// The time of a payment: its subscription's clock's for a payment of a subscription on a
/// test clock (its other times are the clock's), else `now`.
async fn time_of_payment(
    state: &AppState,
    payment: &payments::Model,
    now: DateTime<Utc>,
) -> Result<DateTime<Utc>, DbErr> {
    let Some(sub_id) = payment.subscription_id.as_deref().filter(|_| payment.test) else { return Ok(now) };
    let Some(sub) = db::find_public::<subscriptions::Entity>(&state.db, sub_id).await? else { return Ok(now) };
    db::test_clocks::time_of(&state.db, sub.shop_id, sub.test_clock_id.as_deref(), now).await
}

/// The charge `payment` stands for, as it is first sent (a customer's comes back to
/// `return_url` from their bank's check); a lookup or a resend of it changes only `again`,
/// `if_unsent` and `first_sent`.
pub fn charge_of<'a>(
    payment: &'a payments::Model,
    description: &'a str,
    return_url: Option<&'a str>,
    now: DateTime<Utc>,
) -> ChargeRequest<'a> {
    ChargeRequest {
        amount: payment.amount,
        currency: payment.currency,
        capture: payment.transaction_type == TransactionType::Payment,
        // A subscription's charge went under its billing key (the engine's), which the
        // processor knows it by; any other payment under its own id.
        idempotency_key: payment.billing_key.as_deref().unwrap_or(&payment.id),
        customer_present: payment.billing_key.is_none(),
        again: false,
        if_unsent: IfUnsent::Wait,
        first_sent: None,
        description,
        return_url,
        now,
        simulate: None,
    }
}

/// The payment with its customer: the one the details typed on paydesk's page make (by
/// e-mail), if it has none yet. Two settlings at once (the recording one and the sweep's
/// `paid_unopened`, say) make one customer: the payment is taken first, in the transaction
/// that makes it.
async fn customer_of_payment(
    state: &AppState,
    payment: payments::Model,
    now: DateTime<Utc>,
) -> Result<payments::Model, DbErr> {
    if payment.customer_id.is_some() || payment.customer_details.is_none() {
        return Ok(payment);
    }
    let txn = state.db.begin().await?;
    match name_customer(&txn, &payment, now).await? {
        Some(named) => {
            txn.commit().await?;
            Ok(named)
        }
        None => {
            txn.rollback().await?;
            Ok(db::find_public::<payments::Entity>(&state.db, &payment.id).await?.unwrap_or(payment))
        }
    }
}

/// In `txn`: the customer the details typed on paydesk's page make (by e-mail), given to
/// the payment if it has none yet; `None` when there is nothing to do or another settling
/// named one first.
async fn name_customer(
    txn: &impl ConnectionTrait,
    payment: &payments::Model,
    now: DateTime<Utc>,
) -> Result<Option<payments::Model>, DbErr> {
    let fields = match (&payment.customer_id, &payment.customer_details) {
        (None, Some(kept)) => checkout_rules::customer_from_json(kept),
        _ => None,
    };
    let Some(fields) = fields else { return Ok(None) };
    if !db::payments::claim_unnamed(txn, &payment.id).await? {
        return Ok(None);
    }
    let customer = db::customers::find_or_insert_by_email(txn, payment.shop_id, fields, now).await?;
    Ok(Some(db::payments::set_customer(txn, payment.clone(), &customer.id).await?))
}

/// What a payment is for, as the processor shows it: the product's name or the plan's title.
async fn description_of(state: &AppState, payment: &payments::Model) -> Result<String, DbErr> {
    if let Some(id) = &payment.product_id {
        return Ok(db::find_public::<products::Entity>(&state.db, id).await?.map_or_else(|| id.clone(), |p| p.name));
    }
    match &payment.plan_id {
        Some(id) => Ok(db::find_public::<plans::Entity>(&state.db, id).await?.map_or_else(|| id.clone(), |p| p.title)),
        None => Ok(payment.id.clone()),
    }
}

/// Starts the subscription a plan's first charge paid for, once it went through after the
/// page had answered (the processor's page, 3-D Secure, a lost answer settled later): the
/// subscription waiting for that card, or a new one for the customer of a plan's page.
async fn open_paid(state: &AppState, payment: &payments::Model, now: DateTime<Utc>) -> Result<(), DbErr> {
    let payment = &customer_of_payment(state, payment.clone(), now).await?;
    let (Some(plan_id), Some(customer_id)) = (&payment.plan_id, &payment.customer_id) else { return Ok(()) };
    let Some(plan) = db::find_public::<plans::Entity>(&state.db, plan_id).await? else { return Ok(()) };
    let Some(sub_id) = &payment.subscription_id else {
        return open(state, &plan, payment, customer_id, now).await.map(|_| ());
    };
    let Some(sub) = db::find_public::<subscriptions::Entity>(&state.db, sub_id).await? else { return Ok(()) };
    let open = matches!(
        sub.state,
        rules::State::Trial | rules::State::Active | rules::State::FailedAttempt | rules::State::Paused
    );
    if payment.amount == 0 && sub.started_at.is_some() && open {
        return save_page_card(state, payment, &sub, now).await;
    }
    let terms = Terms::from(&plan.fields());
    let due = match rules::due(&terms, &sub.progress()) {
        Due::Charge { period, attempt, amount } if amount == payment.amount => Some((period, attempt)),
        _ => None,
    };
    let waiting = matches!(sub.state, rules::State::Redirecting | rules::State::FailedAttempt);
    let Some((period, attempt)) = due.filter(|_| waiting) else { return set_aside(state, payment, &sub).await };
    let key = rules::charge_key(&sub.id, period, attempt);
    if !db::payments::attach(&state.db, &payment.id, &sub.id, customer_id, &key).await? {
        // Another settling of this payment attached it first and goes on from there, or
        // another payment is that charge already.
        let current = db::find_public::<payments::Entity>(&state.db, &payment.id).await?;
        if current.is_some_and(|p| p.billing_key.is_none()) {
            return set_aside(state, payment, &sub).await;
        }
        return Ok(());
    }
    // A subscription on a test clock lives in the clock's time.
    let now = db::test_clocks::time_of(&state.db, sub.shop_id, sub.test_clock_id.as_deref(), now).await?;
    let sub_id = sub.id.clone();
    let taken = match sub.started_at {
        // Back to confirm a renewal the bank asked them for, or paying what is overdue.
        Some(_) => take_card(state, sub, &payment.card(), now).await?,
        None => start(state, &plan, sub, &payment.card(), now).await?,
    };
    if taken.is_none() {
        // An engine holds it: it finds the charge paid under its key; sooner rather than later.
        db::subscriptions::due_now(&state.db, &sub_id, Utc::now()).await?;
    }
    Ok(())
}

/// A page paid for a subscription that no longer waits for that charge (cancelled
/// meanwhile, paid by another page or by the engine, another period): marked with a key of
/// its own so that no later charge takes it, and logged for the merchant to refund.
async fn set_aside(state: &AppState, payment: &payments::Model, sub: &subscriptions::Model) -> Result<(), DbErr> {
    let customer_id = payment.customer_id.as_deref().unwrap_or(&sub.customer_id);
    let key = rules::stray_key(&sub.id, &payment.id);
    if db::payments::attach(&state.db, &payment.id, &sub.id, customer_id, &key).await? {
        tracing::error!(payment = %payment.id, subscription = %sub.id, "a card page was paid for a subscription that no longer waits for it: refund it");
    }
    Ok(())
}

/// Saves the card a subscriber gave on the processor's page (a payment of nothing) as the
/// card of their started subscription, once: the payment is marked with its key in the same
/// transaction.
async fn save_page_card(
    state: &AppState,
    payment: &payments::Model,
    sub: &subscriptions::Model,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    let customer_id = payment.customer_id.as_deref().unwrap_or(&sub.customer_id);
    let key = rules::card_update_key(&sub.id, &payment.id);
    let txn = state.db.begin().await?;
    if !db::payments::attach(&txn, &payment.id, &sub.id, customer_id, &key).await? {
        // Another settling of this payment saved it.
        return Ok(());
    }
    match db::subscriptions::replace_card(&txn, sub, &payment.card(), now).await? {
        Some(updated) => {
            events::record_about(&txn, &state.config, EventType::SubscriptionCardUpdated, &updated).await?
        }
        None => {
            tracing::warn!(payment = %payment.id, subscription = %sub.id, "a card was saved for a subscription that has ended")
        }
    }
    txn.commit().await
}

/// Opens the subscription a plan page's first charge (`payment`, succeeded) paid for: the
/// customer's, starting with that charge as its first. The engine finds the charge answered
/// under its billing key and records the start without charging again.
pub async fn open(
    state: &AppState,
    plan: &plans::Model,
    payment: &payments::Model,
    customer_id: &str,
    now: DateTime<Utc>,
) -> Result<Option<subscriptions::Model>, DbErr> {
    let terms = Terms::from(&plan.fields());
    let progress = rules::begin(&terms);
    let Due::Charge { period, attempt, .. } = rules::due(&terms, &progress) else { return Ok(None) };
    let new = NewSubscription {
        id: None,
        shop_id: plan.shop_id,
        plan_id: plan.id.clone(),
        customer_id: customer_id.to_string(),
        test: plan.test,
        test_clock_id: None,
        tracking_id: None,
        return_url: None,
        notification_url: None,
        additional_data: None,
        progress,
    };
    // Created with its card: the first charge's line begins the timeline (and says it was
    // created). Made and given the charge at once: of two settlings of one payment, one
    // opens it.
    let txn = state.db.begin().await?;
    let mut sub = db::subscriptions::insert(&txn, new, now).await?;
    let key = rules::charge_key(&sub.id, period, attempt);
    if !db::payments::attach(&txn, &payment.id, &sub.id, customer_id, &key).await? {
        txn.rollback().await?;
        return Ok(None);
    }
    // A coupon typed on the page (its redemption taken then): the subscription's discount
    // from its first plan period.
    let coupon = match &payment.coupon_id {
        Some(id) => db::find_public::<crate::db::entities::coupons::Entity>(&txn, id).await?,
        None => None,
    };
    if let Some(coupon) = coupon
        && let Some(discounted) =
            db::subscriptions::apply_discount(&txn, &sub, &coupon.id, coupon.periods(), now).await?
    {
        events::record_about(&txn, &state.config, EventType::SubscriptionDiscountApplied, &discounted).await?;
        sub = discounted;
    }
    txn.commit().await?;
    start(state, plan, sub, &payment.card(), now).await
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

/// Records the acquirer's answer to a charge made with the customer present (and the card
/// it was made with, when the processor's page took it), with its event, if the payment still waits for it (a request and the sweeper of interrupted
/// payments may both have asked); answers the payment as stored, and whether this call
/// recorded it.
pub async fn record_answer(
    state: &AppState,
    payment: payments::Model,
    outcome: &ChargeOutcome,
    card: Option<&CardRef>,
    now: DateTime<Utc>,
) -> Result<(payments::Model, bool), DbErr> {
    let txn = state.db.begin().await?;
    let (stored, recorded) = record_answer_in(&txn, state, payment, outcome, card, now).await?;
    txn.commit().await?;
    if recorded {
        telemetry::payment(stored.status.as_str(), "hosted");
    }
    Ok((stored, recorded))
}

/// [`record_answer`] in the caller's transaction.
async fn record_answer_in(
    txn: &impl ConnectionTrait,
    state: &AppState,
    payment: payments::Model,
    outcome: &ChargeOutcome,
    card: Option<&CardRef>,
    now: DateTime<Utc>,
) -> Result<(payments::Model, bool), DbErr> {
    if let Some(card) = card {
        db::payments::set_card(txn, &payment.id, card).await?;
    }
    let (stored, recorded) = db::payments::record_outcome(txn, payment, outcome, now).await?;
    if recorded && let Some(kind) = EventType::of_charge(stored.status) {
        events::record(txn, &state.config, vec![events::payment(kind, &stored)]).await?;
    }
    Ok((stored, recorded))
}

async fn claim_and_bill(state: &AppState, now: DateTime<Utc>) -> Result<Report, DbErr> {
    let mut report = Report::default();
    loop {
        let token = random_hex(12);
        let lease = now.max(Utc::now()) + state.config.lease;
        // A stopping instance finishes the batch it holds and claims no more.
        if state.lifecycle.is_stopping() {
            return Ok(report);
        }
        let batch = db::subscriptions::claim_due(&state.db, now, BATCH, &token, lease).await?;
        if batch.is_empty() {
            return Ok(report);
        }
        report += bill(state, batch, now, false, &token).await?.0;
    }
}

/// Starts advancing the shop's `clock` to `to` and runs the advance to its end in a task of
/// its own, so that it finishes even if the caller goes away. `None` when another advance
/// of the clock is running.
pub async fn advance_clock(
    state: &AppState,
    clock: &test_clocks::Model,
    to: DateTime<Utc>,
) -> Result<Option<Report>, AppError> {
    let token = random_hex(12);
    if !db::test_clocks::begin_advance(&state.db, &clock.id, to, &token, lease_from_now(state), Utc::now()).await? {
        return Ok(None);
    }
    let (state, id) = (state.clone(), clock.id.clone());
    let task = tokio::spawn(async move { run_advance(&state, &id, to, &token).await });
    Ok(task.await.map_err(|e| AppError::Internal(format!("clock advance: {e}")))?.map(Some)?)
}

/// Takes over the advances whose instance stopped (their lease ran out) and runs them to
/// their end.
async fn resume_clocks(state: &AppState) -> Result<Report, DbErr> {
    let mut report = Report::default();
    for clock in db::test_clocks::stalled(&state.db, Utc::now()).await? {
        let Some(to) = clock.advance_to else { continue };
        let token = random_hex(12);
        if db::test_clocks::begin_advance(&state.db, &clock.id, to, &token, lease_from_now(state), Utc::now()).await? {
            tracing::info!(clock = %clock.id, "resuming an interrupted clock advance");
            report += run_advance(state, &clock.id, to, &token).await?;
        }
    }
    Ok(report)
}

/// Runs everything due on the clock up to `to`, in time order, each at its own due time,
/// while this run holds the clock's lease `token`.
async fn run_advance(state: &AppState, clock_id: &str, to: DateTime<Utc>, token: &str) -> Result<Report, DbErr> {
    let renewer = {
        let (db, id, token) = (state.db.clone(), clock_id.to_string(), token.to_string());
        Renewer::start(state, move |until| {
            let (db, id, token) = (db.clone(), id.clone(), token.clone());
            async move { db::test_clocks::renew(&db, &id, &token, until).await.map(|_| ()) }
        })
    };
    let advanced = advance_steps(state, clock_id, to, token).await;
    drop(renewer);
    let reached = match &advanced {
        Ok(_) => Some(to),
        Err(e) => {
            tracing::error!(clock = clock_id, error = %e, "clock advance failed; the clock stops where it got to");
            None
        }
    };
    db::test_clocks::finish(&state.db, clock_id, token, reached, Utc::now()).await?;
    advanced
}

async fn advance_steps(state: &AppState, clock_id: &str, to: DateTime<Utc>, token: &str) -> Result<Report, DbErr> {
    let mut report = Report::default();
    let mut events = 0;
    let mut time = db::test_clocks::frozen_time(&state.db, clock_id).await?.unwrap_or(to);
    reminders::sweep(state, Some(clock_id), time).await?;
    loop {
        let due = db::subscriptions::due_next_on_clock(&state.db, clock_id, to, BATCH).await?;
        let renew = due.first().and_then(|s| s.renew_at);
        // A reminder due before the next charge is sent at its own time.
        let remind = match state.mailer {
            Some(_) => db::subscriptions::next_remind_on_clock(&state.db, clock_id, time, to).await?,
            None => None,
        };
        if let Some(at) = remind.filter(|at| renew.is_none_or(|renew| *at < renew)) {
            if !db::test_clocks::step(&state.db, clock_id, token, at, Utc::now()).await? {
                return Ok(report);
            }
            time = at;
            reminders::sweep(state, Some(clock_id), at).await?;
            continue;
        }
        let Some(at) = renew else { break };
        if !db::test_clocks::step(&state.db, clock_id, token, at, Utc::now()).await? {
            // Another run took the clock over: it carries on from here.
            return Ok(report);
        }
        time = time.max(at);
        let claim = random_hex(12);
        let ids = due.iter().map(|s| s.id.clone()).collect();
        let claimed =
            db::subscriptions::claim_ids(&state.db, ids, at, &claim, lease_from_now(state), Utc::now()).await?;
        if claimed.is_empty() {
            // Held by a run that stopped; its claims run out within the lease.
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
            continue;
        }
        events += claimed.len();
        report += bill(state, claimed, at, false, &claim).await?.0;
        // The periods that just began have reminders of their own.
        reminders::sweep(state, Some(clock_id), at).await?;
        if events >= MAX_CLOCK_EVENTS {
            break;
        }
    }
    reminders::sweep(state, Some(clock_id), to).await?;
    Ok(report)
}

/// The first charge of a subscription of `plan` whose card just arrived, with the customer
/// present. `None` when another request started the subscription first.
pub async fn start(
    state: &AppState,
    plan: &crate::db::entities::plans::Model,
    sub: subscriptions::Model,
    card: &CardRef,
    now: DateTime<Utc>,
) -> Result<Option<subscriptions::Model>, DbErr> {
    let anchor = Terms::from(&plan.fields()).anchor(now, state.config.timezone);
    let token = random_hex(12);
    let claim = (token.as_str(), lease_from_now(state));
    // The trial ends where this plan's first period begins, whatever plan it moves to later.
    let trial_ends_at = plan.trial_amount.is_some().then_some(anchor);
    let start = db::subscriptions::Start { at: now, anchor_at: anchor, trial_ends_at };
    let Some(sub) = db::subscriptions::start(&state.db, sub, card, start, claim).await? else {
        return Ok(None);
    };
    let (_, mut billed) = bill(state, vec![sub], now, true, &token).await?;
    Ok(billed.pop())
}

/// The charge a customer confirms with a new card, for a subscription waiting for them
/// since the bank asked for them on a renewal. `None` when it no longer waits.
pub async fn take_card(
    state: &AppState,
    sub: subscriptions::Model,
    card: &CardRef,
    now: DateTime<Utc>,
) -> Result<Option<subscriptions::Model>, DbErr> {
    let token = random_hex(12);
    let claim = (token.as_str(), lease_from_now(state));
    let overdue = sub.state == rules::State::FailedAttempt;
    let txn = state.db.begin().await?;
    let Some(sub) = db::subscriptions::take_card(&txn, sub, card, now, claim).await? else { return Ok(None) };
    if overdue {
        // A subscriber paying what is overdue with another card has updated the card.
        events::record_about(&txn, &state.config, EventType::SubscriptionCardUpdated, &sub).await?;
    }
    txn.commit().await?;
    let (_, mut billed) = bill(state, vec![sub], now, true, &token).await?;
    Ok(billed.pop())
}

/// Charges a subscription due now that its caller claimed under `token` (resumed with a new
/// period), without its customer. `None` when a change won over the charge.
pub async fn charge_claimed(
    state: &AppState,
    sub: subscriptions::Model,
    now: DateTime<Utc>,
    token: &str,
) -> Result<Option<subscriptions::Model>, DbErr> {
    let (_, mut billed) = bill(state, vec![sub], now, false, token).await?;
    Ok(billed.pop())
}

/// One due charge of a batch.
struct Charge {
    sub: subscriptions::Model,
    terms: Terms,
    progress: Progress,
    amount: i64,
    currency: Currency,
    card: CardRef,
    key: String,
    payment_id: Option<String>,
    /// Known already (recorded before an interruption): no charge is made.
    known: Option<PaymentStatus>,
    /// Asked before with no answer known: the acquirer looks it up first.
    again: bool,
    /// Answered before (recorded before an interruption) that the bank wants the customer.
    known_needs_customer: bool,
    /// When it was first asked (lookups of an unknown answer back off from then).
    asked: Option<DateTime<Utc>>,
    /// Who moves the money; `None` when the shop's processor has no account for the mode.
    acquirer: Option<Arc<dyn Acquirer>>,
    /// The plan's title, as the processor shows the charge.
    description: String,
    /// Where a customer who must authenticate comes back to (charges they are present for).
    return_url: Option<String>,
    /// How a test subscription's card was told to behave now.
    simulate: Option<Behaviour>,
    /// The card the customer paid this charge with on the processor's page: the
    /// subscription's card from now on.
    new_card: Option<CardRef>,
    /// The plan change asked now that this charge pays for.
    change: Option<Change>,
    /// The subscription's coupon and what it took off this charge.
    discount: Option<(String, i64)>,
}

/// A subscription's change to another plan: the plan, its terms, and when it was asked (the
/// proration's moment).
#[derive(Clone)]
struct Change {
    plan_id: String,
    terms: Terms,
    at: DateTime<Utc>,
}

/// Does what is due for `subs` (claimed under `token`) at `now`: charges (or ends) them and
/// reschedules. Answers what it did and the subscriptions as saved; a subscription
/// cancelled meanwhile, or taken over by another run, is left as that change left it.
async fn bill(
    state: &AppState,
    subs: Vec<subscriptions::Model>,
    now: DateTime<Utc>,
    customer_present: bool,
    token: &str,
) -> Result<(Report, Vec<subscriptions::Model>), DbErr> {
    let renewer = renew_meanwhile(state, token);
    let (mut charges, ending) = plan_charges(state, subs).await?;
    resume_earlier(state, &mut charges).await?;
    resume_pages(state, &mut charges).await?;
    // A card the customer just typed behaves as its number says: the schedule of test outcomes
    // is the saved card's.
    if !customer_present {
        simulate_test_cards(state, &mut charges, now).await?;
    }
    // A group at a time: the gate (still claimed, not cancelled), the payment rows, the
    // acquirer. A subscription that fails the gate is not charged.
    let mut answers = Vec::with_capacity(charges.len());
    for group in charges.chunks_mut(CONCURRENT_CHARGES) {
        write_processing_rows(state, group, token, now).await?;
        if customer_present {
            for c in group.iter_mut() {
                c.return_url = c.payment_id.as_deref().map(|id| crate::web::urls::payment_return(&state.config, id));
            }
        }
        answers.extend(ask_acquirer(group, customer_present, now).await);
    }
    // The claims are extended once and no longer renewed while the outcomes are recorded (a
    // renewal would lock the same rows in another order).
    db::subscriptions::renew_claims(&state.db, token, lease_from_now(state)).await?;
    drop(renewer);
    record(state, charges, answers, ending, token, now).await
}

/// Keeps the claims under `token` alive while the charges run.
fn renew_meanwhile(state: &AppState, token: &str) -> Renewer {
    let (db, token) = (state.db.clone(), token.to_string());
    Renewer::start(state, move |until| {
        let (db, token) = (db.clone(), token.clone());
        async move { db::subscriptions::renew_claims(&db, &token, until).await }
    })
}

/// Step 1: what is due for each subscription: a charge (with its idempotency key), or its end
/// (its billing cycles paid, or the paid period it was cancelled for over).
async fn plan_charges(
    state: &AppState,
    subs: Vec<subscriptions::Model>,
) -> Result<(Vec<Charge>, Vec<Transition>), DbErr> {
    let plan_ids: Vec<&str> =
        subs.iter().flat_map(|s| [Some(s.plan_id.as_str()), s.change_plan_id.as_deref()]).flatten().collect();
    let plans = db::plans::by_ids_of_any_shop(&state.db, &plan_ids).await?;
    let coupon_ids: Vec<&str> = subs.iter().filter(|s| s.discounted()).filter_map(|s| s.coupon_id.as_deref()).collect();
    let coupons = db::coupons::by_ids_of_any_shop(&state.db, &coupon_ids).await?;
    let (mut charges, mut ending) = (Vec::new(), Vec::new());
    let mut acquirers = Acquirers::default();
    for sub in subs {
        let Some(plan) = plans.get(&sub.plan_id) else { continue };
        let terms = Terms::from(&plan.fields());
        let progress = sub.progress();
        let change = sub.change_plan_id.as_ref().and_then(|id| plans.get(id)).map(|p| Change {
            plan_id: p.id.clone(),
            terms: Terms::from(&p.fields()),
            at: sub.change_at.unwrap_or_default(),
        });
        let due = rules::due(&terms, &progress);
        // A plan period's charge takes the subscription's discount while it lasts (the
        // trial's does not).
        let discount = match due {
            Due::Charge { amount, period, .. } if period >= 0 && sub.discounted() => sub
                .coupon_id
                .as_ref()
                .and_then(|id| coupons.get(id))
                .map(|c| (c.id.clone(), coupon::discount(amount, c.off()))),
            _ => None,
        };
        let charged = match due {
            Due::Charge { amount, period, attempt } => {
                let off = discount.as_ref().map_or(0, |d| d.1);
                Some((amount - off, rules::charge_key(&sub.id, period, attempt), None))
            }
            Due::Prorate { amount } => match (&change, &sub.change_id) {
                (Some(change), Some(id)) => Some((amount, rules::change_key(&sub.id, id), Some(change.clone()))),
                // Its plan is gone: the change is dropped as the period goes on.
                _ => None,
            },
            _ => None,
        };
        match charged {
            Some((amount, key, change)) => {
                let Some(card) = sub.card() else { continue };
                let currency = plan.currency;
                let description = change.as_ref().and_then(|c| plans.get(&c.plan_id)).unwrap_or(plan).title.clone();
                let acquirer = acquirers.of(state, sub.shop_id, sub.test).await?;
                charges.push(Charge {
                    sub,
                    terms,
                    progress,
                    amount,
                    currency,
                    card,
                    key,
                    payment_id: None,
                    known: None,
                    again: false,
                    known_needs_customer: false,
                    asked: None,
                    acquirer,
                    description,
                    return_url: None,
                    simulate: None,
                    new_card: None,
                    change,
                    discount,
                });
            }
            None => ending.push(Transition { sub, terms, progress, due, change }),
        }
    }
    Ok((charges, ending))
}

/// A due subscription that changes without a charge: it ends (its billing cycles paid, or
/// the paid period it was cancelled for over), pauses (the paid period it was paused from
/// over), or resumes (its resume date came).
struct Transition {
    sub: subscriptions::Model,
    terms: Terms,
    progress: Progress,
    due: Due,
    /// The change to another plan it has pending, with that plan's terms.
    change: Option<Change>,
}

/// Step 2: the payments an interrupted run (or an unknown answer) left. Answered ones are
/// not charged again; those still `processing` are asked again under the same key: the
/// acquirer looks them up, and answers the first result.
async fn resume_earlier(state: &AppState, charges: &mut [Charge]) -> Result<(), DbErr> {
    let keys = charges.iter().map(|c| c.key.clone()).collect();
    let earlier: HashMap<String, _> = db::payments::find_by_billing_keys(&state.db, keys)
        .await?
        .into_iter()
        .filter_map(|p| Some((p.billing_key.clone()?, p)))
        .collect();
    for c in charges {
        if let Some(p) = earlier.get(&c.key) {
            c.take_earlier(p);
        }
    }
    Ok(())
}

impl Charge {
    /// This charge is `p`, a payment written before under its key: answered, it is not asked
    /// again; still `processing`, it is looked up under the same key. One the customer made
    /// on the processor's page is never asked as a charge: its page says how it ended.
    fn take_earlier(&mut self, p: &payments::Model) {
        self.payment_id = Some(p.id.clone());
        self.known = Some(p.status).filter(|s| *s != PaymentStatus::Processing || p.checkout_token.is_some());
        self.again = self.known.is_none();
        self.known_needs_customer = p.failure_code.as_deref() == Some(NEEDS_CUSTOMER);
        self.asked = Some(p.created_at);
        self.new_card = paid_on_page(p, &self.sub);
    }
}

/// The card a subscription's charge was paid with on the processor's page, if it is not the
/// subscription's card yet.
fn paid_on_page(p: &payments::Model, sub: &subscriptions::Model) -> Option<CardRef> {
    let paid = p.checkout_token.is_some() && p.status == PaymentStatus::Succeeded;
    (paid && Some(&p.card_token) != sub.card_token.as_ref()).then(|| p.card())
}

/// Step 2b: a subscriber in the retries who opened the processor's page to pay what is
/// overdue: the page is looked up before the saved card is charged. Paid, it is this charge;
/// still open (or its end unknown), the retry waits for it; ended unpaid, the retry goes on.
async fn resume_pages(state: &AppState, charges: &mut [Charge]) -> Result<(), DbErr> {
    let overdue = charges.iter().filter(|c| c.sub.state == rules::State::FailedAttempt && c.payment_id.is_none());
    let ids: Vec<String> = overdue.map(|c| c.sub.id.clone()).collect();
    if ids.is_empty() {
        return Ok(());
    }
    for page in db::payments::open_pages(&state.db, ids).await? {
        let Some(c) = charges.iter_mut().find(|c| page.subscription_id.as_ref() == Some(&c.sub.id)) else { continue };
        if c.known == Some(PaymentStatus::Succeeded) {
            // Another page paid the period: this one, if paid too, stays a stray.
            continue;
        }
        // The page lives in real time, whatever the subscription's clock says.
        let page = match (page.status, &page.checkout_token) {
            // Its page is being opened: the customer may pay there in a moment.
            (PaymentStatus::Processing, None) => page,
            // Boxed: settling a paid page may bill the subscription (when no engine holds it).
            (PaymentStatus::Processing, Some(_)) => Box::pin(settle(state, page, Utc::now())).await?,
            _ => page,
        };
        let customer_id = c.sub.customer_id.clone();
        match page.status {
            PaymentStatus::Succeeded => {
                // Its settling may have made it this charge already, under the same key; any
                // other payment under the key is the charge, and this page a stray.
                if !db::payments::attach(&state.db, &page.id, &c.sub.id, &customer_id, &c.key).await? {
                    let under_key = db::payments::find_by_billing_keys(&state.db, vec![c.key.clone()]).await?;
                    if under_key.first().is_none_or(|p| p.id != page.id) {
                        continue;
                    }
                }
                c.new_card = paid_on_page(&page, &c.sub);
                c.known = Some(PaymentStatus::Succeeded);
            }
            PaymentStatus::Processing => c.known = Some(PaymentStatus::Processing),
            _ => continue,
        }
        c.payment_id = Some(page.id.clone());
        c.asked = Some(page.created_at);
    }
    Ok(())
}

/// Step 3: past the gate, the `processing` rows of a group's new charges, written before the
/// acquirer is asked so that no charge goes unrecorded.
async fn write_processing_rows(
    state: &AppState,
    group: &mut [Charge],
    token: &str,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    let ids = group.iter().filter(|c| c.payment_id.is_none()).map(|c| c.sub.id.clone()).collect::<Vec<_>>();
    if ids.is_empty() {
        return Ok(());
    }
    let open = db::subscriptions::still_billing(&state.db, ids, token).await?;
    let mut rows = Vec::new();
    for c in group.iter().filter(|c| c.payment_id.is_none() && open.contains(&c.sub.id)) {
        let new = NewPayment {
            shop_id: c.sub.shop_id,
            product_id: None,
            plan_id: Some(c.change.as_ref().map_or(&c.sub.plan_id, |change| &change.plan_id)),
            subscription_id: Some(&c.sub.id),
            customer_id: Some(&c.sub.customer_id),
            amount: c.amount,
            currency: c.currency,
            transaction_type: TransactionType::Payment,
            test: c.sub.test,
            card: &c.card,
            billing_key: Some(c.key.clone()),
            discount: c.discount.as_ref().map(|(id, off)| (id.as_str(), *off)),
        };
        rows.push(db::payments::processing_row(new, now));
    }
    if rows.is_empty() {
        return Ok(());
    }
    let written: HashMap<String, String> =
        rows.iter().filter_map(|r| Some((r.billing_key.clone().unwrap()?, r.id.clone().unwrap()))).collect();
    if db::payments::insert_rows(&state.db, rows).await? {
        for c in group.iter_mut().filter(|c| c.payment_id.is_none()) {
            c.payment_id = written.get(&c.key).cloned();
        }
        return Ok(());
    }
    // Another run (or a customer's page, paid a moment ago) wrote some of these keys first:
    // its rows are the ones that count, as they stand.
    let keys = written.keys().cloned().collect();
    let found: HashMap<String, payments::Model> = db::payments::find_by_billing_keys(&state.db, keys)
        .await?
        .into_iter()
        .filter_map(|p| Some((p.billing_key.clone()?, p)))
        .collect();
    for c in group.iter_mut().filter(|c| c.payment_id.is_none()) {
        match found.get(&c.key) {
            Some(p) if written.get(&c.key) != Some(&p.id) => c.take_earlier(p),
            Some(p) => c.payment_id = Some(p.id.clone()),
            None => {}
        }
    }
    Ok(())
}

/// Step 4: the acquirer's answers for a group, asked at once; `None` where nothing is asked
/// (no row, or an answer recorded by an earlier run).
async fn ask_acquirer(group: &[Charge], customer_present: bool, now: DateTime<Utc>) -> Vec<Option<ChargeOutcome>> {
    let calls = group.iter().map(|c| {
        let request = ChargeRequest {
            amount: c.amount,
            currency: c.currency,
            capture: true,
            idempotency_key: &c.key,
            customer_present,
            again: c.again,
            if_unsent: IfUnsent::Resend,
            first_sent: c.asked,
            description: &c.description,
            return_url: c.return_url.as_deref(),
            now,
            simulate: c.simulate,
        };
        let ask = c.payment_id.is_some() && c.known.is_none();
        async move {
            match (ask, &c.acquirer) {
                // Nothing to charge (a discount took it all): paid without the processor.
                (true, _) if c.amount == 0 => Some(ChargeOutcome::Approved { reference: "nothing to charge".into() }),
                (true, Some(acquirer)) => Some(acquirer.charge(&c.card, request).await),
                (true, None) => Some(ChargeOutcome::Error {
                    code: "processing_error",
                    message: "The shop's payment processor has no account for this mode.".into(),
                }),
                (false, _) => None,
            }
        }
    });
    futures::future::join_all(calls).await
}

/// Step 5, in one transaction: the answers, the new schedules and the timeline.
async fn record(
    state: &AppState,
    charges: Vec<Charge>,
    answers: Vec<Option<ChargeOutcome>>,
    ending: Vec<Transition>,
    token: &str,
    now: DateTime<Utc>,
) -> Result<(Report, Vec<subscriptions::Model>), DbErr> {
    let mut report = Report::default();
    let (mut saved, mut lines, mut answered) = (Vec::new(), Vec::new(), Vec::new());
    let txn = state.db.begin().await?;
    for (c, answer) in charges.into_iter().zip(answers) {
        let Some(payment_id) = c.payment_id.clone() else { continue };
        let needs_customer = match &answer {
            Some(ChargeOutcome::Declined { code, .. }) => *code == NEEDS_CUSTOMER,
            Some(_) => false,
            None => c.known_needs_customer,
        };
        let status = match (&answer, c.known) {
            (Some(outcome), _) => {
                report.charged += 1;
                db::payments::record_by_id(&txn, &payment_id, outcome, c.asked.unwrap_or(now), now).await?
            }
            (None, known) => known.unwrap_or(PaymentStatus::Error),
        };
        report.succeeded += usize::from(status == PaymentStatus::Succeeded);
        if answer.is_some() {
            answered.push(c.key.clone());
        }
        let answered = Answered { status, needs_customer };
        let new_card = c.new_card.clone().filter(|_| status == PaymentStatus::Succeeded);
        let old_plan = c.sub.plan_id.clone();
        let (mut sub, line) = record_charge(&txn, c, answered, payment_id, token, now, state.config.timezone).await?;
        if let Some(changed) = sub.as_ref().filter(|s| s.plan_id != old_plan) {
            events::record_about(&txn, &state.config, EventType::SubscriptionPlanChanged, changed).await?;
        }
        if let (Some(card), Some(charged)) = (new_card, &sub) {
            sub = db::subscriptions::replace_card(&txn, charged, &card, now).await?;
            if let Some(updated) = &sub {
                events::record_about(&txn, &state.config, EventType::SubscriptionCardUpdated, updated).await?;
            }
        }
        saved.extend(sub);
        lines.extend(line);
    }
    for t in ending {
        let old_plan = t.sub.plan_id.clone();
        if let Some((sub, line)) = transition(&txn, t, token, now, state.config.timezone, &mut report).await? {
            if sub.plan_id != old_plan {
                events::record_about(&txn, &state.config, EventType::SubscriptionPlanChanged, &sub).await?;
            }
            lines.push(events::Line { row: line, sub: sub.clone(), charge: None });
            saved.push(sub);
        }
    }
    let charged = db::payments::find_by_billing_keys(&txn, answered).await?;
    let charge_events = charged.iter().filter_map(|p| Some(events::payment(EventType::of_charge(p.status)?, p)));
    events::record(&txn, &state.config, charge_events.collect()).await?;
    events::timeline(&txn, &state.config, lines).await?;
    txn.commit().await?;
    for payment in &charged {
        telemetry::payment(payment.status.as_str(), "billing");
    }
    Ok((report, saved))
}

/// Makes a due change that charges nothing, while the engine holds the claim `token`:
/// answers the subscription as saved and its timeline line, `None` when another change won.
async fn transition(
    txn: &impl ConnectionTrait,
    t: Transition,
    token: &str,
    now: DateTime<Utc>,
    tz: chrono_tz::Tz,
    report: &mut Report,
) -> Result<Option<(subscriptions::Model, subscription_events::ActiveModel)>, DbErr> {
    let Transition { sub, terms, progress, due, change } = t;
    let from = sub.state;
    let (saved, reason) = match due {
        Due::Cancel => {
            let reason = sub.cancel_reason.clone().or_else(|| Some("cancelled at the end of the paid period".into()));
            let Some((sub, row)) = db::subscriptions::cancel(txn, &sub, reason, true, now).await? else {
                return Ok(None);
            };
            report.canceled += 1;
            return Ok(Some((sub, row)));
        }
        Due::Expire => {
            let saved = db::subscriptions::save_progress(txn, sub, token, &rules::expire(&progress), None, now).await?;
            report.expired += usize::from(saved.is_some());
            (saved, "billing cycles paid")
        }
        Due::Pause => {
            let paused = rules::pause(&progress, sub.resume_at);
            (
                db::subscriptions::pause_from_period_end(txn, &sub, token, &paused, now).await?,
                "paused at the end of the paid period",
            )
        }
        Due::Resume => {
            let billing = sub.resume_billing.unwrap_or(ResumeBilling::NewPeriod);
            let resumed = rules::resume(&terms, &progress, sub.anchor(now), billing, now, tz);
            let by = db::subscriptions::Resumer::Engine(token);
            let saved = db::subscriptions::resume(txn, &sub, by, (&resumed.0, resumed.1), None, now).await?;
            (saved, resume_reason(billing, true))
        }
        Due::ChangePlan | Due::Prorate { .. } => {
            // A change asked now whose plan is gone is dropped; one at the period end takes
            // effect as the next period begins, and that period is charged at its price next.
            let anchor = match (&change, due) {
                (Some(c), Due::ChangePlan) => {
                    plan_change::anchor_at_period_end(&terms, &c.terms, &progress, sub.anchor(now), tz)
                }
                _ => sub.anchor(now),
            };
            let plan_id = change.as_ref().filter(|_| due == Due::ChangePlan).map(|c| c.plan_id.as_str());
            let reason = if plan_id.is_some() {
                "plan changed at the end of the period"
            } else {
                "plan change dropped: the plan is gone"
            };
            let kept = Progress { change_now: None, change_at_period_end: false, ..progress };
            let saved = db::subscriptions::settle_change(txn, &sub, token, (&kept, anchor), plan_id, None, now).await?;
            (saved, reason)
        }
        Due::Charge { .. } => return Ok(None),
    };
    Ok(saved.map(|sub| {
        let row =
            db::subscriptions::event_row(&sub, Some(from), (sub.state, sub.renew_at), None, Some(reason.into()), now);
        (sub, row)
    }))
}

/// Why a paused subscription goes on, as its timeline says.
pub fn resume_reason(billing: ResumeBilling, on_its_date: bool) -> &'static str {
    match (billing, on_its_date) {
        (ResumeBilling::NewPeriod, true) => "resumed on its date with a new period",
        (ResumeBilling::Continue, true) => "resumed on its date on its old schedule",
        (ResumeBilling::NewPeriod, false) => "resumed with a new period",
        (ResumeBilling::Continue, false) => "resumed on its old schedule",
    }
}

/// How a charge was answered: its status, and whether the bank wants the customer.
struct Answered {
    status: PaymentStatus,
    needs_customer: bool,
}

/// The new schedule after a charge that ended with `status`, and its timeline line (with
/// the subscription as saved). A
/// subscription cancelled while the charge was with the acquirer keeps its cancel: the
/// charge is recorded against it and changes nothing else.
async fn record_charge(
    txn: &impl ConnectionTrait,
    c: Charge,
    answered: Answered,
    payment_id: String,
    token: &str,
    now: DateTime<Utc>,
    tz: chrono_tz::Tz,
) -> Result<(Option<subscriptions::Model>, Option<events::Line>), DbErr> {
    let status = answered.status;
    if status == PaymentStatus::Processing {
        // Not known yet: nothing moves on, and the charge is looked up again later.
        let waiting = Progress { renew_at: Some(pending::next_lookup(c.asked.unwrap_or(now), now)), ..c.progress };
        let sub = db::subscriptions::save_progress(txn, c.sub, token, &waiting, Some(payment_id), now).await?;
        return Ok((sub, None));
    }
    if c.change.is_some() {
        return record_change(txn, c, status == PaymentStatus::Succeeded, payment_id, token, now, tz).await;
    }
    let outcome = match status {
        PaymentStatus::Succeeded => Outcome::Succeeded,
        PaymentStatus::Failed if answered.needs_customer => Outcome::NeedsCustomer,
        PaymentStatus::Failed => Outcome::Declined,
        _ => Outcome::Error,
    };
    let next = rules::after_charge(&c.terms, &c.progress, outcome, c.sub.anchor(now), now, tz);
    // The first charge of a subscription created with its card is where its timeline begins.
    let first = c.sub.state == rules::State::Redirecting && c.sub.created_with_card();
    let (from, sub_id) = ((!first).then_some(c.sub.state), c.sub.id.clone());
    if let Some(sub) = db::subscriptions::save_progress(txn, c.sub, token, &next, Some(payment_id.clone()), now).await?
    {
        let row = db::subscriptions::event_row(&sub, from, (sub.state, sub.renew_at), Some(payment_id), None, now);
        let line = events::Line { row, sub: sub.clone(), charge: Some(status) };
        return Ok((Some(sub), Some(line)));
    }
    let current = db::find_public::<subscriptions::Entity>(txn, &sub_id).await?;
    let line = current.filter(|s| s.state == rules::State::Canceled).map(|sub| {
        let reason = Some("charged before the cancel took effect".to_string());
        let row = db::subscriptions::event_row(&sub, Some(sub.state), (sub.state, None), Some(payment_id), reason, now);
        events::Line { row, sub, charge: Some(status) }
    });
    Ok((None, line))
}

/// The end of a plan change's charge: paid, the subscription moves to the new plan (its
/// period goes on, or the new plan's first period began at the change); failed, the change
/// is dropped and the subscription goes on as it was (no retry: the merchant asks again).
async fn record_change(
    txn: &impl ConnectionTrait,
    c: Charge,
    paid: bool,
    payment_id: String,
    token: &str,
    now: DateTime<Utc>,
    tz: chrono_tz::Tz,
) -> Result<(Option<subscriptions::Model>, Option<events::Line>), DbErr> {
    let Some(change) = c.change.clone() else { return Ok((None, None)) };
    let anchor = c.sub.anchor(now);
    let before = Progress { change_now: None, ..c.progress };
    let proration = plan_change::prorate(&c.terms, &change.terms, &before, anchor, change.at, tz);
    let (progress, anchor, plan_id, reason) = match (paid, proration) {
        (true, Ok(p)) => {
            let (progress, anchor) = plan_change::after_change(&before, anchor, &p, change.at);
            (progress, anchor, Some(change.plan_id.as_str()), "plan changed")
        }
        _ => {
            // As it was: its next charge at the start of its next period.
            let start = c.terms.start_of(anchor, before.period, tz);
            let renew = if c.terms.night { rules::outside_night(start, tz) } else { start };
            (Progress { renew_at: Some(renew), ..before }, anchor, None, "plan change refused: its charge failed")
        }
    };
    let Some(sub) =
        db::subscriptions::settle_change(txn, &c.sub, token, (&progress, anchor), plan_id, Some(&payment_id), now)
            .await?
    else {
        return Ok((None, None));
    };
    let row = db::subscriptions::event_row(
        &sub,
        Some(c.sub.state),
        (sub.state, sub.renew_at),
        Some(payment_id),
        Some(reason.into()),
        now,
    );
    // The charge's own events are the payment's; the change is `subscription.plan_changed`.
    Ok((Some(sub.clone()), Some(events::Line { row, sub, charge: None })))
}

/// How the cards of test subscriptions behave at `now`, as their schedules say (the latest
/// entry from before `now`); one query for the batch.
async fn simulate_test_cards(state: &AppState, charges: &mut [Charge], now: DateTime<Utc>) -> Result<(), DbErr> {
    let test: Vec<&str> = charges.iter().filter(|c| c.sub.test).map(|c| c.sub.id.as_str()).collect();
    let schedules = db::subscriptions::test_outcomes_of(&state.db, &test).await?;
    for c in charges.iter_mut() {
        let schedule = schedules.get(&c.sub.id).map_or(&[][..], Vec::as_slice);
        c.simulate = schedule.iter().rev().find(|e| e.effective_from <= now).map(|e| e.outcome);
    }
    Ok(())
}
