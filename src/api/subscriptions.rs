//! `/subscriptions`: create (with a plan and a customer, optionally a card), read, list,
//! cancel, and, in test mode, make the card fail from a given moment.

use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;

use super::auth::ApiShop;
use super::json::JsonObject;
use super::page_from_query;
use crate::acquirer::Behaviour;
use crate::db::entities::{payments, subscriptions};
use crate::db::{self};
use crate::domain::Errors;
use crate::domain::billing::State as SubState;
use crate::domain::input::Reader;
use crate::domain::subscription::{SubscriptionFilter, SubscriptionRequest};
use crate::error::AppError;
use crate::state::AppState;
use crate::views::{PaymentView, SubscriptionView, timestamp};

/// Routes of subscriptions.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/subscriptions", post(create).get(list))
        .route("/subscriptions/{id}", get(show))
        .route("/subscriptions/{id}/cancel", post(cancel))
        .route("/subscriptions/{id}/events", get(events))
        .route("/subscriptions/{id}/test_card_outcome", post(test_card_outcome))
}

async fn create(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    JsonObject(body): JsonObject,
) -> Result<impl IntoResponse, AppError> {
    let request = SubscriptionRequest::parse(&body, Utc::now())?;
    let sub = crate::subscriptions::create(&state, shop.id, request, Utc::now()).await?;
    Ok((StatusCode::CREATED, Json(SubscriptionView::load(&state.db, &state.config, &sub).await?)))
}

async fn find(state: &AppState, shop_id: i64, id: &str) -> Result<subscriptions::Model, AppError> {
    db::find::<subscriptions::Entity>(&state.db, shop_id, id).await?.ok_or(AppError::NotFound("Subscription"))
}

async fn show(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Json<SubscriptionView>, AppError> {
    let sub = find(&state, shop.id, &id).await?;
    Ok(Json(SubscriptionView::load(&state.db, &state.config, &sub).await?))
}

async fn list(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    RawQuery(query): RawQuery,
) -> Result<Response, AppError> {
    let page = page_from_query(query.as_deref())?;
    let filter = SubscriptionFilter::parse(url::form_urlencoded::parse(query.as_deref().unwrap_or("").as_bytes()))?;
    let listed = db::subscriptions::list(&state.db, shop.id, &page, &filter).await?;
    let views = SubscriptionView::load_all(&state.db, &state.config, &listed.rows).await?;
    Ok(super::array_response(&state, "/subscriptions", query.as_deref(), &page, &views, listed.next_after.as_deref()))
}

/// One line of a subscription's timeline: a change of state or a charge attempt (with its
/// payment), and the next charge time it left.
#[derive(Serialize)]
struct EventView {
    id: String,
    #[serde(rename = "type")]
    kind: &'static str,
    from_state: Option<SubState>,
    to_state: SubState,
    payment: Option<PaymentView>,
    reason: Option<String>,
    renew_at: Option<String>,
    occurred_at: String,
    created_at: String,
}

/// `GET /subscriptions/{id}/events`: the timeline, newest first, paged like every list.
async fn events(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Response, AppError> {
    let page = page_from_query(query.as_deref())?;
    let sub = find(&state, shop.id, &id).await?;
    let listed = db::subscriptions::events_page(&state.db, shop.id, &sub.id, &page).await?;
    let payment_ids: Vec<&str> = listed.rows.iter().filter_map(|e| e.payment_id.as_deref()).collect();
    let payments = db::by_ids::<payments::Entity>(&state.db, shop.id, &payment_ids).await?;
    let views: Vec<EventView> = listed
        .rows
        .iter()
        .map(|e| EventView {
            id: e.id.clone(),
            kind: if e.payment_id.is_some() { "charge" } else { "state_change" },
            from_state: e.from_state,
            to_state: e.to_state,
            payment: e.payment_id.as_ref().and_then(|p| payments.get(p)).map(PaymentView::from),
            reason: e.reason.clone(),
            renew_at: e.renew_at.map(timestamp),
            occurred_at: timestamp(e.occurred_at),
            created_at: timestamp(e.created_at),
        })
        .collect();
    let path = format!("/subscriptions/{}/events", sub.id);
    Ok(super::array_response(&state, &path, query.as_deref(), &page, &views, listed.next_after.as_deref()))
}

async fn cancel(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
    JsonObject(body): JsonObject,
) -> Result<Json<SubscriptionView>, AppError> {
    let mut errors = Errors::default();
    let reason = Reader::new(&body).string("cancel_reason", 255, &mut errors);
    errors.into_result(|| ()).map_err(AppError::from)?;
    let sub = crate::subscriptions::cancel(&state, find(&state, shop.id, &id).await?, reason).await?;
    Ok(Json(SubscriptionView::load(&state.db, &state.config, &sub).await?))
}

/// Test mode: from `from` (default: the subscription's now), the card behaves as `outcome`
/// (`succeeds`, `declined`, `insufficient_funds`, `processing_error`).
async fn test_card_outcome(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
    JsonObject(body): JsonObject,
) -> Result<Json<SubscriptionView>, AppError> {
    let sub = find(&state, shop.id, &id).await?;
    let r = Reader::new(&body);
    let mut errors = Errors::default();
    // Outcomes of charges only: a refund follows the card the payment was made with.
    let of_charges = |word: &str| Behaviour::parse(word).filter(|b| *b != Behaviour::RefundFails);
    let outcome = r.choice("outcome", of_charges, &mut errors);
    errors.require("outcome", outcome.is_none());
    let from = parse_time(&r, "from", &mut errors);
    if !sub.test {
        errors.add("test", "only test subscriptions can be told how their card behaves");
    }
    errors.into_result(|| ()).map_err(AppError::from)?;
    let from = match from {
        Some(t) => t,
        None => crate::subscriptions::now_of(&state, &sub).await?,
    };
    let outcome = outcome.unwrap_or(Behaviour::Succeeds);
    let sub = db::subscriptions::set_test_outcome(&state.db, sub, outcome, from).await?;
    Ok(Json(SubscriptionView::load(&state.db, &state.config, &sub).await?))
}

/// A moment given as RFC 3339 text (`2026-11-22T10:15:30Z`) or Unix seconds.
pub fn parse_time(r: &Reader, field: &str, errors: &mut Errors) -> Option<DateTime<Utc>> {
    let value = r.value(field)?;
    let parsed = match value {
        Value::Number(n) => n.as_i64().and_then(|s| DateTime::from_timestamp(s, 0)),
        Value::String(s) => DateTime::parse_from_rfc3339(s.trim()).ok().map(|t| t.with_timezone(&Utc)),
        _ => None,
    };
    // Times far beyond any billing schedule would overflow its arithmetic.
    let parsed = parsed.filter(|t| (1970..=9999).contains(&chrono::Datelike::year(t)));
    if parsed.is_none() {
        errors.add(
            &r.key(field),
            "must be an RFC 3339 time (2026-11-22T10:15:30Z) or Unix seconds, in the years 1970 to 9999",
        );
    }
    parsed
}
