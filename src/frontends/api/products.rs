//! `/products`: create, read, list and update products (spec 2.1, 4.1).

use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use chrono::Utc;

use super::auth::{ApiShop, KeyAccess};
use super::json::JsonObject;
use super::{list_response, page_from_query, schemas};
use crate::db::{self, entities::products};
use crate::domain::product::ProductFields;
use crate::domain::webhook::public_url;
use crate::services::catalog::rate_allowed;
use crate::web::error::AppError;
use crate::web::state::AppState;
use crate::web::views::ProductView;

/// Routes of products.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/products", post(create).get(list))
        .route("/products/{id}", get(show).put(update))
        .route("/products/{id}/archive", post(archive))
        .route("/products/{id}/restore", post(restore))
}

/// Create a product
///
/// The product and its payment links (`pay_url`, `confirm_url`). `amount` and `quantity`
/// may be sent as strings of digits (as the spec shows) or as integers.
#[utoipa::path(post, path = "/products", tag = "Products",
    request_body = schemas::products::ProductCreate,
    responses((status = 201, description = "The product", body = ProductView)))]
async fn create(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    access: KeyAccess,
    JsonObject(body): JsonObject,
) -> Result<impl IntoResponse, AppError> {
    access.may_set_notification_url(&body, None)?;
    let fields = ProductFields::parse(&body, None, shop.id)?;
    rate_allowed(&state.db, shop.id, fields.taxing.rate_id.as_deref(), None).await??;
    public_url(fields.notification_url.as_deref(), "notification_url", state.config.webhooks_allow_private)?;
    let product = db::products::insert(&state.db, shop.id, &fields, Utc::now()).await?;
    Ok((StatusCode::CREATED, Json(ProductView::new(&product, &state.config))))
}

/// Read a product
#[utoipa::path(get, path = "/products/{id}", tag = "Products",
    params(("id" = String, Path, description = "The product's id (`prd_…`)")),
    responses((status = 200, description = "The product", body = ProductView)))]
async fn show(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Json<ProductView>, AppError> {
    let product = find(&state, shop.id, &id).await?;
    Ok(Json(ProductView::new(&product, &state.config)))
}

/// List products
///
/// Newest first. `quantity` is `null` for an infinite product.
#[utoipa::path(get, path = "/products", tag = "Products",
    params(schemas::Paging),
    responses((status = 200, description = "A page of products", body = [ProductView])))]
async fn list(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    RawQuery(query): RawQuery,
) -> Result<Response, AppError> {
    let page = page_from_query(query.as_deref())?;
    let listed = db::list::<products::Entity>(&state.db, shop.id, &page).await;
    list_response(&state, "/products", query.as_deref(), &page, listed, |p| ProductView::new(p, &state.config))
}

/// Update a product
///
/// Any of the create fields; those not sent keep their values. A `quantity` below what
/// customers bought meanwhile is refused with 409.
#[utoipa::path(put, path = "/products/{id}", tag = "Products",
    params(("id" = String, Path, description = "The product's id (`prd_…`)")),
    request_body = Option<schemas::products::ProductUpdate>,
    responses(
        (status = 204, description = "Updated; no body"),
        (status = 409, description = "Customers' purchases overtook the new quantity", body = crate::web::error::ErrorBody),
    ))]
async fn update(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    access: KeyAccess,
    Path(id): Path<String>,
    JsonObject(body): JsonObject,
) -> Result<StatusCode, AppError> {
    let product = find(&state, shop.id, &id).await?;
    access.may_set_notification_url(&body, product.notification_url.as_deref())?;
    let fields = ProductFields::parse(&body, Some(&product.fields()), shop.id)?;
    rate_allowed(&state.db, shop.id, fields.taxing.rate_id.as_deref(), product.tax_rate_id.as_deref()).await??;
    public_url(fields.notification_url.as_deref(), "notification_url", state.config.webhooks_allow_private)?;
    db::products::update(&state.db, &product, &fields, Utc::now())
        .await?
        .map_err(|refused| AppError::Conflict(refused.to_string()))?;
    Ok(StatusCode::NO_CONTENT)
}

/// Archive a product
///
/// Its pay link then tells customers it is no longer available; the product stays readable
/// and listed, with `archived_at`. Archiving an archived product changes nothing. Event:
/// `product.archived`.
#[utoipa::path(post, path = "/products/{id}/archive", tag = "Products",
    params(("id" = String, Path, description = "The product's id (`prd_…`)")),
    responses((status = 200, description = "The archived product", body = ProductView)))]
async fn archive(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Json<ProductView>, AppError> {
    let product = crate::services::catalog::archive_product(&state, shop.id, &id, true).await?;
    Ok(Json(ProductView::new(&product, &state.config)))
}

/// Restore a product
///
/// Brings an archived product back: its pay link takes payments again. Event:
/// `product.restored`.
#[utoipa::path(post, path = "/products/{id}/restore", tag = "Products",
    params(("id" = String, Path, description = "The product's id (`prd_…`)")),
    responses((status = 200, description = "The product", body = ProductView)))]
async fn restore(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Json<ProductView>, AppError> {
    let product = crate::services::catalog::archive_product(&state, shop.id, &id, false).await?;
    Ok(Json(ProductView::new(&product, &state.config)))
}

async fn find(state: &AppState, shop_id: i64, id: &str) -> Result<products::Model, AppError> {
    db::find::<products::Entity>(&state.db, shop_id, id).await?.ok_or(AppError::NotFound("Product"))
}
