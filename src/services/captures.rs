//! Captures and voids of held payments (authorizations). A capture or void is claimed on the
//! payment's row before the processor is asked, so of two at once only one reaches it; the
//! payment moves (succeeded with its invoice, or voided with its unit given back) only once
//! the processor approves, in one transaction. A claim an interrupted request left is taken
//! up by the sweep, which asks the processor again under the same key: it is never made
//! twice, and never left half done.

use chrono::{DateTime, Utc};
use tracing::Instrument;

use crate::db::entities::payments;
use crate::db::{self};
use crate::domain::event::EventType;
use crate::domain::vocab::PaymentStatus;
use crate::external::acquirer::{Outcome, SettleRequest};
use crate::services::payments::acquirer_for;
use crate::web::error::AppError;
use crate::web::state::AppState;

/// How many times a request sends a capture or void at most (the processors' retries of a
/// lost answer, and the lookup after them).
const SENDS: u32 = 4;

/// How long after it was claimed a capture or void of a request still running could be
/// under way: every send of it timing out, and a minute more.
fn interrupted_after(state: &AppState) -> chrono::TimeDelta {
    let sends = state.config.processor_timeout * SENDS;
    chrono::TimeDelta::from_std(sends).unwrap_or(chrono::TimeDelta::MAX) + chrono::TimeDelta::minutes(1)
}

/// How long the sweep asks about a claim whose answer stays unknown: processors keep a key's
/// answer for a day, and past that a capture the processor has not answered never arrived.
const GIVEN_UP_AFTER: chrono::TimeDelta = chrono::TimeDelta::hours(23);

/// How many claims one sweep takes up at most.
const SWEPT: u64 = 20;

/// Captures an authorized payment of the shop in full.
pub async fn capture(
    state: &AppState,
    shop_id: i64,
    id: &str,
    now: DateTime<Utc>,
) -> Result<payments::Model, AppError> {
    settle(state, shop_id, id, PaymentStatus::Succeeded, now).await
}

/// Voids an authorized payment of the shop; a finite product gets its unit back.
pub async fn void(state: &AppState, shop_id: i64, id: &str, now: DateTime<Utc>) -> Result<payments::Model, AppError> {
    settle(state, shop_id, id, PaymentStatus::Voided, now).await
}

/// The claim of a move to `to`.
fn kind_of(to: PaymentStatus) -> &'static str {
    if to == PaymentStatus::Voided { "void" } else { "capture" }
}

/// Moves an authorization to `to` (captured or voided).
async fn settle(
    state: &AppState,
    shop_id: i64,
    id: &str,
    to: PaymentStatus,
    now: DateTime<Utc>,
) -> Result<payments::Model, AppError> {
    // In a task of its own: once claimed, the processor is asked and the answer recorded
    // even if the client hangs up.
    let (state, id) = (state.clone(), id.to_string());
    let work = async move { settle_now(&state, shop_id, &id, to, now).await };
    tokio::spawn(crate::db::audit::acting::carry(work).in_current_span()).await.map_err(|_| AppError::Panic)?
}

async fn settle_now(
    state: &AppState,
    shop_id: i64,
    id: &str,
    to: PaymentStatus,
    now: DateTime<Utc>,
) -> Result<payments::Model, AppError> {
    let find = || db::find::<payments::Entity>(&state.db, shop_id, id);
    let payment = find().await?.ok_or(AppError::NotFound("Payment"))?;
    let kind = kind_of(to);
    let Some(token) = db::payments::claim_settling(&state.db, shop_id, id, kind, now).await? else {
        let current = find().await?.unwrap_or(payment);
        return Err(AppError::Conflict(match &current.settling {
            Some(under_way) => format!("A {under_way} of this payment is under way"),
            None => {
                let verb = if to == PaymentStatus::Voided { "voided" } else { "captured" };
                format!("Only an authorized payment can be {verb}; this payment is {}", current.status)
            }
        }));
    };
    match ask(state, &payment, to).await {
        Outcome::Approved { reference } => record(state, payment, to, &reference, now).await,
        refused => {
            db::payments::release_settling(&state.db, id, token).await?;
            Err(refusal(&refused, kind))
        }
    }
}

/// Asks the shop's processor for the capture or void of `payment`, under the key of its kind.
async fn ask(state: &AppState, payment: &payments::Model, to: PaymentStatus) -> Outcome {
    let reference = payment.acquirer_reference.clone().unwrap_or_default();
    let key = child_uid(&payment.id, kind_of(to));
    let tracking_id = payment.billing_key.as_deref().unwrap_or(&payment.id);
    let request = SettleRequest { reference: &reference, amount: payment.amount, idempotency_key: &key, tracking_id };
    match acquirer_for(state, payment.shop_id, payment.test).await {
        Ok(acquirer) if to == PaymentStatus::Voided => acquirer.void(request).await,
        Ok(acquirer) => acquirer.capture(request).await,
        Err(e) => Outcome::Error { code: "processing_error", message: e.to_string().into() },
    }
}

/// What the caller is told when the processor did not approve (the claim was given up).
fn refusal(outcome: &Outcome, kind: &str) -> AppError {
    match outcome {
        Outcome::Declined { message, .. } => AppError::Declined(message.to_string()),
        Outcome::Error { message, .. } => {
            AppError::Acquirer(format!("The payment processor could not make this {kind}: {message}"))
        }
        // Sent again under the same key, the processor answers what it did the first time.
        _ => AppError::Acquirer(format!(
            "The payment processor's answer to this {kind} was lost; nothing changed here. Send the {kind} again: \
             it goes under the same key, so it is never made twice"
        )),
    }
}

/// Records the approved capture or void of `payment` in one transaction: its status, a
/// voided product's unit given back, a capture's own reference, the event and a capture's
/// invoice. The processor's approval decides, whoever holds the claim by now; one recorded
/// already (by the processor's notification, or the sweep) is answered as it is.
async fn record(
    state: &AppState,
    payment: payments::Model,
    to: PaymentStatus,
    captured: &str,
    now: DateTime<Utc>,
) -> Result<payments::Model, AppError> {
    let (shop_id, id, kind) = (payment.shop_id, payment.id.as_str(), kind_of(to));
    let txn = crate::db::begin(&state.db).await?;
    if !db::payments::settle_held(&txn, shop_id, id, to, now).await? {
        txn.rollback().await?;
        return db::find::<payments::Entity>(&state.db, shop_id, id).await?.ok_or(AppError::NotFound("Payment"));
    }
    if to == PaymentStatus::Voided
        && let Some(product_id) = &payment.product_id
    {
        db::products::release_unit(&txn, product_id).await?;
    }
    if to == PaymentStatus::Succeeded && payment.acquirer_reference.as_deref() != Some(captured) {
        db::payments::set_capture_reference(&txn, id, captured).await?;
    }
    let settled = db::find::<payments::Entity>(&txn, shop_id, id).await?.ok_or(AppError::NotFound("Payment"))?;
    let event_type = match to {
        PaymentStatus::Voided => EventType::PaymentVoided,
        _ => EventType::PaymentCaptured,
    };
    // A capture or void takes or releases the whole authorization, under a uid of its own.
    let key = child_uid(id, kind);
    let event = crate::services::events::payment_child(event_type, &settled, &key, settled.amount);
    crate::services::events::record(&txn, &state.config, vec![event]).await?;
    crate::services::invoices::issue_for_payments(&txn, &state.config, &[&settled], now).await?;
    txn.commit().await?;
    Ok(settled)
}

/// Takes up the captures and voids interrupted requests left claimed: each is asked of the
/// processor again under its key and recorded as it answers. A refusal or a failure gives the
/// claim up, as a request would have; an answer lost again leaves it for the next sweep, for a
/// day at most. Answers how many were recorded or given up; one that cannot be finished now
/// is logged and left for the next sweep.
pub async fn resume_interrupted(state: &AppState, now: DateTime<Utc>) -> Result<usize, AppError> {
    let mut done = 0;
    for payment in db::payments::settling_due(&state.db, now - interrupted_after(state), SWEPT).await? {
        match resume(state, payment, now).await {
            Ok(finished) => done += usize::from(finished),
            Err(e) => tracing::error!(error = %e, "finishing an interrupted capture or void failed"),
        }
    }
    Ok(done)
}

/// Takes up one claim the sweep found: whether it was finished (recorded or given up).
async fn resume(state: &AppState, payment: payments::Model, now: DateTime<Utc>) -> Result<bool, AppError> {
    let (Some(kind), Some(was)) = (payment.settling.clone(), payment.settling_at) else { return Ok(false) };
    // Renewed with the time it is taken: a long sweep's last claims are not due again at once.
    let token = crate::db::now_millis(Utc::now().max(now));
    if !db::payments::take_settling(&state.db, &payment.id, was, token).await? {
        return Ok(false);
    }
    let to = if kind == "void" { PaymentStatus::Voided } else { PaymentStatus::Succeeded };
    let (id, claimed) = (payment.id.clone(), payment.updated_at);
    match ask(state, &payment, to).await {
        Outcome::Approved { reference } => {
            record(state, payment, to, &reference, now).await?;
            Ok(true)
        }
        Outcome::Pending { .. } if now - claimed < GIVEN_UP_AFTER => {
            tracing::warn!(payment = %id, kind, "an interrupted capture or void is still unknown; asked again later");
            Ok(false)
        }
        refused => {
            tracing::warn!(payment = %id, kind, outcome = ?refused, "an interrupted capture or void did not go through");
            db::payments::release_settling(&state.db, &id, token).await?;
            Ok(true)
        }
    }
}

/// The uid a payment's capture or void is notified under: the payment's id and the word.
fn child_uid(payment_id: &str, kind: &str) -> String {
    format!("{payment_id}_{kind}")
}
