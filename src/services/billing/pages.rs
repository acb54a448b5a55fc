//! Pages paid outside the engine: a payment made on paydesk's page or the processor's whose
//! answer came late (3-D Secure, a lost answer, the customer leaving the processor's page),
//! settled by a lookup, never charged again; and the subscription such a page opens or pays.

use super::*;

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
            code: crate::external::acquirer::LEFT_THE_PAGE,
            message: "The customer left the processor's page without paying.".into(),
        },
        other => other,
    };
    settle_as(state, payment, outcome, card, now).await
}

/// Records how a payment on a page ended, as one step with all it brings.
pub(super) async fn settle_as(
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

/// The payment with its customer: the one the details typed on paydesk's page make (by
/// e-mail), if it has none yet. Two settlings at once (the recording one and the sweep's
/// `paid_unopened`, say) make one customer: the payment is taken first, in the transaction
/// that makes it.
pub(super) async fn customer_of_payment(
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

/// Starts the subscription a plan's first charge paid for, once it went through after the
/// page had answered (the processor's page, 3-D Secure, a lost answer settled later): the
/// subscription waiting for that card, or a new one for the customer of a plan's page.
pub(super) async fn open_paid(state: &AppState, payment: &payments::Model, now: DateTime<Utc>) -> Result<(), DbErr> {
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
pub(super) async fn set_aside(
    state: &AppState,
    payment: &payments::Model,
    sub: &subscriptions::Model,
) -> Result<(), DbErr> {
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
pub(super) async fn save_page_card(
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
pub(super) async fn record_answer_in(
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
