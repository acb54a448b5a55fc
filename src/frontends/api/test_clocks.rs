//! `/test_clocks`: simulated time for test-mode subscriptions, as in Stripe. Advancing a
//! clock runs, in order, every charge and retry that falls due, and answers when done.

use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use chrono::Utc;
use serde::Serialize;
use utoipa::ToSchema;

use super::auth::ApiShop;
use super::json::JsonObject;
use super::subscriptions::parse_time;
use super::{list_response, page_from_query, schemas};
use crate::db::{self, entities::test_clocks};
use crate::domain::Errors;
use crate::domain::input::Reader;
use crate::domain::vocab::ClockStatus;
use crate::web::error::AppError;
use crate::web::state::AppState;
use crate::web::views::timestamp;

/// Routes of test clocks.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/test_clocks", post(create).get(list))
        .route("/test_clocks/{id}", get(show))
        .route("/test_clocks/{id}/advance", post(advance))
}

/// A test clock as the API returns it.
#[derive(Serialize, ToSchema)]
#[schema(as = TestClock)]
pub struct ClockView {
    id: String,
    /// Always `test_clock`.
    #[schema(value_type = String, example = "test_clock")]
    object: &'static str,
    name: Option<String>,
    /// The clock's time: what its subscriptions take as now.
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    frozen_time: String,
    status: ClockStatus,
    shop_id: i64,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    created_at: String,
}

impl From<&test_clocks::Model> for ClockView {
    fn from(c: &test_clocks::Model) -> Self {
        ClockView {
            id: c.id.clone(),
            object: "test_clock",
            name: c.name.clone(),
            frozen_time: timestamp(c.frozen_time),
            status: c.status,
            shop_id: c.shop_id,
            created_at: timestamp(c.created_at),
        }
    }
}

/// Create a test clock
#[utoipa::path(post, path = "/test_clocks", tag = "Test clocks",
    request_body = schemas::test_clocks::TestClockCreate,
    responses((status = 201, description = "The clock", body = ClockView)))]
async fn create(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    JsonObject(body): JsonObject,
) -> Result<impl IntoResponse, AppError> {
    let r = Reader::new(&body);
    let mut errors = Errors::default();
    let frozen_time = parse_time(&r, "frozen_time", &mut errors);
    errors.require("frozen_time", frozen_time.is_none());
    let name = r.string("name", 255, &mut errors);
    let frozen_time = errors.into_result(|| frozen_time.unwrap_or_default())?;
    let clock = db::test_clocks::insert(&state.db, shop.id, name, frozen_time, Utc::now()).await?;
    Ok((StatusCode::CREATED, Json(ClockView::from(&clock))))
}

async fn find(state: &AppState, shop_id: i64, id: &str) -> Result<test_clocks::Model, AppError> {
    db::find::<test_clocks::Entity>(&state.db, shop_id, id).await?.ok_or(AppError::NotFound("Test clock"))
}

/// Read a test clock
#[utoipa::path(get, path = "/test_clocks/{id}", tag = "Test clocks", params(("id" = String, Path, description = "The test clock's id (`clk_…`)")),
    responses((status = 200, description = "The clock", body = ClockView)))]
async fn show(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Json<ClockView>, AppError> {
    Ok(Json(ClockView::from(&find(&state, shop.id, &id).await?)))
}

/// List test clocks
#[utoipa::path(get, path = "/test_clocks", tag = "Test clocks", params(schemas::Paging),
    responses((status = 200, description = "A page of clocks, newest first", body = [ClockView])))]
async fn list(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    RawQuery(query): RawQuery,
) -> Result<Response, AppError> {
    let page = page_from_query(query.as_deref())?;
    let listed = db::list::<test_clocks::Entity>(&state.db, shop.id, &page).await;
    list_response(&state, "/test_clocks", query.as_deref(), &page, listed, |c| ClockView::from(c))
}

/// Advance a test clock
///
/// Runs, in order, every charge and retry of the clock's subscriptions that falls due up to
/// `frozen_time`, and answers when done.
#[utoipa::path(post, path = "/test_clocks/{id}/advance", tag = "Test clocks", params(("id" = String, Path, description = "The test clock's id (`clk_…`)")),
    request_body = schemas::test_clocks::TestClockAdvance,
    responses(
        (status = 200, description = "The clock at its new time", body = ClockView),
        (status = 409, description = "The clock is already advancing, or is later than `frozen_time` (clocks only move forward)", body = crate::web::error::ErrorBody),
    ))]
async fn advance(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
    JsonObject(body): JsonObject,
) -> Result<Json<ClockView>, AppError> {
    let clock = find(&state, shop.id, &id).await?;
    let mut errors = Errors::default();
    let to = parse_time(&Reader::new(&body), "frozen_time", &mut errors);
    errors.require("frozen_time", to.is_none());
    let to = errors.into_result(|| to.unwrap_or_default())?;
    // Advancing to the clock's own time does nothing; a clock never goes back.
    if to == clock.frozen_time {
        return Ok(Json(ClockView::from(&clock)));
    }
    if to < clock.frozen_time {
        return Err(AppError::Conflict(format!(
            "The clock is at {}; it only moves forward",
            crate::web::views::timestamp(clock.frozen_time)
        )));
    }
    // The advance runs in a task of its own under a renewed lease: it finishes even if this
    // client hangs up, and another run takes it over if this instance stops.
    if crate::services::billing::advance_clock(&state, &clock, to).await?.is_none() {
        return Err(AppError::Conflict("The clock is already advancing".into()));
    }
    Ok(Json(ClockView::from(&find(&state, shop.id, &id).await?)))
}
