//! A user's own sessions: where and when each signed in and was last used, signing one out,
//! or every one; and the owner's setting of how long the shop's sessions live unused.

use askama::Template;
use axum::Router;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Redirect};
use axum::routing::{get, post};

use super::form::PostedForm;
use super::merchant::session_error;
use super::{Chrome, Merchant, Page, Words, local, ok, see_other};
use crate::db;
use crate::domain::audit::Change;
use crate::domain::session::{IDLE_MINUTES, PCI_IDLE_MINUTES, device, ended, idle_minutes};
use crate::web::error::AppError;
use crate::web::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/dashboard/sessions", get(page))
        .route("/dashboard/sessions/{handle}/end", post(end_one))
        .route("/dashboard/sessions/end-all", post(end_all))
        .route("/dashboard/settings/sessions", post(idle))
}

/// One session as its list shows it.
struct Row {
    /// What names the session in forms: a digest of its id, never the id itself.
    handle: String,
    device: String,
    address: String,
    signed_in: String,
    seen: String,
    current: bool,
}

#[derive(Template)]
#[template(path = "dashboard/sessions.html")]
struct SessionsPage {
    chrome: Chrome,
    rows: Vec<Row>,
    /// The shop's idle time as its setting reads: `15 minutes`, `8 hours`.
    idle: String,
}

/// What names a session in its list.
fn handle(id: &str) -> String {
    use sha2::{Digest, Sha256};
    crate::domain::ids::hex(&Sha256::digest(id.as_bytes())[..12])
}

/// The user's sessions still alive by the shop's rules, this one first.
async fn alive(state: &AppState, m: &Merchant) -> Result<Vec<(String, Row)>, AppError> {
    let current = m.session.id().map(|id| id.to_string());
    let now = m.origin.now;
    let mut rows: Vec<(String, Row)> = db::sessions::of_user(&state.db, &m.user.id)
        .await?
        .into_iter()
        .filter_map(|s| {
            let (signed_in, seen) = (s.signed_in_at?, s.seen_at?);
            let alive = ended(signed_in, seen, m.shop.session_idle_minutes, now).is_none();
            let current = current.as_deref() == Some(s.id.as_str());
            let device = s.user_agent.as_deref().and_then(device).unwrap_or_else(|| m.t("Unknown browser").into());
            let row = Row {
                handle: handle(&s.id),
                device,
                address: s.address.unwrap_or_default(),
                signed_in: local(signed_in, m.tz),
                seen: local(seen, m.tz),
                current,
            };
            (alive || current).then_some((s.id, row))
        })
        .collect();
    rows.sort_by_key(|(_, r)| !r.current);
    Ok(rows)
}

async fn page(State(state): State<AppState>, m: Merchant) -> Page {
    let rows = alive(&state, &m).await?.into_iter().map(|(_, row)| row).collect();
    let idle = idle_label(m.words, m.shop.session_idle_minutes);
    ok(&SessionsPage { chrome: m.chrome("settings").await, rows, idle })
}

/// Signs one of the user's sessions out (this one too, if named).
async fn end_one(State(state): State<AppState>, m: Merchant, Path(named): Path<String>, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let current = m.session.id().map(|id| id.to_string());
    let ids: Vec<String> = db::sessions::of_user(&state.db, &m.user.id)
        .await?
        .into_iter()
        .map(|s| s.id)
        .filter(|id| handle(id) == named)
        .collect();
    let this_one = current.is_some_and(|c| ids.contains(&c));
    if db::sessions::end(&state.db, &m.user.id, ids).await? == 0 {
        m.flash(m.t("That session had already ended.")).await;
        return see_other("/dashboard/sessions");
    }
    tracing::info!(shop_id = m.shop.id, "a dashboard session was signed out by its user");
    let entry = m.audit("session.ended").changing(vec![Change::of("reason", None::<String>, "signed out by its user")]);
    db::audit::record_alone(&state.db, &entry, m.origin.now).await?;
    if this_one {
        m.session.flush().await.map_err(session_error)?;
        return Ok(Redirect::to("/dashboard/login").into_response());
    }
    m.flash(m.t("That session is signed out.")).await;
    see_other("/dashboard/sessions")
}

/// Signs every session of the user out, this one included.
async fn end_all(State(state): State<AppState>, m: Merchant, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let ids = db::sessions::of_user(&state.db, &m.user.id).await?.into_iter().map(|s| s.id).collect();
    let ended = db::sessions::end(&state.db, &m.user.id, ids).await?;
    let entry = m.audit("session.ended").changing(vec![
        Change::of("reason", None::<String>, "signed out everywhere"),
        Change::of("sessions", None::<u64>, ended),
    ]);
    db::audit::record_alone(&state.db, &entry, m.origin.now).await?;
    m.session.flush().await.map_err(session_error)?;
    tracing::info!(shop_id = m.shop.id, "every dashboard session of a user was signed out");
    Ok(Redirect::to("/dashboard/login").into_response())
}

/// The owner's setting: how many minutes the shop's sessions live unused.
async fn idle(State(state): State<AppState>, m: Merchant, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let Some(minutes) = idle_minutes(form.get("idle_minutes").unwrap_or("")) else {
        return Err(AppError::BadRequest(m.t("Choose one of the times listed.").into()));
    };
    let audit = m.audit("shop.updated");
    crate::services::shops::set_session_idle(&state, m.shop.id, minutes, &audit, m.origin.now).await?;
    tracing::info!(shop_id = m.shop.id, minutes, "dashboard idle time changed");
    m.flash(if minutes == PCI_IDLE_MINUTES {
        m.t("Sessions now end after 15 minutes without use.")
    } else {
        m.t("Sessions now live longer without use than PCI DSS allows (15 minutes).")
    })
    .await;
    see_other("/dashboard/settings")
}

/// The idle times the settings page offers: minutes, and how they read.
pub fn idle_choices(chrome: &Chrome) -> Vec<(i32, String)> {
    IDLE_MINUTES.iter().map(|&minutes| (minutes, idle_label(chrome.words, minutes))).collect()
}

/// An idle time as the setting and the sessions page both say it: in minutes under an hour,
/// else in hours (and minutes, were it not whole hours).
fn idle_label(words: Words, minutes: i32) -> String {
    let (hours, rest) = (i64::from(minutes / 60), i64::from(minutes % 60));
    match (hours, rest) {
        (0, m) => words.n(m, "{} minute|{} minutes"),
        (h, 0) => words.n(h, "{} hour|{} hours"),
        (h, m) => format!("{} {}", words.n(h, "{} hour|{} hours"), words.n(m, "{} minute|{} minutes")),
    }
}
