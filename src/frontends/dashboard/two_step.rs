//! A user's own two-step login: turning it on by reading a QR code (or typing its secret)
//! and confirming a first code, recovery codes shown once, new recovery codes and turning it
//! off after giving the password and a code again; and the owner's setting that requires it
//! of every user of the shop.

use askama::Template;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use chrono::Utc;

use super::form::PostedForm;
use super::{Chrome, Merchant, Page, local, ok, render, see_other};
use crate::domain::two_step;
use crate::web::error::AppError;
use crate::web::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/dashboard/two-step", get(page).post(turn_on))
        .route("/dashboard/two-step/qr.svg", get(qr))
        .route("/dashboard/two-step/codes", get(codes).post(renew_codes))
        .route("/dashboard/two-step/off", post(turn_off))
        .route("/dashboard/settings/two-step", post(require))
}

/// The session's slot for the secret being enrolled (sealed), until its first code confirms it.
const ENROLLING: &str = "two_step_enrolling";
/// The session's slot for new recovery codes (sealed), until their page shows them once.
const NEW_CODES: &str = "two_step_new_codes";

#[derive(Template)]
#[template(path = "dashboard/two_step.html")]
struct TwoStepPage {
    chrome: Chrome,
    /// When it was turned on; `None` while it is off.
    since: Option<String>,
    codes_left: i64,
    /// While off: the secret to type, grouped.
    typed_secret: String,
    /// Whether the shop requires it (it cannot be turned off then).
    required: bool,
    problem: String,
}

fn sealing(m: &Merchant, slot: &str) -> String {
    format!("dashboard-{slot}:{}:{}", m.shop.id, m.user.id)
}

/// The secret being enrolled in this session, made on first use.
async fn enrolling(state: &AppState, m: &Merchant) -> Result<Vec<u8>, AppError> {
    let kept: Option<String> = m.session.get(ENROLLING).await.ok().flatten();
    if let Some(secret) = kept.and_then(|s| state.vault.open(&s, &sealing(m, ENROLLING)).ok()) {
        return Ok(secret);
    }
    let secret = crate::services::two_step::new_secret();
    let sealed = state.vault.seal(&secret, &sealing(m, ENROLLING));
    m.session.insert(ENROLLING, sealed).await.map_err(super::merchant::session_error)?;
    Ok(secret)
}

impl TwoStepPage {
    async fn new(state: &AppState, m: &Merchant, problem: String) -> Result<Self, AppError> {
        let (since, codes_left, typed_secret) = match m.user.totp_enabled_at {
            Some(at) => (
                Some(local(at, m.tz)),
                i64::try_from(crate::db::two_step::codes_left(&state.db, &m.user.id).await?).unwrap_or(0),
                String::new(),
            ),
            None => (None, 0, two_step::typed_secret(&enrolling(state, m).await?)),
        };
        Ok(TwoStepPage {
            chrome: m.chrome("settings").await,
            since,
            codes_left,
            typed_secret,
            required: m.shop.two_step_required,
            problem,
        })
    }
}

async fn page(State(state): State<AppState>, m: Merchant) -> Page {
    ok(&TwoStepPage::new(&state, &m, String::new()).await?)
}

/// The QR code of the secret being enrolled, for an authenticator app to read.
async fn qr(State(state): State<AppState>, m: Merchant) -> Result<axum::response::Response, AppError> {
    if m.user.totp_sealed.is_some() {
        return Err(AppError::NotFound("Page"));
    }
    let secret = enrolling(&state, &m).await?;
    Ok(super::qr_svg(&two_step::otpauth_url(&secret, &m.user.email))?.into_response())
}

/// Turns two-step login on once the first code of the enrolled secret is right.
async fn turn_on(State(state): State<AppState>, m: Merchant, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    if m.user.totp_sealed.is_some() {
        return see_other("/dashboard/two-step");
    }
    let secret = enrolling(&state, &m).await?;
    let typed = form.get("code").unwrap_or("");
    let Some(codes) =
        crate::services::two_step::enable(&state, &m.user, &secret, typed, &m.audit("two_step.enabled"), Utc::now())
            .await?
    else {
        let problem =
            m.t("That code is not the one your app shows now. Check the app's clock and type the newest code.");
        let page = TwoStepPage::new(&state, &m, problem.into()).await?;
        return Ok(render(StatusCode::UNPROCESSABLE_ENTITY, &page));
    };
    tracing::info!(shop_id = m.shop.id, "two-step login turned on");
    let _ = m.session.remove::<String>(ENROLLING).await;
    show_codes_once(&state, &m, &codes).await?;
    m.flash(m.t("Two-step login is on. Keep these recovery codes somewhere safe.")).await;
    see_other("/dashboard/two-step/codes")
}

async fn show_codes_once(state: &AppState, m: &Merchant, codes: &[String]) -> Result<(), AppError> {
    let sealed = state.vault.seal(codes.join(" ").as_bytes(), &sealing(m, NEW_CODES));
    m.session.insert(NEW_CODES, sealed).await.map_err(super::merchant::session_error)
}

#[derive(Template)]
#[template(path = "dashboard/two_step_codes.html")]
struct CodesPage {
    chrome: Chrome,
    codes: Vec<String>,
}

/// New recovery codes, once: the page after turning two-step login on or renewing them.
async fn codes(State(state): State<AppState>, m: Merchant) -> Page {
    let kept: Option<String> = m.session.remove(NEW_CODES).await.ok().flatten();
    let Some(codes) = kept.and_then(|s| state.vault.open_text(&s, &sealing(&m, NEW_CODES)).ok()) else {
        m.flash(m.t("Recovery codes are shown only once. Make new ones if you did not keep them.")).await;
        return see_other("/dashboard/two-step");
    };
    ok(&CodesPage { chrome: m.chrome("settings").await, codes: codes.split(' ').map(str::to_string).collect() })
}

/// Whether the form carries the user's password and a code of theirs: what turning two-step
/// login off or renewing its codes asks again.
async fn confirmed(state: &AppState, m: &Merchant, form: &PostedForm) -> Result<bool, AppError> {
    let password = form.get("password").unwrap_or("").to_string();
    if !crate::services::passwords::matches(password, m.user.password_hash.clone()).await {
        return Ok(false);
    }
    Ok(crate::services::two_step::accept(state, &m.user, form.get("code").unwrap_or(""), Utc::now()).await?)
}

async fn refused_again(state: &AppState, m: &Merchant) -> Page {
    let problem = m.t("The password or the code is wrong. Nothing was changed.");
    Ok(render(StatusCode::UNPROCESSABLE_ENTITY, &TwoStepPage::new(state, m, problem.into()).await?))
}

/// New recovery codes (the old ones stop working), after the password and a code.
async fn renew_codes(State(state): State<AppState>, m: Merchant, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    if m.user.totp_sealed.is_none() {
        return see_other("/dashboard/two-step");
    }
    if !confirmed(&state, &m, &form).await? {
        return refused_again(&state, &m).await;
    }
    let audit = m.audit("two_step.codes_renewed");
    let codes = crate::services::two_step::renew_codes(&state, &m.user, &audit, Utc::now()).await?;
    show_codes_once(&state, &m, &codes).await?;
    see_other("/dashboard/two-step/codes")
}

/// Turns the user's two-step login off, after the password and a code; never in a shop that
/// requires it.
async fn turn_off(State(state): State<AppState>, m: Merchant, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    if m.shop.two_step_required {
        return Err(AppError::Conflict(m.t("This shop requires two-step login of every user.").into()));
    }
    if m.user.totp_sealed.is_none() {
        return see_other("/dashboard/two-step");
    }
    if !confirmed(&state, &m, &form).await? {
        return refused_again(&state, &m).await;
    }
    crate::db::two_step::disable(&state.db, &m.user.id, &m.audit("two_step.disabled"), Utc::now()).await?;
    tracing::info!(shop_id = m.shop.id, "two-step login turned off");
    m.flash(m.t("Two-step login is off: your password alone now opens your account.")).await;
    see_other("/dashboard/two-step")
}

/// The owner's setting: require two-step login of every user, or not. Only an owner who uses
/// it may require it, so that nobody requires what they cannot do themselves.
async fn require(State(state): State<AppState>, m: Merchant, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let required = form.get("required") == Some("true");
    if required && m.user.totp_sealed.is_none() {
        return Err(AppError::Conflict(m.t("Turn on two-step login for yourself first.").into()));
    }
    let audit = m.audit("shop.updated");
    crate::services::shops::require_two_step(&state, m.shop.id, required, &audit, Utc::now()).await?;
    tracing::info!(shop_id = m.shop.id, required, "two-step login requirement changed");
    m.flash(if required {
        m.t("Every user of the shop now signs in with two-step login; those without it set it up at their next page.")
    } else {
        m.t("Two-step login is no longer required; each user chooses.")
    })
    .await;
    see_other("/dashboard/settings")
}
