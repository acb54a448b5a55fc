//! `/payments`: every attempt to pay, with capture and void of authorizations.

use axum::extract::{Path, RawQuery, State};
use axum::response::Response;
use axum::routing::{get, post};
use axum::{Json, Router};
use chrono::Utc;

use super::auth::ApiShop;
use super::{list_response, page_from_query};
use crate::db::{self, entities::payments};
use crate::domain::payment::PaymentFilter;
use crate::error::AppError;
use crate::state::AppState;
use crate::views::PaymentView;

/// Routes of payments.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/payments", get(list))
        .route("/payments/{id}", get(show))
        .route("/payments/{id}/capture", post(capture))
        .route("/payments/{id}/void", post(void))
}

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

async fn show(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Json<PaymentView>, AppError> {
    let payment = db::find::<payments::Entity>(&state.db, shop.id, &id).await?.ok_or(AppError::NotFound("Payment"))?;
    Ok(Json(PaymentView::from(&payment)))
}

async fn capture(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Json<PaymentView>, AppError> {
    let payment = crate::payments::capture(&state, shop.id, &id, Utc::now()).await?;
    Ok(Json(PaymentView::from(&payment)))
}

async fn void(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Json<PaymentView>, AppError> {
    let payment = crate::payments::void(&state, shop.id, &id, Utc::now()).await?;
    Ok(Json(PaymentView::from(&payment)))
}
