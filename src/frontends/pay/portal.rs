//! The subscriber page: `/portal/{shop_id}` asks for a link by e-mail (never telling whether
//! the address is known); `/portal/links/{token}` opens the page once, with a button (a GET
//! changes nothing: mail scanners open links first); `/portal/home` lists the customer's
//! subscriptions and payments, where they cancel (now or at the end of the paid period, with
//! a reason), undo a cancel still pending, and pay what is overdue with another card.

use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::header::{ACCEPT_LANGUAGE, COOKIE, SET_COOKIE};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use chrono::Utc;

use super::form::parse_form;
use super::page::respond_page;
use super::portal_words::{PortalTexts, portal_texts, state_label};
use crate::db::entities::{payments, plans, portal_tokens, products, shops, subscriptions};
use crate::db::{self};
use crate::domain::Errors;
use crate::domain::billing::State as SubState;
use crate::domain::vocab::{IntervalUnit, Language, PaymentStatus};
use crate::services::portal::{self, Opened};
use crate::web::csrf;
use crate::web::error::AppError;
use crate::web::guard::ClientIp;
use crate::web::i18n::{Texts, texts};
use crate::web::state::AppState;

/// The session cookie.
const COOKIE_NAME: &str = "pd_portal";

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/portal/home", get(home))
        .route("/portal/{shop_id}", get(ask).post(asked))
        .route("/portal/links/{token}", get(link).post(use_link))
        .route("/portal/links/{token}/renew", post(renew))
        .route("/portal/subscriptions/{id}/cancel", post(cancel))
        .route("/portal/subscriptions/{id}/keep", post(keep))
        .route("/portal/subscriptions/{id}/card", get(card_form).post(save_card))
}

/// A form on a message page.
struct MessageForm {
    action: String,
    csrf: String,
    hidden: Vec<(String, String)>,
    /// The e-mail field: its value and error.
    email: Option<(String, Option<&'static str>)>,
    button: &'static str,
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
    });
    (page, cookie)
}

async fn ask(
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
async fn asked(
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
async fn link(
    State(state): State<AppState>,
    Path(token): Path<String>,
    headers: HeaderMap,
) -> Result<Response, AppError> {
    let now = Utc::now();
    let found = db::portal::find(&state.db, db::portal::LINK, &token).await?;
    let Some(found) = found else { return Ok(unknown(&headers)) };
    let language = Language::parse(&found.language).unwrap_or(Language::En);
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
    });
    Ok(respond(StatusCode::OK, page, cookie))
}

async fn shop_name(state: &AppState, shop_id: i64) -> Result<String, AppError> {
    Ok(crate::services::shops::find(state, shop_id).await?.map(|s| s.name.clone()).unwrap_or_default())
}

fn unknown(headers: &HeaderMap) -> Response {
    let language = language_of(&LangQuery::default(), headers);
    let w = portal_texts(language);
    respond(StatusCode::NOT_FOUND, MessagePage::new(language, "", w.unknown_title, w.unknown_body), None)
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
    });
    Ok(respond(StatusCode::GONE, page, cookie))
}

/// Opens the page: the link is used (once), and a session begins.
async fn use_link(
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
            let language = Language::parse(&found.language).unwrap_or(Language::En);
            let shop = shop_name(&state, found.shop_id).await?;
            spent(&state, &token, &found, &shop, language, &headers, now).await
        }
        Opened::Unknown => Ok(unknown(&headers)),
    }
}

/// Mails a new link to the customer a spent link was for.
async fn renew(
    State(state): State<AppState>,
    Path(token): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, AppError> {
    let sent = parse_form(&body);
    let Some(found) = db::portal::find(&state.db, db::portal::LINK, &token).await? else {
        return Ok(unknown(&headers));
    };
    let language = Language::parse(&found.language).unwrap_or(Language::En);
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
    Ok(match token {
        Some(token) => portal::session(state, &token, now).await?,
        None => None,
    })
}

fn ended(headers: &HeaderMap) -> Response {
    let language = language_of(&LangQuery::default(), headers);
    let w = portal_texts(language);
    respond(StatusCode::UNAUTHORIZED, MessagePage::new(language, "", w.ended_title, w.ended_body), None)
}

/// A subscription as its subscriber sees it.
struct SubLine {
    id: String,
    title: String,
    test: bool,
    state: &'static str,
    price: String,
    next: Option<String>,
    ends: Option<String>,
    card: Option<String>,
    /// Where to pay what is overdue (or confirm a payment the bank asked them for).
    pay_url: Option<String>,
    /// Where to type a new card (when the shop takes cards on paydesk's page).
    card_url: Option<String>,
    cancellable: bool,
    /// Whether it can end with its paid period (else only now).
    at_period_end: bool,
    keepable: bool,
}

/// A payment in the list.
struct PaymentLine {
    date: String,
    order: String,
    amount: String,
    status: &'static str,
    receipt: String,
}

#[derive(Template, WebTemplate)]
#[template(path = "pay/portal_home.html")]
struct HomePage {
    t: &'static Texts,
    w: &'static PortalTexts,
    shop_name: String,
    email: String,
    csrf: String,
    flash: Option<&'static str>,
    subscriptions: Vec<SubLine>,
    payments: Vec<PaymentLine>,
    back: Option<String>,
}

#[derive(serde::Deserialize, Default)]
struct HomeQuery {
    done: Option<String>,
}

async fn home(
    State(state): State<AppState>,
    Query(query): Query<HomeQuery>,
    headers: HeaderMap,
) -> Result<Response, AppError> {
    let now = Utc::now();
    let Some(session) = session_of(&state, &headers, now).await? else { return Ok(ended(&headers)) };
    let language = Language::parse(&session.language).unwrap_or(Language::En);
    let (t, w) = (texts(language), portal_texts(language));
    let shop = crate::services::shops::find(&state, session.shop_id).await?.ok_or(AppError::NotFound("Shop"))?;
    let customer = db::find::<crate::db::entities::customers::Entity>(&state.db, shop.id, &session.customer_id)
        .await?
        .ok_or(AppError::NotFound("Customer"))?;
    let tz = crate::services::shops::zone(&state, &shop);
    let subs = db::subscriptions::of_customer(&state.db, shop.id, &customer.id, 50).await?;
    let plan_ids: Vec<&str> = subs.iter().map(|s| s.plan_id.as_str()).collect();
    let plans = db::plans::by_ids_of_any_shop(&state.db, &plan_ids).await?;
    let mut subscriptions = Vec::new();
    for sub in &subs {
        let Some(plan) = plans.get(&sub.plan_id) else { continue };
        subscriptions.push(sub_line(&state, t, language, sub, plan, tz).await);
    }
    let paid = db::payments::of_customer(&state.db, shop.id, &customer.id, 50).await?;
    let mut payments = Vec::new();
    for p in paid.iter().filter(|p| p.status != PaymentStatus::Processing) {
        payments.push(PaymentLine {
            date: crate::web::locale::date(p.created_at, tz, language),
            order: order_of(&state, &plans, p).await?,
            amount: t.price(p.amount, p.currency),
            status: payment_status(language, p.status),
            receipt: crate::web::urls::receipt(&state.config, &p.id),
        });
    }
    let flash = match query.done.as_deref() {
        Some("canceled") => Some(w.canceled_notice),
        Some("ending") => Some(w.ending_notice),
        Some("kept") => Some(w.kept_notice),
        Some("card") => Some(w.card_notice),
        _ => None,
    };
    let (csrf, cookie) = csrf::issue(&headers, secure(&state));
    let page = HomePage {
        t,
        w,
        shop_name: shop.name.clone(),
        email: customer.email,
        csrf,
        flash,
        subscriptions,
        payments,
        back: session.return_url.clone().or_else(|| shop.url.clone()),
    };
    Ok(respond_page(StatusCode::OK, page, cookie, None, &[]))
}

async fn sub_line(
    state: &AppState,
    t: &Texts,
    language: Language,
    sub: &subscriptions::Model,
    plan: &plans::Model,
    tz: chrono_tz::Tz,
) -> SubLine {
    let when = |at| match plan.interval_unit {
        IntervalUnit::Hour => crate::web::locale::date_time(at, tz, language),
        _ => crate::web::locale::date(at, tz, language),
    };
    let next = sub.next_charge(plan).map(|(amount, at)| t.on_date(&t.price(amount, plan.currency), &when(at)));
    let open = matches!(sub.state, SubState::Trial | SubState::Active);
    let ends = match (sub.cancel_at_period_end && open, sub.active_to.or(sub.renew_at)) {
        (true, Some(at)) => Some(when(at)),
        _ => None,
    };
    let waiting = sub.state == SubState::Redirecting && sub.started_at.is_some();
    SubLine {
        id: sub.id.clone(),
        title: plan.title.clone(),
        test: sub.test,
        state: state_label(language, sub.state),
        price: format!("{} {}", t.price(plan.amount, plan.currency), t.every(plan.interval, plan.interval_unit)),
        next,
        ends,
        card: sub.card_last4.as_ref().map(|last4| {
            let brand = crate::domain::card::brand_name(sub.card_brand.as_deref().unwrap_or(""));
            format!("{brand} •••• {last4}")
        }),
        pay_url: (sub.state == SubState::FailedAttempt || waiting)
            .then(|| crate::web::urls::subscription_pay(&state.config, &sub.id)),
        card_url: (open && takes_card_here(state, sub).await).then(|| format!("/portal/subscriptions/{}/card", sub.id)),
        cancellable: !sub.state.has_ended() && !sub.cancel_at_period_end,
        at_period_end: open,
        keepable: open && sub.cancel_at_period_end,
    }
}

async fn order_of(
    state: &AppState,
    plans: &std::collections::HashMap<String, plans::Model>,
    p: &payments::Model,
) -> Result<String, AppError> {
    if let Some(plan) = p.plan_id.as_ref().and_then(|id| plans.get(id)) {
        return Ok(plan.title.clone());
    }
    Ok(match (&p.product_id, &p.plan_id) {
        (Some(id), _) => {
            db::find::<products::Entity>(&state.db, p.shop_id, id).await?.map(|p| p.name).unwrap_or_default()
        }
        (_, Some(id)) => {
            db::find::<plans::Entity>(&state.db, p.shop_id, id).await?.map(|p| p.title).unwrap_or_default()
        }
        _ => String::new(),
    })
}

fn payment_status(language: Language, status: PaymentStatus) -> &'static str {
    let ru = language == Language::Ru;
    match (status, ru) {
        (PaymentStatus::Succeeded, false) => "paid",
        (PaymentStatus::Succeeded, true) => "оплачен",
        (PaymentStatus::PartiallyRefunded, false) => "partly refunded",
        (PaymentStatus::PartiallyRefunded, true) => "частично возвращён",
        (PaymentStatus::Refunded, false) => "refunded",
        (PaymentStatus::Refunded, true) => "возвращён",
        (PaymentStatus::Authorized, false) => "held",
        (PaymentStatus::Authorized, true) => "заблокирован",
        (PaymentStatus::Voided, false) => "released",
        (PaymentStatus::Voided, true) => "разблокирован",
        (_, false) => "failed",
        (_, true) => "не прошёл",
    }
}

/// The session's subscription named in the path, after checking the form's CSRF token.
async fn acting_on(
    state: &AppState,
    headers: &HeaderMap,
    id: &str,
    sent: &std::collections::HashMap<String, String>,
) -> Result<Result<(portal_tokens::Model, subscriptions::Model), Response>, AppError> {
    let Some(session) = session_of(state, headers, Utc::now()).await? else { return Ok(Err(ended(headers))) };
    if !csrf::verify(headers, sent.get("csrf").map(String::as_str)) {
        return Ok(Err(Redirect::to("/portal/home").into_response()));
    }
    let sub = db::find::<subscriptions::Entity>(&state.db, session.shop_id, id)
        .await?
        .filter(|s| s.customer_id == session.customer_id)
        .ok_or(AppError::NotFound("Subscription"))?;
    Ok(Ok((session, sub)))
}

/// Cancels, after a confirmation: now, or at the end of the paid period.
async fn cancel(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, AppError> {
    let sent = parse_form(&body);
    let (session, sub) = match acting_on(&state, &headers, &id, &sent).await? {
        Ok(found) => found,
        Err(response) => return Ok(response),
    };
    let language = Language::parse(&session.language).unwrap_or(Language::En);
    let w = portal_texts(language);
    let at_end = sent.get("when").map(String::as_str) == Some("period_end");
    let reason = sent.get("reason").filter(|r| w.reasons.iter().any(|(v, _)| v == r && !v.is_empty())).cloned();
    if sent.get("confirm").map(String::as_str) != Some("yes") {
        let shop = shop_name(&state, session.shop_id).await?;
        let (title, body) = match at_end {
            true => {
                let tz = crate::services::shops::zone(
                    &state,
                    &*crate::services::shops::find(&state, session.shop_id).await?.ok_or(AppError::NotFound("Shop"))?,
                );
                let until = sub.active_to.or(sub.renew_at).map(|at| crate::web::locale::date(at, tz, language));
                (w.confirm_end_title, super::portal_words::fill_date(w.confirm_end_body, &until.unwrap_or_default()))
            }
            false => (w.confirm_now_title, w.confirm_now_body.to_string()),
        };
        let mut page = MessagePage::new(language, &shop, title, &body);
        let mut hidden = vec![
            ("when".to_string(), if at_end { "period_end" } else { "now" }.to_string()),
            ("confirm".to_string(), "yes".to_string()),
        ];
        hidden.extend(reason.map(|r| ("reason".to_string(), r)));
        let csrf = sent.get("csrf").cloned().unwrap_or_default();
        page.form = Some(MessageForm {
            action: format!("/portal/subscriptions/{id}/cancel"),
            csrf,
            hidden,
            email: None,
            button: w.confirm_cancel,
        });
        page.link = Some(("/portal/home".into(), w.back));
        return Ok(respond(StatusCode::OK, page, None));
    }
    let reason = reason.map(|r| format!("subscriber: {r}")).or_else(|| Some("subscriber".to_string()));
    let done = match at_end {
        true => crate::services::subscriptions::cancel_at_period_end(&state, &sub, reason).await.map(|_| "ending"),
        false => crate::services::subscriptions::cancel(&state, sub, reason).await.map(|_| "canceled"),
    };
    match done {
        Ok(done) => Ok(Redirect::to(&format!("/portal/home?done={done}")).into_response()),
        // It ended meanwhile: the page shows how it stands.
        Err(AppError::Conflict(_)) => Ok(Redirect::to("/portal/home").into_response()),
        Err(e) => Err(e),
    }
}

/// Withdraws a cancel still pending.
async fn keep(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, AppError> {
    let sent = parse_form(&body);
    let (_, sub) = match acting_on(&state, &headers, &id, &sent).await? {
        Ok(found) => found,
        Err(response) => return Ok(response),
    };
    match crate::services::subscriptions::keep(&state, &sub).await {
        Ok(()) => Ok(Redirect::to("/portal/home?done=kept").into_response()),
        Err(AppError::Conflict(_)) => Ok(Redirect::to("/portal/home").into_response()),
        Err(e) => Err(e),
    }
}

/// The form where a subscriber types a new card for a subscription in its trial or a paid
/// period (nothing is charged now); one in its retries pays what is overdue instead.
async fn card_form(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, AppError> {
    let Some(session) = session_of(&state, &headers, Utc::now()).await? else { return Ok(ended(&headers)) };
    let sub = owned(&state, &session, &id).await?;
    card_page(&state, &session, &sub, &headers, &Default::default(), &Errors::default(), StatusCode::OK).await
}

async fn owned(state: &AppState, session: &portal_tokens::Model, id: &str) -> Result<subscriptions::Model, AppError> {
    db::find::<subscriptions::Entity>(&state.db, session.shop_id, id)
        .await?
        .filter(|s| s.customer_id == session.customer_id)
        .ok_or(AppError::NotFound("Subscription"))
}

async fn card_page(
    state: &AppState,
    session: &portal_tokens::Model,
    sub: &subscriptions::Model,
    headers: &HeaderMap,
    sent: &std::collections::HashMap<String, String>,
    errors: &Errors,
    status: StatusCode,
) -> Result<Response, AppError> {
    if sub.state == SubState::FailedAttempt {
        return Ok(Redirect::to(&crate::web::urls::subscription_pay(&state.config, &sub.id)).into_response());
    }
    if !matches!(sub.state, SubState::Trial | SubState::Active) || !takes_card_here(state, sub).await {
        return Ok(Redirect::to("/portal/home").into_response());
    }
    let language = Language::parse(&session.language).unwrap_or(Language::En);
    let (t, w) = (texts(language), portal_texts(language));
    let shop = crate::services::shops::find(state, sub.shop_id).await?.ok_or(AppError::NotFound("Shop"))?;
    let plan =
        db::find::<plans::Entity>(&state.db, sub.shop_id, &sub.plan_id).await?.ok_or(AppError::NotFound("Plan"))?;
    let now = crate::services::subscriptions::now_of(state, sub).await?;
    let mut summary = super::plans::plan_summary(state, t, &plan, &shop, now);
    // Nothing is charged here: the plan's terms of a first payment do not apply.
    summary.terms.clear();
    let (csrf, cookie) = csrf::issue(headers, secure(state));
    let action = format!("/portal/subscriptions/{}/card", sub.id);
    let mut form = super::form::FormView::new(t, action, csrf, &[], sent, errors, w.save_card.to_string());
    form.card = true;
    let page = super::page::PayPage { t, summary, notice: None, form: Some(form) };
    Ok(respond_page(status, page, cookie, None, &[]))
}

/// Whether the shop takes cards on paydesk's page for the subscription's mode (a
/// processor's page takes a new card only with a payment).
async fn takes_card_here(state: &AppState, sub: &subscriptions::Model) -> bool {
    crate::services::payments::acquirer_for(state, sub.shop_id, sub.test).await.is_ok_and(|a| !a.hosted())
}

async fn save_card(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, AppError> {
    let sent = parse_form(&body);
    let Some(session) = session_of(&state, &headers, Utc::now()).await? else { return Ok(ended(&headers)) };
    let sub = owned(&state, &session, &id).await?;
    if !csrf::verify(&headers, sent.get("csrf").map(String::as_str)) {
        return card_page(&state, &session, &sub, &headers, &sent, &Errors::default(), StatusCode::FORBIDDEN).await;
    }
    let card = match crate::domain::checkout::Checkout::parse(&[], &sent, true, Utc::now()) {
        Ok(checkout) => checkout.card,
        Err(errors) => {
            return card_page(&state, &session, &sub, &headers, &sent, &errors, StatusCode::UNPROCESSABLE_ENTITY).await;
        }
    };
    let Some(card) = card else { return Ok(Redirect::to("/portal/home").into_response()) };
    let token = match crate::services::subscriptions::tokenize(&state, sub.shop_id, &card, sub.test).await {
        Ok(token) => token,
        Err(AppError::Validation(refused)) => {
            let why = refused.get("card.number").or_else(|| refused.get("card")).and_then(|m| m.first().cloned());
            let errors = Errors::one("card_number", why.unwrap_or_default());
            return card_page(&state, &session, &sub, &headers, &sent, &errors, StatusCode::UNPROCESSABLE_ENTITY).await;
        }
        Err(e) => return Err(e),
    };
    match crate::services::subscriptions::replace_card(&state, &sub, &token).await {
        Ok(()) => Ok(Redirect::to("/portal/home?done=card").into_response()),
        Err(AppError::Conflict(_)) => Ok(Redirect::to("/portal/home").into_response()),
        Err(e) => Err(e),
    }
}
