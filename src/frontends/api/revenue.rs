//! `/revenue`: what the shop's subscriptions are worth, per currency and mode, from the
//! ledger of MRR movements (docs/revenue.md).

use axum::extract::{RawQuery, State};
use axum::routing::get;
use axum::{Json, Router};
use chrono::Utc;

use super::auth::ApiShop;
use super::schemas;
use crate::db::entities::shops;
use crate::domain::mrr::figures::{Interval, Period, Query};
use crate::web::error::AppError;
use crate::web::state::AppState;
use crate::web::views::revenue::{CohortsView, MovementsView, MrrView};

/// Routes of the revenue figures.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/revenue/mrr", get(mrr))
        .route("/revenue/movements", get(movements))
        .route("/revenue/cohorts", get(cohorts))
        .route("/revenue/subscribers", get(subscribers))
}

/// MRR over time
///
/// MRR, paused MRR, subscribers and revenue per subscriber at the end of each day or month,
/// with the period's churn rates, in one currency and mode. Days are the shop's time zone's;
/// test subscriptions on a test clock count at the clock's time.
#[utoipa::path(get, path = "/revenue/mrr", tag = "Revenue", params(schemas::revenue::RevenueParams),
    responses((status = 200, description = "One row per period, oldest first", body = MrrView),
        (status = 422, description = "A parameter is wrong or the range too long", body = crate::web::error::ErrorBody)))]
async fn mrr(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    RawQuery(query): RawQuery,
) -> Result<Json<MrrView>, AppError> {
    let (q, periods) = figures(&state, &shop, query.as_deref()).await?;
    Ok(Json(MrrView::new(&q, &periods)))
}

/// MRR movements over time
///
/// What moved MRR in each day or month: new, reactivation, expansion, contraction, churn,
/// pause and resume, each with how many and how much, and MRR at the period's start and end.
#[utoipa::path(get, path = "/revenue/movements", tag = "Revenue", params(schemas::revenue::RevenueParams),
    responses((status = 200, description = "One row per period, oldest first", body = MovementsView),
        (status = 422, description = "A parameter is wrong or the range too long", body = crate::web::error::ErrorBody)))]
async fn movements(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    RawQuery(query): RawQuery,
) -> Result<Json<MovementsView>, AppError> {
    let (q, periods) = figures(&state, &shop, query.as_deref()).await?;
    Ok(Json(MovementsView::new(&q, &periods)))
}

/// Retention and cohorts by month
///
/// Each month's net and gross revenue retention, of the customers with MRR at its start; and
/// the cohorts of the range's months: the customers whose first paid charge fell in each,
/// with those of them still holding MRR, and their MRR, at the end of each month after. By
/// month only (`interval=day` is refused). It reads every movement until the range's end.
#[utoipa::path(get, path = "/revenue/cohorts", tag = "Revenue", params(schemas::revenue::RevenueParams),
    responses((status = 200, description = "Each month's retention and cohort", body = CohortsView),
        (status = 422, description = "A parameter is wrong or the range too long", body = crate::web::error::ErrorBody)))]
async fn cohorts(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    RawQuery(query): RawQuery,
) -> Result<Json<CohortsView>, AppError> {
    let q = by_month(&state, &shop, query.as_deref())?;
    let tz = crate::services::shops::zone(&state, &shop);
    let (retention, cohorts) = crate::services::revenue::cohorts(&state.db, shop.id, &q, tz).await?;
    Ok(Json(CohortsView::new(&q, &retention, &cohorts)))
}

/// MRR per subscriber per month, as CSV
///
/// A row per customer who held MRR at the end of some month of the range: `customer_id`,
/// `email`, then the customer's MRR at the end of each month (`2026-01`, ...), in major units
/// (`9.90`). The columns of a month add up to the month's `mrr` of `GET /revenue/mrr`. By
/// month only (`interval=day` is refused). Sent as it is read, however many customers; it
/// reads every movement until the range's end.
#[utoipa::path(get, path = "/revenue/subscribers", tag = "Revenue", params(schemas::revenue::RevenueParams),
    responses((status = 200, description = "The CSV (RFC 4180, UTF-8)", content_type = "text/csv", body = String),
        (status = 422, description = "A parameter is wrong or the range too long", body = crate::web::error::ErrorBody)))]
async fn subscribers(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    RawQuery(query): RawQuery,
) -> Result<axum::response::Response, AppError> {
    let q = by_month(&state, &shop, query.as_deref())?;
    let tz = crate::services::shops::zone(&state, &shop);
    Ok(crate::services::revenue::subscribers_csv(state, shop.id, &q, tz))
}

/// A query by month (cohorts and MRR per subscriber are by month only).
fn by_month(state: &AppState, shop: &shops::Model, query: Option<&str>) -> Result<Query, AppError> {
    let q = asked(state, shop, query)?;
    if q.range.interval != Interval::Month {
        return Err(crate::domain::Errors::one("interval", "must be month: these figures are by month").into());
    }
    Ok(q)
}

/// The query of a request, on the shop's today.
fn asked(state: &AppState, shop: &shops::Model, query: Option<&str>) -> Result<Query, AppError> {
    let tz = crate::services::shops::zone(state, shop);
    let today = Utc::now().with_timezone(&tz).date_naive();
    Ok(Query::parse(url::form_urlencoded::parse(query.unwrap_or("").as_bytes()), today)?)
}

async fn figures(state: &AppState, shop: &shops::Model, query: Option<&str>) -> Result<(Query, Vec<Period>), AppError> {
    let tz = crate::services::shops::zone(state, shop);
    let q = asked(state, shop, query)?;
    let periods = crate::services::revenue::figures(&state.db, shop.id, &q, tz).await?;
    Ok((q, periods))
}
