//! `/plans`: create, read and list subscription plans (spec 2.2, 4.2).

use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use chrono::Utc;

use super::auth::ApiShop;
use super::json::JsonObject;
use super::{list_response, page_from_query, schemas};
use crate::db::{self, entities::plans};
use crate::domain::plan::{PlanEdit, PlanFields};
use crate::web::error::AppError;
use crate::web::state::AppState;
use crate::web::views::PlanView;

/// Routes of plans.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/plans", post(create).get(list))
        .route("/plans/{id}", get(show).post(update).put(update))
        .route("/plans/{id}/archive", post(archive))
        .route("/plans/{id}/restore", post(restore))
}

/// Create a plan
#[utoipa::path(post, path = "/plans", tag = "Plans",
    request_body = schemas::plans::PlanCreate,
    responses((status = 201, description = "The plan", body = PlanView)))]
async fn create(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    JsonObject(body): JsonObject,
) -> Result<impl IntoResponse, AppError> {
    let fields = PlanFields::parse(&body)?;
    crate::services::catalog::rate_allowed(&state.db, shop.id, fields.taxing.rate_id.as_deref(), None).await??;
    let plan = db::plans::insert(&state.db, shop.id, &fields, Utc::now()).await?;
    Ok((StatusCode::CREATED, Json(PlanView::new(&plan, &state.config))))
}

/// Read a plan
#[utoipa::path(get, path = "/plans/{id}", tag = "Plans", params(("id" = String, Path, description = "The plan's id (`pln_…`)")),
    responses((status = 200, description = "The plan", body = PlanView)))]
async fn show(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Json<PlanView>, AppError> {
    let plan = db::find::<plans::Entity>(&state.db, shop.id, &id).await?.ok_or(AppError::NotFound("Plan"))?;
    Ok(Json(PlanView::new(&plan, &state.config)))
}

/// List plans
#[utoipa::path(get, path = "/plans", tag = "Plans", params(schemas::Paging),
    responses((status = 200, description = "A page of plans, newest first", body = [PlanView])))]
async fn list(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    RawQuery(query): RawQuery,
) -> Result<Response, AppError> {
    let page = page_from_query(query.as_deref())?;
    let listed = db::list::<plans::Entity>(&state.db, shop.id, &page).await;
    list_response(&state, "/plans", query.as_deref(), &page, listed, |p| PlanView::new(p, &state.config))
}

/// Update a plan
///
/// Its `title` and its page's `language`, either, both or neither; the price and schedule
/// never change (subscriptions running on the plan keep their terms). Event:
/// `plan.updated`, when something changed.
#[utoipa::path(method(post, put), path = "/plans/{id}", tag = "Plans",
    params(("id" = String, Path, description = "The plan's id (`pln_…`)")),
    request_body = Option<schemas::plans::PlanUpdate>,
    responses((status = 200, description = "The plan", body = PlanView)))]
async fn update(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
    JsonObject(body): JsonObject,
) -> Result<Json<PlanView>, AppError> {
    let plan = db::find::<plans::Entity>(&state.db, shop.id, &id).await?.ok_or(AppError::NotFound("Plan"))?;
    let edit = PlanEdit::parse_change(&body, &plan.fields())?;
    let (chosen, current) = (edit.tax_rate_id.as_deref(), plan.tax_rate_id.as_deref());
    crate::services::catalog::rate_allowed(&state.db, shop.id, chosen, current).await??;
    let plan = crate::services::catalog::update_plan(&state, shop.id, &plan.id, &edit).await?;
    Ok(Json(PlanView::new(&plan, &state.config)))
}

/// Archive a plan
///
/// Its pay page then takes no new subscriptions; those running on it go on. It stays
/// readable and listed, with `archived_at`. Event: `plan.archived`.
#[utoipa::path(post, path = "/plans/{id}/archive", tag = "Plans",
    params(("id" = String, Path, description = "The plan's id (`pln_…`)")),
    responses((status = 200, description = "The archived plan", body = PlanView)))]
async fn archive(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Json<PlanView>, AppError> {
    let plan = crate::services::catalog::archive_plan(&state, shop.id, &id, true).await?;
    Ok(Json(PlanView::new(&plan, &state.config)))
}

/// Restore a plan
///
/// Brings an archived plan back: its pay page takes subscriptions again. Event:
/// `plan.restored`.
#[utoipa::path(post, path = "/plans/{id}/restore", tag = "Plans",
    params(("id" = String, Path, description = "The plan's id (`pln_…`)")),
    responses((status = 200, description = "The plan", body = PlanView)))]
async fn restore(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Json<PlanView>, AppError> {
    let plan = crate::services::catalog::archive_plan(&state, shop.id, &id, false).await?;
    Ok(Json(PlanView::new(&plan, &state.config)))
}
