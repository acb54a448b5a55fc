//! What every request passes before a handler sees it, and what every answer carries:
//! text the database cannot store is refused at the door (a path that cannot name anything
//! is 404, a query or form with a NUL is 422), a panic is answered as a 500 and logged, and
//! the security headers are set; every request is named by an id, logged and counted.

use std::any::Any;
use std::time::Instant;

use axum::body::{Body, to_bytes};
use axum::extract::{MatchedPath, Request};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Response, header};
use axum::middleware::Next;
use axum::response::IntoResponse;
use tracing::Instrument;

use crate::domain::Errors;
use crate::domain::ids::random_hex;
use crate::domain::input::storable;
use crate::external::telemetry;
use crate::web::error::{AppError, Failure};

/// The header that names a request, in its answer and in every log line it causes.
pub static X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The longest request id kept from a client.
const MAX_REQUEST_ID: usize = 128;

/// The request's id: the client's `X-Request-Id` when it is 1 to 128 characters of letters,
/// digits and `-_.:+=/@`, otherwise a new `req_` id.
fn request_id(headers: &HeaderMap) -> String {
    let given = headers.get(&X_REQUEST_ID).and_then(|v| v.to_str().ok()).map(str::trim).filter(|id| {
        (1..=MAX_REQUEST_ID).contains(&id.len())
            && id.bytes().all(|b| b.is_ascii_alphanumeric() || b"-_.:+=/@".contains(&b))
    });
    given.map_or_else(|| format!("req_{}", random_hex(12)), str::to_string)
}

/// The route pattern a request matched, marked on its answer for [`observe`].
#[derive(Debug, Clone)]
pub struct RouteLabel(pub MatchedPath);

/// Marks an answer with the route its request matched (layered on every route).
pub async fn mark_route(request: Request, next: Next) -> Response<Body> {
    let route = request.extensions().get::<MatchedPath>().cloned();
    let mut response = next.run(request).await;
    if let Some(route) = route {
        response.extensions_mut().insert(RouteLabel(route));
    }
    response
}

/// The path as logs show it: an invitation's or an unlock link's token (one-time secrets)
/// left out.
fn logged_path(path: &str) -> &str {
    match path {
        p if p.starts_with("/dashboard/invite/") => "/dashboard/invite/…",
        p if p.starts_with("/dashboard/unlock/") => "/dashboard/unlock/…",
        p => p,
    }
}

/// Names the request (`X-Request-Id`, kept when the client sent a usable one), runs it in a
/// span carrying that id so every log line of it does, answers the id, counts the request
/// by route and status, and logs its end: server errors as errors (their cause was logged
/// where it happened), refusals and the rest at debug.
pub async fn observe(mut request: Request, next: Next) -> Response<Body> {
    let id = request_id(request.headers());
    request.extensions_mut().insert(RequestId(id.clone()));
    let method = request.method().clone();
    let span =
        tracing::info_span!("request", request_id = %id, method = %method, path = %logged_path(request.uri().path()));
    let started = Instant::now();
    let mut response = next.run(request).instrument(span.clone()).await;
    let elapsed = started.elapsed();
    let status = response.status();
    let route = response.extensions().get::<RouteLabel>().map_or("unmatched", |r| r.0.as_str());
    telemetry::request(method.as_str(), route, status.as_u16(), elapsed.as_secs_f64());
    let reason = response.extensions().get::<Failure>().map_or("", |f| f.message.as_str());
    let ms = elapsed.as_secs_f64() * 1000.0;
    span.in_scope(|| match status.as_u16() {
        // The acquirer's refusals and an unavailable instance are not paydesk's faults.
        502 | 503 => tracing::warn!(status = status.as_u16(), ms, reason, "answered unavailable"),
        500.. => tracing::error!(status = status.as_u16(), ms, reason, "answered with a server error"),
        400.. => tracing::debug!(status = status.as_u16(), ms, reason, "refused"),
        _ => tracing::debug!(status = status.as_u16(), ms, "answered"),
    });
    if let Ok(value) = HeaderValue::from_str(&id) {
        response.headers_mut().insert(X_REQUEST_ID.clone(), value);
    }
    response
}

/// Runs the request in a scope of the audit trail's ([`crate::db::audit::acting`]), from its
/// client; its authentication says whom it acts for.
pub async fn acting(
    axum::extract::State(state): axum::extract::State<crate::web::state::AppState>,
    request: Request,
    next: Next,
) -> Response<Body> {
    let (parts, body) = request.into_parts();
    let origin = caller(&parts, &state);
    crate::db::audit::acting::scope(origin, next.run(Request::from_parts(parts, body))).await
}

/// The largest request body accepted.
pub const BODY_LIMIT: usize = 1024 * 1024;

/// Whether `path` is one of the pages browsers see (HTML errors) rather than the API.
pub fn is_page(path: &str) -> bool {
    path.starts_with("/dashboard")
        || path.starts_with("/receipts/")
        || path.starts_with("/v2/")
        || path.starts_with("/static/")
        || path.ends_with("/pay")
        || (path.starts_with("/payments/") && path.ends_with("/return"))
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
    let errors = Errors::one(if field.is_empty() { "base" } else { field }, "is invalid");
    AppError::Validation(errors)
}

/// Runs a request's work in a task of its own, so that the steps that move money and stock
/// finish even if the client hangs up (axum drops a handler's future when it does).
pub async fn detached<F>(work: F) -> axum::response::Response
where
    F: Future<Output = axum::response::Response> + Send + 'static,
{
    match tokio::spawn(crate::db::audit::acting::carry(work).in_current_span()).await {
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
/// framed; forms post to us, and to `form_targets` (the origins where a hosted page sends
/// the browser after the post: the merchant's site, the processor's card page or its bank
/// check; browsers check redirects of a form post against `form-action`).
pub fn csp(form_targets: &[String]) -> String {
    let extra: String = form_targets.iter().map(|origin| format!(" {origin}")).collect();
    format!(
        "default-src 'none'; style-src 'self'; img-src 'self' data:; script-src 'self'; \
         form-action 'self'{extra}; frame-ancestors 'none'; base-uri 'none'"
    )
}

/// The id [`observe`] gave the request.
#[derive(Debug, Clone)]
pub struct RequestId(pub String);

/// Where a request comes from, as the audit trail records it: the client's address, its
/// `User-Agent` (cut to 200 characters) and the request's id.
#[derive(Debug, Clone)]
pub struct Caller(pub crate::domain::audit::Origin);

impl axum::extract::FromRequestParts<crate::web::state::AppState> for Caller {
    type Rejection = AppError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &crate::web::state::AppState,
    ) -> Result<Self, AppError> {
        Ok(Caller(caller(parts, state)))
    }
}

/// Where the request of `parts` comes from (see [`Caller`]).
pub fn caller(parts: &axum::http::request::Parts, state: &crate::web::state::AppState) -> crate::domain::audit::Origin {
    let user_agent = parts.headers.get(axum::http::header::USER_AGENT);
    let user_agent = user_agent.map(|v| String::from_utf8_lossy(v.as_bytes()).chars().take(200).collect());
    crate::domain::audit::Origin {
        address: client_ip(parts, state).map(|ip| ip.to_string()),
        user_agent,
        request_id: parts.extensions.get::<RequestId>().map(|r| r.0.clone()),
    }
}

/// The client's address: the peer's, or, behind a trusted load balancer
/// (`PAYDESK_TRUSTED_PROXIES`), the one its `X-Forwarded-For` names.
#[derive(Debug, Clone, Copy)]
pub struct ClientIp(pub std::net::IpAddr);

impl axum::extract::FromRequestParts<crate::web::state::AppState> for ClientIp {
    type Rejection = AppError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &crate::web::state::AppState,
    ) -> Result<Self, AppError> {
        client_ip(parts, state).map(ClientIp).ok_or_else(|| AppError::Internal("no peer address".into()))
    }
}

/// The client's address, when the connection's is known.
pub fn client_ip(parts: &axum::http::request::Parts, state: &crate::web::state::AppState) -> Option<std::net::IpAddr> {
    let peer = parts.extensions.get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()?.0.ip();
    if !state.config.trusted_proxies.contains(peer) {
        return Some(peer.to_canonical());
    }
    // Bytes that are not text spoil only the hop they are in, never the hops a proxy added.
    let forwarded: Vec<String> = parts
        .headers
        .get_all("x-forwarded-for")
        .iter()
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .collect();
    Some(state.config.trusted_proxies.client(peer, forwarded.iter().map(String::as_str)))
}
