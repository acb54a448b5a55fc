//! `/payments`: every attempt to pay, with capture and void of authorizations.

use axum::extract::{Path, RawQuery, State};
use axum::response::Response;
use axum::routing::{get, post};
use axum::{Json, Router};
use chrono::Utc;

use super::auth::ApiShop;
use super::schemas;
use super::{list_response, page_from_query};
use crate::db::{self, entities::payments};
use crate::domain::payment::PaymentFilter;
use crate::web::error::AppError;
use crate::web::state::AppState;
use crate::web::views::PaymentView;

/// Routes of payments.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/payments", get(list))
        .route("/payments/{id}", get(show))
        .route("/payments/{id}/capture", post(capture))
        .route("/payments/{id}/void", post(void))
}

/// List payments
///
/// Every attempt to pay, newest first, from pay pages and the billing engine.
#[utoipa::path(get, path = "/payments", tag = "Payments", params(schemas::payments::PaymentFilterParams),
    responses((status = 200, description = "A page of payments", body = [PaymentView])))]
async fn list(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    RawQuery(query): RawQuery,
) -> Result<Response, AppError> {
    let page = page_from_query(query.as_deref())?;
    let filter = PaymentFilter::parse(url::form_urlencoded::parse(query.as_deref().unwrap_or("").as_bytes()))?;
    let listed = db::payments::list(&state.db, shop.id, &page, &filter).await;
    list_response(&state, "/payments", query.as_deref(), &page, listed, |p| PaymentView::from(p))
}

/// Read a payment
#[utoipa::path(get, path = "/payments/{id}", tag = "Payments", params(("id" = String, Path, description = "The payment's id (`pay_…`)")),
    responses((status = 200, description = "The payment", body = PaymentView)))]
async fn show(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Json<PaymentView>, AppError> {
    let payment = db::find::<payments::Entity>(&state.db, shop.id, &id).await?.ok_or(AppError::NotFound("Payment"))?;
    Ok(Json(PaymentView::from(&payment)))
}

/// Capture an authorization
///
/// Takes the held funds of an `authorized` payment: it becomes `succeeded`.
#[utoipa::path(post, path = "/payments/{id}/capture", tag = "Payments", params(("id" = String, Path, description = "The payment's id (`pay_…`)")),
    responses(
        (status = 200, description = "The captured payment", body = PaymentView),
        (status = 409, description = "The payment is not `authorized`", body = crate::web::error::ErrorBody),
        (status = 502, description = "The acquirer declined or failed; the payment stays `authorized`", body = crate::web::error::ErrorBody),
    ))]
async fn capture(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Json<PaymentView>, AppError> {
    let payment = crate::services::captures::capture(&state, shop.id, &id, Utc::now()).await?;
    Ok(Json(PaymentView::from(&payment)))
}

/// Void an authorization
///
/// Releases the held funds of an `authorized` payment: it becomes `voided`, and a finite
/// product gets its unit back.
#[utoipa::path(post, path = "/payments/{id}/void", tag = "Payments", params(("id" = String, Path, description = "The payment's id (`pay_…`)")),
    responses(
        (status = 200, description = "The voided payment", body = PaymentView),
        (status = 409, description = "The payment is not `authorized`", body = crate::web::error::ErrorBody),
        (status = 502, description = "The acquirer declined or failed; the payment stays `authorized`", body = crate::web::error::ErrorBody),
    ))]
async fn void(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Json<PaymentView>, AppError> {
    let payment = crate::services::captures::void(&state, shop.id, &id, Utc::now()).await?;
    Ok(Json(PaymentView::from(&payment)))
}
