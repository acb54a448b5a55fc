//! Notifications a shop's processor sends: bePaid's (the transaction, signed with RSA) and
//! Stripe's webhooks (an event, signed with the endpoint's secret). Each is verified (bePaid:
//! the `Content-Signature` with the public key of the transaction's mode, and HTTP Basic with
//! the account's id and secret key when sent; Stripe: the `Stripe-Signature` with the signing
//! secret of the event's mode, within five minutes, each event acted on once by its id), read
//! as a [`Notice`], and acted on so that states only move forward and a repeat changes nothing:
//! - a payment, authorization or saved card paydesk still waits for is settled: a hosted
//!   page's payment is asked of the processor at once, a renewal is looked up by the engine
//!   right away;
//! - a refund, capture or void made in the processor's back office is recorded as if made
//!   here (a refund by the processor's id once: a second notification finds it);
//! - a dispute (a chargeback) or an early fraud warning is applied through
//!   [`crate::services::disputes`].

use chrono::{DateTime, Utc};

use crate::db::entities::payments;
use crate::db::processors::Claim;
use crate::db::{self};
use crate::domain::audit::Actor;
use crate::domain::dispute::Seen;
use crate::domain::event::EventType;
use crate::domain::processor::{Mode, ProcessorKind};
use crate::domain::refund::RefundAsk;
use crate::domain::vocab::{PaymentStatus, RefundStatus};
use crate::external::acquirer::Outcome;
use crate::external::acquirer::bepaid::notification::PublicKey;
use crate::external::acquirer::bepaid::wire::{Answer, Status};
use crate::external::acquirer::stripe::api::{Api, encode};
use crate::external::acquirer::stripe::signature;
use crate::external::acquirer::stripe::wire::{self as stripe, Expandable};
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
    db::audit::acting::act_as(Actor::processor("bepaid"));
    let test = mode == Mode::Test;
    let t = *transaction;
    let done = t.status == Status::Successful;
    let kind = t.kind.clone().unwrap_or_else(|| "payment".into());
    let notice = match kind.as_str() {
        "refund" if done => Notice::Refund { parent: t.parent_uid, id: t.uid, amount: t.amount.unwrap_or(0) },
        "capture" | "void" if done => {
            let void = kind == "void";
            let capture = (!void).then(|| t.uid.clone());
            Notice::Settled(Settled { parent: t.parent_uid, id: t.uid, amount: t.amount, void, capture })
        }
        "chargeback" if done => {
            let reason = t.rest.get("reason").and_then(|r| r.as_str()).unwrap_or("general").to_string();
            let seen =
                crate::external::acquirer::bepaid::notification::chargeback(t.uid, t.amount.unwrap_or(0), reason);
            Notice::Chargeback { parent: t.parent_uid, seen: Box::new(seen) }
        }
        "refund" | "capture" | "void" | "chargeback" => return Ok(Received::Taken),
        _ => Notice::Payment { reference: t.tracking_id },
    };
    act(state, shop_id, test, notice, now).await
}

/// The Stripe events paydesk acts on: what a merchant enables on the webhook endpoint.
pub const STRIPE_EVENTS: [&str; 21] = [
    "checkout.session.completed",
    "checkout.session.async_payment_succeeded",
    "checkout.session.async_payment_failed",
    "checkout.session.expired",
    "payment_intent.succeeded",
    "payment_intent.payment_failed",
    "payment_intent.canceled",
    "payment_intent.amount_capturable_updated",
    "setup_intent.succeeded",
    "setup_intent.setup_failed",
    "charge.refunded",
    "charge.refund.updated",
    "refund.created",
    "refund.updated",
    "charge.dispute.created",
    "charge.dispute.updated",
    "charge.dispute.closed",
    "charge.dispute.funds_withdrawn",
    "charge.dispute.funds_reinstated",
    "radar.early_fraud_warning.created",
    "radar.early_fraud_warning.updated",
];

/// How long a Stripe event is held by the delivery acting on it before another may.
const EVENT_CLAIM: chrono::Duration = chrono::Duration::minutes(5);

/// Takes a Stripe webhook for the shop `shop_id`: its raw `body` and `Stripe-Signature`.
pub async fn stripe(
    state: &AppState,
    shop_id: i64,
    signature_header: Option<&str>,
    body: &[u8],
    now: DateTime<Utc>,
) -> Result<Received, AppError> {
    let Some(row) = db::processors::find(&state.db, shop_id).await? else { return Ok(Received::Forged) };
    if row.kind != ProcessorKind::Stripe {
        return Ok(Received::Forged);
    }
    let Ok(event) = serde_json::from_slice::<stripe::Event>(body) else {
        return Err(AppError::BadRequest("The body is not a Stripe event".into()));
    };
    let mode = if event.livemode { Mode::Live } else { Mode::Test };
    let secrets = crate::services::processors::webhook_secrets(state, &row, mode, now);
    let signed = signature_header.is_some_and(|h| signature::verify(h, body, &secrets, now).is_ok());
    if !signed {
        return Ok(Received::Forged);
    }
    db::audit::acting::act_as(Actor::processor("stripe"));
    let claimed_until = db::now_millis(now + EVENT_CLAIM);
    match db::processors::claim_event(&state.db, shop_id, &event.id, now, claimed_until).await? {
        Claim::Done => return Ok(Received::Taken),
        Claim::Busy => return Ok(Received::Later),
        Claim::Taken => {}
    }
    let received = match stripe_notices_fetched(state, &row, mode, &event).await {
        Ok(Some(notices)) => act_all(state, shop_id, !event.livemode, notices, now).await,
        Ok(None) => Ok(Received::Later),
        Err(e) => Err(e),
    };
    let done = matches!(received, Ok(Received::Taken));
    db::processors::finish_event(&state.db, shop_id, &event.id, claimed_until, done, now).await?;
    received
}

/// Acts on each notice in turn, stopping at the first that is not taken.
async fn act_all(
    state: &AppState,
    shop_id: i64,
    test: bool,
    notices: Vec<Notice>,
    now: DateTime<Utc>,
) -> Result<Received, AppError> {
    for notice in notices {
        let received = act(state, shop_id, test, notice, now).await?;
        if received != Received::Taken {
            return Ok(received);
        }
    }
    Ok(Received::Taken)
}

/// What a Stripe event says, with the refunds of a `charge.refunded` listed from Stripe when
/// the event leaves them out (newer API versions do); `None` when Stripe cannot be asked now.
async fn stripe_notices_fetched(
    state: &AppState,
    row: &crate::db::entities::shop_processors::Model,
    mode: Mode,
    event: &stripe::Event,
) -> Result<Option<Vec<Notice>>, AppError> {
    let notices = stripe_notices(event);
    if event.kind != "charge.refunded" || !notices.is_empty() {
        return Ok(Some(notices));
    }
    let charge = event.data.object.get("id").and_then(|id| id.as_str()).unwrap_or_default();
    let Some(account) = crate::services::processors::stripe_account(state, row, mode)? else { return Ok(Some(vec![])) };
    let api = Api { outbound: &state.operator_outbound, account: &account, timeout: state.config.processor_timeout };
    match api.fetch::<stripe::List<stripe::Refund>>(&format!("/v1/refunds?charge={}", encode(charge))).await {
        Ok(list) => Ok(Some(list.data.iter().filter_map(refund_notice).collect())),
        Err(_) => Ok(None),
    }
}

/// What a Stripe event says, in paydesk's terms.
fn stripe_notices(event: &stripe::Event) -> Vec<Notice> {
    let object = &event.data.object;
    let read = |o: &serde_json::Value| serde_json::from_value::<stripe::Refund>(o.clone()).ok();
    let reference = || {
        object
            .get("metadata")
            .and_then(|m| m.get(stripe::REFERENCE_KEY))
            .or_else(|| object.get("client_reference_id"))
            .and_then(|r| r.as_str())
            .map(str::to_string)
    };
    match event.kind.as_str() {
        kind if kind.starts_with("checkout.session.") || kind.starts_with("setup_intent.") => {
            vec![Notice::Payment { reference: reference() }]
        }
        kind if kind.starts_with("payment_intent.") => {
            let Ok(pi) = serde_json::from_value::<stripe::PaymentIntent>(object.clone()) else { return vec![] };
            let mut notices = vec![Notice::Payment { reference: reference() }];
            // Captured or canceled in Stripe's dashboard: the authorization moves.
            match pi.status.as_str() {
                "succeeded" => notices.push(Notice::Settled(Settled {
                    parent: Some(pi.id.clone()),
                    id: format!("{}_capture", pi.id),
                    amount: pi.amount_received,
                    void: false,
                    capture: None,
                })),
                "canceled" => notices.push(Notice::Settled(Settled {
                    parent: Some(pi.id.clone()),
                    id: format!("{}_void", pi.id),
                    amount: pi.amount,
                    void: true,
                    capture: None,
                })),
                _ => {}
            }
            notices
        }
        "charge.refunded" => {
            let refunds = object.get("refunds").and_then(|r| r.get("data")).and_then(|d| d.as_array());
            refunds.into_iter().flatten().filter_map(read).filter_map(|r| refund_notice(&r)).collect()
        }
        kind if kind.starts_with("refund.") || kind == "charge.refund.updated" => {
            read(object).and_then(|r| refund_notice(&r)).into_iter().collect()
        }
        kind if kind.starts_with("charge.dispute.") => {
            let dispute = serde_json::from_value::<stripe::Dispute>(object.clone()).ok();
            dispute.map(|d| Notice::Dispute(Box::new(d))).into_iter().collect()
        }
        kind if kind.starts_with("radar.early_fraud_warning.") => {
            let Ok(warning) = serde_json::from_value::<stripe::EarlyFraudWarning>(object.clone()) else {
                return vec![];
            };
            let intent = warning.payment_intent.as_ref().and_then(Expandable::id).map(str::to_string);
            let fraud_type = warning.fraud_type.unwrap_or_else(|| "misc".into());
            vec![Notice::FraudWarning { parent: intent, fraud_type, actionable: warning.actionable }]
        }
        _ => vec![],
    }
}

/// A refund: one of paydesk's own (it carries paydesk's reference), which Stripe may have
/// finished since it answered; or one made in Stripe's dashboard, once it succeeded.
fn refund_notice(r: &stripe::Refund) -> Option<Notice> {
    let own = stripe::reference_of(&r.metadata).map(str::to_string);
    // Failed after it was accepted (Stripe could not give the money back after all).
    if matches!(r.status.as_deref(), Some("failed" | "canceled")) {
        let reason = r.failure_reason.as_deref().unwrap_or("unknown").replace('_', " ");
        let message = format!("The refund failed after the processor accepted it: {reason}.");
        return Some(Notice::RefundFailed { own, reference: r.id.clone(), message });
    }
    if let Some(own) = own {
        return Some(Notice::OwnRefund { id: own });
    }
    if r.status.as_deref() != Some("succeeded") {
        return None;
    }
    let parent = r.payment_intent.as_ref().and_then(Expandable::id).map(str::to_string);
    Some(Notice::Refund { parent, id: r.id.clone(), amount: r.amount.unwrap_or(0) })
}

/// What a processor's notification says, in paydesk's terms.
#[derive(Debug, Clone)]
enum Notice {
    /// A payment paydesk may be waiting for, by paydesk's own reference.
    Payment { reference: Option<String> },
    /// A refund made at the processor (`id`) of the payment it knows as `parent`.
    Refund { parent: Option<String>, id: String, amount: i64 },
    /// paydesk's own refund `id` moved at the processor: if it still waits, it is asked again.
    OwnRefund { id: String },
    /// A refund (paydesk's own `own`, or one the processor knows as `reference`) failed at the
    /// processor, possibly after it was recorded as made.
    RefundFailed { own: Option<String>, reference: String, message: String },
    /// A capture or void made at the processor.
    Settled(Settled),
    /// A dispute of a payment, as the processor has it now.
    Dispute(Box<stripe::Dispute>),
    /// A chargeback of the payment the processor knows as `parent`, read as a dispute.
    Chargeback { parent: Option<String>, seen: Box<Seen> },
    /// An early fraud warning about the payment the processor knows as `parent`.
    FraudWarning { parent: Option<String>, fraud_type: String, actionable: bool },
}

/// A capture or void (`void`) made at the processor of the authorization `parent`, notified
/// under `id`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Settled {
    parent: Option<String>,
    id: String,
    amount: Option<i64>,
    void: bool,
    /// The capture's own reference at the processor, where refunds must name it (bePaid).
    capture: Option<String>,
}

fn base64_credentials(id: &str, secret: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(format!("{id}:{secret}"))
}

async fn act(
    state: &AppState,
    shop_id: i64,
    test: bool,
    notice: Notice,
    now: DateTime<Utc>,
) -> Result<Received, AppError> {
    match notice {
        Notice::OwnRefund { id } => {
            crate::services::refunds::settle_pending(state, shop_id, &id, now).await?;
            Ok(Received::Taken)
        }
        Notice::RefundFailed { own, reference, message } => {
            let found = match &own {
                Some(id) => db::find::<crate::db::entities::refunds::Entity>(&state.db, shop_id, id).await?,
                None => db::refunds::find_by_reference(&state.db, shop_id, &reference).await?,
            };
            match found {
                Some(refund) if refund.status == RefundStatus::Pending => {
                    crate::services::refunds::settle_pending(state, shop_id, &refund.id, now).await?;
                }
                Some(refund) if refund.status == RefundStatus::Succeeded => {
                    crate::services::refunds::failed_later(state, refund, &message, now).await?;
                }
                _ => {}
            }
            Ok(Received::Taken)
        }
        Notice::Refund { parent, id, amount } => {
            back_office_refund(state, shop_id, test, parent, &id, amount, now).await
        }
        Notice::Settled(settled) => back_office_settle(state, shop_id, test, settled, now).await,
        Notice::Dispute(dispute) => {
            let parent = dispute.payment_intent.as_ref().and_then(Expandable::id).map(str::to_string);
            let Some(payment) = parent_of(state, shop_id, test, parent).await? else { return Ok(Received::Taken) };
            if let Some(seen) = crate::external::acquirer::stripe::disputes::seen(&dispute, now) {
                crate::services::disputes::report(state, &payment, &seen, now).await?;
            }
            Ok(Received::Taken)
        }
        Notice::Chargeback { parent, seen } => {
            let found = parent_of(state, shop_id, test, parent.clone()).await?;
            let found = match (found, parent) {
                (Some(payment), _) => Some(payment),
                // Not a payment paydesk knows by that uid (a child of it, say): the gateway
                // is asked which payment of paydesk's it belongs to. A gateway that cannot
                // answer now is asked again when bePaid sends the notification again.
                (None, Some(uid)) => match chargeback_parent(state, shop_id, test, &uid).await? {
                    Ok(found) => found,
                    Err(()) => return Ok(Received::Later),
                },
                (None, None) => None,
            };
            let Some(payment) = found else { return Ok(Received::Taken) };
            crate::services::disputes::report(state, &payment, &seen, now).await?;
            Ok(Received::Taken)
        }
        Notice::FraudWarning { parent, fraud_type, actionable } => {
            let Some(payment) = parent_of(state, shop_id, test, parent).await? else { return Ok(Received::Taken) };
            crate::services::disputes::fraud_warning(state, &payment, &fraud_type, actionable, now).await?;
            Ok(Received::Taken)
        }
        Notice::Payment { reference } => {
            let Some(reference) = &reference else { return Ok(Received::Taken) };
            let Some(payment) = db::payments::find_by_tracking(&state.db, shop_id, reference).await? else {
                return Ok(Received::Taken);
            };
            if payment.test != test {
                // Signed by the other mode's key: not this payment's account.
                return Ok(Received::Forged);
            }
            if payment.status == PaymentStatus::Failed {
                // Ended here at the hour, and maybe paid at the processor after all.
                let late = crate::services::billing::late_success(state, payment, now).await?;
                if late.give_back {
                    give_back_late(state, late.payment, now).await?;
                }
                return Ok(Received::Taken);
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

/// The payment a child transaction of the processor belongs to (its parent is the payment's
/// reference), if it is of the notification's mode.
async fn parent_of(
    state: &AppState,
    shop_id: i64,
    test: bool,
    parent: Option<String>,
) -> Result<Option<payments::Model>, AppError> {
    let Some(parent) = &parent else { return Ok(None) };
    let found = db::payments::find_by_reference(&state.db, shop_id, parent).await?;
    Ok(found.filter(|p| p.test == test))
}

/// A refund made in the processor's back office, recorded once by its uid.
async fn back_office_refund(
    state: &AppState,
    shop_id: i64,
    test: bool,
    parent: Option<String>,
    uid: &str,
    amount: i64,
    now: DateTime<Utc>,
) -> Result<Received, AppError> {
    if db::refunds::find_by_reference(&state.db, shop_id, uid).await?.is_some() {
        return Ok(Received::Taken);
    }
    let Some(payment) = parent_of(state, shop_id, test, parent).await? else { return Ok(Received::Taken) };
    if amount <= 0 {
        return Ok(Received::Taken);
    }
    let refunds = db::refunds::of_payment(&state.db, &payment.id).await?;
    if refunds.iter().any(|r| r.status == RefundStatus::Pending) {
        // It may be that refund's answer: once paydesk recorded it, a repeat finds it.
        return Ok(Received::Later);
    }
    let ask = RefundAsk { amount: Some(amount), reason: Some(BACK_OFFICE_REFUND.into()), id: None };
    let txn = crate::db::begin(&state.db).await?;
    let Some(refund) = db::refunds::begin(&txn, &payment, &ask, amount, now).await? else {
        txn.rollback().await?;
        tracing::warn!(payment = %payment.id, uid, "a back-office refund is more than paydesk shows left");
        return Ok(Received::Taken);
    };
    let answer = Outcome::Approved { reference: uid.to_string() };
    let (refund, _) = match db::refunds::finish(&txn, &refund, &answer, now).await {
        Ok(done) => done,
        // The same refund, recorded by a notification sent at the same time.
        Err(e) if crate::web::error::duplicate(&e) => return Ok(Received::Taken),
        Err(e) => return Err(e.into()),
    };
    let mut happened = vec![events::refund(EventType::RefundSucceeded, &refund)];
    if let Some(payment) = db::find_public::<payments::Entity>(&txn, &payment.id).await? {
        happened.push(events::payment_child(EventType::PaymentRefunded, &payment, uid, amount));
    }
    events::record(&txn, &state.config, happened).await?;
    let source = (format!("refund:{}", refund.id), refund.payment_id.as_str());
    crate::services::invoices::credit(&txn, &state.config, source, amount, refund.reason.clone(), now).await?;
    match txn.commit().await {
        Err(e) if crate::web::error::duplicate(&e) => Ok(Received::Taken),
        done => done.map(|_| Received::Taken).map_err(AppError::from),
    }
}

/// A capture or void made in the processor's back office: the authorization moves, once.
async fn back_office_settle(
    state: &AppState,
    shop_id: i64,
    test: bool,
    settled: Settled,
    now: DateTime<Utc>,
) -> Result<Received, AppError> {
    let Settled { parent, id: uid, amount, void, capture } = settled;
    let Some(payment) = parent_of(state, shop_id, test, parent).await? else { return Ok(Received::Taken) };
    let (to, event) = match void {
        true => (PaymentStatus::Voided, EventType::PaymentVoided),
        false => (PaymentStatus::Succeeded, EventType::PaymentCaptured),
    };
    let txn = crate::db::begin(&state.db).await?;
    if !db::payments::settle_held(&txn, shop_id, &payment.id, to, now).await? {
        return Ok(Received::Taken);
    }
    if to == PaymentStatus::Voided
        && let Some(product_id) = &payment.product_id
    {
        db::products::release_unit(&txn, product_id).await?;
    }
    if let Some(capture) = &capture {
        db::payments::set_capture_reference(&txn, &payment.id, capture).await?;
    }
    if let Some(settled) = db::find_public::<payments::Entity>(&txn, &payment.id).await? {
        let amount = amount.unwrap_or(settled.amount);
        events::record(&txn, &state.config, vec![events::payment_child(event, &settled, &uid, amount)]).await?;
        // A capture of part of the authorization is invoiced for what it took.
        let captured = payments::Model { amount: amount.min(settled.amount), ..settled.clone() };
        crate::services::invoices::issue_for_payments(&txn, &state.config, &[&captured], now).await?;
    }
    txn.commit().await?;
    Ok(Received::Taken)
}

/// Why a payment given back at once after it went through late.
const TOO_LATE: &str = "Paid after the payment had ended: what it paid for was no longer held for it";

/// Gives the money of a payment that went through too late back: a refund (once, under an id
/// of the payment's own), or the hold released.
pub async fn give_back_late(
    state: &AppState,
    paid: payments::Model,
    now: DateTime<Utc>,
) -> Result<payments::Model, AppError> {
    match paid.status {
        PaymentStatus::Authorized => {
            crate::services::captures::void(state, paid.shop_id, &paid.id, now).await?;
        }
        _ => {
            let ask = crate::domain::refund::RefundAsk {
                amount: None,
                reason: Some(TOO_LATE.into()),
                id: Some(late_refund_id(&paid.id)),
            };
            crate::services::refunds::refund(state, paid.shop_id, &paid.id, ask, now).await?;
        }
    }
    Ok(db::find_public::<payments::Entity>(&state.db, &paid.id).await?.unwrap_or(paid))
}

/// The one refund id a late payment's refund has.
fn late_refund_id(payment_id: &str) -> String {
    crate::domain::ids::derived_id(crate::domain::ids::REFUND, &format!("late:{payment_id}"))
}

/// The payment a bePaid transaction `uid` belongs to, asked of the gateway: its tracking id
/// is paydesk's reference. `Err(())` when the gateway could not answer.
async fn chargeback_parent(
    state: &AppState,
    shop_id: i64,
    test: bool,
    uid: &str,
) -> Result<Result<Option<payments::Model>, ()>, AppError> {
    use crate::external::acquirer::bepaid::gateway::Gateway;
    let Some(row) = db::processors::find(&state.db, shop_id).await? else { return Ok(Ok(None)) };
    let mode = if test { Mode::Test } else { Mode::Live };
    let Some(account) = crate::services::processors::account(state, &row, mode)? else { return Ok(Ok(None)) };
    let gateway = Gateway { outbound: &state.outbound, account: &account, timeout: state.config.processor_timeout };
    let Ok(transaction) = gateway.transaction(uid).await else { return Ok(Err(())) };
    let Some(tracking) = transaction.and_then(|t| t.tracking_id) else { return Ok(Ok(None)) };
    let found = db::payments::find_by_tracking(&state.db, shop_id, &tracking).await?;
    Ok(Ok(found.filter(|p| p.test == test)))
}

/// Looks each payment paydesk ended at the hour (or when its customer left the processor's
/// page) up once more, some hours later, in case the processor charged it after all and no
/// notification said so: such a payment is recorded as a late one. Answers how many it
/// looked up.
pub async fn recheck_ended(state: &AppState, now: DateTime<Utc>) -> Result<usize, AppError> {
    let due = db::payments::ended_due(&state.db, now, 100).await?;
    let mut looked = 0;
    for payment in due {
        let Some(was) = payment.recheck_at else { continue };
        if !db::payments::take_look(&state.db, &payment.id, was).await? {
            continue;
        }
        looked += 1;
        let late = crate::services::billing::late_success(state, payment, now).await?;
        if late.give_back {
            give_back_late(state, late.payment, now).await?;
        }
    }
    Ok(looked)
}
