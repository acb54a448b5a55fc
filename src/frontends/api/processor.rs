//! `/shop/processor`: the shop's payment processor, and a check that it takes the accounts.

use axum::extract::State;
use axum::routing::{get, post};
use axum::{Json, Router};
use chrono::Utc;

use super::auth::ApiShop;
use super::json::JsonObject;
use super::schemas;
use crate::domain::processor::{Mode, ProcessorChange};
use crate::external::acquirer::Check;
use crate::services::processors;
use crate::web::error::AppError;
use crate::web::state::AppState;
use crate::web::views::processor::{CheckResult, CheckView, ProcessorView};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/shop/processor", get(show).put(update).post(update))
        .route("/shop/processor/check", post(check))
}

/// Show the shop's payment processor
///
/// `simulated` (the default), `bepaid` or `stripe`, where cards are typed, and per mode the
/// account: its shop id and the processor's public key (bePaid), the last 4 characters of its
/// secret key and of its webhook signing secret (Stripe).
#[utoipa::path(get, path = "/shop/processor", tag = "Processor",
    responses((status = 200, description = "The processor", body = ProcessorView)))]
async fn show(State(state): State<AppState>, ApiShop(shop): ApiShop) -> Result<Json<ProcessorView>, AppError> {
    Ok(Json(ProcessorView::of(&processors::find(&state, shop.id).await?)))
}

/// Change the shop's payment processor
///
/// Only what is sent changes; `"test": null` or `"live": null` removes that account. A
/// `bepaid` processor needs at least one whole account (shop id, secret key, public key); a
/// `stripe` one at least one secret key (with its webhook signing secret, so that Stripe's
/// webhooks are taken). Secrets are sealed at rest and never shown again. Refused as a
/// whole with 422.
#[utoipa::path(method(put, post), path = "/shop/processor", tag = "Processor",
    request_body = Option<schemas::processor::ProcessorUpdate>,
    responses((status = 200, description = "The processor", body = ProcessorView),
        (status = 422, description = "A field is wrong or an account incomplete", body = crate::web::error::ErrorBody)))]
async fn update(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    crate::web::guard::Caller(origin): crate::web::guard::Caller,
    JsonObject(body): JsonObject,
) -> Result<Json<ProcessorView>, AppError> {
    let change = ProcessorChange::parse(&body)?;
    let audit = super::by_key(shop.id, origin, "processor.updated");
    let row = processors::change(&state, shop.id, change, &audit, Utc::now()).await?;
    Ok(Json(ProcessorView::of(&row)))
}

/// Check the connection to the processor
///
/// Makes one harmless authenticated call per account (a lookup that finds nothing) and says
/// whether the processor takes it, and if not, what is wrong. Nothing is charged.
#[utoipa::path(post, path = "/shop/processor/check", tag = "Processor",
    responses((status = 200, description = "What the check found", body = CheckView)))]
async fn check(State(state): State<AppState>, ApiShop(shop): ApiShop) -> Result<Json<CheckView>, AppError> {
    let found = processors::check(&state, &processors::find(&state, shop.id).await?).await?;
    let result = |mode: Mode| {
        found
            .iter()
            .find(|(m, _)| *m == mode)
            .map(|(_, check)| CheckResult { works: *check == Check::Works, message: check.problem() })
    };
    Ok(Json(CheckView { object: "processor_check", test: result(Mode::Test), live: result(Mode::Live) }))
}
