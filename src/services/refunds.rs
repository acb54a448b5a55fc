//! Refunds: giving back some or all of what a payment took, through the acquirer, never
//! more than was taken. A refund holds its amount on the payment before the acquirer is
//! asked, so refunds made at once cannot together exceed the payment; if the request stops
//! before the answer is recorded, the sweeper asks again under the same key.
//!
//! A refund does not restock a finite product: the unit was sold and delivered. Voiding an
//! authorization, which never took the money, does give the unit back.

use chrono::{DateTime, Utc};
use tracing::Instrument;

use crate::db::{self, entities::payments, entities::refunds};
use crate::domain::event::EventType;
use crate::domain::refund::{RefundAsk, Refusal};
use crate::domain::vocab::RefundStatus;
use crate::external::acquirer::{Outcome, RefundRequest};
use crate::services::events;
use crate::web::error::AppError;
use crate::web::state::AppState;

/// How long a refund may stay pending before the sweeper takes it over.
const INTERRUPTED_AFTER: chrono::TimeDelta = chrono::TimeDelta::minutes(1);

/// How long after it began a refund is sent again under its key: processors keep a key's
/// answer for a day (bePaid's `RequestID`), and past that a resend could refund twice. One
/// still unknown then is only looked up (its hold kept meanwhile), and one the processor has
/// no record of failed: it never arrived.
const RESENT_WITHIN: chrono::TimeDelta = chrono::TimeDelta::hours(23);

/// How often a refund still unknown past [`RESENT_WITHIN`] is looked up.
const LOOKED_UP_EVERY: chrono::TimeDelta = chrono::TimeDelta::minutes(10);

/// Refunds the shop's payment `payment_id` as asked; answers the refund as recorded
/// (`succeeded`, or `failed` when the acquirer refused).
pub async fn refund(
    state: &AppState,
    shop_id: i64,
    payment_id: &str,
    ask: RefundAsk,
    now: DateTime<Utc>,
) -> Result<refunds::Model, AppError> {
    // In a task of its own: once the amount is held, the acquirer is asked and the answer
    // recorded even if the client hangs up.
    let (state, id) = (state.clone(), payment_id.to_string());
    let work = async move { refund_now(&state, shop_id, &id, ask, now).await };
    tokio::spawn(crate::db::audit::acting::carry(work).in_current_span()).await.map_err(|_| AppError::Panic)?
}

async fn refund_now(
    state: &AppState,
    shop_id: i64,
    payment_id: &str,
    ask: RefundAsk,
    now: DateTime<Utc>,
) -> Result<refunds::Model, AppError> {
    // A refund that loses a race for the last of the amount sees the payment again; the
    // loop ends because every lost race means another refund took part of what is left.
    loop {
        if let Some(made) = made_already(state, shop_id, &ask).await? {
            return Ok(made);
        }
        let payment =
            db::find::<payments::Entity>(&state.db, shop_id, payment_id).await?.ok_or(AppError::NotFound("Payment"))?;
        let amount = payment.refundable().amount_to_refund(ask.amount).map_err(refused)?;
        let txn = crate::db::begin(&state.db).await?;
        let refund = match db::refunds::begin(&txn, &payment, &ask, amount, now).await {
            Ok(Some(refund)) => refund,
            Ok(None) => {
                txn.rollback().await?;
                continue;
            }
            // The same chosen id sent twice at once: the other request made the refund.
            Err(e) if ask.id.is_some() && crate::web::error::duplicate(&e) => {
                drop(txn);
                return made_already(state, shop_id, &ask)
                    .await?
                    .ok_or_else(|| AppError::Conflict("This refund's id is taken".into()));
            }
            Err(e) => return Err(e.into()),
        };
        txn.commit().await?;
        return finish(state, &payment, refund, false, now).await;
    }
}

/// The refund made earlier under the id `ask` chose, if any.
async fn made_already(state: &AppState, shop_id: i64, ask: &RefundAsk) -> Result<Option<refunds::Model>, AppError> {
    match &ask.id {
        Some(id) => Ok(db::find::<refunds::Entity>(&state.db, shop_id, id).await?),
        None => Ok(None),
    }
}

fn refused(refusal: Refusal) -> AppError {
    match refusal.explain() {
        Ok(conflict) => AppError::Conflict(conflict),
        Err(errors) => AppError::Validation(errors),
    }
}

/// Asks the acquirer for a pending refund (with `look_only`, only looks it up: it is never
/// sent again) and records its answer.
async fn finish(
    state: &AppState,
    payment: &payments::Model,
    refund: refunds::Model,
    look_only: bool,
    now: DateTime<Utc>,
) -> Result<refunds::Model, AppError> {
    let request = RefundRequest {
        reference: payment.refund_reference(),
        amount: refund.amount,
        currency: refund.currency,
        idempotency_key: &refund.id,
        reason: refund.reason.as_deref().unwrap_or_default(),
    };
    let outcome = match crate::services::processors::usable(state, payment.shop_id, payment.test).await {
        Ok(Some(acquirer)) if look_only => acquirer.find_refund(&payment.card(), request).await,
        Ok(Some(acquirer)) => acquirer.refund(&payment.card(), request).await,
        Err(AppError::Db(e)) => return Err(e.into()),
        // Not known until the processor can be asked: the sweeper asks again later.
        Ok(None) | Err(_) => Outcome::unknown(),
    };
    let txn = crate::db::begin(&state.db).await?;
    let (refund, recorded) = db::refunds::finish(&txn, &refund, &outcome, now).await?;
    if recorded {
        let mut happened = Vec::new();
        if refund.status == RefundStatus::Succeeded {
            happened.push(events::refund(EventType::RefundSucceeded, &refund));
            if let Some(payment) = db::find_public::<payments::Entity>(&txn, &refund.payment_id).await? {
                happened.push(events::payment_child(EventType::PaymentRefunded, &payment, &refund.id, refund.amount));
            }
            let source = (format!("refund:{}", refund.id), refund.payment_id.as_str());
            crate::services::invoices::credit(&txn, &state.config, source, refund.amount, refund.reason.clone(), now)
                .await?;
        } else {
            happened.push(events::refund(EventType::RefundFailed, &refund));
        }
        events::record(&txn, &state.config, happened).await?;
    }
    txn.commit().await?;
    Ok(refund)
}

/// Asks the acquirer again for the shop's refund `id` if it is still pending (its processor
/// says it moved): its answer is recorded once, whoever asks.
pub async fn settle_pending(state: &AppState, shop_id: i64, id: &str, now: DateTime<Utc>) -> Result<(), AppError> {
    let Some(refund) = db::find::<refunds::Entity>(&state.db, shop_id, id).await? else { return Ok(()) };
    if refund.status != RefundStatus::Pending {
        return Ok(());
    }
    let payment = db::find::<payments::Entity>(&state.db, shop_id, &refund.payment_id).await?;
    let payment = payment.ok_or_else(|| AppError::Internal(format!("refund {} has no payment", refund.id)))?;
    finish(state, &payment, refund, false, now).await?;
    Ok(())
}

/// Finishes refunds whose request stopped before the acquirer's answer was recorded.
pub async fn resume_interrupted(state: &AppState, now: DateTime<Utc>) -> Result<usize, AppError> {
    let stale = db::refunds::interrupted(&state.db, now - INTERRUPTED_AFTER, now - RESENT_WITHIN, 100).await?;
    let count = stale.len();
    for refund in stale {
        let payment = db::find::<payments::Entity>(&state.db, refund.shop_id, &refund.payment_id).await?;
        let payment = payment.ok_or_else(|| AppError::Internal(format!("refund {} has no payment", refund.id)))?;
        let refund = finish(state, &payment, refund, false, now).await?;
        tracing::info!(refund = %refund.id, status = %refund.status, "finished an interrupted refund");
    }
    // Past the window a resend is safe in, a refund still unknown is looked up (every ten
    // minutes) until the processor tells how it ended, or that it never arrived.
    let unknown = db::refunds::unknown_since(&state.db, now - RESENT_WITHIN, now - LOOKED_UP_EVERY, 100).await?;
    for refund in unknown {
        let payment = db::find::<payments::Entity>(&state.db, refund.shop_id, &refund.payment_id).await?;
        let payment = payment.ok_or_else(|| AppError::Internal(format!("refund {} has no payment", refund.id)))?;
        let refund = finish(state, &payment, refund, true, now).await?;
        tracing::info!(refund = %refund.id, status = %refund.status, "looked up a refund whose answer was lost");
    }
    Ok(count)
}

/// A refund the processor accepted and then could not make (Stripe's `refund.updated` with
/// `failed`): it is recorded as failed once, its amount is refundable again on its payment,
/// and `refund.failed` tells the merchant.
pub async fn failed_later(
    state: &AppState,
    refund: refunds::Model,
    message: &str,
    now: DateTime<Utc>,
) -> Result<(), AppError> {
    let txn = crate::db::begin(&state.db).await?;
    if !db::refunds::fail_made(&txn, &refund, message, now).await? {
        return Ok(());
    }
    if let Some(failed) = db::find_public::<refunds::Entity>(&txn, &refund.id).await? {
        events::record(&txn, &state.config, vec![events::refund(EventType::RefundFailed, &failed)]).await?;
    }
    crate::services::invoices::rebill_failed_refund(&txn, &state.config, &refund.id, now).await?;
    if state.config.smtp.is_some() {
        let kind = crate::domain::mail::MailKind::RefundFailedLater;
        db::mails::to_owners(&txn, refund.shop_id, kind, &refund.id, None, Utc::now()).await?;
    }
    txn.commit().await?;
    tracing::warn!(refund = %refund.id, "a refund failed after the processor accepted it");
    Ok(())
}
