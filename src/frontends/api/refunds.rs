//! `/refunds` and `POST /payments/{id}/refund`: giving back some or all of a payment.

use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::{get, post};
use axum::{Json, Router};
use chrono::Utc;

use super::auth::ApiShop;
use super::json::JsonObject;
use super::{list_response, page_from_query, schemas};
use crate::db::{self, entities::refunds};
use crate::domain::refund::RefundAsk;
use crate::web::error::AppError;
use crate::web::state::AppState;
use crate::web::views::RefundView;

/// Routes of refunds.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/payments/{id}/refund", post(create))
        .route("/refunds", get(list))
        .route("/refunds/{id}", get(show))
}

/// Refund a payment
///
/// Gives back `amount` (default: all that is left) of a `succeeded` or `partially_refunded`
/// payment. A refund the acquirer refuses is answered 201 with `status: failed`.
#[utoipa::path(post, path = "/payments/{id}/refund", tag = "Refunds", params(("id" = String, Path, description = "The payment's id (`pay_…`)")),
    request_body = Option<schemas::refunds::RefundCreate>,
    responses(
        (status = 201, description = "The refund", body = RefundView),
        (status = 409, description = "The payment cannot be refunded (an authorization, failed, or refunded)", body = crate::web::error::ErrorBody),
    ))]
async fn create(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
    JsonObject(body): JsonObject,
) -> Result<(StatusCode, Json<RefundView>), AppError> {
    let ask = RefundAsk::read(&body)?;
    let refund = crate::services::refunds::refund(&state, shop.id, &id, ask, Utc::now()).await?;
    Ok((StatusCode::CREATED, Json(RefundView::from(&refund))))
}

/// List refunds
#[utoipa::path(get, path = "/refunds", tag = "Refunds", params(schemas::refunds::RefundFilterParams),
    responses((status = 200, description = "A page of refunds, newest first", body = [RefundView])))]
async fn list(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    RawQuery(query): RawQuery,
) -> Result<Response, AppError> {
    let page = page_from_query(query.as_deref())?;
    let pairs = url::form_urlencoded::parse(query.as_deref().unwrap_or("").as_bytes());
    let payment = pairs.filter(|(k, _)| k == "payment" || k == "payment_id").map(|(_, v)| v.into_owned()).last();
    let listed = db::refunds::list(&state.db, shop.id, &page, payment.as_deref()).await;
    list_response(&state, "/refunds", query.as_deref(), &page, listed, |r| RefundView::from(r))
}

/// Read a refund
#[utoipa::path(get, path = "/refunds/{id}", tag = "Refunds", params(("id" = String, Path, description = "The refund's id (`rfd_…`)")),
    responses((status = 200, description = "The refund", body = RefundView)))]
async fn show(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Json<RefundView>, AppError> {
    let refund = db::find::<refunds::Entity>(&state.db, shop.id, &id).await?.ok_or(AppError::NotFound("Refund"))?;
    Ok(Json(RefundView::from(&refund)))
}
