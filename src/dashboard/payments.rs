//! Payments in the dashboard: the list with its filters, one payment, capturing or voiding
//! an authorization, and refunding, which asks for a confirmation first.

use askama::Template;
use axum::Router;
use axum::extract::{Path, RawQuery, State};
use axum::routing::{get, post};
use chrono::Utc;

use super::form::{FormView, PostedForm, minor_units, refused_also};
use super::list::{PER_PAGE, next_link};
use super::{Chrome, Merchant, Page, local, money, ok, see_other};
use crate::db::{self, Page as DbPage, entities::customers, entities::payments, entities::refunds};
use crate::domain::money::Money;
use crate::domain::payment::PaymentFilter;
use crate::domain::refund::RefundAsk;
use crate::domain::vocab::PaymentStatus;
use crate::error::AppError;
use crate::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/dashboard/payments", get(list))
        .route("/dashboard/payments/{id}", get(show))
        .route("/dashboard/payments/{id}/capture", post(capture))
        .route("/dashboard/payments/{id}/void", post(void))
        .route("/dashboard/payments/{id}/refund", post(refund))
}

/// A payment in a table.
pub struct Row {
    pub id: String,
    pub amount: String,
    pub status: String,
    pub card: String,
    /// The paying customer's e-mail, when known.
    pub customer: String,
    pub test: bool,
    pub created: String,
}

/// The table rows of `payments`, with their customers' e-mails.
async fn rows(state: &AppState, m: &Merchant, payments: &[payments::Model]) -> Result<Vec<Row>, AppError> {
    let ids: Vec<&str> = payments.iter().filter_map(|p| p.customer_id.as_deref()).collect();
    let customers = db::by_ids::<customers::Entity>(&state.db, m.shop.id, &ids).await?;
    Ok(payments
        .iter()
        .map(|p| Row {
            id: p.id.clone(),
            amount: money(p.amount, p.currency),
            status: p.status.to_string(),
            card: format!("{} •••• {}", p.card_brand, p.card_last4),
            customer: p
                .customer_id
                .as_ref()
                .and_then(|id| customers.get(id))
                .map(|c| c.email.clone())
                .unwrap_or_default(),
            test: p.test,
            created: local(p.created_at, m.tz),
        })
        .collect())
}

/// The newest `limit` payments of the shop that pass `filter`.
pub async fn recent(state: &AppState, m: &Merchant, filter: PaymentFilter, limit: u64) -> Result<Vec<Row>, AppError> {
    let page = DbPage { limit, starting_after: None };
    let listed = db::payments::list(&state.db, m.shop.id, &page, &filter).await.map_err(AppError::from)?;
    rows(state, m, &listed.rows).await
}

#[derive(Template)]
#[template(path = "dashboard/payments/list.html")]
struct ListPage {
    chrome: Chrome,
    status: String,
    statuses: &'static [&'static str],
    /// The other filters in force (`product`, id), shown so they can be cleared.
    scope: Vec<(String, String)>,
    payments: Vec<Row>,
    next: Option<String>,
}

async fn list(State(state): State<AppState>, m: Merchant, RawQuery(query): RawQuery) -> Page {
    let query = query.unwrap_or_default();
    let params: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .filter(|(k, v)| {
            !v.is_empty() && ["status", "product", "plan", "customer", "subscription", "after"].contains(&k.as_str())
        })
        .collect();
    let keep: Vec<(&str, &str)> =
        params.iter().filter(|(k, _)| k != "after").map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let filter = PaymentFilter::parse(keep.iter().copied()).map_err(AppError::from)?;
    let after = params.iter().find(|(k, _)| k == "after").map(|(_, v)| v.clone());
    let page = DbPage { limit: PER_PAGE, starting_after: after };
    let listed = db::payments::list(&state.db, m.shop.id, &page, &filter).await.map_err(AppError::from)?;
    let status = params.iter().find(|(k, _)| k == "status").map(|(_, v)| v.clone()).unwrap_or_default();
    let scope: Vec<(String, String)> = params.iter().filter(|(k, _)| k != "status" && k != "after").cloned().collect();
    let next = next_link("/dashboard/payments", &keep, listed.next_after);
    let page = ListPage {
        chrome: m.chrome("payments").await,
        status,
        statuses: PaymentStatus::WORDS,
        scope,
        payments: rows(&state, &m, &listed.rows).await?,
        next,
    };
    ok(&page)
}

#[derive(Template)]
#[template(path = "dashboard/payments/show.html")]
struct ShowPage {
    chrome: Chrome,
    p: payments::Model,
    amount: String,
    created: String,
    captured: Option<String>,
    voided: Option<String>,
    holdable: bool,
    refunded: String,
    /// The refund form, while something is left to refund.
    refund: Option<RefundForm>,
    refunds: Vec<RefundRow>,
}

/// The refund form of a payment page: the amount left, prefilled.
struct RefundForm {
    form: FormView,
    left: String,
    amount_label: String,
}

/// A refund of the payment.
struct RefundRow {
    id: String,
    amount: String,
    status: String,
    reason: String,
    failure: String,
    created: String,
}

async fn find(state: &AppState, m: &Merchant, id: &str) -> Result<payments::Model, AppError> {
    db::find::<payments::Entity>(&state.db, m.shop.id, id).await?.ok_or(AppError::NotFound("Payment"))
}

async fn show(State(state): State<AppState>, m: Merchant, Path(id): Path<String>) -> Page {
    let p = find(&state, &m, &id).await?;
    show_page(&state, &m, p, None).await
}

/// The payment's page; `refund_form` refills a refused refund form.
async fn show_page(state: &AppState, m: &Merchant, p: payments::Model, refund_form: Option<FormView>) -> Page {
    let refused = refund_form.as_ref().is_some_and(FormView::has_errors);
    let left = p.refundable().amount_to_refund(None).ok();
    let refund = left.map(|left| RefundForm {
        form: refund_form.unwrap_or_else(|| FormView::filled(vec![("amount", Money::new(left, p.currency).major())])),
        left: money(left, p.currency),
        amount_label: format!("Amount to refund ({})", p.currency),
    });
    let refunds = db::refunds::of_payment(&state.db, &p.id).await?;
    let page = ShowPage {
        amount: money(p.amount, p.currency),
        created: local(p.created_at, m.tz),
        captured: p.captured_at.map(|t| local(t, m.tz)),
        voided: p.voided_at.map(|t| local(t, m.tz)),
        holdable: p.status == PaymentStatus::Authorized,
        refunded: money(p.refunded_amount, p.currency),
        refund,
        refunds: refunds.iter().map(|r| refund_row(r, m)).collect(),
        chrome: m.chrome("payments").await,
        p,
    };
    if refused { Ok(super::render(axum::http::StatusCode::UNPROCESSABLE_ENTITY, &page)) } else { ok(&page) }
}

fn refund_row(r: &refunds::Model, m: &Merchant) -> RefundRow {
    RefundRow {
        id: r.id.clone(),
        amount: money(r.amount, r.currency),
        status: r.status.to_string(),
        reason: r.reason.clone().unwrap_or_default(),
        failure: r.failure_message.clone().unwrap_or_default(),
        created: local(r.created_at, m.tz),
    }
}

async fn capture(State(state): State<AppState>, m: Merchant, Path(id): Path<String>, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let p = crate::payments::capture(&state, m.shop.id, &id, Utc::now()).await?;
    m.flash(&format!("Captured {}.", money(p.amount, p.currency))).await;
    see_other(&format!("/dashboard/payments/{id}"))
}

async fn void(State(state): State<AppState>, m: Merchant, Path(id): Path<String>, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    crate::payments::void(&state, m.shop.id, &id, Utc::now()).await?;
    m.flash("The authorization was voided: the funds are released.").await;
    see_other(&format!("/dashboard/payments/{id}"))
}

#[derive(Template)]
#[template(path = "dashboard/payments/refund.html")]
struct ConfirmRefundPage {
    chrome: Chrome,
    id: String,
    card: String,
    amount: String,
    /// The amount as the form sends it again (major units).
    typed: String,
    reason: String,
}

/// A refund form: checked and shown for confirmation first, made once confirmed.
async fn refund(State(state): State<AppState>, m: Merchant, Path(id): Path<String>, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let p = find(&state, &m, &id).await?;
    let mut body = form.to_json(&[], &[]);
    body.insert("currency".into(), p.currency.to_string().into());
    let ambiguous = minor_units(&mut body, &["amount"]);
    let asked = refused_also(RefundAsk::read(&body), ambiguous).and_then(|ask| {
        let amount = p.refundable().amount_to_refund(ask.amount).map_err(|refusal| refusal.as_field_errors())?;
        Ok((amount, ask))
    });
    let (amount, ask) = match asked {
        Ok(asked) => asked,
        Err(errors) => return show_page(&state, &m, p, Some(FormView::sent(&form, errors))).await,
    };
    if form.get("confirm") != Some("yes") {
        let page = ConfirmRefundPage {
            chrome: m.chrome("payments").await,
            card: format!("{} •••• {}", p.card_brand, p.card_last4),
            amount: money(amount, p.currency),
            typed: Money::new(amount, p.currency).major(),
            reason: ask.reason.unwrap_or_default(),
            id,
        };
        return ok(&page);
    }
    let ask = RefundAsk { amount: Some(amount), ..ask };
    let refund = crate::refunds::refund(&state, m.shop.id, &id, ask, Utc::now()).await?;
    match refund.failure_message {
        None => m.flash(&format!("Refunded {}.", money(refund.amount, refund.currency))).await,
        Some(why) => m.flash(&format!("The refund of {} failed: {why}", money(refund.amount, refund.currency))).await,
    }
    see_other(&format!("/dashboard/payments/{id}"))
}
