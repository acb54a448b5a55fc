//! Disputes and early fraud warnings, whoever reports them (a processor's notification, its
//! sweep, the simulated card network): each report is applied once, in one transaction
//! with its events, and what the shop chose follows from it: a disputed subscription is
//! cancelled at once and its card never charged again; an actionable early fraud warning
//! refunds the payment.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use sea_orm::{ConnectionTrait, DbErr};

use crate::db::entities::{disputes, payments, shops};
use crate::db::{self};
use crate::domain::dispute::{self as rules, DisputeStatus, EvidenceAsk, Seen};
use crate::domain::event::EventType;
use crate::domain::mail::MailKind;
use crate::domain::refund::RefundAsk;
use crate::external::acquirer::{Acquirer, CardRef, CardRefused, DisputeAnswer};
use crate::services::events;
use crate::web::error::AppError;
use crate::web::state::AppState;
use crate::web::views::DisputeView;

/// Why a subscription ends when its payment is disputed.
pub const DISPUTED: &str = "payment disputed";

/// What is said of a refund made because of an early fraud warning.
const FRAUD_REFUND: &str = "Refunded after the card's bank warned of fraud";

/// How often a report that lost a race with another is applied again (each lost race means
/// the dispute moved, so it ends quickly).
const RETRIES: usize = 5;

/// Applies a processor's report `seen` of a dispute of `payment`: opens it (once, by its
/// processor id) or moves it forward, moves its money once each way, and records
/// `dispute.created`, `dispute.updated` or `dispute.closed`. A newly opened dispute cancels
/// the subscriptions paid with the card when the shop chose so. Answers the dispute as
/// stored.
pub async fn report(
    state: &AppState,
    payment: &payments::Model,
    seen: &Seen,
    now: DateTime<Utc>,
) -> Result<disputes::Model, AppError> {
    // Read before the transactions, whose first statement writes (SQLite takes its write lock
    // at once then, instead of failing to upgrade a read).
    let shop = db::shops::find(&state.db, payment.shop_id).await?;
    let acquirer = crate::services::processors::usable(state, payment.shop_id, payment.test).await?;
    let here = acquirer.as_ref().is_some_and(|acquirer| acquirer.answers_disputes());
    // The simulated card network acts on a dispute it opened next at its due date.
    let simulated = acquirer.is_some_and(|acquirer| acquirer.is_simulated());
    let network_at = seen.evidence_due_by.filter(|_| simulated && !seen.status.is_closed());
    for _ in 0..RETRIES {
        let found = db::disputes::find_by_reference(&state.db, payment.shop_id, &seen.reference).await?;
        if let Some(dispute) = &found
            && rules::advance(Some(dispute.current()), seen).is_empty()
        {
            return Ok(dispute.clone());
        }
        let txn = crate::db::begin(&state.db).await?;
        let (dispute, change, opened) = match found {
            Some(dispute) => {
                let change = rules::advance(Some(dispute.current()), seen);
                (dispute, change, false)
            }
            None => {
                let Some(dispute) = db::disputes::open(&txn, payment, seen, network_at, now).await? else {
                    // Opened by another report meanwhile: applied over it.
                    txn.rollback().await?;
                    continue;
                };
                let change = rules::Change { moved: None, ..rules::advance(None, seen) };
                (dispute, change, true)
            }
        };
        let applied = db::disputes::apply(&txn, &dispute, seen, &change, now).await?;
        if !applied && !opened {
            // Another report moved it first: this one is read again over it.
            txn.rollback().await?;
            continue;
        }
        let stored = db::find_public::<disputes::Entity>(&txn, &dispute.id).await?.unwrap_or(dispute);
        let kind = match () {
            _ if opened => EventType::DisputeCreated,
            _ if stored.status.is_closed() && change.moved.is_some() => EventType::DisputeClosed,
            _ => EventType::DisputeUpdated,
        };
        record(&txn, state, kind, &stored, here).await?;
        // One first reported already over (a chargeback recorded as lost at once) is closed
        // too: whoever waits for the outcome hears it.
        if opened && stored.status.is_closed() {
            record(&txn, state, EventType::DisputeClosed, &stored, here).await?;
        }
        if opened && let Some(shop) = &shop {
            cancel_disputed(&txn, state, shop, payment).await?;
        }
        if opened && state.config.smtp.is_some() {
            // Sent now, whatever the dispute's time (a test clock's, the card network's step).
            db::mails::to_owners(&txn, payment.shop_id, MailKind::DisputeOpened, &stored.id, None, Utc::now()).await?;
        }
        txn.commit().await?;
        return Ok(stored);
    }
    Err(AppError::Conflict("The dispute kept changing while it was being updated: try again".into()))
}

/// Records an event about a dispute, with its history, in the caller's transaction.
/// `here`: whether its processor takes answers through paydesk (read before the
/// transaction: nothing else is read outside it while it holds SQLite's write lock).
async fn record(
    db: &impl ConnectionTrait,
    state: &AppState,
    kind: EventType,
    dispute: &disputes::Model,
    here: bool,
) -> Result<(), AppError> {
    let history = db::disputes::history(db, &dispute.id).await?;
    let view = DisputeView::new(dispute, &history, here);
    let data = serde_json::to_value(&view).unwrap_or_default();
    let event = db::events::NewEvent {
        shop_id: dispute.shop_id,
        kind,
        object_id: dispute.id.clone(),
        test: dispute.test,
        data,
        child: None,
    };
    events::record(db, &state.config, vec![event]).await?;
    // A dispute that ended with the money taken back credits its payment's invoice.
    let lost = [DisputeStatus::Lost, DisputeStatus::Accepted, DisputeStatus::Expired];
    if kind == EventType::DisputeClosed && lost.contains(&dispute.status) && dispute.withdrawn_amount > 0 {
        let source = (format!("dispute:{}", dispute.id), dispute.payment_id.as_str());
        let reason = Some(format!("Dispute {}", dispute.status));
        let taken = dispute.withdrawn_amount;
        crate::services::invoices::credit(db, &state.config, source, taken, reason, dispute.updated_at).await?;
    }
    Ok(())
}

/// The dispute as the API shows it.
pub async fn view(state: &AppState, dispute: &disputes::Model) -> Result<DisputeView, AppError> {
    let history = db::disputes::history(&state.db, &dispute.id).await?;
    Ok(DisputeView::new(dispute, &history, answered_here(state, dispute.shop_id, dispute.test).await))
}

/// Whether the shop's processor of test or live payments takes the merchant's answers to
/// disputes through paydesk.
pub async fn answered_here(state: &AppState, shop_id: i64, test: bool) -> bool {
    let usable = crate::services::processors::usable(state, shop_id, test).await;
    usable.is_ok_and(|acquirer| acquirer.is_some_and(|acquirer| acquirer.answers_disputes()))
}

/// Why the shop refuses `card` for its test or live payments: a dispute stands against it
/// (see [`rules::DisputeStatus::STANDING`]) and the shop refuses such cards (the default).
pub async fn refusal(state: &AppState, shop_id: i64, test: bool, card: &CardRef) -> Result<Option<CardRefused>, DbErr> {
    let Some(fingerprint) = card.fingerprint.as_deref() else { return Ok(None) };
    if !db::disputes::card_disputed(&state.db, shop_id, test, fingerprint).await? {
        return Ok(None);
    }
    let refuses = crate::services::shops::find(state, shop_id).await?.is_none_or(|shop| shop.refuse_disputed_cards);
    Ok(refuses.then_some(CardRefused::Disputed))
}

/// Cancels, if the shop chose so (the default), every open subscription of the shop paid
/// with the disputed payment's card (the same card whatever its token: its fingerprint),
/// its own first: the card is never charged again.
async fn cancel_disputed(
    txn: &impl ConnectionTrait,
    state: &AppState,
    shop: &shops::Model,
    payment: &payments::Model,
) -> Result<(), AppError> {
    if !shop.dispute_cancels {
        return Ok(());
    }
    let subs = db::subscriptions::paid_with(txn, payment, payment.subscription_id.as_deref()).await?;
    let mut lines = Vec::new();
    for sub in subs {
        let now = db::test_clocks::time_of(txn, sub.shop_id, sub.test_clock_id.as_deref(), Utc::now()).await?;
        if let Some((canceled, row)) = db::subscriptions::cancel(txn, &sub, Some(DISPUTED.into()), false, now).await? {
            lines.push(events::Line { row, sub: canceled, charge: None });
        }
    }
    events::timeline(txn, &state.config, lines).await?;
    Ok(())
}

/// Records an early fraud warning of `fraud_type` about the payment (once), and when the
/// shop chose so and the warning is actionable (the processor says so, and the payment has
/// no dispute and money left to refund), refunds what
/// is left of the payment and cancels the subscriptions paid with its card. A warning
/// reported again repeats only the refund, under the same refund id, so it is made once.
pub async fn fraud_warning(
    state: &AppState,
    payment: &payments::Model,
    fraud_type: &str,
    actionable: bool,
    now: DateTime<Utc>,
) -> Result<(), AppError> {
    let txn = crate::db::begin(&state.db).await?;
    if db::payments::warn_fraud(&txn, &payment.id, fraud_type, now).await? {
        let warned = db::find_public::<payments::Entity>(&txn, &payment.id).await?;
        if let Some(warned) = warned {
            events::record(&txn, &state.config, vec![events::payment(EventType::PaymentEarlyFraudWarning, &warned)])
                .await?;
        }
    }
    txn.commit().await?;
    let Some(shop) = db::shops::find(&state.db, payment.shop_id).await? else { return Ok(()) };
    let Some(payment) = db::find_public::<payments::Entity>(&state.db, &payment.id).await? else { return Ok(()) };
    if !shop.fraud_warning_refunds || !actionable || !still_actionable(&payment) {
        return Ok(());
    }
    let ask = RefundAsk { amount: None, reason: Some(FRAUD_REFUND.into()), id: Some(fraud_refund_id(&payment.id)) };
    match crate::services::refunds::refund(state, payment.shop_id, &payment.id, ask, now).await {
        Ok(_) | Err(AppError::Conflict(_)) => {}
        Err(e) => return Err(e),
    }
    let txn = crate::db::begin(&state.db).await?;
    cancel_disputed(&txn, state, &shop, &payment).await?;
    txn.commit().await?;
    Ok(())
}

/// Whether acting on a warning can still prevent a dispute: none was opened, and money is
/// left to give back.
fn still_actionable(payment: &payments::Model) -> bool {
    payment.dispute_id.is_none() && payment.status.is_taken() && payment.refundable().left() > 0
}

/// The one refund id an early fraud warning's refund of a payment has.
fn fraud_refund_id(payment_id: &str) -> String {
    crate::domain::ids::derived_id(crate::domain::ids::REFUND, &format!("early_fraud_warning:{payment_id}"))
}

/// Sends the merchant's evidence of a dispute (staged, or submitted with `submit`) to its
/// processor, then keeps it. 409 when the dispute takes no answer now, or its processor
/// takes answers only in its back office; 502 when the processor's answer was lost (sending
/// the same again is safe: it goes under the same key).
pub async fn answer(
    state: &AppState,
    dispute: disputes::Model,
    ask: EvidenceAsk,
    now: DateTime<Utc>,
) -> Result<disputes::Model, AppError> {
    let acquirer = answering(state, &dispute).await?;
    let evidence = rules::merge_evidence(&dispute.evidence(), &ask.evidence)?;
    if ask.submit && evidence.values().all(|text| text.trim().is_empty()) {
        let problem =
            "can't be empty when it is submitted: give at least one field (or stage it with \"submit\": false)";
        return Err(crate::domain::Errors::one("evidence", problem).into());
    }
    let key = answer_key(&dispute, &evidence, ask.submit);
    let told = acquirer.answer_dispute(&dispute.reference, &evidence, ask.submit, &key).await;
    let seen = answered(told)?;
    let now = time_of(state, &dispute, now).await?;
    let txn = crate::db::begin(&state.db).await?;
    if !db::disputes::answer(&txn, &dispute, &evidence, ask.submit, now).await? {
        return Err(AppError::Conflict("The dispute changed meanwhile: read it again and resend".into()));
    }
    if ask.submit && acquirer.is_simulated() {
        db::disputes::set_network_at(&txn, &dispute.id, Some(now + rules::simulated::REVIEW)).await?;
    }
    let stored = db::find_public::<disputes::Entity>(&txn, &dispute.id).await?.unwrap_or(dispute);
    record(&txn, state, EventType::DisputeUpdated, &stored, true).await?;
    txn.commit().await?;
    follow(state, stored, seen, now).await
}

/// Accepts a dispute that needs a response: its processor is told, and it closes as
/// `accepted` with its money left with the cardholder. 409 otherwise; 502 when the
/// processor's answer was lost.
pub async fn accept(
    state: &AppState,
    dispute: disputes::Model,
    now: DateTime<Utc>,
) -> Result<disputes::Model, AppError> {
    let acquirer = answering(state, &dispute).await?;
    let told = acquirer.accept_dispute(&dispute.reference, &format!("{}:accept", dispute.id)).await;
    let seen = answered(told)?;
    let now = time_of(state, &dispute, now).await?;
    let txn = crate::db::begin(&state.db).await?;
    if !db::disputes::accept(&txn, &dispute, now).await? {
        let current = db::find_public::<disputes::Entity>(&txn, &dispute.id).await?;
        let status = current.map_or(dispute.status, |d| d.status);
        let why = rules::refuse_answer(status).unwrap_or_else(|| "The dispute changed meanwhile".into());
        return Err(AppError::Conflict(why));
    }
    let stored = db::find_public::<disputes::Entity>(&txn, &dispute.id).await?.unwrap_or(dispute);
    record(&txn, state, EventType::DisputeClosed, &stored, true).await?;
    txn.commit().await?;
    follow(state, stored, seen, now).await
}

/// The dispute's processor, if the merchant answers it through paydesk and the dispute
/// takes an answer now; the 409 otherwise.
async fn answering(state: &AppState, dispute: &disputes::Model) -> Result<Arc<dyn Acquirer>, AppError> {
    let acquirer = crate::services::processors::usable(state, dispute.shop_id, dispute.test).await?;
    let Some(acquirer) = acquirer.filter(|acquirer| acquirer.answers_disputes()) else {
        return Err(AppError::Conflict(BACK_OFFICE.into()));
    };
    match rules::refuse_answer(dispute.status) {
        Some(refusal) => Err(AppError::Conflict(refusal)),
        None => Ok(acquirer),
    }
}

/// The processor's answer to an answer: the dispute as it has it now (if it says), or why not.
fn answered(told: DisputeAnswer) -> Result<Option<Seen>, AppError> {
    match told {
        DisputeAnswer::Done(seen) => Ok(seen),
        DisputeAnswer::Refused(why) => Err(AppError::Conflict(format!("The payment processor refused it: {why}"))),
        DisputeAnswer::Unknown => Err(AppError::Acquirer(
            "The payment processor's answer was lost; nothing changed here. Send it again: it goes under the same \
             key, so it is never made twice"
                .into(),
        )),
    }
}

/// What the processor said of the dispute after an answer, applied over what was stored.
async fn follow(
    state: &AppState,
    stored: disputes::Model,
    seen: Option<Seen>,
    now: DateTime<Utc>,
) -> Result<disputes::Model, AppError> {
    let Some(seen) = seen else { return Ok(stored) };
    let Some(payment) = db::find_public::<payments::Entity>(&state.db, &stored.payment_id).await? else {
        return Ok(stored);
    };
    report(state, &payment, &seen, now).await
}

/// The processor key of an answer: the same evidence sent again goes under the same key.
fn answer_key(dispute: &disputes::Model, evidence: &rules::Evidence, submit: bool) -> String {
    let text = serde_json::to_string(evidence).unwrap_or_default();
    crate::domain::ids::derived_id(
        &format!("{}:answer:", dispute.id),
        &format!("{}:{submit}:{text}", dispute.submission_count),
    )
}

/// The time of a dispute: its subscription's test clock's, else `now`.
async fn time_of(state: &AppState, dispute: &disputes::Model, now: DateTime<Utc>) -> Result<DateTime<Utc>, AppError> {
    let Some(sub) = &dispute.subscription_id else { return Ok(now) };
    let Some(sub) = db::find::<crate::db::entities::subscriptions::Entity>(&state.db, dispute.shop_id, sub).await?
    else {
        return Ok(now);
    };
    Ok(db::test_clocks::time_of(&state.db, sub.shop_id, sub.test_clock_id.as_deref(), now).await?)
}

/// What a dispute whose processor takes no answers through paydesk says.
pub const BACK_OFFICE: &str =
    "This dispute's processor takes no answer through paydesk: respond in the processor's back office";

/// How far back the sweep looks for disputes: card networks let cardholders dispute for
/// about 120 days.
const SWEPT_BACK: chrono::Duration = chrono::Duration::days(120);

/// Looks up every Stripe account's disputes of the last 120 days and applies what changed,
/// so that none depends on a webhook arriving (one missed while the endpoint was down is
/// found here). Answers how many disputes it read.
pub async fn sweep(state: &AppState, now: DateTime<Utc>) -> Result<usize, AppError> {
    use crate::domain::processor::{Mode, ProcessorKind};
    use crate::external::acquirer::stripe::{api::Api, disputes::seen, wire::Expandable};
    let mut read = 0;
    for row in db::processors::of_kind(&state.db, ProcessorKind::Stripe).await? {
        for mode in [Mode::Test, Mode::Live] {
            let Some(account) = crate::services::processors::stripe_account(state, &row, mode)? else { continue };
            let api =
                Api { outbound: &state.operator_outbound, account: &account, timeout: state.config.processor_timeout };
            let disputes = match api.disputes_since(now - SWEPT_BACK).await {
                Ok(disputes) => disputes,
                Err(reading) => {
                    tracing::warn!(shop = row.shop_id, ?reading, "listing the Stripe account's disputes failed");
                    continue;
                }
            };
            read += disputes.len();
            for dispute in disputes {
                let Some(intent) = dispute.payment_intent.as_ref().and_then(Expandable::id) else { continue };
                let found = db::payments::find_by_reference(&state.db, row.shop_id, intent).await?;
                let Some(payment) = found.filter(|p| p.test == (mode == Mode::Test)) else { continue };
                if let Some(seen) = seen(&dispute, now) {
                    report(state, &payment, &seen, now).await?;
                }
            }
        }
    }
    Ok(read)
}
