//! `/products/{id}/pay` and `{checkout_url}/v2/confirm_order/{id}/{shop_id}`: paying for a
//! product on its hosted page.

use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use chrono::Utc;

use super::form::parse_form;
use super::page::{Summary, respond_page};
use super::{Checkout, link_json, wants_json};
use crate::db::entities::{products, shops};
use crate::db::{self};
use crate::domain::Errors;
use crate::domain::vocab::VisibleField;
use crate::services::payments::pay_product;
use crate::web::error::AppError;
use crate::web::guard::ClientIp;
use crate::web::i18n::{Texts, texts};
use crate::web::state::AppState;
use crate::web::urls;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/products/{id}/pay", get(show).post(submit))
        .route("/v2/confirm_order/{id}/{shop_id}", get(confirm))
}

async fn load(state: &AppState, id: &str) -> Result<(products::Model, std::sync::Arc<shops::Model>), AppError> {
    let product = db::find_public::<products::Entity>(&state.db, id).await?.ok_or(AppError::NotFound("Product"))?;
    let shop = crate::services::shops::find(state, product.shop_id).await?.ok_or(AppError::NotFound("Product"))?;
    Ok((product, shop))
}

fn summary(t: &Texts, product: &products::Model, shop: &shops::Model) -> Summary {
    Summary {
        shop_name: shop.name.clone(),
        title: product.name.clone(),
        description: product.description.clone(),
        price: t.price(product.amount, product.currency),
        every: None,
        terms: Vec::new(),
        test_cards: super::page::test_cards(t, product.test),
        tax: None,
    }
}

async fn checkout<'a>(state: &'a AppState, product: &products::Model, shop: &'a shops::Model) -> Checkout<'a> {
    let fields = product.fields();
    let t = texts(fields.language);
    let mut summary = summary(t, product, shop);
    let asks_vat_id = fields.visible_fields.contains(&VisibleField::VatId);
    let price = Some((product.amount, product.currency));
    summary.tax =
        super::page::tax_note(state, t, shop.id, &fields.taxing, price, asks_vat_id).await.unwrap_or_else(|e| {
            tracing::error!(product = %product.id, error = %e, "reading the product's tax rate failed");
            None
        });
    // What a buyer without a VAT id pays: the price, with its tax when the tax is added.
    let buyer = crate::services::taxes::Buyer::default();
    let charged = crate::services::taxes::price(&state.db, shop.id, product.amount, &fields.taxing, &buyer).await;
    let charged = charged.map_or(product.amount, |(amount, _)| amount);
    let page = Checkout {
        state,
        target: product.id.clone(),
        t,
        summary,
        action: urls::product_pay(&state.config, &product.id),
        after: product.return_url.clone().or_else(|| shop.url.clone()),
        shop,
        fields: fields.visible_fields,
        submit: format!("{} {}", t.pay, t.price(charged, product.currency)),
        test: product.test,
        card: true,
        elsewhere: Vec::new(),
        payable: false,
        coupon: None,
    };
    page.entry().await
}

/// Why a product cannot be paid now, if it cannot: archived, expired, sold out, or its
/// shop takes no payments of its mode (`payable`, as its page found).
fn unavailable(
    product: &products::Model,
    t: &'static Texts,
    payable: bool,
) -> Option<(StatusCode, &'static str, &'static str)> {
    let fields = product.fields();
    if product.archived_at.is_some() {
        Some((StatusCode::GONE, t.archived_title, t.archived_body))
    } else if fields.is_expired(Utc::now()) {
        Some((StatusCode::GONE, t.expired_title, t.expired_body))
    } else if fields.is_sold_out() {
        Some((StatusCode::CONFLICT, t.sold_out_title, t.sold_out_body))
    } else if !payable {
        Some((StatusCode::SERVICE_UNAVAILABLE, t.unavailable_title, t.unavailable_body))
    } else {
        None
    }
}

/// A product's pay link
///
/// The hosted payment page for the customer's browser (HTML). A program that accepts only
/// `application/json` gets the link itself as JSON. The page answers 409 when the product is sold out, 410 when it has expired and 503 when live payments are off.
#[utoipa::path(get, path = "/products/{id}/pay", tag = "Pay links", security(()),
    params(("id" = String, Path, description = "The product's id (`prd_…`)")),
    responses(
        (status = 200, description = "The page (`text/html`) or the link (`application/json`)", content(
            (crate::web::views::PayLink = "application/json"),
            (String = "text/html"),
        )),
        (status = 409, description = "Sold out (the page says so)", content_type = "text/html"),
        (status = 410, description = "Expired, or archived by the merchant (the page says so)", content_type = "text/html"),
        (status = 503, description = "Live payments are off on this instance (the page says so)", content_type = "text/html"),
    ))]
pub async fn show(State(state): State<AppState>, Path(id): Path<String>, headers: HeaderMap) -> Response {
    let loaded = load(&state, &id).await;
    if wants_json(&headers) {
        return link_json(loaded.map(|(p, _)| (p.id.clone(), "product", urls::product_pay(&state.config, &p.id))));
    }
    let (product, shop) = match loaded {
        Ok(found) => found,
        Err(e) => return e.into_response(),
    };
    let page = checkout(&state, &product, &shop).await;
    match unavailable(&product, page.t, page.payable) {
        Some((status, title, body)) => page.notice(status, title, body),
        None => page.form(StatusCode::OK, &headers, &Default::default(), &Errors::default(), None),
    }
}

/// The product's hosted page as its customers see it, for the merchant's preview: the form,
/// or what customers read instead when it cannot be paid (archived, expired, sold out).
pub async fn preview(
    state: &AppState,
    product: &products::Model,
    shop: &shops::Model,
    headers: &HeaderMap,
) -> Response {
    let page = checkout(state, product, shop).await;
    match unavailable(product, page.t, page.payable) {
        Some((_, title, body)) => page.notice(StatusCode::OK, title, body),
        None => page.preview(headers),
    }
}

/// Pay a product
///
/// The hosted form's submission, made by the customer's browser with the page's `csrf`
/// token, its cookie and the form's `attempt` (one payment per attempt, however often it is
/// sent). Without them the page answers 403 and asks to reload.
#[utoipa::path(post, path = "/products/{id}/pay", tag = "Pay links", security(()),
    params(("id" = String, Path, description = "The product's id (`prd_…`)")),
    request_body(content = crate::web::views::PayForm, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 303, description = "Paid: on to the receipt, or the product's `return_url`", headers(("Location" = String))),
        (status = 402, description = "The card was declined: the form again, with the reason", content_type = "text/html"),
        (status = 403, description = "No valid `csrf` token and cookie, or no `attempt`: the page asks to reload", content_type = "text/html"),
        (status = 409, description = "Sold out, or this attempt is being paid by another request", content_type = "text/html"),
        (status = 410, description = "Expired, or archived by the merchant", content_type = "text/html"),
        (status = 422, description = "Invalid fields: the form again, each with its problem", content_type = "text/html"),
        (status = 429, description = "Too many declined cards from this address; retry after `Retry-After` seconds", content_type = "text/html"),
        (status = 503, description = "Live payments are off on this instance", content_type = "text/html"),
    ))]
async fn submit(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ClientIp(client): ClientIp,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, AppError> {
    let (product, shop) = load(&state, &id).await?;
    let ip = client.to_string();
    let page = checkout(&state, &product, &shop).await;
    page.submit(&headers, client, parse_form(&body), |checkout| {
        pay_product(&state, &product, checkout, &ip, Utc::now())
    })
    .await
}

#[derive(Template, WebTemplate)]
#[template(path = "pay/confirm.html")]
struct ConfirmPage {
    t: &'static Texts,
    summary: Summary,
    pay_url: String,
}

/// The order confirmation: what is bought, from whom, for how much; then on to the form.
async fn confirm(State(state): State<AppState>, Path((id, shop_id)): Path<(String, String)>) -> Response {
    let (product, shop) = match load(&state, &id).await {
        Ok(found) if found.1.id.to_string() == shop_id => found,
        Ok(_) => return AppError::NotFound("Product").into_response(),
        Err(e) => return e.into_response(),
    };
    let t = texts(product.fields().language);
    let page = checkout(&state, &product, &shop).await;
    if let Some((status, title, body)) = unavailable(&product, t, page.payable) {
        return page.notice(status, title, body);
    }
    let page =
        ConfirmPage { t, summary: summary(t, &product, &shop), pay_url: urls::product_pay(&state.config, &product.id) };
    respond_page(StatusCode::OK, page, None, None, &[])
}
