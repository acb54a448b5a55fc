//! Getting in: asking for a link by e-mail, opening a link (once, with a button), and a new
//! link for one that was used or expired.

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::header::SET_COOKIE;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use chrono::Utc;

use super::super::form::parse_form;
use super::words::portal_texts;
use super::{
    COOKIE_NAME, LangQuery, MessageForm, MessagePage, language_of, respond, secure, session_of, shop_name, unknown,
};
use crate::db::entities::{portal_tokens, shops};
use crate::db::{self};
use crate::domain::vocab::Language;
use crate::services::portal::{self, Opened};
use crate::web::csrf;
use crate::web::error::AppError;
use crate::web::guard::ClientIp;
use crate::web::state::AppState;

async fn shop_of(state: &AppState, shop_id: &str) -> Result<std::sync::Arc<shops::Model>, AppError> {
    let id: i64 = shop_id.parse().map_err(|_| AppError::NotFound("Shop"))?;
    crate::services::shops::find(state, id).await?.ok_or(AppError::NotFound("Shop"))
}

fn ask_page(
    state: &AppState,
    shop: &shops::Model,
    language: Language,
    headers: &HeaderMap,
    email: (String, Option<&'static str>),
) -> (MessagePage, Option<HeaderValue>) {
    let w = portal_texts(language);
    let (csrf, cookie) = csrf::issue(headers, secure(state));
    let mut page = MessagePage::new(language, &shop.name, w.ask_title, w.ask_body);
    page.form = Some(MessageForm {
        action: format!("/portal/{}", shop.id),
        csrf,
        hidden: vec![("lang".into(), language.as_str().into())],
        email: Some(email),
        button: w.send_link,
        danger: false,
    });
    (page, cookie)
}

pub(super) async fn ask(
    State(state): State<AppState>,
    Path(shop_id): Path<String>,
    Query(query): Query<LangQuery>,
    headers: HeaderMap,
) -> Result<Response, AppError> {
    let shop = shop_of(&state, &shop_id).await?;
    let language = language_of(&query, &headers);
    let (page, cookie) = ask_page(&state, &shop, language, &headers, (String::new(), None));
    Ok(respond(StatusCode::OK, page, cookie))
}

/// Mails a link to the address if it is a customer's; the answer is the same either way.
pub(super) async fn asked(
    State(state): State<AppState>,
    Path(shop_id): Path<String>,
    ClientIp(client): ClientIp,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, AppError> {
    let shop = shop_of(&state, &shop_id).await?;
    let sent = parse_form(&body);
    let lang = LangQuery { lang: sent.get("lang").cloned() };
    let language = language_of(&lang, &headers);
    let w = portal_texts(language);
    if !csrf::verify(&headers, sent.get("csrf").map(String::as_str)) {
        let (page, cookie) = ask_page(&state, &shop, language, &headers, (String::new(), None));
        return Ok(respond(StatusCode::FORBIDDEN, page, cookie));
    }
    let email = sent.get("email").map(|e| e.trim().to_string()).unwrap_or_default();
    if !crate::domain::mail::is_address(&email) {
        let (page, cookie) = ask_page(&state, &shop, language, &headers, (email, Some(w.bad_email)));
        return Ok(respond(StatusCode::UNPROCESSABLE_ENTITY, page, cookie));
    }
    portal::request(&state, shop.id, &email, &client.to_string(), language, Utc::now()).await?;
    Ok(respond(StatusCode::OK, MessagePage::new(language, &shop.name, w.sent_title, w.sent_body), None))
}

/// The link's page: a button that opens the page, or why it cannot.
pub(super) async fn link(
    State(state): State<AppState>,
    Path(token): Path<String>,
    headers: HeaderMap,
) -> Result<Response, AppError> {
    let now = Utc::now();
    let found = db::portal::find(&state.db, crate::domain::vocab::PortalTokenKind::Link, &token).await?;
    let Some(found) = found else { return Ok(unknown(&headers)) };
    let language = found.language;
    let w = portal_texts(language);
    let shop = shop_name(&state, found.shop_id).await?;
    if found.used_at.is_some() || found.expires_at <= now {
        return spent(&state, &token, &found, &shop, language, &headers, now).await;
    }
    let (csrf, cookie) = csrf::issue(&headers, secure(&state));
    let mut page = MessagePage::new(language, &shop, w.continue_title, w.continue_body);
    page.form = Some(MessageForm {
        action: format!("/portal/links/{token}"),
        csrf,
        hidden: Vec::new(),
        email: None,
        button: w.continue_button,
        danger: false,
    });
    Ok(respond(StatusCode::OK, page, cookie))
}

/// A link used before or expired: it says so, offers a new link to the same address, and
/// leads to the page if this browser's session of the same customer is still open.
async fn spent(
    state: &AppState,
    token: &str,
    found: &portal_tokens::Model,
    shop: &str,
    language: Language,
    headers: &HeaderMap,
    now: chrono::DateTime<Utc>,
) -> Result<Response, AppError> {
    let w = portal_texts(language);
    let (title, body) = match found.used_at {
        Some(_) => (w.used_title, w.used_body),
        None => (w.expired_title, w.expired_body),
    };
    let mut page = MessagePage::new(language, shop, title, body);
    let session = session_of(state, headers, now).await?;
    if session.is_some_and(|s| s.customer_id == found.customer_id && s.shop_id == found.shop_id) {
        page.link = Some(("/portal/home".into(), w.open_page));
    }
    let (csrf, cookie) = csrf::issue(headers, secure(state));
    page.form = Some(MessageForm {
        action: format!("/portal/links/{token}/renew"),
        csrf,
        hidden: Vec::new(),
        email: None,
        button: w.new_link,
        danger: false,
    });
    Ok(respond(StatusCode::GONE, page, cookie))
}

/// Opens the page: the link is used (once), and a session begins.
pub(super) async fn use_link(
    State(state): State<AppState>,
    Path(token): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, AppError> {
    let sent = parse_form(&body);
    if !csrf::verify(&headers, sent.get("csrf").map(String::as_str)) {
        // A stale form: its page again, with a fresh token.
        return link(State(state), Path(token), headers).await;
    }
    let now = Utc::now();
    match portal::open(&state, &token, now).await? {
        Opened::Session(session, _) => {
            let secure = if secure(&state) { "; Secure" } else { "" };
            let max_age = portal::SESSION_LIFE.num_seconds();
            let cookie =
                format!("{COOKIE_NAME}={session}; Path=/portal; HttpOnly; SameSite=Lax; Max-Age={max_age}{secure}");
            let mut response = Redirect::to("/portal/home").into_response();
            if let Ok(value) = HeaderValue::from_str(&cookie) {
                response.headers_mut().append(SET_COOKIE, value);
            }
            Ok(response)
        }
        Opened::Used(found) | Opened::Expired(found) => {
            let language = found.language;
            let shop = shop_name(&state, found.shop_id).await?;
            spent(&state, &token, &found, &shop, language, &headers, now).await
        }
        Opened::Unknown => Ok(unknown(&headers)),
    }
}

/// Mails a new link to the customer a spent link was for.
pub(super) async fn renew(
    State(state): State<AppState>,
    Path(token): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, AppError> {
    let sent = parse_form(&body);
    let Some(found) = db::portal::find(&state.db, crate::domain::vocab::PortalTokenKind::Link, &token).await? else {
        return Ok(unknown(&headers));
    };
    let language = found.language;
    let w = portal_texts(language);
    let shop = shop_name(&state, found.shop_id).await?;
    if !csrf::verify(&headers, sent.get("csrf").map(String::as_str)) {
        return link(State(state), Path(token), headers).await;
    }
    let customer =
        db::find::<crate::db::entities::customers::Entity>(&state.db, found.shop_id, &found.customer_id).await?;
    if let Some(customer) = customer
        && state.mailer.is_some()
    {
        let key = format!("{}|{}", found.shop_id, customer.email.to_lowercase());
        let now = Utc::now();
        if db::throttle::wait(&state.db, &crate::domain::throttle::PORTAL_LINKS, &key, now).await?.is_none() {
            db::throttle::fail(&state.db, &crate::domain::throttle::PORTAL_LINKS, &key, now).await?;
            portal::send_link(&state, &customer, language, now).await?;
        }
    }
    Ok(respond(StatusCode::OK, MessagePage::new(language, &shop, w.resent_title, w.resent_body), None))
}
