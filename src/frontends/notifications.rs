//! `POST /notifications/bepaid/{shop_id}` and `POST /notifications/stripe/{shop_id}`: where a
//! shop's processor tells paydesk what became of its transactions (bePaid: the address
//! paydesk gives it with every payment, and the one a merchant registers in its back office;
//! Stripe: the webhook endpoint the merchant adds in Stripe's dashboard). Answers at once: 200 once taken (a
//! repeat too), 401 for what the shop's processor did not sign, 503 to be sent again later.

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;

use crate::services::notifications::{self, Received};
use crate::web::error::AppError;
use crate::web::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/notifications/bepaid/{shop_id}", post(bepaid))
        .route("/notifications/stripe/{shop_id}", post(stripe))
}

async fn bepaid(
    State(state): State<AppState>,
    Path(shop_id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, AppError> {
    let shop_id = shop_of(&shop_id)?;
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let received = notifications::bepaid(
        &state,
        shop_id,
        text(header::AUTHORIZATION.as_str()),
        text("content-signature"),
        &body,
        chrono::Utc::now(),
    )
    .await?;
    Ok(answer(received))
}

async fn stripe(
    State(state): State<AppState>,
    Path(shop_id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, AppError> {
    let shop_id = shop_of(&shop_id)?;
    let signature = headers.get("stripe-signature").and_then(|v| v.to_str().ok());
    let received = notifications::stripe(&state, shop_id, signature, &body, chrono::Utc::now()).await?;
    Ok(answer(received))
}

/// The shop a notification address names.
fn shop_of(id: &str) -> Result<i64, AppError> {
    id.parse().map_err(|_| AppError::NotFound("Shop"))
}

fn answer(received: Received) -> Response {
    match received {
        Received::Taken => (StatusCode::OK, "OK").into_response(),
        Received::Forged => (StatusCode::UNAUTHORIZED, "Not signed by this shop's processor").into_response(),
        Received::Later => (StatusCode::SERVICE_UNAVAILABLE, "Not yet: send it again later").into_response(),
    }
}
