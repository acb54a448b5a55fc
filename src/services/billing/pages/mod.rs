//! Pages paid outside the engine: a payment made on paydesk's page or the processor's,
//! recorded with all it brings as one step; one whose answer came late (3-D Secure, a lost
//! answer, the customer leaving the processor's page) settled by a lookup, never charged
//! again; and ([`opening`]) the subscription such a page opens or pays.

mod late;
mod opening;

pub use late::{Late, late_success};

use super::*;
use opening::Opening;

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
        opening::open_paid(state, payment, now).await?;
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
pub(super) async fn settle_with(
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
    record_answer(state, payment, outcome, card, now).await
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
            code: crate::external::acquirer::LEFT_THE_PAGE,
            message: "The customer left the processor's page without paying.".into(),
        },
        other => other,
    };
    record_answer(state, payment, outcome, card, now).await
}

/// Records how a payment on a page ended (`card`: the card the processor's page took), as
/// one step with all it brings: a payment that did not go through gives its product's unit
/// and its coupon's redemption back; one that went through names its customer and opens or
/// pays the subscription of its plan. No one sees a part of it without the rest. A payment
/// answered already is left as it is (a request, the processor's notification and the sweep
/// may all ask). Answers the payment as stored.
pub async fn record_answer(
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
    let txn = crate::db::begin(&state.db).await?;
    if let Some(card) = &card {
        db::payments::set_card(&txn, &payment.id, card).await?;
    }
    let (mut settled, recorded) = db::payments::record_outcome(&txn, payment, &outcome, at).await?;
    if !recorded {
        // Not known yet (its next lookup moved), or answered already by another.
        txn.commit().await?;
        return Ok(settled);
    }
    let mut opening = Opening::Nothing;
    match settled.status {
        PaymentStatus::Failed | PaymentStatus::Error => give_back(&txn, &settled, at).await?,
        PaymentStatus::Succeeded | PaymentStatus::Authorized => {
            // Only a payer whose card went through becomes a customer.
            if let Some(named) = name_customer(&txn, &settled, at).await? {
                settled = named;
            }
            if settled.status == PaymentStatus::Succeeded && settled.billing_key.is_none() {
                opening = opening::attach_to_plan(&txn, state, &settled, at).await?;
                settled = db::find_public::<payments::Entity>(&txn, &settled.id).await?.unwrap_or(settled);
            }
        }
        _ => {}
    }
    if let Some(kind) = EventType::of_charge(settled.status) {
        events::record(&txn, &state.config, vec![events::payment(kind, &settled)]).await?;
    }
    let held = opening::begin(&txn, state, opening, &settled, at).await?;
    crate::services::invoices::issue_for_payments(&txn, &state.config, &[&settled], at).await?;
    txn.commit().await?;
    telemetry::payment(settled.status.as_str(), "hosted");
    opening::wake(state, held).await?;
    Ok(settled)
}

/// In `txn`: what a page's payment that did not go through gives back: its product's unit,
/// and the redemption of the coupon typed on a plan's page.
async fn give_back(txn: &impl ConnectionTrait, payment: &payments::Model, now: DateTime<Utc>) -> Result<(), DbErr> {
    if let Some(product_id) = &payment.product_id {
        db::products::release_unit(txn, product_id).await?;
    }
    if let (Some(coupon_id), None) = (&payment.coupon_id, &payment.subscription_id) {
        db::coupons::release(txn, coupon_id, now).await?;
    }
    Ok(())
}

/// The time of a payment: its subscription's clock's for a payment of a subscription on a
/// test clock (its other times are the clock's), else `now`.
pub(super) async fn time_of_payment(
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

/// In `txn`: the customer the details typed on paydesk's page make (by e-mail), given to
/// the payment if it has none yet; `None` when there is nothing to do or another settling
/// named one first.
pub(super) async fn name_customer(
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
pub(super) async fn description_of(state: &AppState, payment: &payments::Model) -> Result<String, DbErr> {
    if let Some(id) = &payment.product_id {
        return Ok(db::find_public::<products::Entity>(&state.db, id).await?.map_or_else(|| id.clone(), |p| p.name));
    }
    match &payment.plan_id {
        Some(id) => Ok(db::find_public::<plans::Entity>(&state.db, id).await?.map_or_else(|| id.clone(), |p| p.title)),
        None => Ok(payment.id.clone()),
    }
}
