//! Taking payments: the steps around the acquirer that keep money and stock right. A
//! payment is recorded before the acquirer is asked; a finite product's unit is taken
//! before the charge and given back if the charge does not go through.

use chrono::{DateTime, Utc};
use sea_orm::DbErr;

use crate::acquirer::{CardRef, ChargeRequest, Outcome};
use crate::app::AppState;
use crate::db::entities::{customers, payments, plans, products, subscriptions};
use crate::db::payments::NewPayment;
use crate::db::subscriptions::NewSubscription;
use crate::db::{self};
use crate::domain::Errors;
use crate::domain::billing as billing_rules;
use crate::domain::checkout::Checkout;
use crate::domain::customer::CustomerFields;
use crate::domain::vocab::{PaymentStatus, TransactionType, VisibleField};
use crate::error::AppError;

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
    /// A live payment, but only the simulated acquirer is configured and live use is off.
    #[error("live payments unavailable")]
    LiveUnavailable,
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// Whether live (non-test) objects can be paid here.
pub fn live_payments_allowed(state: &AppState) -> bool {
    !state.acquirer.is_simulated() || state.config.simulated_live
}

/// Pays for one unit of a product with the card of a checked form.
pub async fn pay_product(
    state: &AppState,
    product: &products::Model,
    checkout: Checkout,
    ip: &str,
    now: DateTime<Utc>,
) -> Result<payments::Model, PayError> {
    if product.fields().is_expired(now) {
        return Err(PayError::Expired);
    }
    let card = tokenize(state, &checkout, product.test).await?;
    let customer = customer_of(state, product.shop_id, &checkout, ip, now).await?;
    if !product.infinite && !db::products::reserve_unit(&state.db, &product.id).await? {
        return Err(PayError::SoldOut);
    }
    let transaction_type = product.fields().transaction_type;
    let new = NewPayment {
        shop_id: product.shop_id,
        product_id: Some(&product.id),
        plan_id: None,
        subscription_id: None,
        customer_id: customer.as_ref().map(|c| c.id.as_str()),
        amount: product.amount,
        currency: &product.currency,
        transaction_type,
        test: product.test,
        card: &card,
        billing_key: None,
    };
    let charged = charge(state, new, &card, now).await;
    let went_through = matches!(&charged, Ok(p) if p.status != PaymentStatus::Failed.as_str() && p.status != PaymentStatus::Error.as_str());
    if !product.infinite && !went_through {
        db::products::release_unit(&state.db, &product.id).await?;
    }
    Ok(charged?)
}

/// Subscribes the customer of a plan's page: the customer (by e-mail), the subscription,
/// and its first charge (the trial's, or the first period's). Answers that charge.
pub async fn subscribe(
    state: &AppState,
    plan: &plans::Model,
    checkout: Checkout,
    ip: &str,
    now: DateTime<Utc>,
) -> Result<payments::Model, PayError> {
    let card = tokenize(state, &checkout, plan.test).await?;
    let Some(customer) = customer_of(state, plan.shop_id, &checkout, ip, now).await? else {
        let mut errors = Errors::default();
        errors.add("email", crate::domain::input::msg::BLANK);
        return Err(PayError::Invalid(errors));
    };
    let new = NewSubscription {
        shop_id: plan.shop_id,
        plan_id: plan.id.clone(),
        customer_id: customer.id,
        test: plan.test,
        test_clock_id: None,
        tracking_id: None,
        return_url: None,
        notification_url: None,
        additional_data: None,
        progress: billing_rules::begin(&billing_rules::Terms::from(&plan.fields())),
    };
    let sub = db::subscriptions::insert(&state.db, new, now).await?;
    start_subscription(state, plan, sub, &card, now).await
}

/// Takes the card of a subscription of `plan` waiting for one (`redirecting`) and makes its
/// first charge.
pub async fn pay_subscription(
    state: &AppState,
    plan: &plans::Model,
    sub: subscriptions::Model,
    checkout: Checkout,
    now: DateTime<Utc>,
) -> Result<payments::Model, PayError> {
    let card = tokenize(state, &checkout, sub.test).await?;
    start_subscription(state, plan, sub, &card, now).await
}

async fn start_subscription(
    state: &AppState,
    plan: &plans::Model,
    sub: subscriptions::Model,
    card: &CardRef,
    now: DateTime<Utc>,
) -> Result<payments::Model, PayError> {
    let sub = crate::billing::start(state, plan, sub, card, now).await?;
    let id = sub.last_payment_id.unwrap_or_default();
    let payment = db::find::<payments::Entity>(&state.db, sub.shop_id, &id).await?;
    payment.ok_or_else(|| PayError::Db(DbErr::RecordNotFound(format!("payment of {}", sub.id))))
}

async fn tokenize(state: &AppState, checkout: &Checkout, test: bool) -> Result<CardRef, PayError> {
    if !test && !live_payments_allowed(state) {
        return Err(PayError::LiveUnavailable);
    }
    state.acquirer.tokenize(&checkout.card, test).await.map_err(|refused| {
        let mut errors = Errors::default();
        errors.add("card_number", refused.to_string());
        PayError::Invalid(errors)
    })
}

/// The shop's customer with the e-mail the form gave (created if new); none without e-mail.
async fn customer_of(
    state: &AppState,
    shop_id: i64,
    checkout: &Checkout,
    ip: &str,
    now: DateTime<Utc>,
) -> Result<Option<customers::Model>, DbErr> {
    let Some(email) = checkout.detail(VisibleField::Email) else { return Ok(None) };
    let get = |f| checkout.detail(f).map(str::to_string);
    let upper = |f| checkout.detail(f).map(str::to_ascii_uppercase);
    let fields = CustomerFields {
        first_name: get(VisibleField::FirstName),
        last_name: get(VisibleField::LastName),
        address: get(VisibleField::Address),
        city: get(VisibleField::City),
        country: upper(VisibleField::Country),
        zip: get(VisibleField::Zip),
        state: upper(VisibleField::State),
        phone: get(VisibleField::Phone),
        email: email.to_string(),
        ip: ip.to_string(),
        external_id: None,
    };
    db::customers::find_or_insert_by_email(&state.db, shop_id, fields, now).await.map(Some)
}

/// Records the attempt, asks the acquirer, records the answer.
async fn charge(
    state: &AppState,
    new: NewPayment<'_>,
    card: &CardRef,
    now: DateTime<Utc>,
) -> Result<payments::Model, DbErr> {
    let capture = new.transaction_type == TransactionType::Payment;
    let (amount, currency) = (new.amount, new.currency.to_string());
    let payment = db::payments::insert_processing(&state.db, new, now).await?;
    let request = ChargeRequest {
        amount,
        currency: &currency,
        capture,
        idempotency_key: &payment.id,
        customer_present: true,
        now,
        simulate: None,
    };
    let outcome = state.acquirer.charge(card, request).await;
    db::payments::record_outcome(&state.db, payment, &outcome, now).await
}

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
    let payment = settle(state, shop_id, id, PaymentStatus::Voided, now).await?;
    if let Some(product_id) = &payment.product_id {
        db::products::release_unit(&state.db, product_id).await?;
    }
    Ok(payment)
}

/// Moves an authorization to `to` (captured or voided). The status changes first, so of two
/// concurrent calls only one reaches the acquirer; if the acquirer refuses, it changes back.
async fn settle(
    state: &AppState,
    shop_id: i64,
    id: &str,
    to: PaymentStatus,
    now: DateTime<Utc>,
) -> Result<payments::Model, AppError> {
    let find = || db::find::<payments::Entity>(&state.db, shop_id, id);
    let payment = find().await?.ok_or(AppError::NotFound("Payment"))?;
    let from = PaymentStatus::Authorized;
    if !db::payments::transition(&state.db, shop_id, id, from, to, now).await? {
        let verb = if to == PaymentStatus::Voided { "voided" } else { "captured" };
        return Err(AppError::Conflict(format!(
            "Only an authorized payment can be {verb}; this payment is {}",
            find().await?.map_or(payment.status, |p| p.status)
        )));
    }
    let reference = payment.acquirer_reference.clone().unwrap_or_default();
    let outcome = match to {
        PaymentStatus::Voided => state.acquirer.void(&reference).await,
        _ => state.acquirer.capture(&reference).await,
    };
    if let Outcome::Declined { message, .. } | Outcome::Error { message, .. } = outcome {
        db::payments::transition(&state.db, shop_id, id, to, from, now).await?;
        return Err(AppError::Acquirer(message.to_string()));
    }
    find().await?.ok_or(AppError::NotFound("Payment"))
}
