//! `/api_keys`: the shop's keys, for a key without restrictions only. A key's secret is in the
//! answer that made it (create, roll) and never again; a replay of that answer under its
//! `Idempotency-Key` leaves it out.

use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::{get, post};
use axum::{Json, Router};

use super::auth::ApiShop;
use super::by_key;
use super::idempotency::shown_once;
use super::json::JsonObject;
use super::{list_response, page_from_query, schemas};
use crate::db::entities::{api_keys, shops};
use crate::domain::api_key::{KeyFields, read_roll};
use crate::domain::input::Reader;
use crate::services::api_keys::{self as keys, is_standard};
use crate::web::error::AppError;
use crate::web::guard::Caller;
use crate::web::state::AppState;
use crate::web::views::api_key::ApiKeyView;

/// Routes of API keys.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/api_keys", post(create).get(list))
        .route("/api_keys/{id}", get(show).post(update))
        .route("/api_keys/{id}/roll", post(roll))
        .route("/api_keys/{id}/revoke", post(revoke))
}

async fn find(state: &AppState, shop_id: i64, id: &str) -> Result<api_keys::Model, AppError> {
    crate::db::api_keys::find(&state.db, shop_id, id).await?.ok_or(AppError::NotFound("API key"))
}

fn view(shop: &shops::Model, key: &api_keys::Model, state: &AppState, secret: Option<String>) -> ApiKeyView {
    ApiKeyView::new(key, is_standard(key, &shop.secret_digest), state.clock.now(), secret)
}

/// Create an API key
///
/// A named key, restricted to `permissions` when given and to `networks` when given. Its
/// `secret` is in this answer only. Needs a key without restrictions.
#[utoipa::path(post, path = "/api_keys", tag = "API keys",
    request_body = schemas::api_keys::ApiKeyCreate,
    responses((status = 201, description = "The key, with its secret", body = ApiKeyView)))]
async fn create(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Caller(origin): Caller,
    JsonObject(body): JsonObject,
) -> Result<Response, AppError> {
    let now = state.clock.now();
    let fields = KeyFields::read(&Reader::new(&body), true, now)?;
    let audit = by_key(shop.id, origin, "api_key.created");
    let made = keys::create(&state, shop.id, fields, &audit, now).await?;
    Ok(shown_once(StatusCode::CREATED, view(&shop, &made.key, &state, Some(made.secret))))
}

/// List API keys
///
/// Every key of the shop, newest first, with those that stopped working.
#[utoipa::path(get, path = "/api_keys", tag = "API keys", params(schemas::Paging),
    responses((status = 200, description = "A page of keys, newest first", body = [ApiKeyView])))]
async fn list(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    RawQuery(query): RawQuery,
) -> Result<Response, AppError> {
    let page = page_from_query(query.as_deref())?;
    let listed = crate::db::api_keys::list(&state.db, shop.id, &page).await;
    list_response(&state, "/api_keys", query.as_deref(), &page, listed, |k| view(&shop, k, &state, None))
}

/// Read an API key
#[utoipa::path(get, path = "/api_keys/{id}", tag = "API keys", params(("id" = String, Path, description = "The key's id (`key_…`)")),
    responses((status = 200, description = "The key", body = ApiKeyView)))]
async fn show(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Json<ApiKeyView>, AppError> {
    Ok(Json(view(&shop, &find(&state, shop.id, &id).await?, &state, None)))
}

/// Update an API key
///
/// Its `name`, `permissions` and `networks`: only what is sent changes, `null` lifting the
/// restriction. The standard key takes no permissions.
#[utoipa::path(post, path = "/api_keys/{id}", tag = "API keys", params(("id" = String, Path, description = "The key's id (`key_…`)")),
    request_body = Option<schemas::api_keys::ApiKeyUpdate>,
    responses((status = 200, description = "The key", body = ApiKeyView)))]
async fn update(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Caller(origin): Caller,
    Path(id): Path<String>,
    JsonObject(body): JsonObject,
) -> Result<Json<ApiKeyView>, AppError> {
    let now = state.clock.now();
    find(&state, shop.id, &id).await?;
    let fields = KeyFields::read(&Reader::new(&body), false, now)?;
    let audit = by_key(shop.id, origin, "api_key.updated");
    let key = keys::update(&state, (shop.id, &id), fields, &audit, now).await?.map_err(keys::refusal)?;
    Ok(Json(view(&shop, &key, &state, None)))
}

/// Roll an API key
///
/// Makes its successor, with the same name, permissions and networks, working at once; its
/// `secret` is in this answer only. The rolled key goes on until `expires_at` (now when not
/// given, at most 7 days ahead), then stops. A key rolls once.
#[utoipa::path(post, path = "/api_keys/{id}/roll", tag = "API keys", params(("id" = String, Path, description = "The key's id (`key_…`)")),
    request_body = Option<schemas::api_keys::ApiKeyRoll>,
    responses((status = 201, description = "The successor, with its secret", body = ApiKeyView)))]
async fn roll(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Caller(origin): Caller,
    Path(id): Path<String>,
    JsonObject(body): JsonObject,
) -> Result<Response, AppError> {
    let now = state.clock.now();
    find(&state, shop.id, &id).await?;
    let until = read_roll(&Reader::new(&body), now)?;
    let audit = by_key(shop.id, origin, "api_key.rolled");
    let (_, made) = keys::roll(&state, (shop.id, &id), until, &audit, now).await?.map_err(keys::refusal)?;
    let standard = made.key.sealed.is_some();
    let view = ApiKeyView::new(&made.key, standard, now, Some(made.secret));
    Ok(shown_once(StatusCode::CREATED, view))
}

/// Revoke an API key
///
/// It stops working at once. The standard key cannot be revoked (409): roll it instead.
#[utoipa::path(post, path = "/api_keys/{id}/revoke", tag = "API keys", params(("id" = String, Path, description = "The key's id (`key_…`)")),
    responses((status = 200, description = "The key, revoked", body = ApiKeyView)))]
async fn revoke(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Caller(origin): Caller,
    Path(id): Path<String>,
) -> Result<Json<ApiKeyView>, AppError> {
    let now = state.clock.now();
    find(&state, shop.id, &id).await?;
    let audit = by_key(shop.id, origin, "api_key.revoked");
    let key = keys::revoke(&state, (shop.id, &id), &audit, now).await?.map_err(keys::refusal)?;
    Ok(Json(view(&shop, &key, &state, None)))
}
