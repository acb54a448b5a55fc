//! `/events`: the append-only log of what happened, newest first.

use axum::extract::{Path, RawQuery, State};
use axum::response::Response;
use axum::routing::get;
use axum::{Json, Router};

use super::auth::ApiShop;
use super::{list_response, page_from_query, schemas};
use crate::db::{self, entities::events};
use crate::domain::event::EventFilter;
use crate::web::error::AppError;
use crate::web::state::AppState;
use crate::web::views::EventView;

/// Routes of events.
pub fn router() -> Router<AppState> {
    Router::new().route("/events", get(list)).route("/events/{id}", get(show))
}

/// List events
#[utoipa::path(get, path = "/events", tag = "Events", params(schemas::events::EventFilterParams),
    responses((status = 200, description = "A page of events, newest first", body = [EventView])))]
async fn list(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    RawQuery(query): RawQuery,
) -> Result<Response, AppError> {
    let page = page_from_query(query.as_deref())?;
    let filter = EventFilter::parse(url::form_urlencoded::parse(query.as_deref().unwrap_or("").as_bytes()))?;
    let listed = db::events::list(&state.db, shop.id, &page, &filter).await;
    list_response(&state, "/events", query.as_deref(), &page, listed, |e| EventView::from(e))
}

/// Read an event
#[utoipa::path(get, path = "/events/{id}", tag = "Events", params(("id" = String, Path, description = "The event's id (`evt_…`)")),
    responses((status = 200, description = "The event", body = EventView)))]
async fn show(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Json<EventView>, AppError> {
    let event = db::find::<events::Entity>(&state.db, shop.id, &id).await?.ok_or(AppError::NotFound("Event"))?;
    Ok(Json(EventView::from(&event)))
}
