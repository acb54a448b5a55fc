//! `/products`: create, read, list and update products (spec 2.1, 4.1).

use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use chrono::Utc;

use super::auth::ApiShop;
use super::json::JsonObject;
use super::{list_response, page_from_query};
use crate::db::{self, entities::products};
use crate::domain::product::ProductFields;
use crate::error::AppError;
use crate::state::AppState;
use crate::views::ProductView;

/// Routes of products.
pub fn router() -> Router<AppState> {
    Router::new().route("/products", post(create).get(list)).route("/products/{id}", get(show).put(update))
}

async fn create(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    JsonObject(body): JsonObject,
) -> Result<impl IntoResponse, AppError> {
    let fields = ProductFields::parse(&body, None, shop.id)?;
    let product = db::products::insert(&state.db, shop.id, &fields, Utc::now()).await?;
    Ok((StatusCode::CREATED, Json(ProductView::new(&product, &state.config))))
}

async fn show(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Json<ProductView>, AppError> {
    let product = find(&state, shop.id, &id).await?;
    Ok(Json(ProductView::new(&product, &state.config)))
}

async fn list(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    RawQuery(query): RawQuery,
) -> Result<Response, AppError> {
    let page = page_from_query(query.as_deref())?;
    let listed = db::list::<products::Entity>(&state.db, shop.id, &page).await;
    list_response(&state, "/products", query.as_deref(), &page, listed, |p| ProductView::new(p, &state.config))
}

async fn update(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
    JsonObject(body): JsonObject,
) -> Result<StatusCode, AppError> {
    let product = find(&state, shop.id, &id).await?;
    let fields = ProductFields::parse(&body, Some(&product.fields()), shop.id)?;
    db::products::update(&state.db, &product, &fields, Utc::now())
        .await?
        .map_err(|refused| AppError::Conflict(refused.to_string()))?;
    Ok(StatusCode::NO_CONTENT)
}

async fn find(state: &AppState, shop_id: i64, id: &str) -> Result<products::Model, AppError> {
    db::find::<products::Entity>(&state.db, shop_id, id).await?.ok_or(AppError::NotFound("Product"))
}
