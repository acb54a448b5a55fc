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
use crate::domain::plan::PlanFields;
use crate::web::error::AppError;
use crate::web::state::AppState;
use crate::web::views::PlanView;

/// Routes of plans.
pub fn router() -> Router<AppState> {
    Router::new().route("/plans", post(create).get(list)).route("/plans/{id}", get(show))
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
