//! `/plans/{id}/pay`: subscribing to a plan on its hosted page. Merchants' sites may send
//! the customer here by GET or by a form POST (with `email` to fill in); a POST carrying
//! the page's own CSRF token is the customer's submission.

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use chrono::{DateTime, Utc};

use super::form::{CouponView, parse_form};
use super::page::Summary;
use super::{Checkout, link_json, wants_json};
use crate::db::entities::{coupons, plans, shops};
use crate::db::{self};
use crate::domain::Errors;
use crate::domain::coupon::Off;
use crate::domain::vocab::VisibleField;
use crate::services::payments::subscribe;
use crate::web::error::AppError;
use crate::web::guard::ClientIp;
use crate::web::i18n::{PlanTerms, Texts, texts};
use crate::web::state::AppState;
use crate::web::urls;

pub fn router() -> Router<AppState> {
    Router::new().route("/plans/{id}/pay", get(show).post(submit))
}

async fn load(state: &AppState, id: &str) -> Result<(plans::Model, std::sync::Arc<shops::Model>), AppError> {
    let plan = db::find_public::<plans::Entity>(&state.db, id).await?.ok_or(AppError::NotFound("Plan"))?;
    let shop = crate::services::shops::find(state, plan.shop_id).await?.ok_or(AppError::NotFound("Plan"))?;
    Ok((plan, shop))
}

/// A plan as the top of its pages shows it: title, price, interval and trial terms.
/// A plan's summary for a customer subscribing at `now`: its price and its terms.
pub(super) fn plan_summary(
    state: &AppState,
    t: &Texts,
    plan: &plans::Model,
    shop: &shops::Model,
    now: DateTime<Utc>,
) -> Summary {
    let f = plan.fields();
    let terms = crate::domain::billing::Terms::from(&f);
    let terms = PlanTerms {
        currency: f.currency,
        terms: &terms,
        shop_name: &shop.name,
        now,
        tz: crate::services::shops::zone(state, shop),
    };
    Summary {
        shop_name: shop.name.clone(),
        title: f.title,
        description: String::new(),
        price: t.price(f.amount, f.currency),
        every: Some(t.every(f.interval, f.interval_unit)),
        test_cards: super::page::test_cards(t, f.test),
        terms: t.plan_terms(&terms),
        tax: None,
    }
}

async fn checkout<'a>(state: &'a AppState, plan: &plans::Model, shop: &'a shops::Model) -> Checkout<'a> {
    let fields = plan.fields();
    let t = texts(fields.language);
    let mut summary = plan_summary(state, t, plan, shop, Utc::now());
    let asks_vat_id = fields.visible_fields.contains(&VisibleField::VatId);
    summary.tax =
        super::page::tax_note(state, t, shop.id, &fields.taxing, None, asks_vat_id).await.unwrap_or_else(|e| {
            tracing::error!(plan = %plan.id, error = %e, "reading the plan's tax rate failed");
            None
        });
    let page = Checkout {
        state,
        target: plan.id.clone(),
        t,
        summary,
        action: urls::plan_pay(&state.config, &plan.id),
        after: shop.url.clone(),
        shop,
        fields: fields.visible_fields,
        submit: t.subscribe.to_string(),
        test: plan.test,
        card: true,
        elsewhere: Vec::new(),
        payable: false,
        coupon: None,
    };
    let mut page = page.entry().await;
    // The coupon form, while the shop has a coupon of this mode to redeem.
    if db::coupons::any_redeemable(&state.db, shop.id, plan.test, Utc::now()).await.unwrap_or(false) {
        page.coupon = Some(CouponView::default());
    }
    page
}

/// The coupon a submitted code names for `plan`, shown on `page` with what it takes off; or
/// the page's answer when it is refused (422, the form again with why).
async fn coupon_of(
    state: &AppState,
    plan: &plans::Model,
    page: &mut Checkout<'_>,
    code: &str,
) -> Result<Result<coupons::Model, String>, AppError> {
    let t = page.t;
    match crate::services::coupons::usable(state, plan, code, "coupon", Utc::now()).await {
        Ok(coupon) => {
            let off = match coupon.off() {
                Off::Percent(p) => format!("{p}%"),
                Off::Amount(amount, currency) => t.price(amount, currency),
            };
            let note = t.coupon_terms(&coupon.code, &off, coupon.periods());
            page.coupon = Some(CouponView { code: coupon.code.clone(), error: None, note: Some(note) });
            Ok(Ok(coupon))
        }
        Err(AppError::Validation(errors)) => {
            let why = errors.get("coupon").and_then(|m| m.first()).cloned().unwrap_or_default();
            page.coupon =
                Some(CouponView { code: code.to_string(), error: Some(t.problem("coupon", &why)), note: None });
            Ok(Err(why))
        }
        Err(e) => Err(e),
    }
}

/// A plan's pay link
///
/// The hosted payment page for the customer's browser (HTML). A program that accepts only
/// `application/json` gets the link itself as JSON. The page answers 503 when live payments are off.
#[utoipa::path(get, path = "/plans/{id}/pay", tag = "Pay links", security(()),
    params(("id" = String, Path, description = "The plan's id (`pln_…`)")),
    responses(
        (status = 200, description = "The page (`text/html`) or the link (`application/json`)", content(
            (crate::web::views::PayLink = "application/json"),
            (String = "text/html"),
        )),
        (status = 410, description = "The merchant archived the plan (the page says so)", content_type = "text/html"),
        (status = 503, description = "Live payments are off on this instance (the page says so)", content_type = "text/html"),
    ))]
pub async fn show(State(state): State<AppState>, Path(id): Path<String>, headers: HeaderMap) -> Response {
    page(&state, &id, &headers, Default::default()).await
}

/// The page with its form, `prefill` from a merchant's site.
async fn page(
    state: &AppState,
    id: &str,
    headers: &HeaderMap,
    prefill: std::collections::HashMap<String, String>,
) -> Response {
    let loaded = load(state, id).await;
    if wants_json(headers) {
        return link_json(loaded.map(|(p, _)| (p.id.clone(), "plan", urls::plan_pay(&state.config, &p.id))));
    }
    let (plan, shop) = match loaded {
        Ok(found) => found,
        Err(e) => return e.into_response(),
    };
    let page = checkout(state, &plan, &shop).await;
    if plan.archived_at.is_some() {
        let t = page.t;
        return page.notice(StatusCode::GONE, t.archived_title, t.archived_body);
    }
    if !page.payable {
        let t = page.t;
        return page.notice(StatusCode::SERVICE_UNAVAILABLE, t.unavailable_title, t.unavailable_body);
    }
    page.form(StatusCode::OK, headers, &prefill, &Errors::default(), None)
}

/// Subscribe to a plan
///
/// The hosted form's submission, made by the customer's browser with the page's `csrf`
/// token, its cookie and the form's `attempt` (one payment per attempt, however often it is
/// sent). Without them the page answers 403 and asks to reload. A POST without `csrf` (a merchant's own form sending the customer here, with `email` to
/// prefill) answers the page, as GET does.
#[utoipa::path(post, path = "/plans/{id}/pay", tag = "Pay links", security(()),
    params(("id" = String, Path, description = "The plan's id (`pln_…`)")),
    request_body(content = Option<crate::web::views::PayForm>, content_type = "application/x-www-form-urlencoded"),
    responses(
        (status = 200, description = "The page, for a POST from a merchant's site (no `csrf`)", content_type = "text/html"),
        (status = 303, description = "Subscribed: on to the receipt, or the shop's site", headers(("Location" = String))),
        (status = 402, description = "The card was declined: the form again, with the reason", content_type = "text/html"),
        (status = 403, description = "No valid `csrf` token and cookie, or no `attempt`: the page asks to reload", content_type = "text/html"),
        (status = 409, description = "Sold out, or this attempt is being paid by another request", content_type = "text/html"),
        (status = 410, description = "The merchant archived the plan", content_type = "text/html"),
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
    let sent = parse_form(&body);
    if !sent.contains_key("csrf") {
        let prefill = sent.into_iter().filter(|(k, _)| k == "email").collect();
        return Ok(page(&state, &id, &headers, prefill).await);
    }
    let (plan, shop) = load(&state, &id).await?;
    let ip = client.to_string();
    let mut page = checkout(&state, &plan, &shop).await;
    let code = sent.get("coupon").map(|c| c.trim().to_string()).filter(|c| !c.is_empty());
    // A code sent is always read, also when the field is no longer shown (the last
    // redemption went meanwhile): never paid at full price unsaid.
    let coupon = match code {
        Some(code) => match coupon_of(&state, &plan, &mut page, &code).await? {
            Ok(coupon) => Some(coupon),
            Err(_) => {
                return Ok(page.form(StatusCode::UNPROCESSABLE_ENTITY, &headers, &sent, &Errors::default(), None));
            }
        },
        None => None,
    };
    if sent.contains_key("apply_coupon") {
        // Applying a code shows what it takes off; the payment form then carries it.
        if !crate::web::csrf::verify(&headers, sent.get("csrf").map(String::as_str)) {
            let t = page.t;
            return Ok(page.notice(StatusCode::FORBIDDEN, t.expired_session, ""));
        }
        return Ok(page.form(StatusCode::OK, &headers, &Default::default(), &Errors::default(), None));
    }
    page.submit(&headers, client, sent, |checkout| subscribe(&state, &plan, checkout, coupon.as_ref(), &ip, Utc::now()))
        .await
}
