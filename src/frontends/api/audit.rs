//! `/audit_events`: the shop's audit trail, newest first (who did what, from where).

use axum::extract::{Path, RawQuery, State};
use axum::response::Response;
use axum::routing::get;
use axum::{Json, Router};

use super::auth::ApiShop;
use super::{list_response, page_from_query, schemas};
use crate::db;
use crate::domain::audit::Filter;
use crate::web::error::AppError;
use crate::web::state::AppState;
use crate::web::views::AuditEventView;

/// Routes of the audit trail.
pub fn router() -> Router<AppState> {
    Router::new().route("/audit_events", get(list)).route("/audit_events/{id}", get(show))
}

/// List the audit trail
///
/// Every change made through the dashboard, the API, the command line, the subscriber page or
/// a processor's notification, every login and refusal, newest first.
#[utoipa::path(get, path = "/audit_events", tag = "Audit", params(schemas::audit::AuditFilterParams),
    responses((status = 200, description = "A page of records, newest first", body = [AuditEventView])))]
async fn list(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    RawQuery(query): RawQuery,
) -> Result<Response, AppError> {
    let page = page_from_query(query.as_deref())?;
    let filter = Filter::parse(url::form_urlencoded::parse(query.as_deref().unwrap_or("").as_bytes()))?;
    let listed = db::audit::list(&state.db, shop.id, &page, &filter).await;
    list_response(&state, "/audit_events", query.as_deref(), &page, listed, |r| AuditEventView::from(r))
}

/// Read a record of the audit trail
#[utoipa::path(get, path = "/audit_events/{id}", tag = "Audit", params(("id" = String, Path, description = "The record's id (`aud_…`)")),
    responses((status = 200, description = "The record", body = AuditEventView)))]
async fn show(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Json<AuditEventView>, AppError> {
    let record = db::audit::find(&state.db, shop.id, &id).await?.ok_or(AppError::NotFound("Audit event"))?;
    Ok(Json(AuditEventView::from(&record)))
}
