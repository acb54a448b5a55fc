//! Asking again for the password (and a code) before a change that can redirect money or
//! access: processor credentials and card entry, the API key, webhook endpoints, notification
//! and return URLs, users and roles, the shop's security settings (the routes of
//! [`access::FRESH`]). A session that gave them in the last 10 minutes goes straight on.
//! Otherwise the form is held: a page asks for them and sends the form on, its fields
//! unchanged, once they are right, so nothing typed is lost and no script is needed.

use askama::Template;
use axum::body::{Body, Bytes};
use axum::extract::{FromRequestParts, MatchedPath, Request, State};
use axum::http::header::{CONTENT_LENGTH, RETRY_AFTER};
use axum::http::{HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::merchant::{FRESH_KEY, session_error};
use super::{Chrome, Merchant, access, render};
use crate::db;
use crate::domain::audit::Outcome;
use crate::domain::throttle;
use crate::web::error::AppError;
use crate::web::state::AppState;

/// How long giving the password (and a code) again keeps a session fresh.
pub const WINDOW: chrono::Duration = chrono::Duration::minutes(10);
/// The largest form held while the password is asked for.
const LIMIT: usize = 256 * 1024;
const PASSWORD: &str = "reauth_password";
const CODE: &str = "reauth_code";

#[derive(Template)]
#[template(path = "dashboard/reauth.html")]
struct ReauthPage {
    chrome: Chrome,
    /// Where the held form goes once confirmed.
    action: String,
    /// The held form's fields, sent on unchanged.
    fields: Vec<(String, String)>,
    /// Whether a code of two-step login is asked for too.
    code: bool,
    problem: String,
}

/// The layer in front of every dashboard route: holds the form of a sensitive change until
/// the session is fresh (see the module's text).
pub async fn guard(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let fresh_route =
        request.extensions().get::<MatchedPath>().is_some_and(|route| access::FRESH.contains(&route.as_str()));
    if request.method() != Method::POST || !fresh_route {
        return next.run(request).await;
    }
    match hold(&state, request).await {
        Ok(Held::Go(request)) => next.run(request).await,
        Ok(Held::Ask(response)) => response,
        Err(e) => e.into_response(),
    }
}

enum Held {
    /// Let the request through (with the form as it should reach its handler).
    Go(Request),
    /// Answer this instead: the page that asks for the password.
    Ask(Response),
}

async fn hold(state: &AppState, request: Request) -> Result<Held, AppError> {
    let (mut parts, body) = request.into_parts();
    let route = parts.extensions.get::<MatchedPath>().map(|p| p.as_str().to_string()).unwrap_or_default();
    // Who is asking, checked as the handler would: strangers, expired sessions and roles
    // that may not do it are answered here exactly as there.
    let m = match Merchant::from_request_parts(&mut parts, state).await {
        Ok(m) => m,
        Err(response) => return Ok(Held::Ask(response)),
    };
    let bytes = axum::body::to_bytes(body, LIMIT).await.map_err(|_| AppError::PayloadTooLarge)?;
    let form: Vec<(String, String)> = url::form_urlencoded::parse(&bytes).into_owned().collect();
    let get = |name: &str| form.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    // A form of another site (or a stale one) goes on to be refused by its handler.
    let now = m.origin.now;
    let fresh_at: Option<i64> = m.session.get(FRESH_KEY).await.map_err(session_error)?;
    let fresh = fresh_at.is_some_and(|at| now.timestamp() - at <= WINDOW.num_seconds());
    let asked = get(PASSWORD).is_some();
    if m.check(get("csrf")).is_err() || (fresh && !asked) {
        return Ok(Held::Go(Request::from_parts(parts, Body::from(bytes))));
    }
    let fields: Vec<(String, String)> = form.iter().filter(|(k, _)| k != PASSWORD && k != CODE).cloned().collect();
    let action = parts.uri.path().to_string();
    let ask = |status: StatusCode, problem: String| asking(&m, &action, &fields, status, problem);
    if !asked {
        return Ok(Held::Ask(ask(StatusCode::OK, String::new()).await));
    }
    if let Some(wait) = db::throttle::wait(&state.db, &throttle::REAUTH, &m.user.id, now).await? {
        let minutes = wait.as_secs() / 60 + 1;
        tracing::warn!(shop_id = m.shop.id, "re-authentication locked after repeated failures");
        let problem = m.words.f("Too many failed attempts. Try again in {} minutes.", &[&minutes]);
        let mut response = ask(StatusCode::TOO_MANY_REQUESTS, problem).await;
        response.headers_mut().insert(RETRY_AFTER, crate::web::error::retry_after(wait));
        return Ok(Held::Ask(response));
    }
    let password = get(PASSWORD).unwrap_or("").to_string();
    let mut right = crate::services::passwords::matches(password, m.user.password_hash.clone()).await;
    if right && m.user.totp_sealed.is_some() {
        // Codes go by the real time, as authenticator apps do.
        let typed = get(CODE).unwrap_or("");
        right = crate::services::two_step::accept(state, &m.user, typed, chrono::Utc::now()).await?;
    }
    let entry = m.audit("user.reauthenticated").on("route", route.as_str());
    if !right {
        db::throttle::fail(&state.db, &throttle::REAUTH, &m.user.id, now).await?;
        db::audit::record_alone(&state.db, &entry.ended(Outcome::Refused), now).await?;
        tracing::info!(shop_id = m.shop.id, "re-authentication refused");
        let problem = match m.user.totp_sealed {
            Some(_) => m.t("The password or the code is wrong. Nothing was changed."),
            None => m.t("The password is wrong. Nothing was changed."),
        };
        return Ok(Held::Ask(ask(StatusCode::UNPROCESSABLE_ENTITY, problem.into()).await));
    }
    db::throttle::forget(&state.db, &throttle::REAUTH, &m.user.id).await?;
    db::audit::record_alone(&state.db, &entry, now).await?;
    m.session.insert(FRESH_KEY, now.timestamp()).await.map_err(session_error)?;
    let body: String = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(&fields).finish();
    parts.headers.insert(CONTENT_LENGTH, HeaderValue::from(body.len()));
    Ok(Held::Go(Request::from_parts(parts, Body::from(Bytes::from(body)))))
}

/// The page that asks for the password (and code), holding the form's `fields` for `action`.
async fn asking(
    m: &Merchant,
    action: &str,
    fields: &[(String, String)],
    status: StatusCode,
    problem: String,
) -> Response {
    let section = if action.starts_with("/dashboard/webhooks") { "webhooks" } else { "settings" };
    let page = ReauthPage {
        chrome: m.chrome(section).await,
        action: action.to_string(),
        fields: fields.to_vec(),
        code: m.user.totp_sealed.is_some(),
        problem,
    };
    render(status, &page)
}
