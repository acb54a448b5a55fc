//! Taking payments: the steps around the acquirer that keep money and stock right. A
//! payment is recorded before the acquirer is asked; a finite product's unit is taken
//! before the charge and given back if the charge does not go through.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use sea_orm::DbErr;

use crate::db::entities::{payments, plans, products, subscriptions};
use crate::db::payments::NewPayment;
use crate::db::{self};
use crate::domain::Errors;
use crate::domain::billing as billing_rules;
use crate::domain::checkout::Checkout;
use crate::domain::event::EventType;
use crate::domain::vocab::{TransactionType, VisibleField};
use crate::external::acquirer::{Acquirer, CardRef, CardRefused, HostedRequest, Outcome};
use crate::services::taxes::{self, Buyer};
use crate::web::error::AppError;
use crate::web::state::AppState;

/// Why a hosted payment did not reach the acquirer.
#[derive(Debug, thiserror::Error)]
pub enum PayError {
    /// The form or the card is not acceptable; nothing was charged.
    #[error("{}", .0.message())]
    Invalid(Errors),
    /// The product's `expired_at` has passed.
    #[error("expired")]
    Expired,
    /// No units of the product are left.
    #[error("sold out")]
    SoldOut,
    /// The merchant archived the product or plan: its link takes no payments.
    #[error("archived")]
    Archived,
    /// A live payment, but only the simulated acquirer is configured and live use is off.
    #[error("live payments unavailable")]
    LiveUnavailable,
    /// Another request is making this payment; its result is not known yet.
    #[error("in progress")]
    InProgress,
    /// A fault of paydesk itself.
    #[error("{0}")]
    Internal(String),
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// Who moves the money of the shop's test (`test`) or live payments; refused when it has
/// no way to: its processor has no account for the mode, or live payments would go to the
/// simulation without the operator's consent.
pub async fn acquirer_for(state: &AppState, shop_id: i64, test: bool) -> Result<Arc<dyn Acquirer>, PayError> {
    match crate::services::processors::usable(state, shop_id, test).await {
        Ok(Some(acquirer)) => Ok(acquirer),
        Ok(None) => Err(PayError::LiveUnavailable),
        Err(AppError::Db(e)) => Err(PayError::Db(e)),
        Err(e) => Err(PayError::Internal(e.to_string())),
    }
}

/// Whether the shop's live (non-test) products and plans can be paid.
pub async fn live_payments_allowed(state: &AppState, shop_id: i64) -> Result<bool, AppError> {
    match acquirer_for(state, shop_id, false).await {
        Ok(_) => Ok(true),
        Err(PayError::LiveUnavailable) => Ok(false),
        Err(PayError::Db(e)) => Err(e.into()),
        Err(e) => Err(AppError::Internal(e.to_string())),
    }
}

/// Pays for one unit of a product with the card of a checked form, or opens the processor's
/// card page for it (then the payment waits, `processing`, for the customer there).
pub async fn pay_product(
    state: &AppState,
    product: &products::Model,
    checkout: Checkout,
    ip: &str,
    now: DateTime<Utc>,
) -> Result<payments::Model, PayError> {
    if product.archived_at.is_some() {
        return Err(PayError::Archived);
    }
    if product.fields().is_expired(now) {
        return Err(PayError::Expired);
    }
    let acquirer = acquirer_for(state, product.shop_id, product.test).await?;
    let card = card_for(state, product.shop_id, &*acquirer, &checkout, product.test).await?;
    if !product.infinite && !take_unit(state, product).await? {
        return Err(PayError::SoldOut);
    }
    let fields = product.fields();
    let buyer = Buyer::of_checkout(&checkout);
    let (amount, tax) = match taxes::price(&state.db, product.shop_id, product.amount, &fields.taxing, &buyer).await {
        Ok(priced) => priced,
        Err(e) => {
            if !product.infinite {
                db::products::release_unit(&state.db, &product.id).await?;
            }
            return Err(e.into());
        }
    };
    let new = NewPayment {
        shop_id: product.shop_id,
        product_id: Some(&product.id),
        plan_id: None,
        subscription_id: None,
        customer_id: None,
        amount,
        currency: product.currency,
        transaction_type: fields.transaction_type,
        test: product.test,
        card: &card,
        billing_key: None,
        discount: None,
        customer_details: Some(checkout.details_json(ip)),
        tax,
    };
    let payment = match db::payments::insert_processing(&state.db, new, now).await {
        Ok(payment) => payment,
        Err(e) => {
            if !product.infinite {
                db::products::release_unit(&state.db, &product.id).await?;
            }
            return Err(e.into());
        }
    };
    // From here the unit stays taken until the answer is recorded, which gives it back if the
    // payment did not go through (and makes a paying customer one): if this request stops,
    // the sweeper of interrupted payments settles the payment.
    let language = product.fields().language;
    Ok(match acquirer.hosted() {
        true => open_card_page(state, &*acquirer, payment, &checkout, &product.name, language, false, now).await?,
        false => charge(state, &*acquirer, payment, &card, &product.name, now).await?,
    })
}

/// The card typed on paydesk's page, stored by the acquirer; none (an empty card, filled in
/// when the payment goes through) when the customer types it on the processor's page. A card
/// a dispute with the shop stands against is refused.
async fn card_for(
    state: &AppState,
    shop_id: i64,
    acquirer: &dyn Acquirer,
    checkout: &Checkout,
    test: bool,
) -> Result<CardRef, PayError> {
    let refused = |refused: CardRefused| PayError::Invalid(Errors::one("card_number", refused.to_string()));
    match (&checkout.card, acquirer.hosted()) {
        (_, true) => Ok(CardRef::default()),
        (Some(card), false) => {
            let card = acquirer.tokenize(card, test).await.map_err(refused)?;
            match crate::services::disputes::refusal(state, shop_id, test, &card).await? {
                Some(refusal) => Err(refused(refusal)),
                None => Ok(card),
            }
        }
        // The page was shown without card fields, and the shop now takes cards on its own
        // page: the customer is asked for one.
        (None, false) => Err(PayError::Invalid(Errors::one("card_number", crate::domain::input::msg::BLANK))),
    }
}

/// Opens the processor's card page for a recorded payment and keeps, with the payment,
/// where the customer goes; the customer comes back to the payment's return address. A page
/// that could not be opened fails the payment.
#[allow(clippy::too_many_arguments)]
async fn open_card_page(
    state: &AppState,
    acquirer: &dyn Acquirer,
    payment: payments::Model,
    checkout: &Checkout,
    description: &str,
    language: crate::domain::vocab::Language,
    keep_card: bool,
    now: DateTime<Utc>,
) -> Result<payments::Model, DbErr> {
    let return_url = crate::web::urls::payment_return(&state.config, &payment.id);
    let back_url = crate::web::urls::payment_back(&state.config, &payment.id);
    let request = HostedRequest {
        amount: payment.amount,
        currency: payment.currency,
        capture: payment.transaction_type == TransactionType::Payment,
        reference: &payment.id,
        description,
        return_url: &return_url,
        back_url: &back_url,
        email: checkout.detail(VisibleField::Email),
        language: language.as_str(),
        keep_card,
        // The page lives in real time, whatever a test clock says.
        expires_at: Utc::now() + crate::domain::pending::AUTHENTICATION_WINDOW,
    };
    match acquirer.start_hosted(request).await {
        Ok(hosted) => db::payments::await_card_page(&state.db, payment, &hosted.token, &hosted.redirect_url, now).await,
        Err(outcome) => crate::services::billing::record_answer(state, payment, outcome, None, now).await,
    }
}

/// Takes one unit of a finite product; selling the last one is the `product.sold_out` event.
async fn take_unit(state: &AppState, product: &products::Model) -> Result<bool, DbErr> {
    let txn = crate::db::begin(&state.db).await?;
    if !db::products::reserve_unit(&txn, &product.id).await? {
        return Ok(false);
    }
    let left = db::find_public::<products::Entity>(&txn, &product.id).await?;
    if let Some(sold_out) = left.filter(|p| p.quantity == Some(0)) {
        let event = crate::services::events::product(EventType::ProductSoldOut, &sold_out, &state.config);
        crate::services::events::record(&txn, &state.config, vec![event]).await?;
    }
    txn.commit().await?;
    Ok(true)
}

/// Subscribes the customer of a plan's page: the first charge (the trial's, or the first
/// period's) comes first, so a declined card makes neither a customer nor a subscription;
/// the step that records it going through makes the customer (by e-mail) and the
/// subscription, which starts with that charge as its first. Answers that charge (whose end
/// may not be known yet: 3-D Secure, a lost answer, the processor's page).
pub async fn subscribe(
    state: &AppState,
    plan: &plans::Model,
    checkout: Checkout,
    coupon: Option<&crate::db::entities::coupons::Model>,
    ip: &str,
    now: DateTime<Utc>,
) -> Result<payments::Model, PayError> {
    if plan.archived_at.is_some() {
        return Err(PayError::Archived);
    }
    let blank_email = || {
        let errors = Errors::one("email", crate::domain::input::msg::BLANK);
        PayError::Invalid(errors)
    };
    if checkout.detail(VisibleField::Email).is_none() {
        return Err(blank_email());
    }
    let acquirer = acquirer_for(state, plan.shop_id, plan.test).await?;
    let card = card_for(state, plan.shop_id, &*acquirer, &checkout, plan.test).await?;
    let terms = billing_rules::Terms::from(&plan.fields());
    let progress = billing_rules::begin(&terms);
    let billing_rules::Due::Charge { amount, period, .. } = billing_rules::due(&terms, &progress) else {
        return Err(PayError::Internal(format!("plan {} has nothing to charge first", plan.id)));
    };
    // A coupon takes its discount off the first plan period's charge (a trial's is as it
    // is), and one redemption is taken now: of many pages at once, only as many as are left.
    let off = coupon.filter(|_| period >= 0).map_or(0, |c| crate::domain::coupon::discount(amount, c.off()));
    let buyer = Buyer::of_checkout(&checkout);
    let (charged, tax) = taxes::price(&state.db, plan.shop_id, amount - off, &plan.fields().taxing, &buyer).await?;
    if let Some(c) = coupon
        && !db::coupons::redeem(&state.db, &c.id, now).await?
    {
        return Err(PayError::Invalid(Errors::one("coupon", "has been used up")));
    }
    let new = NewPayment {
        shop_id: plan.shop_id,
        product_id: None,
        plan_id: Some(&plan.id),
        subscription_id: None,
        customer_id: None,
        amount: charged,
        currency: plan.currency,
        transaction_type: TransactionType::Payment,
        test: plan.test,
        card: &card,
        billing_key: None,
        discount: coupon.map(|c| (c.id.as_str(), off)),
        customer_details: Some(checkout.details_json(ip)),
        tax,
    };
    let payment = match db::payments::insert_processing(&state.db, new, now).await {
        Ok(payment) => payment,
        Err(e) => {
            if let Some(c) = coupon {
                db::coupons::release(&state.db, &c.id, Utc::now()).await?;
            }
            return Err(e.into());
        }
    };
    // From here the redemption stays taken until the answer is recorded, which gives it back
    // if the charge did not go through, and otherwise opens the subscription.
    let paid = match acquirer.hosted() {
        true => {
            let language = plan.fields().language;
            open_card_page(state, &*acquirer, payment, &checkout, &plan.title, language, true, now).await?
        }
        false => charge(state, &*acquirer, payment, &card, &plan.title, now).await?,
    };
    Ok(paid)
}

/// Takes the card of a subscription of `plan` waiting for one (`redirecting`) and makes its
/// first charge, or the card of one in its retries and charges what is overdue.
pub async fn pay_subscription(
    state: &AppState,
    plan: &plans::Model,
    sub: subscriptions::Model,
    checkout: Checkout,
    now: DateTime<Utc>,
) -> Result<payments::Model, PayError> {
    let acquirer = acquirer_for(state, sub.shop_id, sub.test).await?;
    if acquirer.hosted() {
        return card_page_for(state, &*acquirer, plan, sub, &checkout, now).await;
    }
    let card = card_for(state, sub.shop_id, &*acquirer, &checkout, sub.test).await?;
    let (shop_id, id) = (sub.shop_id, sub.id.clone());
    let started = match sub.started_at {
        // Back to confirm a renewal the bank asked them for: the charge is made now.
        Some(_) => crate::services::billing::take_card(state, sub, &card, now).await?,
        None => crate::services::billing::start(state, plan, sub, &card, now).await?,
    };
    let payment_id = match started {
        Some(sub) => sub.last_payment_id,
        // Another submit of the form started it: show that one's charge when it is known.
        None => first_charge_of(state, shop_id, &id).await?,
    };
    let payment = match payment_id {
        Some(payment_id) => db::find::<payments::Entity>(&state.db, shop_id, &payment_id).await?,
        None => None,
    };
    payment.ok_or(PayError::InProgress)
}

/// The first charge of a subscription another request is starting, once it is recorded
/// (waiting up to half a minute for it).
async fn first_charge_of(state: &AppState, shop_id: i64, id: &str) -> Result<Option<String>, DbErr> {
    for _ in 0..300 {
        let Some(sub) = db::find::<subscriptions::Entity>(&state.db, shop_id, id).await? else { return Ok(None) };
        if let Some(payment_id) = sub.last_payment_id {
            return Ok(Some(payment_id));
        }
        if sub.state != crate::domain::billing::State::Redirecting {
            return Ok(None);
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    Ok(None)
}

/// Opens the processor's card page for a subscription's charge the customer makes: the
/// first one of a subscription waiting for its card, or the overdue one of a subscription in
/// its retries. A payment of the plan, for that subscription, that is the charge once it
/// goes through.
async fn card_page_for(
    state: &AppState,
    acquirer: &dyn Acquirer,
    plan: &plans::Model,
    sub: subscriptions::Model,
    checkout: &Checkout,
    now: DateTime<Utc>,
) -> Result<payments::Model, PayError> {
    use crate::domain::billing::State;
    let overdue = sub.state == State::FailedAttempt;
    if sub.state != State::Redirecting && !overdue {
        return Err(PayError::InProgress);
    }
    // What the engine would charge: its discount taken, its tax added.
    let Some(due) = crate::services::billing::due_charge(&state.db, &sub, plan).await? else {
        return Err(PayError::Internal(format!("subscription {} has nothing to charge", sub.id)));
    };
    // A page already opened for it and not yet ended: the customer goes back there, to pay
    // what it asked as it opened.
    if let Some(open) = db::payments::card_page_of(&state.db, &sub.id, due.amount > 0).await? {
        return Ok(open);
    }
    // The engine's attempt at this charge whose answer is not known yet: it is looked up
    // first, never paid a second time here.
    let key = billing_rules::charge_key(&sub.id, due.period, due.attempt);
    if overdue && !db::payments::find_by_billing_keys(&state.db, vec![key]).await?.is_empty() {
        return Err(PayError::InProgress);
    }
    let payment = subscription_payment(state, &sub, plan, &due, now).await?;
    // In its retries the engine could charge the saved card while the customer pays here: it
    // looks such a page up before each retry, and the page opens only if no engine held the
    // subscription once the payment was recorded.
    if overdue && !db::subscriptions::unclaimed(&state.db, &sub.id, State::FailedAttempt, Utc::now()).await? {
        let busy = Outcome::Error { code: "processing_error", message: "The subscription was being charged.".into() };
        crate::services::billing::record_answer(state, payment, busy, None, now).await?;
        return Err(PayError::InProgress);
    }
    let language = plan.fields().language;
    Ok(open_card_page(state, acquirer, payment, checkout, &plan.title, language, true, now).await?)
}

/// Opens the processor's card page where the subscriber of a subscription in its trial or a
/// paid period saves a new card: a payment of nothing, whose card the next charges use once
/// it goes through (the processor's pages take a card only with a payment). A page already
/// open for it is used again.
pub async fn card_update_page(
    state: &AppState,
    sub: &subscriptions::Model,
    email: &str,
    now: DateTime<Utc>,
) -> Result<payments::Model, PayError> {
    let acquirer = acquirer_for(state, sub.shop_id, sub.test).await?;
    if let Some(open) = db::payments::card_page_of(&state.db, &sub.id, false).await? {
        return Ok(open);
    }
    let plan = db::find_public::<plans::Entity>(&state.db, &sub.plan_id)
        .await?
        .ok_or_else(|| PayError::Internal(format!("subscription {} has no plan", sub.id)))?;
    let payment = subscription_payment(state, sub, &plan, &Default::default(), now).await?;
    let checkout = Checkout { details: vec![(VisibleField::Email, email.to_string())], card: None };
    let language = plan.fields().language;
    Ok(open_card_page(state, &*acquirer, payment, &checkout, &plan.title, language, true, now).await?)
}

/// A payment of `due` (its amount, discount and tax) a subscription's customer makes on the
/// processor's page.
async fn subscription_payment(
    state: &AppState,
    sub: &subscriptions::Model,
    plan: &plans::Model,
    due: &crate::services::billing::DueCharge,
    now: DateTime<Utc>,
) -> Result<payments::Model, DbErr> {
    let card = CardRef::default();
    let new = NewPayment {
        shop_id: sub.shop_id,
        product_id: None,
        plan_id: Some(&sub.plan_id),
        subscription_id: Some(&sub.id),
        customer_id: Some(&sub.customer_id),
        amount: due.amount,
        currency: plan.currency,
        transaction_type: TransactionType::Payment,
        test: sub.test,
        card: &card,
        billing_key: None,
        discount: due.discount.as_ref().map(|(id, off)| (id.as_str(), *off)),
        customer_details: None,
        tax: due.tax.clone(),
    };
    db::payments::insert_processing(&state.db, new, now).await
}

/// Asks the acquirer for a recorded attempt, and records the answer with all it brings. A
/// customer who must authenticate comes back to the payment's receipt, which looks the
/// answer up.
async fn charge(
    state: &AppState,
    acquirer: &dyn Acquirer,
    payment: payments::Model,
    card: &CardRef,
    description: &str,
    now: DateTime<Utc>,
) -> Result<payments::Model, DbErr> {
    let return_url = crate::web::urls::payment_return(&state.config, &payment.id);
    let request = crate::services::billing::charge_of(&payment, description, Some(&return_url), now);
    let outcome = acquirer.charge(card, request).await;
    crate::services::billing::record_answer(state, payment, outcome, None, now).await
}
