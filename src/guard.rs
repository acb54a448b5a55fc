//! What every request passes before a handler sees it, and what every answer carries:
//! text the database cannot store is refused at the door (a path that cannot name anything
//! is 404, a query or form with a NUL is 422), a panic is answered as a 500 and logged, and
//! the security headers are set.

use std::any::Any;

use axum::body::{Body, to_bytes};
use axum::extract::Request;
use axum::http::{HeaderValue, Response, header};
use axum::middleware::Next;
use axum::response::IntoResponse;

use crate::domain::Errors;
use crate::domain::input::storable;
use crate::error::AppError;

/// The largest request body accepted.
pub const BODY_LIMIT: usize = 1024 * 1024;

/// Whether `path` is one of the pages browsers see (HTML errors) rather than the API.
pub fn is_page(path: &str) -> bool {
    path.starts_with("/dashboard")
        || path.starts_with("/receipts/")
        || path.starts_with("/v2/")
        || path.starts_with("/static/")
        || path.ends_with("/pay")
}

/// Refuses requests carrying text the database cannot hold, before any handler runs.
pub async fn refuse_unstorable(request: Request, next: Next) -> axum::response::Response {
    let path = request.uri().path().to_string();
    let decoded = percent(&path);
    if !decoded.as_deref().is_some_and(storable) {
        return AppError::NotFound("Page").into_response();
    }
    if let Some(query) = request.uri().query()
        && let Some(bad) = first_unstorable(query.as_bytes())
    {
        return invalid(&bad).into_response();
    }
    // The API's JSON bodies are checked field by field where they are read; a page's body is
    // read as a form, whatever its declared type.
    let is_json = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or("").trim().to_ascii_lowercase())
        .is_some_and(|v| v == "application/json" || v.ends_with("+json"));
    if is_json || !is_page(&path) || request.method() == axum::http::Method::GET {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let bytes = match to_bytes(body, BODY_LIMIT).await {
        Ok(bytes) => bytes,
        Err(_) => return AppError::PayloadTooLarge.into_response(),
    };
    if let Some(bad) = first_unstorable(&bytes) {
        return invalid(&bad).into_response();
    }
    next.run(Request::from_parts(parts, Body::from(bytes))).await
}

fn percent(path: &str) -> Option<String> {
    let bytes: Vec<u8> = url::form_urlencoded::parse(format!("p={}", path.replace('+', "%2B")).as_bytes())
        .next()
        .map(|(_, v)| v.into_owned().into_bytes())?;
    String::from_utf8(bytes).ok()
}

/// The first name in a form-encoded text whose name or value cannot be stored.
fn first_unstorable(encoded: &[u8]) -> Option<String> {
    url::form_urlencoded::parse(encoded).find(|(k, v)| !storable(k) || !storable(v)).map(|(k, _)| k.replace('\0', ""))
}

fn invalid(field: &str) -> AppError {
    let mut errors = Errors::default();
    errors.add(if field.is_empty() { "base" } else { field }, "is invalid");
    AppError::Validation(errors)
}

/// Runs a request's work in a task of its own, so that the steps that move money and stock
/// finish even if the client hangs up (axum drops a handler's future when it does).
pub async fn detached<F>(work: F) -> axum::response::Response
where
    F: Future<Output = axum::response::Response> + Send + 'static,
{
    match tokio::spawn(work).await {
        Ok(response) => response,
        Err(_) => AppError::Panic.into_response(),
    }
}

/// A panic's answer: a generic 500 (the cause is logged, never shown).
pub fn panic_answer(cause: Box<dyn Any + Send + 'static>) -> Response<Body> {
    let text = cause
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| cause.downcast_ref::<&str>().copied())
        .unwrap_or("(not text)");
    tracing::error!(panic = text, "a request panicked");
    AppError::Panic.into_response()
}

/// `Strict-Transport-Security` for an https deployment.
pub fn hsts() -> HeaderValue {
    HeaderValue::from_static("max-age=31536000; includeSubDomains")
}

/// The Content-Security-Policy of every answer: only our own styles and scripts, never
/// framed; forms post to us, and to `form_target` (where a hosted page sends the browser
/// after paying: browsers check redirects of a form post against `form-action`).
pub fn csp(form_target: Option<&str>) -> String {
    let extra = form_target.map(|origin| format!(" {origin}")).unwrap_or_default();
    format!(
        "default-src 'none'; style-src 'self'; img-src 'self' data:; script-src 'self'; \
         form-action 'self'{extra}; frame-ancestors 'none'; base-uri 'none'"
    )
}
