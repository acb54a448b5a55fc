//! The subscription a page's payment opens or pays, in the transaction that records the
//! payment: a plan page's first charge opens the customer's subscription; a subscription's
//! card page starts it, pays what is overdue or saves its new card. The engine's record of
//! that charge follows in the same transaction, so whoever sees the payment paid sees the
//! subscription going on from it.

use super::*;

/// What a paid page leads to, once attached to its subscription.
pub(super) enum Opening {
    Nothing,
    /// The subscription, claimed under the token for the record of the page's charge.
    Claimed(Box<subscriptions::Model>, String),
    /// A subscription an engine holds: it finds the charge paid under its key when it looks.
    Held(String),
}

/// In `txn`: makes `paid` (a page's payment that went through, with its customer) the charge
/// it pays: the first charge of a new subscription of its plan's page, or the charge its
/// subscription waits for, claimed for its record. A page paid for a subscription that no
/// longer waits for it is set aside; a card page of nothing saves its card.
pub(super) async fn attach_to_plan(
    txn: &db::Txn,
    state: &AppState,
    paid: &payments::Model,
    now: DateTime<Utc>,
) -> Result<Opening, DbErr> {
    let (Some(plan_id), Some(customer_id)) = (&paid.plan_id, &paid.customer_id) else { return Ok(Opening::Nothing) };
    let Some(plan) = db::find_public::<plans::Entity>(txn, plan_id).await? else { return Ok(Opening::Nothing) };
    let token = random_hex(12);
    let Some(sub_id) = &paid.subscription_id else {
        let opened = open(txn, state, &plan, paid, customer_id, &token, now).await?;
        return Ok(opened.map_or(Opening::Nothing, |sub| Opening::Claimed(Box::new(sub), token)));
    };
    let Some(sub) = db::find_public::<subscriptions::Entity>(txn, sub_id).await? else { return Ok(Opening::Nothing) };
    let open = matches!(
        sub.state,
        rules::State::Trial | rules::State::Active | rules::State::FailedAttempt | rules::State::Paused
    );
    // The charge it waits for, if the page was opened for its price: whatever discount or
    // tax the page took as it opened (one that moved since is the page's, as paid), a page of
    // another price pays something else. A discount that took all of it is still the charge.
    let waiting = matches!(sub.state, rules::State::Redirecting | rules::State::FailedAttempt);
    let due = match rules::due(&Terms::from(&plan.fields()), &sub.progress()) {
        Due::Charge { period, attempt, amount } if waiting && amount == paid.list_price() => Some((period, attempt)),
        _ => None,
    };
    let Some((period, attempt)) = due else {
        if paid.amount == 0 && sub.started_at.is_some() && open {
            save_page_card(txn, state, paid, &sub, now).await?;
        } else {
            set_aside(txn, paid, &sub).await?;
        }
        return Ok(Opening::Nothing);
    };
    let key = rules::charge_key(&sub.id, period, attempt);
    if !db::payments::attach(txn, &paid.id, &sub.id, customer_id, &key).await? {
        // Another payment is that charge already (the engine's, or another page's).
        set_aside(txn, paid, &sub).await?;
        return Ok(Opening::Nothing);
    }
    let card = paid.card();
    let claimed = match sub.started_at {
        // Back to confirm a renewal the bank asked them for, or paying what is overdue.
        Some(_) => claim_card(txn, state, sub, &card, &token, now).await?,
        None => claim_start(txn, state, &plan, sub, &card, &token, now).await?,
    };
    Ok(claimed.map_or_else(|| Opening::Held(sub_id.clone()), |sub| Opening::Claimed(Box::new(sub), token)))
}

/// In `txn`: the subscription a plan page's first charge (`paid`) opens for its customer,
/// started with that charge as its first and claimed under `token` for its record; with the
/// discount of a coupon typed on the page.
async fn open(
    txn: &db::Txn,
    state: &AppState,
    plan: &plans::Model,
    paid: &payments::Model,
    customer_id: &str,
    token: &str,
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
    // created).
    let mut sub = db::subscriptions::insert(txn, new, now).await?;
    let key = rules::charge_key(&sub.id, period, attempt);
    if !db::payments::attach(txn, &paid.id, &sub.id, customer_id, &key).await? {
        return Ok(None);
    }
    // A coupon typed on the page (its redemption taken then): the subscription's discount
    // from its first plan period.
    let coupon = match &paid.coupon_id {
        Some(id) => db::find_public::<crate::db::entities::coupons::Entity>(txn, id).await?,
        None => None,
    };
    if let Some(coupon) = coupon
        && let Some(discounted) =
            db::subscriptions::apply_discount(txn, &sub, &coupon.id, coupon.periods(), now).await?
    {
        events::record_about(txn, &state.config, EventType::SubscriptionDiscountApplied, &discounted).await?;
        sub = discounted;
    }
    claim_start(txn, state, plan, sub, &paid.card(), token, now).await
}

/// In `txn`: the engine's record of `paid` (attached under its billing key) as the charge of
/// the subscription it claimed: the subscription starts or goes on from it, with its
/// timeline, as a run records a charge. Answers the subscription an engine holds.
pub(super) async fn begin(
    txn: &db::Txn,
    state: &AppState,
    opening: Opening,
    paid: &payments::Model,
    now: DateTime<Utc>,
) -> Result<Option<String>, DbErr> {
    let (sub, token) = match opening {
        Opening::Nothing => return Ok(None),
        Opening::Held(sub_id) => return Ok(Some(sub_id)),
        Opening::Claimed(sub, token) => (sub, token),
    };
    let (mut charges, ending) = plan_charges(txn, vec![*sub]).await?;
    for c in charges.iter_mut().filter(|c| paid.billing_key.as_deref() == Some(c.key.as_str())) {
        c.take_earlier(paid);
    }
    let answers = charges.iter().map(|_| None).collect();
    record_in(txn, state, charges, answers, ending, &token, now).await?;
    Ok(None)
}

/// Brings the charge of a subscription an engine holds forward: it finds the page's charge
/// paid under its key, sooner rather than later.
pub(super) async fn wake(state: &AppState, held: Option<String>) -> Result<(), DbErr> {
    match held {
        Some(sub_id) => db::subscriptions::due_now(&state.db, &sub_id, Utc::now()).await,
        None => Ok(()),
    }
}

/// Opens the subscription a plan's first charge paid for, when the transaction that
/// recorded it did not (a payment recorded by an earlier version).
pub(super) async fn open_paid(state: &AppState, payment: payments::Model, now: DateTime<Utc>) -> Result<(), DbErr> {
    let now = time_of_payment(state, &payment, now).await?;
    let txn = crate::db::begin(&state.db).await?;
    let paid = match name_customer(&txn, &payment, now).await? {
        Some(named) => named,
        None => payment,
    };
    let opening = attach_to_plan(&txn, state, &paid, now).await?;
    let paid = db::find_public::<payments::Entity>(&txn, &paid.id).await?.unwrap_or(paid);
    let held = begin(&txn, state, opening, &paid, now).await?;
    txn.commit().await?;
    wake(state, held).await
}

/// In `txn`: a page paid for a subscription that no longer waits for that charge (cancelled
/// meanwhile, paid by another page or by the engine, another period), marked with a key of
/// its own so that no later charge takes it, and logged for the merchant to refund.
async fn set_aside(txn: &db::Txn, payment: &payments::Model, sub: &subscriptions::Model) -> Result<(), DbErr> {
    let customer_id = payment.customer_id.as_deref().unwrap_or(&sub.customer_id);
    let key = rules::stray_key(&sub.id, &payment.id);
    if db::payments::attach(txn, &payment.id, &sub.id, customer_id, &key).await? {
        tracing::error!(payment = %payment.id, subscription = %sub.id, "a card page was paid for a subscription that no longer waits for it: refund it");
    }
    Ok(())
}

/// In `txn`: saves the card a subscriber gave on the processor's page (a payment of
/// nothing) as the card of their started subscription, the payment marked with its key.
async fn save_page_card(
    txn: &db::Txn,
    state: &AppState,
    payment: &payments::Model,
    sub: &subscriptions::Model,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    let customer_id = payment.customer_id.as_deref().unwrap_or(&sub.customer_id);
    let key = rules::card_update_key(&sub.id, &payment.id);
    if !db::payments::attach(txn, &payment.id, &sub.id, customer_id, &key).await? {
        return Ok(());
    }
    match db::subscriptions::replace_card(txn, sub, &payment.card(), now).await? {
        Some(updated) => {
            events::record_about(txn, &state.config, EventType::SubscriptionCardUpdated, &updated).await.map(drop)
        }
        None => {
            tracing::warn!(payment = %payment.id, subscription = %sub.id, "a card was saved for a subscription that has ended");
            Ok(())
        }
    }
}
