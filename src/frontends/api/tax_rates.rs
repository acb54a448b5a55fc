//! `/tax_rates`: the shop's tax rates, made, read, listed and archived (never changed, so that
//! what an invoice says of its rate stays true).

use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use chrono::Utc;

use super::auth::ApiShop;
use super::json::JsonObject;
use super::{list_response, page_from_query, schemas};
use crate::db::{self, entities::tax_rates};
use crate::domain::tax::TaxRateFields;
use crate::web::error::AppError;
use crate::web::state::AppState;
use crate::web::views::TaxRateView;

/// Routes of tax rates.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/tax_rates", post(create).get(list))
        .route("/tax_rates/{id}", get(show))
        .route("/tax_rates/{id}/archive", post(archive))
}

/// Create a tax rate
///
/// A `name`, a `percentage` (0 to 100) and a `category`: `standard` (the default; above
/// 0 %), `zero_rated` or `exempt` (0 %, with the `exemption_reason` its invoices print);
/// optionally the `country` where it applies. A JSON number is read as the four-decimal
/// number nearest it; digits in a string may have at most four decimals. A rate is never
/// changed: archive it and make another.
#[utoipa::path(post, path = "/tax_rates", tag = "Invoicing",
    request_body = schemas::tax_rates::TaxRateCreate,
    responses((status = 201, description = "The tax rate", body = TaxRateView)))]
async fn create(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    JsonObject(body): JsonObject,
) -> Result<impl IntoResponse, AppError> {
    let fields = TaxRateFields::parse(&body)?;
    let rate = db::tax_rates::insert(&state.db, shop.id, &fields, Utc::now()).await?;
    Ok((StatusCode::CREATED, Json(TaxRateView::from(&rate))))
}

async fn find(state: &AppState, shop_id: i64, id: &str) -> Result<tax_rates::Model, AppError> {
    db::find::<tax_rates::Entity>(&state.db, shop_id, id).await?.ok_or(AppError::NotFound("Tax rate"))
}

/// Read a tax rate
#[utoipa::path(get, path = "/tax_rates/{id}", tag = "Invoicing", params(("id" = String, Path, description = "The tax rate's id (`txr_…`)")),
    responses((status = 200, description = "The tax rate", body = TaxRateView)))]
async fn show(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Json<TaxRateView>, AppError> {
    Ok(Json(TaxRateView::from(&find(&state, shop.id, &id).await?)))
}

/// List tax rates
#[utoipa::path(get, path = "/tax_rates", tag = "Invoicing", params(schemas::Paging),
    responses((status = 200, description = "A page of tax rates, newest first", body = [TaxRateView])))]
async fn list(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    RawQuery(query): RawQuery,
) -> Result<Response, AppError> {
    let page = page_from_query(query.as_deref())?;
    let listed = db::list::<tax_rates::Entity>(&state.db, shop.id, &page).await;
    list_response(&state, "/tax_rates", query.as_deref(), &page, listed, |t| TaxRateView::from(t))
}

/// Archive a tax rate
///
/// It is kept, marked with the time it was archived. Asked again, it changes nothing.
#[utoipa::path(post, path = "/tax_rates/{id}/archive", tag = "Invoicing", params(("id" = String, Path, description = "The tax rate's id (`txr_…`)")),
    responses((status = 200, description = "The archived tax rate", body = TaxRateView)))]
async fn archive(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Json<TaxRateView>, AppError> {
    let rate = find(&state, shop.id, &id).await?;
    db::archive_recorded::<tax_rates::Entity>(
        &state.db,
        (shop.id, &rate.id),
        ("tax_rate.archived", "tax_rate"),
        Utc::now(),
    )
    .await?;
    Ok(Json(TaxRateView::from(&find(&state, shop.id, &id).await?)))
}
