//! Developers → API keys: the shop's keys with their access and last use, which keys made the
//! last requests; making, restricting, rolling and revoking a key (each after the password
//! again, see `access::FRESH`). A key's secret is shown once, on the page that made it.

use askama::Template;
use axum::Router;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use serde_json::{Map, Value, json};

use super::form::{FormView, PostedForm};
use super::{Chrome, Merchant, Page, k, local, ok, render, see_other};
use crate::db::Page as DbPage;
use crate::db::entities::api_keys::Model;
use crate::domain::Errors;
use crate::domain::api_key::{Access, KeyFields, Permissions, Resource};
use crate::domain::input::Reader;
use crate::services::api_keys::{self as keys, is_standard};
use crate::web::error::AppError;
use crate::web::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/dashboard/api_keys", get(list).post(create))
        .route("/dashboard/api_keys/{id}", get(show).post(update))
        .route("/dashboard/api_keys/{id}/roll", post(roll))
        .route("/dashboard/api_keys/{id}/revoke", post(revoke))
}

/// How long a new key may live, as the form offers it: days (0 for no end).
const LIFETIMES: [&str; 5] = ["0", "7", "30", "90", "365"];

/// How long a rolled key goes on, as the form offers it: hours.
const OVERLAPS: [&str; 4] = ["0", "1", "24", "168"];

/// A key as the pages show it.
struct Row {
    id: String,
    name: String,
    prefix: String,
    standard: bool,
    /// `active`, `expired` or `revoked`.
    status: &'static str,
    /// Each resource given, as `payments: read`; empty for full access.
    access: Vec<String>,
    networks: String,
    expires: String,
    last_used: String,
    last_used_from: String,
    created: String,
    created_by: String,
    rolled_to: String,
}

fn row(m: &Merchant, k: &Model, now: chrono::DateTime<chrono::Utc>) -> Row {
    let status = crate::db::api_keys::status(k, now);
    let given = Permissions::from_stored(k.permissions.as_deref()).0;
    Row {
        id: k.id.clone(),
        name: k.name.clone(),
        prefix: k.prefix.clone().map(|p| format!("{p}…")).unwrap_or_else(|| "sk_…".into()),
        standard: is_standard(k, &m.shop.secret_digest),
        status,
        access: given
            .map(|g| {
                g.iter()
                    .filter(|(_, a)| *a != Access::None)
                    .map(|(r, a)| format!("{}: {}", r.as_str(), a.as_str()))
                    .collect()
            })
            .unwrap_or_default(),
        networks: k.networks.clone().unwrap_or_default(),
        expires: k.expires_at.map(|at| local(at, m.tz)).unwrap_or_default(),
        last_used: k.last_used_at.map(|at| local(at, m.tz)).unwrap_or_default(),
        last_used_from: k.last_used_from.clone().unwrap_or_default(),
        created: local(k.created_at, m.tz),
        created_by: k.created_by.clone(),
        rolled_to: k.rolled_to.clone().unwrap_or_default(),
    }
}

/// The resources a key's access is chosen for, in order.
fn resources() -> Vec<&'static str> {
    Resource::WORDS.to_vec()
}

#[derive(Template)]
#[template(path = "dashboard/api_keys/list.html")]
struct ListPage {
    chrome: Chrome,
    shop_id: i64,
    standard: Option<Row>,
    rows: Vec<Row>,
    next: Option<String>,
    recent: Vec<Row>,
    form: FormView,
    resources: Vec<&'static str>,
    lifetimes: [&'static str; 5],
}

async fn list_page(
    state: &AppState,
    m: &Merchant,
    form: FormView,
    after: Option<String>,
) -> Result<ListPage, AppError> {
    let now = state.clock.now();
    let page = DbPage { limit: 100, starting_after: after };
    let listed = crate::db::api_keys::list(&state.db, m.shop.id, &page).await?;
    let recent = crate::db::api_keys::lately_used(&state.db, m.shop.id, 5).await?;
    // The standard key is the oldest: named on every page, however many keys come first.
    let standard = crate::db::api_keys::by_digest(&state.db, &m.shop.secret_digest).await?;
    Ok(ListPage {
        chrome: m.chrome("api_keys").await,
        shop_id: m.shop.id,
        standard: standard.map(|k| row(m, &k, now)),
        rows: listed.rows.iter().map(|k| row(m, k, now)).collect(),
        next: listed.next_after.map(|after| format!("/dashboard/api_keys?after={after}")),
        recent: recent.iter().map(|k| row(m, k, now)).collect(),
        form,
        resources: resources(),
        lifetimes: LIFETIMES,
    })
}

async fn list(State(state): State<AppState>, m: Merchant, RawQuery(query): RawQuery) -> Page {
    let after = url::form_urlencoded::parse(query.unwrap_or_default().as_bytes())
        .find(|(k, v)| k == "after" && !v.is_empty())
        .map(|(_, v)| v.into_owned());
    let form = FormView::filled(vec![("access", "all".into()), ("lifetime", "0".into())]);
    ok(&list_page(&state, &m, form, after).await?)
}

/// The form as the API's request: the access chosen per resource when restricted, the
/// networks one per line (or separated by commas or spaces), a lifetime as an expiry.
fn request(form: &PostedForm, now: chrono::DateTime<chrono::Utc>, with_expiry: bool) -> Map<String, Value> {
    let mut body = Map::new();
    body.insert("name".into(), json!(form.get("name").unwrap_or_default()));
    let permissions = match form.get("access") {
        Some("restricted") => {
            let given: Map<String, Value> = Resource::WORDS
                .iter()
                .map(|r| (r.to_string(), json!(form.get(&format!("p_{r}")).unwrap_or("none"))))
                .collect();
            Value::Object(given)
        }
        _ => Value::Null,
    };
    body.insert("permissions".into(), permissions);
    let networks: Vec<Value> = form
        .get("networks")
        .unwrap_or_default()
        .split([',', ' ', '\n', '\r', '\t'])
        .filter(|n| !n.is_empty())
        .map(|n| json!(n))
        .collect();
    body.insert("networks".into(), Value::Array(networks));
    let days = form.get("lifetime").and_then(|d| d.parse::<i64>().ok()).filter(|d| (1..=365).contains(d));
    // (A lifetime the form does not offer is refused by the caller.)
    if let Some(days) = days.filter(|_| with_expiry) {
        body.insert("expires_at".into(), json!((now + chrono::Duration::days(days)).timestamp()));
    }
    body
}

#[derive(Template)]
#[template(path = "dashboard/api_keys/secret.html")]
struct SecretPage {
    chrome: Chrome,
    shop_id: i64,
    k: Row,
    secret: String,
    /// The key it succeeds, and until when that one goes on (rolls only).
    rolled: Option<(String, String)>,
}

async fn create(State(state): State<AppState>, m: Merchant, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let now = state.clock.now();
    let body = request(&form, now, true);
    let offered = LIFETIMES.contains(&form.get("lifetime").unwrap_or("0"));
    let read = KeyFields::read(&Reader::new(&body), true, now);
    let read = match (read, offered) {
        (read, true) => read,
        (Ok(_), false) => Err(Errors::one("expires_at", "is not included in the list")),
        (Err(mut errors), false) => {
            errors.add("expires_at", "is not included in the list");
            Err(errors)
        }
    };
    match read {
        Ok(fields) => {
            let made = keys::create(&state, m.shop.id, fields, &m.audit("api_key.created"), now).await?;
            let page = SecretPage {
                chrome: m.chrome("api_keys").await,
                shop_id: m.shop.id,
                k: row(&m, &made.key, now),
                secret: made.secret,
                rolled: None,
            };
            Ok(render(StatusCode::CREATED, &page))
        }
        Err(errors) => Ok(render(
            StatusCode::UNPROCESSABLE_ENTITY,
            &list_page(&state, &m, FormView::sent(&form, errors, m.words), None).await?,
        )),
    }
}

#[derive(Template)]
#[template(path = "dashboard/api_keys/show.html")]
struct ShowPage {
    chrome: Chrome,
    k: Row,
    form: FormView,
    resources: Vec<&'static str>,
    overlaps: [&'static str; 4],
    /// Which irreversible action waits for its confirmation: `revoke`, or none.
    confirm: &'static str,
}

async fn find(state: &AppState, m: &Merchant, id: &str) -> Result<Model, AppError> {
    crate::db::api_keys::find(&state.db, m.shop.id, id).await?.ok_or(AppError::NotFound("API key"))
}

/// The key's form as it stands.
fn filled(k: &Model) -> FormView {
    let mut values = vec![
        ("name".to_string(), k.name.clone()),
        ("networks".to_string(), k.networks.clone().unwrap_or_default().replace(' ', "\n")),
        ("overlap".to_string(), "24".to_string()),
    ];
    match Permissions::from_stored(k.permissions.as_deref()).0 {
        None => values.push(("access".into(), "all".into())),
        Some(given) => {
            values.push(("access".into(), "restricted".into()));
            values.extend(given.iter().map(|(r, a)| (format!("p_{}", r.as_str()), a.as_str().to_string())));
        }
    }
    FormView { values, ..Default::default() }
}

async fn show_page(
    state: &AppState,
    m: &Merchant,
    k: &Model,
    form: Option<FormView>,
    confirm: &'static str,
) -> Result<ShowPage, AppError> {
    Ok(ShowPage {
        chrome: m.chrome("api_keys").await,
        k: row(m, k, state.clock.now()),
        form: form.unwrap_or_else(|| filled(k)),
        resources: resources(),
        overlaps: OVERLAPS,
        confirm,
    })
}

async fn show(State(state): State<AppState>, m: Merchant, Path(id): Path<String>) -> Page {
    let k = find(&state, &m, &id).await?;
    ok(&show_page(&state, &m, &k, None, "").await?)
}

async fn update(State(state): State<AppState>, m: Merchant, Path(id): Path<String>, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let k = find(&state, &m, &id).await?;
    let now = state.clock.now();
    let mut body = request(&form, now, false);
    if is_standard(&k, &m.shop.secret_digest) {
        body.remove("permissions");
    }
    match KeyFields::read(&Reader::new(&body), false, now) {
        Ok(fields) => {
            match keys::update(&state, (m.shop.id, &id), fields, &m.audit("api_key.updated"), now).await? {
                Ok(_) => m.flash(m.t("The key was saved.")).await,
                Err(refused) => m.flash(m.t(refusal(&refused))).await,
            }
            see_other(&format!("/dashboard/api_keys/{id}"))
        }
        Err(errors) => {
            let page = show_page(&state, &m, &k, Some(FormView::sent(&form, errors, m.words)), "").await?;
            Ok(render(StatusCode::UNPROCESSABLE_ENTITY, &page))
        }
    }
}

async fn roll(State(state): State<AppState>, m: Merchant, Path(id): Path<String>, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let k = find(&state, &m, &id).await?;
    let now = state.clock.now();
    let hours = form.get("overlap").filter(|h| OVERLAPS.contains(h)).and_then(|h| h.parse::<i64>().ok());
    let Some(hours) = hours else {
        let mut refilled = filled(&k);
        refilled.errors = Errors::one("overlap", "is not included in the list");
        refilled.words = m.words;
        let page = show_page(&state, &m, &k, Some(refilled), "").await?;
        return Ok(render(StatusCode::UNPROCESSABLE_ENTITY, &page));
    };
    let until = now + chrono::Duration::hours(hours);
    match keys::roll(&state, (m.shop.id, &id), until, &m.audit("api_key.rolled"), now).await? {
        Ok((old, made)) => {
            let page = SecretPage {
                chrome: m.chrome("api_keys").await,
                shop_id: m.shop.id,
                k: row(&m, &made.key, now),
                secret: made.secret,
                rolled: Some((old.name.clone(), old.expires_at.map(|at| local(at, m.tz)).unwrap_or_default())),
            };
            Ok(render(StatusCode::CREATED, &page))
        }
        Err(refused) => {
            m.flash(m.t(refusal(&refused))).await;
            see_other(&format!("/dashboard/api_keys/{id}"))
        }
    }
}

async fn revoke(State(state): State<AppState>, m: Merchant, Path(id): Path<String>, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let k = find(&state, &m, &id).await?;
    if form.get("confirm") != Some("yes") {
        return ok(&show_page(&state, &m, &k, None, "revoke").await?);
    }
    let now = state.clock.now();
    match keys::revoke(&state, (m.shop.id, &id), &m.audit("api_key.revoked"), now).await? {
        Ok(_) => {
            m.flash(&m.f("The key {} was revoked: it no longer works.", &[&k.name])).await;
            see_other("/dashboard/api_keys")
        }
        Err(refused) => {
            m.flash(m.t(refusal(&refused))).await;
            see_other(&format!("/dashboard/api_keys/{id}"))
        }
    }
}

/// Why a change of a key was not made, as the dashboard says it.
fn refusal(refused: &keys::Refused) -> &'static str {
    match refused {
        keys::Refused::Gone => k("This key no longer works: it was revoked or it expired."),
        keys::Refused::Rolled(_) => k("This key was rolled already: roll its successor instead."),
        keys::Refused::Standard => {
            k("This is the standard key, which the shop's notifications carry: it can only be rolled.")
        }
    }
}
