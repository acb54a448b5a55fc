//! `/disputes`: payments a cardholder's bank took back or asked about, with the merchant's
//! answer (evidence) and acceptance.

use std::collections::HashMap;

use axum::extract::{Path, RawQuery, State};
use axum::response::Response;
use axum::routing::{get, post};
use axum::{Json, Router};
use chrono::Utc;

use super::auth::ApiShop;
use super::json::JsonObject;
use super::{array_response, page_from_query, schemas};
use crate::db::disputes::DisputeFilter;
use crate::db::{self, entities::disputes};
use crate::domain::Errors;
use crate::domain::dispute::{DisputeStatus, EvidenceAsk};
use crate::domain::input::msg;
use crate::web::error::AppError;
use crate::web::state::AppState;
use crate::web::views::DisputeView;

/// Routes of disputes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/disputes", get(list))
        .route("/disputes/{id}", get(show).post(answer))
        .route("/disputes/{id}/close", post(close))
}

async fn find(state: &AppState, shop_id: i64, id: &str) -> Result<disputes::Model, AppError> {
    db::find::<disputes::Entity>(&state.db, shop_id, id).await?.ok_or(AppError::NotFound("Dispute"))
}

/// List disputes
///
/// Newest first; `status` and `payment` (or `payment_id`) narrow the list.
#[utoipa::path(get, path = "/disputes", tag = "Disputes", params(schemas::disputes::DisputeFilterParams),
    responses((status = 200, description = "A page of disputes, newest first", body = [DisputeView])))]
async fn list(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    RawQuery(query): RawQuery,
) -> Result<Response, AppError> {
    let page = page_from_query(query.as_deref())?;
    let mut filter = DisputeFilter::default();
    let mut errors = Errors::default();
    for (key, value) in url::form_urlencoded::parse(query.as_deref().unwrap_or("").as_bytes()) {
        match key.as_ref() {
            "status" => match DisputeStatus::parse(&value) {
                Some(status) => filter.status = Some(status),
                None => errors.add("status", msg::NOT_INCLUDED),
            },
            "payment" | "payment_id" => filter.payment_id = Some(value.into_owned()),
            _ => {}
        }
    }
    errors.into_result(|| ()).map_err(AppError::from)?;
    let listed = db::disputes::list(&state.db, shop.id, &page, &filter).await?;
    let ids: Vec<&str> = listed.rows.iter().map(|d| d.id.as_str()).collect();
    let mut histories: HashMap<String, Vec<_>> = HashMap::new();
    for line in db::disputes::histories(&state.db, &ids).await? {
        histories.entry(line.dispute_id.clone()).or_default().push(line);
    }
    let mut answers = HashMap::new();
    for test in [true, false] {
        answers.insert(test, crate::services::disputes::answered_here(&state, shop.id, test).await);
    }
    let views: Vec<DisputeView> = listed
        .rows
        .iter()
        .map(|d| DisputeView::new(d, histories.get(&d.id).map_or(&[][..], Vec::as_slice), answers[&d.test]))
        .collect();
    Ok(array_response(&state, "/disputes", query.as_deref(), &page, &views, listed.next_after.as_deref()))
}

/// Read a dispute
#[utoipa::path(get, path = "/disputes/{id}", tag = "Disputes", params(("id" = String, Path, description = "The dispute's id (`dsp_…`)")),
    responses((status = 200, description = "The dispute, with its history", body = DisputeView)))]
async fn show(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Json<DisputeView>, AppError> {
    let dispute = find(&state, shop.id, &id).await?;
    Ok(Json(crate::services::disputes::view(&state, &dispute).await?))
}

/// Answer a dispute
///
/// Sets evidence fields (text; an empty one clears it) and submits the evidence
/// (`submit`, the default) or only stages it (`"submit": false`). Only a dispute that
/// `needs_response` takes evidence; its processor must take answers through paydesk.
#[utoipa::path(post, path = "/disputes/{id}", tag = "Disputes", params(("id" = String, Path, description = "The dispute's id (`dsp_…`)")),
    request_body = Option<schemas::disputes::DisputeAnswer>,
    responses(
        (status = 200, description = "The dispute", body = DisputeView),
        (status = 409, description = "The dispute takes no answer now, or only in the processor's back office", body = crate::web::error::ErrorBody),
    ))]
async fn answer(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
    JsonObject(body): JsonObject,
) -> Result<Json<DisputeView>, AppError> {
    let ask = EvidenceAsk::read(&body)?;
    let dispute = find(&state, shop.id, &id).await?;
    let dispute = crate::services::disputes::answer(&state, dispute, ask, Utc::now()).await?;
    Ok(Json(crate::services::disputes::view(&state, &dispute).await?))
}

/// Accept a dispute
///
/// Gives up a dispute that `needs_response`: it closes as `accepted`, and the money stays
/// with the cardholder. This cannot be undone.
#[utoipa::path(post, path = "/disputes/{id}/close", tag = "Disputes", params(("id" = String, Path, description = "The dispute's id (`dsp_…`)")),
    responses(
        (status = 200, description = "The accepted dispute", body = DisputeView),
        (status = 409, description = "The dispute takes no answer now, or only in the processor's back office", body = crate::web::error::ErrorBody),
    ))]
async fn close(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Json<DisputeView>, AppError> {
    let dispute = find(&state, shop.id, &id).await?;
    let dispute = crate::services::disputes::accept(&state, dispute, Utc::now()).await?;
    Ok(Json(crate::services::disputes::view(&state, &dispute).await?))
}
