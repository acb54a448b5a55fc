//! `Idempotency-Key` on every POST of the API, as Stripe does it: the first request under a
//! shop's key runs and its answer (status and body) is kept for 24 hours; a retry with the
//! same key, path and parameters gets that answer again (`Idempotent-Replayed: true`), never
//! a second run. The same key with another path or other parameters is 422; a retry while the
//! first request still runs is 409. A request refused before it ran (bad input, credentials,
//! throttling) keeps nothing, so it can be corrected and sent again under the same key.

use axum::body::{Body, to_bytes};
use axum::extract::{FromRequestParts, Request, State};
use axum::http::{HeaderName, HeaderValue, Method, StatusCode, header::CONTENT_TYPE};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use serde_json::Value;
use sha2::{Digest, Sha256};
use tracing::Instrument;

use super::auth::ApiShop;
use crate::db::idempotency::{self, Begin};
use crate::domain::Errors;
use crate::domain::input::storable;
use crate::web::error::AppError;
use crate::web::guard::BODY_LIMIT;
use crate::web::state::AppState;

/// The request header.
pub const HEADER: HeaderName = HeaderName::from_static("idempotency-key");
/// Set on a replayed answer.
const REPLAYED: HeaderName = HeaderName::from_static("idempotent-replayed");
/// Longest key.
pub const MAX_KEY: usize = 255;
/// How long the first request holds its key before a retry may take it over (it stopped).
const LEASE: chrono::Duration = chrono::Duration::minutes(5);

/// The middleware of the API's routes.
pub async fn idempotent(State(state): State<AppState>, request: Request, next: Next) -> Response {
    if request.method() != Method::POST || !request.headers().contains_key(&HEADER) {
        return next.run(request).await;
    }
    match run(&state, request, next).await {
        Ok(response) | Err(response) => response,
    }
}

async fn run(state: &AppState, request: Request, next: Next) -> Result<Response, Response> {
    let (mut parts, body) = request.into_parts();
    let key = parts.headers.get(&HEADER).and_then(|v| v.to_str().ok()).unwrap_or("").trim().to_string();
    if key.is_empty() || key.chars().count() > MAX_KEY || !storable(&key) {
        let errors = Errors::one("Idempotency-Key", format!("must be 1 to {MAX_KEY} visible characters"));
        return Err(AppError::Idempotency(errors).into_response());
    }
    let ApiShop(shop) = ApiShop::from_request_parts(&mut parts, state).await.map_err(IntoResponse::into_response)?;
    let bytes = to_bytes(body, BODY_LIMIT).await.map_err(|_| AppError::PayloadTooLarge.into_response())?;
    let path = format!("POST {}", parts.uri.path());
    let fingerprint = fingerprint(&bytes);
    let now = Utc::now();
    let db = &state.db;
    let kept = state.config.idempotency_kept;
    let begun =
        idempotency::begin(db, (shop.id, &key), &path, &fingerprint, now + LEASE, (now, kept)).await.map_err(fault)?;
    let seq = match begun {
        Begin::Fresh(seq) => seq,
        Begin::Replay { status, body } => return Ok(replay(status, body)),
        Begin::Mismatch => {
            let errors = Errors::one(
                "Idempotency-Key",
                "was already used with another request: a key may be reused only with the same path and parameters",
            );
            return Err(AppError::Idempotency(errors).into_response());
        }
        Begin::Running => return Err(AppError::IdempotencyRunning.into_response()),
    };
    parts.extensions.insert(ApiShop(shop));
    // The request runs to its end in a task of its own, even if the client hangs up, holding
    // its key meanwhile; its answer is kept, so a retry never runs it a second time.
    let db = db.clone();
    let running = tokio::spawn(crate::db::audit::acting::carry(
        async move {
            let renewing = {
                let db = db.clone();
                tokio::spawn(async move {
                    loop {
                        tokio::time::sleep((LEASE / 4).to_std().unwrap_or_default()).await;
                        if let Err(e) = idempotency::renew(&db, seq, Utc::now() + LEASE).await {
                            tracing::warn!(error = %e, "renewing an idempotency key failed");
                        }
                    }
                })
            };
            let response = next.run(Request::from_parts(parts, Body::from(bytes))).await;
            renewing.abort();
            keep(&db, seq, response).await
        }
        .in_current_span(),
    ));
    running.await.map_err(|_| AppError::Panic.into_response())?
}

/// Marks an answer that shows a secret once (`secret`): it is kept for the key without it,
/// so no secret lies in the table of kept answers, and a retry is answered without it.
#[derive(Clone, Copy)]
pub struct ShownOnce;

/// An answer `status` with `view`, whose `secret` is shown this once: kept for its
/// `Idempotency-Key` without it.
pub fn shown_once(status: StatusCode, view: impl serde::Serialize) -> Response {
    let mut response = (status, axum::Json(view)).into_response();
    response.extensions_mut().insert(ShownOnce);
    response
}

/// The answer as kept: without its `secret` when it shows one once.
fn as_kept(parts: &axum::http::response::Parts, body: &[u8]) -> String {
    if parts.extensions.get::<ShownOnce>().is_some()
        && let Ok(Value::Object(mut object)) = serde_json::from_slice::<Value>(body)
    {
        object.remove("secret");
        return Value::Object(object).to_string();
    }
    String::from_utf8_lossy(body).into_owned()
}

/// Keeps the answer under the key (or forgets the key if the request was refused).
async fn keep(db: &sea_orm::DatabaseConnection, seq: i64, response: Response) -> Result<Response, Response> {
    let status = response.status();
    if !kept(status) {
        idempotency::abandon(db, seq).await.map_err(fault)?;
        return Ok(response);
    }
    let (parts, body) = response.into_parts();
    let body = to_bytes(body, usize::MAX).await.map_err(|_| AppError::PayloadTooLarge.into_response())?;
    idempotency::complete(db, seq, status.as_u16(), as_kept(&parts, &body)).await.map_err(fault)?;
    Ok(Response::from_parts(parts, Body::from(body)))
}

/// Whether an answer is kept for the key: everything the endpoint ran to, not refusals of
/// the request itself (which keep nothing, so the corrected request can use the key).
fn kept(status: StatusCode) -> bool {
    !matches!(status.as_u16(), 400 | 401 | 403 | 405 | 413 | 415 | 422 | 429)
}

fn replay(status: u16, body: String) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(REPLAYED, HeaderValue::from_static("true"));
    response
}

fn fault(e: sea_orm::DbErr) -> Response {
    AppError::Db(e).into_response()
}

/// The parameters of a body, whatever their order or spacing: a SHA-256 of its JSON with
/// keys sorted (of the bytes, when it is not JSON).
fn fingerprint(body: &[u8]) -> String {
    let canonical = match serde_json::from_slice::<Value>(body) {
        Ok(value) => sorted(value).to_string().into_bytes(),
        Err(_) => body.to_vec(),
    };
    crate::domain::ids::hex(&Sha256::digest(&canonical))
}

fn sorted(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<_> = map.into_iter().map(|(k, v)| (k, sorted(v))).collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fingerprint_ignores_key_order_and_spacing() {
        assert_eq!(fingerprint(br#"{"a": 1, "b": {"c": 2, "d": 3}}"#), fingerprint(br#"{"b":{"d":3,"c":2},"a":1}"#));
        assert_ne!(fingerprint(br#"{"a": 1}"#), fingerprint(br#"{"a": 2}"#));
        assert_ne!(fingerprint(b""), fingerprint(b"{}"));
    }
}
