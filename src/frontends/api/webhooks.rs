//! `/webhook_endpoints` (Standard Webhooks receivers of the shop), `/webhook_deliveries`
//! (what was sent, with its attempts), `POST /events/{id}/redeliver`, and `/shop` (the
//! shop's notification settings and the public key that checks its notifications).

use crate::db::shops::DisputeChoice;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::{get, post};
use axum::{Json, Router};
use chrono::Utc;

use super::auth::ApiShop;
use super::by_key;
use super::idempotency::shown_once;
use super::json::JsonObject;
use super::{array_response, list_response, page_from_query, schemas};
use crate::db::{self, entities::webhook_endpoints as endpoints};
use crate::domain::Errors;
use crate::domain::input::Reader;
use crate::domain::webhook::EndpointFields;
use crate::domain::webhook::public_url;
use crate::web::error::AppError;
use crate::web::guard::Caller;
use crate::web::state::AppState;
use crate::web::views::webhook::{Deleted, Redelivered, ShopView};
use crate::web::views::{DeliveryView, EndpointView};

/// Routes of webhooks and the shop's settings.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/webhook_endpoints", post(create).get(list))
        .route("/webhook_endpoints/{id}", get(show).post(update).put(update).delete(delete))
        .route("/webhook_endpoints/{id}/rotate_secret", post(rotate))
        .route("/webhook_deliveries", get(deliveries))
        .route("/events/{id}/redeliver", post(redeliver))
        .route("/shop", get(shop).put(update_shop).post(update_shop))
}

async fn find(state: &AppState, shop_id: i64, id: &str) -> Result<endpoints::Model, AppError> {
    db::find::<endpoints::Entity>(&state.db, shop_id, id).await?.ok_or(AppError::NotFound("Webhook endpoint"))
}

/// Create a webhook endpoint
///
/// Its signing `secret` (`whsec_…`) is shown in this answer only.
#[utoipa::path(post, path = "/webhook_endpoints", tag = "Webhooks",
    request_body = schemas::webhooks::WebhookEndpointCreate,
    responses((status = 201, description = "The endpoint, with its secret", body = EndpointView)))]
async fn create(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Caller(origin): Caller,
    JsonObject(body): JsonObject,
) -> Result<Response, AppError> {
    let fields = EndpointFields::read(&Reader::new(&body), true, state.config.webhooks_allow_private)?;
    let audit = by_key(shop.id, origin, "webhook_endpoint.created");
    let (endpoint, secret) =
        crate::services::webhooks::create_endpoint(&state, shop.id, &fields, &audit, Utc::now()).await?;
    Ok(shown_once(StatusCode::CREATED, EndpointView::new(&endpoint, Some(secret))))
}

/// List webhook endpoints
#[utoipa::path(get, path = "/webhook_endpoints", tag = "Webhooks", params(schemas::Paging),
    responses((status = 200, description = "A page of endpoints, newest first", body = [EndpointView])))]
async fn list(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    RawQuery(query): RawQuery,
) -> Result<Response, AppError> {
    let page = page_from_query(query.as_deref())?;
    let listed = db::list::<endpoints::Entity>(&state.db, shop.id, &page).await;
    list_response(&state, "/webhook_endpoints", query.as_deref(), &page, listed, |e| EndpointView::new(e, None))
}

/// Read a webhook endpoint
#[utoipa::path(get, path = "/webhook_endpoints/{id}", tag = "Webhooks", params(("id" = String, Path, description = "The endpoint's id (`we_…`)")),
    responses((status = 200, description = "The endpoint", body = EndpointView)))]
async fn show(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Json<EndpointView>, AppError> {
    Ok(Json(EndpointView::new(&find(&state, shop.id, &id).await?, None)))
}

/// Update a webhook endpoint
///
/// Any of the create fields, and `enabled` (turning a disabled endpoint back on).
#[utoipa::path(method(post, put), path = "/webhook_endpoints/{id}", tag = "Webhooks", params(("id" = String, Path, description = "The endpoint's id (`we_…`)")),
    request_body = Option<schemas::webhooks::WebhookEndpointUpdate>,
    responses((status = 200, description = "The endpoint", body = EndpointView)))]
async fn update(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Caller(origin): Caller,
    Path(id): Path<String>,
    JsonObject(body): JsonObject,
) -> Result<Json<EndpointView>, AppError> {
    let endpoint = find(&state, shop.id, &id).await?;
    let fields = EndpointFields::read(&Reader::new(&body), false, state.config.webhooks_allow_private)?;
    let audit = by_key(shop.id, origin, "webhook_endpoint.updated");
    let endpoint = db::webhooks::update_endpoint(&state.db, endpoint, &fields, &audit, Utc::now()).await?;
    Ok(Json(EndpointView::new(&endpoint, None)))
}

/// Delete a webhook endpoint
#[utoipa::path(delete, path = "/webhook_endpoints/{id}", tag = "Webhooks", params(("id" = String, Path, description = "The endpoint's id (`we_…`)")),
    responses((status = 200, description = "Deleted", body = Deleted)))]
async fn delete(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Caller(origin): Caller,
    Path(id): Path<String>,
) -> Result<Json<Deleted>, AppError> {
    let endpoint = find(&state, shop.id, &id).await?;
    let audit = by_key(shop.id, origin, "webhook_endpoint.deleted");
    db::webhooks::delete_endpoint(&state.db, &endpoint, &audit, Utc::now()).await?;
    Ok(Json(Deleted { id: endpoint.id, deleted: true }))
}

/// Rotate an endpoint's secret
///
/// A new secret, shown in this answer only; for 24 hours deliveries are signed with both.
#[utoipa::path(post, path = "/webhook_endpoints/{id}/rotate_secret", tag = "Webhooks", params(("id" = String, Path, description = "The endpoint's id (`we_…`)")),
    responses((status = 200, description = "The endpoint, with its new secret", body = EndpointView)))]
async fn rotate(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Caller(origin): Caller,
    Path(id): Path<String>,
) -> Result<Response, AppError> {
    let endpoint = find(&state, shop.id, &id).await?;
    let audit = by_key(shop.id, origin, "webhook_endpoint.secret_rotated");
    let (endpoint, secret) = crate::services::webhooks::rotate_secret(&state, endpoint, &audit, Utc::now()).await?;
    Ok(shown_once(StatusCode::OK, EndpointView::new(&endpoint, Some(secret))))
}

/// List webhook deliveries
///
/// `endpoint_id` and `event_id` narrow the list; each delivery shows its last attempts.
#[utoipa::path(get, path = "/webhook_deliveries", tag = "Webhooks", params(schemas::webhooks::DeliveryFilterParams),
    responses((status = 200, description = "A page of deliveries, newest first", body = [DeliveryView])))]
async fn deliveries(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    RawQuery(query): RawQuery,
) -> Result<Response, AppError> {
    let page = page_from_query(query.as_deref())?;
    let pairs: Vec<(String, String)> =
        url::form_urlencoded::parse(query.as_deref().unwrap_or("").as_bytes()).into_owned().collect();
    let param = |name: &str| pairs.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    let listed =
        db::webhooks::list_deliveries(&state.db, shop.id, &page, param("endpoint_id"), param("event_id")).await?;
    let ids: Vec<&str> = listed.rows.iter().map(|d| d.id.as_str()).collect();
    let attempts = db::webhooks::attempts_of(&state.db, &ids, 10 * page.limit).await?;
    let views: Vec<DeliveryView> = listed.rows.iter().map(|d| DeliveryView::new(d, &attempts)).collect();
    Ok(array_response(&state, "/webhook_deliveries", query.as_deref(), &page, &views, listed.next_after.as_deref()))
}

/// Send an event again
///
/// To `endpoint_id` only, or to all of the event's targets.
#[utoipa::path(post, path = "/events/{id}/redeliver", tag = "Webhooks", params(("id" = String, Path, description = "The event's id (`evt_…`)")),
    request_body = Option<schemas::webhooks::Redeliver>,
    responses((status = 202, description = "Queued", body = Redelivered)))]
async fn redeliver(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
    JsonObject(body): JsonObject,
) -> Result<(StatusCode, Json<Redelivered>), AppError> {
    let r = Reader::new(&body);
    let mut errors = Errors::default();
    let endpoint_id = r.string("endpoint_id", 64, &mut errors);
    errors.into_result(|| ()).map_err(AppError::from)?;
    let endpoint = match endpoint_id {
        Some(id) => Some(find(&state, shop.id, &id).await?),
        None => None,
    };
    let count = crate::services::webhooks::redeliver(&state, shop.id, &id, endpoint.as_ref()).await?;
    Ok((StatusCode::ACCEPTED, Json(Redelivered { event_id: id, deliveries: count })))
}

/// Read the shop's settings
///
/// Its notification URL and the public key that verifies notification signatures.
#[utoipa::path(get, path = "/shop", tag = "Webhooks",
    responses((status = 200, description = "The shop", body = ShopView)))]
async fn shop(State(state): State<AppState>, ApiShop(shop): ApiShop) -> Result<Json<ShopView>, AppError> {
    shop_view(&state, shop).await
}

/// Update the shop's settings
///
/// Sets `notification_url`, where bePaid notifications go when the object names none
/// (`null` clears it), and what disputes and early fraud warnings do
/// (`cancel_disputed_subscriptions`, `refuse_disputed_cards`, `refund_fraud_warnings`).
#[utoipa::path(method(post, put), path = "/shop", tag = "Webhooks",
    request_body = Option<schemas::webhooks::ShopUpdate>,
    responses((status = 200, description = "The shop", body = ShopView)))]
async fn update_shop(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Caller(origin): Caller,
    JsonObject(body): JsonObject,
) -> Result<Json<ShopView>, AppError> {
    let r = Reader::new(&body);
    let mut errors = Errors::default();
    let url = r.sent("notification_url").then(|| crate::domain::product::read_url(&r, "notification_url", &mut errors));
    let mut choice = |field: &str| match r.sent(field) && r.value(field).is_none() {
        true => {
            errors.add(field, crate::domain::input::msg::NOT_A_BOOLEAN);
            None
        }
        false => r.boolean(field, &mut errors),
    };
    let choices: Vec<_> = DisputeChoice::ALL.into_iter().map(|c| (c, choice(c.field()))).collect();
    errors.into_result(|| ()).map_err(AppError::from)?;
    if let Some(url) = url {
        public_url(url.as_deref(), "notification_url", state.config.webhooks_allow_private)?;
        let audit = by_key(shop.id, origin.clone(), "shop.updated");
        crate::services::shops::set_notification_url(&state, shop.id, url, &audit, Utc::now()).await?;
    }
    for (choice, value) in choices {
        if let Some(value) = value.filter(|v| *v != choice.of(&shop)) {
            let audit = by_key(shop.id, origin.clone(), "shop.updated");
            let write = db::shops::set_dispute_choice(&state.db, shop.id, choice, value, &audit, Utc::now());
            crate::services::shops::changing(&state, shop.id, write).await?;
        }
    }
    let shop = crate::services::shops::find(&state, shop.id).await?.ok_or(AppError::NotFound("Shop"))?;
    shop_view(&state, shop).await
}

async fn shop_view(
    state: &AppState,
    shop: std::sync::Arc<crate::db::entities::shops::Model>,
) -> Result<Json<ShopView>, AppError> {
    let keys = crate::services::keys::key_pair(state, &shop).await?;
    Ok(Json(ShopView {
        public_key_base64: keys.public_base64(),
        public_key: keys.public_pem.clone(),
        notifications_authenticated: crate::services::keys::api_secret(&state.vault, &shop).is_some(),
        id: shop.id,
        name: shop.name.clone(),
        url: shop.url.clone(),
        notification_url: shop.notification_url.clone(),
        cancel_disputed_subscriptions: shop.dispute_cancels,
        refuse_disputed_cards: shop.refuse_disputed_cards,
        refund_fraud_warnings: shop.fraud_warning_refunds,
    }))
}
