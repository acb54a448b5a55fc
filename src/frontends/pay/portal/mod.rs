//! The subscriber page: `/portal/{shop_id}` asks for a link by e-mail (never telling whether
//! the address is known); `/portal/links/{token}` opens the page once, with a button (a GET
//! changes nothing: mail scanners open links first); `/portal/home` lists the customer's
//! subscriptions and payments, where they cancel (now or at the end of the paid period, with
//! a reason), undo a cancel still pending, save a new card, and pay what is overdue with
//! another card. This file holds what the pages share: the session, the message page.

mod actions;
mod home;
mod links;
mod words;

use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::http::header::{ACCEPT_LANGUAGE, COOKIE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use chrono::Utc;

use self::words::{PortalTexts, portal_texts};
use super::page::respond_page;
use crate::db::entities::{portal_tokens, subscriptions};
use crate::db::{self};
use crate::domain::vocab::Language;
use crate::services::portal::{self};
use crate::web::error::AppError;
use crate::web::i18n::{Texts, texts};
use crate::web::state::AppState;

/// The session cookie.
const COOKIE_NAME: &str = "pd_portal";

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/portal/home", get(home::home))
        .route("/portal/{shop_id}", get(links::ask).post(links::asked))
        .route("/portal/links/{token}", get(links::link).post(links::use_link))
        .route("/portal/links/{token}/renew", post(links::renew))
        .route("/portal/subscriptions/{id}/cancel", post(actions::cancel))
        .route("/portal/subscriptions/{id}/keep", post(actions::keep))
        .route("/portal/subscriptions/{id}/pause", post(actions::pause))
        .route("/portal/subscriptions/{id}/resume", post(actions::resume))
        .route("/portal/subscriptions/{id}/card", get(actions::card_form).post(actions::save_card))
}

/// A form on a message page.
struct MessageForm {
    action: String,
    csrf: String,
    hidden: Vec<(String, String)>,
    /// The e-mail field: its value and error.
    email: Option<(String, Option<&'static str>)>,
    button: &'static str,
    /// The button does what cannot be undone (a cancel): it looks so.
    danger: bool,
}

#[derive(Template, WebTemplate)]
#[template(path = "pay/portal_message.html")]
struct MessagePage {
    t: &'static Texts,
    w: &'static PortalTexts,
    shop_name: String,
    title: &'static str,
    body: Vec<String>,
    form: Option<MessageForm>,
    link: Option<(String, &'static str)>,
}

impl MessagePage {
    fn new(language: Language, shop_name: &str, title: &'static str, body: &str) -> MessagePage {
        MessagePage {
            t: texts(language),
            w: portal_texts(language),
            shop_name: shop_name.to_string(),
            title,
            body: vec![body.to_string()],
            form: None,
            link: None,
        }
    }
}

/// A page of the portal, never cached, with the CSRF cookie when new.
fn respond(status: StatusCode, page: impl IntoResponse, cookie: Option<HeaderValue>) -> Response {
    respond_page(status, page, cookie, None, &[])
}

fn secure(state: &AppState) -> bool {
    state.config.base_url.starts_with("https://")
}

/// The language asked for (`?lang=ru`), else the browser's first of ours, else English.
fn language_of(query: &LangQuery, headers: &HeaderMap) -> Language {
    if let Some(asked) = query.lang.as_deref().and_then(Language::parse) {
        return asked;
    }
    let accepted = headers.get(ACCEPT_LANGUAGE).and_then(|v| v.to_str().ok()).unwrap_or("");
    match accepted.split(',').next().map(|l| l.trim().to_ascii_lowercase()) {
        Some(l) if l.starts_with("ru") => Language::Ru,
        _ => Language::En,
    }
}

#[derive(serde::Deserialize, Default)]
struct LangQuery {
    lang: Option<String>,
}

async fn shop_name(state: &AppState, shop_id: i64) -> Result<String, AppError> {
    Ok(crate::services::shops::find(state, shop_id).await?.map(|s| s.name.clone()).unwrap_or_default())
}

fn unknown(headers: &HeaderMap) -> Response {
    let language = language_of(&LangQuery::default(), headers);
    let w = portal_texts(language);
    respond(StatusCode::NOT_FOUND, MessagePage::new(language, "", w.unknown_title, w.unknown_body), None)
}

/// The browser's live session, if any.
async fn session_of(
    state: &AppState,
    headers: &HeaderMap,
    now: chrono::DateTime<Utc>,
) -> Result<Option<portal_tokens::Model>, AppError> {
    let token = headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().strip_prefix(COOKIE_NAME)?.strip_prefix('=').map(str::to_string))
        .next();
    let session = match token {
        Some(token) => portal::session(state, &token, now).await?,
        None => None,
    };
    if let Some(session) = &session {
        db::audit::acting::act_as(crate::domain::audit::Actor::subscriber(&session.customer_id));
    }
    Ok(session)
}

fn ended(headers: &HeaderMap) -> Response {
    let language = language_of(&LangQuery::default(), headers);
    let w = portal_texts(language);
    respond(StatusCode::UNAUTHORIZED, MessagePage::new(language, "", w.ended_title, w.ended_body), None)
}

async fn owned(state: &AppState, session: &portal_tokens::Model, id: &str) -> Result<subscriptions::Model, AppError> {
    db::find::<subscriptions::Entity>(&state.db, session.shop_id, id)
        .await?
        .filter(|s| s.customer_id == session.customer_id)
        .ok_or(AppError::NotFound("Subscription"))
}
