//! Notifications a shop's processor sends (bePaid's: the transaction, signed). Each is
//! verified (the `Content-Signature` with the public key of the transaction's mode, and HTTP
//! Basic with the account's id and secret key when sent), then acted on so that states only
//! move forward and a repeat changes nothing:
//! - a payment, authorization or tokenization paydesk still waits for is settled: a hosted
//!   page's payment is asked of the processor at once, a renewal is looked up by the engine
//!   right away;
//! - a refund, capture or void made in the processor's back office is recorded as if made
//!   here (a refund by its uid once: a second notification finds it).

use chrono::{DateTime, Utc};
use sea_orm::TransactionTrait;

use crate::db::entities::payments;
use crate::db::{self};
use crate::domain::event::EventType;
use crate::domain::processor::{Mode, ProcessorKind};
use crate::domain::refund::RefundAsk;
use crate::domain::vocab::{PaymentStatus, RefundStatus};
use crate::external::acquirer::Outcome;
use crate::external::acquirer::bepaid::notification::PublicKey;
use crate::external::acquirer::bepaid::wire::{Answer, Status, Transaction};
use crate::services::events;
use crate::web::error::AppError;
use crate::web::state::AppState;

/// What is said of a back-office refund.
const BACK_OFFICE_REFUND: &str = "Refunded in the payment processor's back office";

/// How a notification was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Received {
    /// Verified and acted on (or nothing to do): the processor stops sending it.
    Taken,
    /// Not from the shop's processor: refused.
    Forged,
    /// Not to be acted on yet (a refund of paydesk's own is under way): sent again later.
    Later,
}

/// Takes a bePaid notification for the shop `shop_id`: its raw `body`, and the
/// `Authorization` and `Content-Signature` headers it came with.
pub async fn bepaid(
    state: &AppState,
    shop_id: i64,
    authorization: Option<&str>,
    signature: Option<&str>,
    body: &[u8],
    now: DateTime<Utc>,
) -> Result<Received, AppError> {
    let Some(row) = db::processors::find(&state.db, shop_id).await? else { return Ok(Received::Forged) };
    if row.kind != ProcessorKind::Bepaid {
        return Ok(Received::Forged);
    }
    let Ok(Answer::One { transaction }) = serde_json::from_slice::<Answer>(body) else {
        return Err(AppError::BadRequest("The body is not a bePaid transaction notification".into()));
    };
    let mode = if transaction.test == Some(true) { Mode::Test } else { Mode::Live };
    let Some(account) = crate::services::processors::account(state, &row, mode)? else { return Ok(Received::Forged) };
    let key = row.account(mode).public_key.and_then(|k| PublicKey::parse(k).ok());
    let signed = matches!((key, signature), (Some(key), Some(signature)) if key.verifies(body, signature));
    let expected = format!("Basic {}", base64_credentials(&account.shop_id, &account.secret_key));
    let basic_ok = authorization.is_none_or(|sent| sent.trim() == expected);
    if !signed || !basic_ok {
        return Ok(Received::Forged);
    }
    act(state, shop_id, *transaction, now).await
}

fn base64_credentials(id: &str, secret: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(format!("{id}:{secret}"))
}

async fn act(state: &AppState, shop_id: i64, t: Transaction, now: DateTime<Utc>) -> Result<Received, AppError> {
    match t.kind.as_deref().unwrap_or("payment") {
        "refund" => back_office_refund(state, shop_id, &t, now).await,
        kind @ ("capture" | "void") => back_office_settle(state, shop_id, kind, &t, now).await,
        _ => {
            let Some(tracking_id) = &t.tracking_id else { return Ok(Received::Taken) };
            let Some(payment) = db::payments::find_by_tracking(&state.db, shop_id, tracking_id).await? else {
                return Ok(Received::Taken);
            };
            if payment.test != (t.test == Some(true)) {
                // Signed by the other mode's key: not this payment's account.
                return Ok(Received::Forged);
            }
            if payment.status != PaymentStatus::Processing {
                return Ok(Received::Taken);
            }
            match &payment.billing_key {
                None => {
                    crate::services::billing::settle(state, payment, now).await?;
                }
                // The engine looks the renewal up on its next run.
                Some(_) => {
                    if let Some(sub) = &payment.subscription_id {
                        db::subscriptions::due_now(&state.db, sub, now).await?;
                    }
                }
            }
            Ok(Received::Taken)
        }
    }
}

/// The payment a child transaction of the processor belongs to (its parent's uid is the
/// payment's reference), if it is of the transaction's mode.
async fn parent_of(state: &AppState, shop_id: i64, t: &Transaction) -> Result<Option<payments::Model>, AppError> {
    let Some(parent) = &t.parent_uid else { return Ok(None) };
    let found = db::payments::find_by_reference(&state.db, shop_id, parent).await?;
    Ok(found.filter(|p| p.test == (t.test == Some(true))))
}

/// A refund made in the processor's back office, recorded once by its uid.
async fn back_office_refund(
    state: &AppState,
    shop_id: i64,
    t: &Transaction,
    now: DateTime<Utc>,
) -> Result<Received, AppError> {
    if t.status != Status::Successful || db::refunds::find_by_reference(&state.db, shop_id, &t.uid).await?.is_some() {
        return Ok(Received::Taken);
    }
    let Some(payment) = parent_of(state, shop_id, t).await? else { return Ok(Received::Taken) };
    let amount = t.amount.unwrap_or(0);
    if amount <= 0 {
        return Ok(Received::Taken);
    }
    let refunds = db::refunds::of_payment(&state.db, &payment.id).await?;
    if refunds.iter().any(|r| r.status == RefundStatus::Pending) {
        // It may be that refund's answer: once paydesk recorded it, a repeat finds it.
        return Ok(Received::Later);
    }
    let ask = RefundAsk { amount: Some(amount), reason: Some(BACK_OFFICE_REFUND.into()), id: None };
    let txn = state.db.begin().await?;
    let Some(refund) = db::refunds::begin(&txn, &payment, &ask, amount, now).await? else {
        txn.rollback().await?;
        tracing::warn!(payment = %payment.id, uid = %t.uid, "a back-office refund is more than paydesk shows left");
        return Ok(Received::Taken);
    };
    let answer = Outcome::Approved { reference: t.uid.clone() };
    let (refund, _) = match db::refunds::finish(&txn, &refund, &answer, now).await {
        Ok(done) => done,
        // The same refund, recorded by a notification sent at the same time.
        Err(e) if crate::web::error::duplicate(&e) => return Ok(Received::Taken),
        Err(e) => return Err(e.into()),
    };
    let mut happened = vec![events::refund(EventType::RefundSucceeded, &refund)];
    if let Some(payment) = db::find_public::<payments::Entity>(&txn, &payment.id).await? {
        happened.push(events::payment_child(EventType::PaymentRefunded, &payment, &t.uid, amount));
    }
    events::record(&txn, happened).await?;
    match txn.commit().await {
        Err(e) if crate::web::error::duplicate(&e) => Ok(Received::Taken),
        done => done.map(|_| Received::Taken).map_err(AppError::from),
    }
}

/// A capture or void made in the processor's back office: the authorization moves, once.
async fn back_office_settle(
    state: &AppState,
    shop_id: i64,
    kind: &str,
    t: &Transaction,
    now: DateTime<Utc>,
) -> Result<Received, AppError> {
    if t.status != Status::Successful {
        return Ok(Received::Taken);
    }
    let Some(payment) = parent_of(state, shop_id, t).await? else { return Ok(Received::Taken) };
    let (to, event) = match kind {
        "void" => (PaymentStatus::Voided, EventType::PaymentVoided),
        _ => (PaymentStatus::Succeeded, EventType::PaymentCaptured),
    };
    let txn = state.db.begin().await?;
    if !db::payments::transition(&txn, shop_id, &payment.id, PaymentStatus::Authorized, to, now).await? {
        return Ok(Received::Taken);
    }
    if to == PaymentStatus::Voided
        && let Some(product_id) = &payment.product_id
    {
        db::products::release_unit(&txn, product_id).await?;
    }
    if let Some(settled) = db::find_public::<payments::Entity>(&txn, &payment.id).await? {
        let amount = t.amount.unwrap_or(settled.amount);
        events::record(&txn, vec![events::payment_child(event, &settled, &t.uid, amount)]).await?;
    }
    txn.commit().await?;
    Ok(Received::Taken)
}
