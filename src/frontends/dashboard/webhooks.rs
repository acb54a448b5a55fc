//! Webhooks in the dashboard: the shop's endpoints, each with its events, its recent
//! deliveries and their attempts; adding, editing, disabling, rotating a secret and deleting
//! (the last two after a confirmation), and sending a delivery's event again.

use askama::Template;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use chrono::Utc;
use serde_json::Value;

use super::form::{FormView, PostedForm};
use super::{Chrome, Merchant, Page, k, local, ok, render, see_other};
use crate::db::entities::{webhook_attempts, webhook_deliveries, webhook_endpoints as endpoints};
use crate::db::{self, Page as DbPage};
use crate::domain::event::EventType;
use crate::domain::input::Reader;
use crate::domain::webhook::{EnabledEvents, EndpointFields};
use crate::web::error::AppError;
use crate::web::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/dashboard/webhooks", get(list).post(create))
        .route("/dashboard/webhooks/{id}", get(show).post(update))
        .route("/dashboard/webhooks/{id}/rotate", post(rotate))
        .route("/dashboard/webhooks/{id}/delete", post(delete))
        .route("/dashboard/webhooks/{id}/redeliver", post(redeliver))
}

/// The choices of the events field: `*`, each object's `object.*`, then each type.
fn event_choices() -> Vec<String> {
    let mut choices = vec!["*".to_string()];
    for t in EventType::ALL {
        let all_of = format!("{}.*", t.object());
        if !choices.contains(&all_of) {
            choices.push(all_of);
        }
    }
    choices.extend(EventType::WORDS.iter().map(|w| w.to_string()));
    choices
}

/// An endpoint in the list.
struct Row {
    id: String,
    url: String,
    events: String,
    enabled: bool,
    disabled_reason: String,
}

fn row(e: &endpoints::Model) -> Row {
    Row {
        id: e.id.clone(),
        url: e.url.clone(),
        events: EnabledEvents::from_db(&e.enabled_events).entries().join(", "),
        enabled: e.enabled,
        disabled_reason: e.disabled_reason.clone().unwrap_or_default(),
    }
}

#[derive(Template)]
#[template(path = "dashboard/webhooks/list.html")]
struct ListPage {
    chrome: Chrome,
    rows: Vec<Row>,
    form: FormView,
    choices: Vec<String>,
    deliveries: Vec<DeliveryRow>,
}

async fn list_page(state: &AppState, m: &Merchant, form: FormView) -> Result<ListPage, AppError> {
    let page = DbPage { limit: 100, starting_after: None };
    let listed = db::list::<endpoints::Entity>(&state.db, m.shop.id, &page).await?;
    let deliveries = deliveries(state, m, None).await?;
    Ok(ListPage {
        chrome: m.chrome("webhooks").await,
        rows: listed.rows.iter().map(row).collect(),
        form,
        choices: event_choices(),
        deliveries,
    })
}

async fn list(State(state): State<AppState>, m: Merchant) -> Page {
    let form = FormView::filled(vec![("enabled_events", "*".into())]);
    ok(&list_page(&state, &m, form).await?)
}

/// The form as the API's request: the ticked events as a list.
fn request(form: &PostedForm) -> serde_json::Map<String, Value> {
    form.to_json(&["enabled"], &["enabled_events"])
}

#[derive(Template)]
#[template(path = "dashboard/webhooks/secret.html")]
struct SecretPage {
    chrome: Chrome,
    id: String,
    url: String,
    secret: String,
    rotated: bool,
}

async fn create(State(state): State<AppState>, m: Merchant, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let mut body = request(&form);
    body.remove("enabled");
    match EndpointFields::read(&Reader::new(&body), true, state.config.webhooks_allow_private) {
        Ok(fields) => {
            let audit = m.audit("webhook_endpoint.created");
            let (endpoint, secret) =
                crate::services::webhooks::create_endpoint(&state, m.shop.id, &fields, &audit, Utc::now()).await?;
            let page = SecretPage {
                chrome: m.chrome("webhooks").await,
                id: endpoint.id,
                url: endpoint.url,
                secret,
                rotated: false,
            };
            Ok(render(StatusCode::CREATED, &page))
        }
        Err(errors) => Ok(render(
            StatusCode::UNPROCESSABLE_ENTITY,
            &list_page(&state, &m, FormView::sent(&form, errors, m.words)).await?,
        )),
    }
}

/// A delivery in a table, with its last attempt.
struct DeliveryRow {
    id: String,
    event_id: String,
    url: String,
    status: String,
    attempts: i32,
    /// How the last attempt ended (`HTTP 200`, why it failed), or that none was made yet.
    outcome: String,
    /// Whether `outcome` is the HTTP client's own English, untranslated.
    outcome_english: bool,
    /// The HTTP client's own English under a translated `outcome`, for whoever debugs it.
    detail: String,
    /// How long the last attempt took, and when.
    took: String,
    next: String,
    created: String,
}

async fn deliveries(state: &AppState, m: &Merchant, endpoint_id: Option<&str>) -> Result<Vec<DeliveryRow>, AppError> {
    let page = DbPage { limit: 20, starting_after: None };
    let listed = db::webhooks::list_deliveries(&state.db, m.shop.id, &page, endpoint_id, None).await?;
    let ids: Vec<&str> = listed.rows.iter().map(|d| d.id.as_str()).collect();
    let attempts = db::webhooks::attempts_of(&state.db, &ids, 200).await?;
    Ok(listed.rows.iter().map(|d| delivery_row(d, &attempts, m)).collect())
}

/// What kind of failure an HTTP client's error is, in words a merchant reads (the error
/// itself is shown beneath, as it is).
fn failure_kind(error: &str) -> Option<&'static str> {
    let error = error.to_lowercase();
    let kinds = [
        ("no public address", k("the address is not public: webhooks go to the internet only")),
        ("dns error", k("the host name was not found (DNS)")),
        ("connection refused", k("the connection was refused")),
        ("certificate", k("its TLS certificate was not accepted")),
        ("tls", k("the TLS connection failed")),
        ("connection reset", k("the connection was cut")),
        ("connect", k("no connection could be made")),
    ];
    kinds.iter().find(|(marker, _)| error.contains(marker)).map(|(_, kind)| *kind)
}

fn delivery_row(d: &webhook_deliveries::Model, attempts: &[webhook_attempts::Model], m: &Merchant) -> DeliveryRow {
    let last = attempts.iter().find(|a| a.delivery_id == d.id);
    let (outcome, outcome_english, detail) = match last.map(|a| (a.status_code, &a.error)) {
        Some((Some(code), _)) => (format!("HTTP {code}"), false, String::new()),
        Some((None, Some(error))) => match (m.words.rule(error), failure_kind(error)) {
            (said, _) if said != *error => (said, false, String::new()),
            (_, Some(kind)) => (m.t(kind).into(), false, error.clone()),
            (said, None) => (said, m.words != super::Words::En, String::new()),
        },
        Some((None, None)) => (m.t("no answer").into(), false, String::new()),
        None => (m.t("not tried yet").into(), false, String::new()),
    };
    let took = last.map(|a| m.f("in {} ms, {}", &[&a.latency_ms, &local(a.at, m.tz)])).unwrap_or_default();
    DeliveryRow {
        id: d.id.clone(),
        event_id: d.event_id.clone(),
        url: d.url.clone(),
        status: d.status.to_string(),
        attempts: d.attempts,
        outcome,
        outcome_english,
        detail,
        took,
        next: match d.status {
            crate::domain::webhook::DeliveryStatus::Pending => local(d.next_attempt_at, m.tz),
            _ => String::new(),
        },
        created: local(d.created_at, m.tz),
    }
}

#[derive(Template)]
#[template(path = "dashboard/webhooks/show.html")]
struct ShowPage {
    chrome: Chrome,
    e: Row,
    form: FormView,
    choices: Vec<String>,
    deliveries: Vec<DeliveryRow>,
    /// Which irreversible action waits for its confirmation: `rotate` or `delete`.
    confirm: &'static str,
}

async fn find(state: &AppState, m: &Merchant, id: &str) -> Result<endpoints::Model, AppError> {
    db::find::<endpoints::Entity>(&state.db, m.shop.id, id).await?.ok_or(AppError::NotFound("Webhook endpoint"))
}

fn filled(e: &endpoints::Model) -> FormView {
    let mut values = vec![("url", e.url.clone()), ("description", e.description.clone().unwrap_or_default())];
    if e.enabled {
        values.push(("enabled", "true".into()));
    }
    let events = EnabledEvents::from_db(&e.enabled_events);
    values.extend(events.entries().iter().map(|entry| ("enabled_events", entry.clone())));
    FormView::filled(values)
}

async fn show_page(
    state: &AppState,
    m: &Merchant,
    e: endpoints::Model,
    form: Option<FormView>,
    confirm: &'static str,
) -> Result<ShowPage, AppError> {
    Ok(ShowPage {
        chrome: m.chrome("webhooks").await,
        form: form.unwrap_or_else(|| filled(&e)),
        choices: event_choices(),
        deliveries: deliveries(state, m, Some(&e.id)).await?,
        e: row(&e),
        confirm,
    })
}

async fn show(State(state): State<AppState>, m: Merchant, Path(id): Path<String>) -> Page {
    let e = find(&state, &m, &id).await?;
    ok(&show_page(&state, &m, e, None, "").await?)
}

async fn update(State(state): State<AppState>, m: Merchant, Path(id): Path<String>, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let e = find(&state, &m, &id).await?;
    let body = request(&form);
    match EndpointFields::read(&Reader::new(&body), false, state.config.webhooks_allow_private) {
        Ok(fields) => {
            let audit = m.audit("webhook_endpoint.updated");
            db::webhooks::update_endpoint(&state.db, e, &fields, &audit, Utc::now()).await?;
            m.flash(m.t("The endpoint was saved.")).await;
            see_other(&format!("/dashboard/webhooks/{id}"))
        }
        Err(errors) => {
            let page = show_page(&state, &m, e, Some(FormView::sent(&form, errors, m.words)), "").await?;
            Ok(render(StatusCode::UNPROCESSABLE_ENTITY, &page))
        }
    }
}

async fn rotate(State(state): State<AppState>, m: Merchant, Path(id): Path<String>, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let e = find(&state, &m, &id).await?;
    if form.get("confirm") != Some("yes") {
        return ok(&show_page(&state, &m, e, None, "rotate").await?);
    }
    let audit = m.audit("webhook_endpoint.secret_rotated");
    let (e, secret) = crate::services::webhooks::rotate_secret(&state, e, &audit, Utc::now()).await?;
    ok(&SecretPage { chrome: m.chrome("webhooks").await, id: e.id, url: e.url, secret, rotated: true })
}

async fn delete(State(state): State<AppState>, m: Merchant, Path(id): Path<String>, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let e = find(&state, &m, &id).await?;
    if form.get("confirm") != Some("yes") {
        return ok(&show_page(&state, &m, e, None, "delete").await?);
    }
    db::webhooks::delete_endpoint(&state.db, &e, &m.audit("webhook_endpoint.deleted"), Utc::now()).await?;
    m.flash(&m.f("The endpoint {} was deleted.", &[&e.url])).await;
    see_other("/dashboard/webhooks")
}

/// Sends a delivery's event again (to its endpoint, or as a notification to its targets).
async fn redeliver(State(state): State<AppState>, m: Merchant, Path(id): Path<String>, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let delivery = db::find::<webhook_deliveries::Entity>(&state.db, m.shop.id, &id)
        .await?
        .ok_or(AppError::NotFound("Delivery"))?;
    let endpoint = match &delivery.endpoint_id {
        Some(endpoint_id) => db::find::<endpoints::Entity>(&state.db, m.shop.id, endpoint_id).await?,
        None => None,
    };
    let count = crate::services::webhooks::redeliver(&state, m.shop.id, &delivery.event_id, endpoint.as_ref()).await?;
    let sent = m.words.n(i64::try_from(count).unwrap_or(i64::MAX), "{} delivery|{} deliveries");
    m.flash(&m.f("The event {} is being sent again ({}).", &[&delivery.event_id, &sent])).await;
    let back = match &delivery.endpoint_id {
        Some(endpoint_id) => format!("/dashboard/webhooks/{endpoint_id}"),
        None => "/dashboard/webhooks".into(),
    };
    see_other(&back)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_http_clients_error_is_named_by_its_kind() {
        let dns = "client error (Connect): dns error: failed to lookup address information: Name or service not known";
        assert_eq!(failure_kind(dns), Some("the host name was not found (DNS)"));
        assert_eq!(
            failure_kind("client error (Connect): tcp connect error: Connection refused (os error 111)"),
            Some("the connection was refused")
        );
        assert_eq!(failure_kind("something else"), None);
        assert_eq!(super::super::Words::Ru.t(failure_kind(dns).unwrap()), "адрес не найден (DNS)");
    }
}
