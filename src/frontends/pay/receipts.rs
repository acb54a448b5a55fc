//! `/receipts/{payment_id}`: what a customer sees after paying when the merchant gave no
//! address to return to; `/payments/{payment_id}/return`: where a customer comes back to from
//! the processor's page or their bank's check; `/payments/{payment_id}/back`: where one who
//! left the processor's page without paying lands. The payment id is an unguessable token.

use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;

use super::page::respond_page;
use crate::db::{
    self,
    entities::{payments, plans, products, subscriptions},
};
use crate::domain::vocab::{IntervalUnit, Language, PaymentStatus};
use crate::web::error::AppError;
use crate::web::i18n::{Texts, texts};
use crate::web::state::AppState;
use crate::web::urls;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/receipts/{id}", get(show))
        .route("/payments/{id}/return", get(came_back))
        .route("/payments/{id}/back", get(left))
}

/// A customer who left the processor's page without paying: the page is closed there (so
/// the unit it held is free again at once) and they are offered the way to pay: the
/// product's or plan's page again, or, where the processor's page cannot be closed, that
/// page while it stays open. Paid after all (another tab), they go on as from a payment.
async fn left(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    match leave(&state, &id).await {
        Ok(response) => response,
        Err(e) => e.into_response(),
    }
}

async fn leave(state: &AppState, id: &str) -> Result<Response, AppError> {
    let payment = db::find_public::<payments::Entity>(&state.db, id).await?.ok_or(AppError::NotFound("Payment"))?;
    let waiting = payment.status == PaymentStatus::Processing && payment.billing_key.is_none();
    let payment = match waiting && payment.checkout_token.is_some() {
        true => crate::services::billing::leave(state, payment, chrono::Utc::now()).await?,
        false => payment,
    };
    let to = match payment.status {
        PaymentStatus::Succeeded | PaymentStatus::Authorized => urls::payment_return(&state.config, &payment.id),
        PaymentStatus::Processing => {
            // Its page cannot be closed (or did not answer): it is still the way to pay. It
            // was just looked up: the receipt is made as it stands.
            let open_page = payment.action_url.clone();
            let mut page = receipt_of(state, payment).await?;
            page.headline = page.t.not_paid.to_string();
            page.open_page = open_page;
            return Ok(respond_page(StatusCode::OK, page, None, None, &[]));
        }
        _ => pay_again(state, &payment).await?,
    };
    Ok(Redirect::to(&to).into_response())
}

/// Where a customer whose payment on a page ended unpaid may pay again: the page it was
/// made from (a product's, a plan's, a subscription's card page, their subscriber page).
async fn pay_again(state: &AppState, payment: &payments::Model) -> Result<String, AppError> {
    if let Some(done) = card_saved(state, payment).await? {
        return Ok(format!("/portal/home?done={done}"));
    }
    let config = &state.config;
    Ok(match (&payment.product_id, &payment.subscription_id, &payment.plan_id) {
        (Some(product), ..) => urls::product_pay(config, product),
        (_, Some(sub), _) => urls::subscription_pay(config, sub),
        (_, _, Some(plan)) => urls::plan_pay(config, plan),
        _ => urls::receipt(config, &payment.id),
    })
}

/// A customer back from the processor's page or their bank's check: how the payment ended
/// is asked of the processor (never read from the address they came back with); paid, they
/// go on to the merchant as from paydesk's own form, else to the receipt, which says why or
/// that the bank has not answered yet.
async fn came_back(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    match back(&state, &id).await {
        Ok(response) => response,
        Err(e) => e.into_response(),
    }
}

async fn back(state: &AppState, id: &str) -> Result<Response, AppError> {
    let payment = db::find_public::<payments::Entity>(&state.db, id).await?.ok_or(AppError::NotFound("Payment"))?;
    let payment = match payment.status == PaymentStatus::Processing && payment.billing_key.is_none() {
        true => crate::services::billing::settle(state, payment, chrono::Utc::now()).await?,
        false => payment,
    };
    if let Some(done) = card_saved(state, &payment).await? {
        // A subscriber saving a new card on the processor's page goes back to their page.
        return Ok(Redirect::to(&format!("/portal/home?done={done}")).into_response());
    }
    if !matches!(payment.status, PaymentStatus::Succeeded | PaymentStatus::Authorized) {
        return Ok(Redirect::to(&urls::receipt(&state.config, &payment.id)).into_response());
    }
    let shop = crate::services::shops::find(state, payment.shop_id).await?.ok_or(AppError::NotFound("Payment"))?;
    let after = match (&payment.product_id, &payment.subscription_id) {
        (Some(product), _) => db::find_public::<products::Entity>(&state.db, product).await?.and_then(|p| p.return_url),
        (_, Some(sub)) => db::find_public::<subscriptions::Entity>(&state.db, sub).await?.and_then(|s| s.return_url),
        _ => None,
    }
    .or_else(|| shop.url.clone());
    let secret = crate::services::keys::api_secret(&state.vault, &shop);
    Ok(super::page::redirect_after(state, after.as_deref(), secret.as_deref(), &payment))
}

/// How a payment of nothing that saves a started subscription's card ended, as the
/// subscriber's page says it (`card`, `card_failed`, `card_waiting`); `None` for any other
/// payment.
async fn card_saved(state: &AppState, payment: &payments::Model) -> Result<Option<&'static str>, AppError> {
    let Some(sub_id) = payment.subscription_id.as_deref().filter(|_| payment.amount == 0) else { return Ok(None) };
    if let Some(key) = &payment.billing_key {
        let saved = payment.status == PaymentStatus::Succeeded && crate::domain::billing::is_card_update_key(key);
        return Ok(saved.then_some("card"));
    }
    let done = match payment.status {
        PaymentStatus::Succeeded => "card",
        PaymentStatus::Processing => "card_waiting",
        _ => "card_failed",
    };
    // Else a free trial's first page (its subscription has not started; once paid, the
    // subscription takes it under a charge's key before it starts).
    let sub = db::find_public::<subscriptions::Entity>(&state.db, sub_id).await?;
    Ok(sub.and_then(|s| s.started_at).map(|_| done))
}

#[derive(Template, WebTemplate)]
#[template(path = "pay/receipt.html")]
struct ReceiptPage {
    t: &'static Texts,
    shop_name: String,
    test: bool,
    headline: String,
    order: String,
    amount: String,
    /// What a coupon took off: `-€2.48 (SPRING25)`.
    discount: Option<String>,
    card: String,
    date: String,
    payment_id: String,
    /// A subscription's next charge: how much, on which day.
    next_charge: Option<String>,
    /// The bank has not answered yet: the page offers to look again.
    waiting: bool,
    /// Back from the processor's page without paying while it stays open: the way back there.
    open_page: Option<String>,
    /// Where a subscriber asks for a link to their page (receipts of subscriptions).
    manage: Option<String>,
}

async fn show(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    match load(&state, &id).await {
        Ok(page) => respond_page(StatusCode::OK, page, None, None, &[]),
        Err(e) => e.into_response(),
    }
}

async fn load(state: &AppState, id: &str) -> Result<ReceiptPage, AppError> {
    let mut payment: payments::Model =
        db::find_public::<payments::Entity>(&state.db, id).await?.ok_or(AppError::NotFound("Payment"))?;
    if payment.status == PaymentStatus::Processing && payment.billing_key.is_none() {
        // Back from authenticating, or waiting: the processor is asked how it ended.
        payment = crate::services::billing::settle(state, payment, chrono::Utc::now()).await?;
    }
    receipt_of(state, payment).await
}

/// The receipt of `payment` as it stands (asked of no processor).
async fn receipt_of(state: &AppState, payment: payments::Model) -> Result<ReceiptPage, AppError> {
    let shop = crate::services::shops::find(state, payment.shop_id).await?.ok_or(AppError::NotFound("Payment"))?;
    let mut plan_found = None;
    let (order, language) = match (&payment.product_id, &payment.plan_id) {
        (Some(product), _) => match db::find_public::<products::Entity>(&state.db, product).await? {
            Some(p) => (p.name, p.language),
            None => (product.clone(), Language::En),
        },
        (_, Some(plan)) => match db::find_public::<plans::Entity>(&state.db, plan).await? {
            Some(p) => {
                let named = (p.title.clone(), p.language);
                plan_found = Some(p);
                named
            }
            None => (plan.clone(), Language::En),
        },
        _ => (String::new(), Language::En),
    };
    let t = texts(language);
    let tz = crate::services::shops::zone(state, &shop);
    let next_charge = match (&plan_found, &payment.subscription_id) {
        (Some(plan), Some(sub)) => next_charge(state, t, plan, sub, tz).await?,
        _ => None,
    };
    let headline = match payment.status {
        // A receipt says what the payment did; refunds given later are the merchant's story.
        // A free trial's check of the card moved no money: the card was saved.
        status if status.is_taken() && payment.amount == 0 => t.card_saved.to_string(),
        status if status.is_taken() => t.paid.to_string(),
        PaymentStatus::Authorized => t.authorized.to_string(),
        PaymentStatus::Voided => t.voided.to_string(),
        PaymentStatus::Processing => t.confirming.to_string(),
        _ => t.failure(
            payment.failure_code.as_deref().unwrap_or(""),
            payment.failure_message.as_deref().unwrap_or(payment.status.as_str()),
        ),
    };
    let coupon = match payment.coupon_id.as_deref().filter(|_| payment.discount_amount > 0) {
        Some(id) => db::find_public::<crate::db::entities::coupons::Entity>(&state.db, id).await?,
        None => None,
    };
    let discount = coupon.map(|c| format!("−{} ({})", t.price(payment.discount_amount, payment.currency), c.code));
    Ok(ReceiptPage {
        discount,
        waiting: payment.status == PaymentStatus::Processing,
        open_page: None,
        t,
        shop_name: shop.name.clone(),
        test: payment.test,
        headline,
        order,
        amount: t.price(payment.amount, payment.currency),
        // Typed on the processor's page: not known until it went through.
        card: if payment.card_last4.is_empty() { String::new() } else { payment.card_label() },
        date: crate::web::locale::date_time(payment.created_at, tz, t.language),
        manage: payment.subscription_id.as_ref().map(|_| urls::portal_request(&state.config, shop.id)),
        payment_id: payment.id,
        next_charge,
    })
}

/// "€9.90 on 8 December 2026": what a subscription charges next, if it charges again.
async fn next_charge(
    state: &AppState,
    t: &Texts,
    plan: &plans::Model,
    sub_id: &str,
    tz: chrono_tz::Tz,
) -> Result<Option<String>, AppError> {
    let Some(sub) = db::find_public::<subscriptions::Entity>(&state.db, sub_id).await? else { return Ok(None) };
    let coupon = db::coupons::of_subscription(&state.db, &sub).await?;
    let Some((amount, at)) = sub.next_charge(plan, coupon.as_ref()) else { return Ok(None) };
    let amount = crate::services::taxes::of_subscription(&state.db, &sub, plan, amount).await?;
    let when = match plan.interval_unit {
        IntervalUnit::Hour => crate::web::locale::date_time(at, tz, t.language),
        _ => crate::web::locale::date(at, tz, t.language),
    };
    Ok(Some(t.on_date(&t.price(amount, plan.currency), &when)))
}
