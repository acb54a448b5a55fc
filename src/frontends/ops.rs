//! What operators and load balancers ask of a running instance: `GET /healthz` and
//! `GET /metrics` (Prometheus text, behind `PAYDESK_METRICS_TOKEN`; off while it is unset).

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use chrono::Utc;
use subtle::ConstantTimeEq;

use crate::db;
use crate::external::telemetry::{self, Levels};
use crate::web::error::AppError;
use crate::web::state::AppState;
use crate::web::views::Health;

/// The operators' routes.
pub fn router() -> Router<AppState> {
    Router::new().route("/healthz", get(healthz)).route("/metrics", get(metrics))
}

/// For load balancers: 200 while the database answers, 503 when it does not (or while the
/// instance is stopping, so that the balancer sends its traffic elsewhere).
/// Health check
#[utoipa::path(get, path = "/healthz", tag = "Operations", security(()),
    responses(
        (status = 200, description = "The database answers", body = Health),
        (status = 503, description = "The database does not answer, or the instance is stopping", body = crate::web::error::ErrorBody),
    ))]
async fn healthz(State(state): State<AppState>) -> Result<Json<Health>, AppError> {
    if state.lifecycle.is_stopping() {
        return Err(AppError::Unavailable("stopping"));
    }
    match state.db.ping().await {
        Ok(()) => Ok(Json(Health { status: "ok" })),
        Err(e) => {
            tracing::error!(error = %e, "health check: database unreachable");
            Err(AppError::Unavailable("database unreachable"))
        }
    }
}

/// The metrics in Prometheus' text format, for `Authorization: Bearer <PAYDESK_METRICS_TOKEN>`.
async fn metrics(State(state): State<AppState>, headers: HeaderMap) -> Result<Response, AppError> {
    let Some(token) = &state.config.metrics_token else { return Err(AppError::NotFound("Page")) };
    let given =
        headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(|v| v.strip_prefix("Bearer "));
    if !given.is_some_and(|given| bool::from(given.trim().as_bytes().ct_eq(token.as_bytes()))) {
        let mut refused = AppError::Unauthorized.into_response();
        refused.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer realm=\"metrics\""));
        return Ok(refused);
    }
    let (pool_in_use, pool_idle) = db::pool_use(&state.db);
    let levels = Levels {
        subscriptions_due: db::subscriptions::count_due(&state.db, Utc::now()).await?,
        webhook_queue: db::webhooks::count_waiting(&state.db).await?,
        pool_in_use,
        pool_idle,
    };
    let kind = HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8");
    Ok(([(header::CONTENT_TYPE, kind)], telemetry::render(levels)).into_response())
}
