//! Signing up, logging in and out, and changing the password.

use askama::Template;
use axum::Router;

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header::RETRY_AFTER, header::SET_COOKIE};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use chrono::Utc;
use serde::{Deserialize, Serialize};
use tower_sessions::Session;

use super::form::{FormView, PostedForm};
use super::merchant::{Notice, Origin, flash, notice, password_stamp, session_error, signed_in, start_session};
use super::words::{Words, k};
use super::{Chrome, Merchant, Page, render, see_other};
use crate::db::entities::users;
use crate::db::{self, users::NewUserError};
use crate::domain::Errors;
use crate::domain::access::Role;
use crate::domain::account::{SignUp, new_password, normalise_email};
use crate::domain::audit::{Change, Outcome};
use crate::domain::input::Reader;
use crate::domain::throttle;
use crate::domain::two_step::Code;
use crate::services::lockout;
use crate::web::csrf;
use crate::web::error::AppError;
use crate::web::guard::ClientIp;
use crate::web::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/dashboard/signup", get(signup_page).post(signup))
        .route("/dashboard/login", get(login_page).post(login))
        .route("/dashboard/login/code", get(code_page).post(code))
        .route("/dashboard/logout", post(logout))
        .route("/dashboard/password", get(password_page).post(change_password))
        .route("/dashboard/invite/{token}", get(invite_page).post(accept_invite))
        .route("/dashboard/unlock/{token}", get(unlock_page).post(unlock))
}

#[derive(Template)]
#[template(path = "dashboard/signup.html")]
struct SignupPage {
    words: Words,
    csrf: String,
    form: FormView,
}

#[derive(Template)]
#[template(path = "dashboard/login.html")]
struct LoginPage {
    words: Words,
    csrf: String,
    next: String,
    form: FormView,
    problem: String,
    signup: bool,
}

/// An invitation's page: the invited user chooses a password (or is told the link is spent).
#[derive(Template)]
#[template(path = "dashboard/invite.html")]
struct InvitePage {
    words: Words,
    csrf: String,
    /// `None` when the link was used or has expired.
    invited: Option<Invited>,
    token: String,
    form: FormView,
}

/// Who an invitation is for: their address, the shop and the role they join it with.
struct Invited {
    email: String,
    shop: String,
    role: Role,
}

impl InvitePage {
    /// The role the invitation gives, in the page's language.
    fn role_name(&self) -> &'static str {
        self.invited.as_ref().map_or("", |i| self.words.t(super::role_name(i.role)))
    }
}

/// The invitation of `user`, with the name of their shop.
async fn invitation(state: &AppState, user: &users::Model) -> Result<Invited, AppError> {
    let shop = crate::services::shops::find(state, user.shop_id).await?;
    Ok(Invited { email: user.email.clone(), shop: shop.map(|s| s.name.clone()).unwrap_or_default(), role: user.role })
}

async fn invite_page(State(state): State<AppState>, headers: HeaderMap, Path(token): Path<String>) -> Page {
    let hash = crate::domain::ids::hash_token(&token);
    let invited = match db::users::invited(&state.db, &hash, Utc::now()).await? {
        Some(user) => Some(invitation(&state, &user).await?),
        None => None,
    };
    let status = if invited.is_some() { StatusCode::OK } else { StatusCode::GONE };
    Ok(anonymous(&state, &headers, status, |csrf, words| {
        let page = InvitePage { words, csrf, invited, token, form: FormView::default() };
        render(status, &page)
    }))
}

/// Sets an invited user's password through their link, once, and logs them in.
async fn accept_invite(
    State(state): State<AppState>,
    headers: HeaderMap,
    session: Session,
    origin: Origin,
    Path(token): Path<String>,
    form: PostedForm,
) -> Page {
    check_anonymous(&headers, &form)?;
    let hash = crate::domain::ids::hash_token(&token);
    let now = origin.now;
    let Some(user) = db::users::invited(&state.db, &hash, now).await? else {
        return invite_page(State(state), headers, Path(token)).await;
    };
    let body = form.to_json(&[], &[]);
    let mut errors = Errors::default();
    let password = new_password(&Reader::new(&body), "password", &mut errors);
    let Some(password) = password.filter(|_| errors.is_empty()) else {
        let invited = Some(invitation(&state, &user).await?);
        return Ok(anonymous(&state, &headers, StatusCode::UNPROCESSABLE_ENTITY, |csrf, words| {
            let form = FormView::sent(&form, errors, words);
            let page = InvitePage { words, csrf, invited, token, form };
            render(StatusCode::UNPROCESSABLE_ENTITY, &page)
        }));
    };
    let password_hash = crate::services::passwords::hash(password).await?;
    let words = Words::of_request(&headers);
    match db::users::accept_invite(&state.db, &hash, password_hash, words.stored(), &origin.caller, now).await? {
        Some(user) => {
            start_session(&session, &user, &origin).await?;
            flash(&session, words.t("Welcome: your password is set and you are logged in.")).await;
            Ok(signed_in("/dashboard", words))
        }
        None => invite_page(State(state), headers, Path(token)).await,
    }
}

/// The page of the link that opens a locked account: a button (mail scanners open every
/// link they find, and must not spend it), or word that the link no longer works.
#[derive(Template)]
#[template(path = "dashboard/unlock.html")]
struct UnlockPage {
    words: Words,
    csrf: String,
    /// `None` when the link was used, or its lock is over.
    email: Option<String>,
    token: String,
}

async fn unlock_page(
    State(state): State<AppState>,
    headers: HeaderMap,
    origin: Origin,
    Path(token): Path<String>,
) -> Page {
    let hash = crate::domain::ids::hash_token(&token);
    let user = db::users::locked_by(&state.db, &hash, origin.now).await?;
    let status = if user.is_some() { StatusCode::OK } else { StatusCode::GONE };
    Ok(anonymous(&state, &headers, status, |csrf, words| {
        render(status, &UnlockPage { words, csrf, email: user.map(|u| u.email), token })
    }))
}

/// Opens a locked account through its link, once; the wrong passwords counted for it at the
/// opening browser's address are forgotten with the lock.
async fn unlock(
    State(state): State<AppState>,
    headers: HeaderMap,
    origin: Origin,
    Path(token): Path<String>,
    form: PostedForm,
) -> Page {
    check_anonymous(&headers, &form)?;
    let hash = crate::domain::ids::hash_token(&token);
    match db::users::unlock(&state.db, &hash, &origin.caller, origin.now).await? {
        Some(user) => {
            // This browser's address may sign in at once; a guesser's elsewhere still waits.
            let address = origin.caller.address.as_deref().unwrap_or_default();
            db::throttle::forget(&state.db, &throttle::LOGIN_ACCOUNT, &format!("{}|{address}", user.email)).await?;
            see_other("/dashboard/login?unlocked=1")
        }
        None => unlock_page(State(state), headers, origin, Path(token)).await,
    }
}

#[derive(Template)]
#[template(path = "dashboard/password.html")]
struct PasswordPage {
    chrome: Chrome,
    form: FormView,
}

/// A page before login, with the double-submit CSRF cookie of the hosted pages (there is
/// no session yet to hold a token).
fn anonymous(
    state: &AppState,
    headers: &HeaderMap,
    status: StatusCode,
    page: impl FnOnce(String, Words) -> Response,
) -> Response {
    let (token, cookie) = csrf::issue(headers, state.config.base_url.starts_with("https://"));
    let mut response = page(token, Words::of_request(headers));
    *response.status_mut() = status;
    if let Some(cookie) = cookie {
        response.headers_mut().append(SET_COOKIE, cookie);
    }
    response
}

fn check_anonymous(headers: &HeaderMap, form: &PostedForm) -> Result<(), AppError> {
    match csrf::verify(headers, form.get("csrf")) {
        true => Ok(()),
        false => Err(AppError::Forbidden(k("The form has expired: reload the page and send it again"))),
    }
}

fn signup_open(state: &AppState) -> Result<(), AppError> {
    match state.config.signup {
        true => Ok(()),
        false => Err(AppError::NotFound("Page")),
    }
}

async fn signup_page(State(state): State<AppState>, headers: HeaderMap) -> Page {
    signup_open(&state)?;
    Ok(anonymous(&state, &headers, StatusCode::OK, |csrf, words| {
        render(StatusCode::OK, &SignupPage { words, csrf, form: FormView::default() })
    }))
}

async fn signup(
    State(state): State<AppState>,
    headers: HeaderMap,
    session: Session,
    origin: Origin,
    form: PostedForm,
) -> Page {
    signup_open(&state)?;
    check_anonymous(&headers, &form)?;
    let refused = |errors: Errors| {
        Ok(anonymous(&state, &headers, StatusCode::UNPROCESSABLE_ENTITY, |csrf, words| {
            render(StatusCode::OK, &SignupPage { words, csrf, form: FormView::sent(&form, errors, words) })
        }))
    };
    let new = match SignUp::parse(&form.to_json(&[], &[])) {
        Ok(new) => new,
        Err(errors) => return refused(errors),
    };
    let hash = crate::services::passwords::hash(new.password.clone()).await?;
    let (_, secret) = crate::services::keys::new_secret(&state.vault);
    let words = Words::of_request(&headers);
    let rows = db::users::SignUpRows {
        shop_name: &new.shop_name,
        secret,
        email: &new.email,
        password_hash: hash,
        language: words.stored(),
    };
    match db::users::sign_up(&state.db, rows, &origin.caller, origin.now).await {
        Ok((_, user)) => {
            start_session(&session, &user, &origin).await?;
            flash(&session, words.t("Your shop is ready. Create a product to get your first pay link.")).await;
            Ok(signed_in("/dashboard", words))
        }
        Err(NewUserError::EmailTaken) => {
            let errors = Errors::one("email", "has already been taken");
            refused(errors)
        }
        Err(NewUserError::Db(e)) => Err(e.into()),
    }
}

#[derive(Deserialize)]
struct Next {
    next: Option<String>,
    /// Set when the previous session ended by itself (unused too long, or too old).
    ended: Option<String>,
    /// Set when the user's unlock link has just opened their account.
    unlocked: Option<String>,
}

/// Only paths of the dashboard itself: never another site.
fn safe_next(next: Option<&str>) -> String {
    match next {
        Some(n) if n.starts_with("/dashboard") && n.bytes().all(|b| b.is_ascii_graphic()) && !n.contains('\\') => {
            n.to_string()
        }
        _ => "/dashboard".to_string(),
    }
}

async fn login_page(State(state): State<AppState>, headers: HeaderMap, Query(next): Query<Next>) -> Response {
    let (ended, unlocked) = (next.ended.is_some(), next.unlocked.is_some());
    let next = safe_next(next.next.as_deref());
    anonymous(&state, &headers, StatusCode::OK, |csrf, words| {
        let problem = match (ended, unlocked) {
            (true, _) => words.t("Your session has ended: sign in again to go on.").to_string(),
            (_, true) => words
                .t("Your account is open again. If the wrong passwords were not yours, choose a new password once you are in.")
                .to_string(),
            _ => String::new(),
        };
        let page = LoginPage { words, csrf, next, form: FormView::default(), problem, signup: state.config.signup };
        render(StatusCode::OK, &page)
    })
}

async fn login(
    State(state): State<AppState>,
    ClientIp(client): ClientIp,
    headers: HeaderMap,
    session: Session,
    origin: Origin,
    form: PostedForm,
) -> Page {
    check_anonymous(&headers, &form)?;
    let email = normalise_email(form.get("email").unwrap_or(""));
    let password = form.get("password").unwrap_or("").to_string();
    let next = safe_next(form.get("next"));
    let words = Words::of_request(&headers);
    let refuse = |status: StatusCode, problem: String| {
        let view = FormView::filled(vec![("email", email.clone())]);
        anonymous(&state, &headers, status, |csrf, words| {
            render(
                StatusCode::OK,
                &LoginPage { words, csrf, next: next.clone(), form: view, problem, signup: state.config.signup },
            )
        })
    };
    // Counted per account at this address and per address: a stranger elsewhere cannot lock
    // the owner out, and one address cannot try every account.
    let address = client.to_string();
    let account = format!("{email}|{address}");
    let now = origin.now;
    let user = db::users::by_email(&state.db, &email).await?;
    let locked = |until: chrono::DateTime<Utc>| {
        let at = until.format("%H:%M UTC").to_string();
        let problem = words.f(
            "This account is locked after too many wrong passwords. It opens again at {}, or at once through the link mailed to its address.",
            &[&at],
        );
        let mut response = refuse(StatusCode::TOO_MANY_REQUESTS, problem);
        let wait = (until - now).to_std().unwrap_or_default();
        response.headers_mut().insert(RETRY_AFTER, crate::web::error::retry_after(wait));
        response
    };
    let throttled = |wait: std::time::Duration| {
        let minutes = wait.as_secs() / 60 + 1;
        tracing::warn!("dashboard login locked after repeated failures");
        let problem = words.f("Too many failed attempts. Try again in {} minutes.", &[&minutes]);
        let mut response = refuse(StatusCode::TOO_MANY_REQUESTS, problem);
        response.headers_mut().insert(RETRY_AFTER, crate::web::error::retry_after(wait));
        response
    };
    // One address's attempts are bounded first, those at a locked account included.
    if let Some(wait) = db::throttle::wait(&state.db, &throttle::LOGIN_ADDRESS, &address, now).await? {
        return Ok(throttled(wait));
    }
    let refused_locked = |user: &users::Model| {
        let entry = origin.audit(user.shop_id, user, "user.login_failed").on("user", &user.id);
        entry.changing(vec![Change::of("step", None::<String>, "locked")]).ended(Outcome::Refused)
    };
    // A locked account is refused whatever the password: the answer tells nothing of it.
    if let Some((user, until)) = user.as_ref().and_then(|u| Some((u, lockout::locked_until(u, now)?))) {
        db::throttle::fail(&state.db, &throttle::LOGIN_ADDRESS, &address, now).await?;
        db::audit::record_alone(&state.db, &refused_locked(user), now).await?;
        return Ok(locked(until));
    }
    if let Some(wait) = db::throttle::wait(&state.db, &throttle::LOGIN_ACCOUNT, &account, now).await? {
        return Ok(throttled(wait));
    }
    let hash = match &user {
        Some(u) => u.password_hash.clone(),
        None => crate::services::passwords::dummy_hash().await,
    };
    let matches = crate::services::passwords::matches(password, hash).await;
    match user {
        Some(user) if matches => {
            // Guesses answered while this password was checked may have locked the account:
            // the lock holds for a right password too.
            let fresh = db::users::by_id(&state.db, &user.id).await?;
            if let Some(until) = fresh.as_ref().and_then(|u| lockout::locked_until(u, now)) {
                db::audit::record_alone(&state.db, &refused_locked(&user), now).await?;
                return Ok(locked(until));
            }
            db::throttle::forget(&state.db, &throttle::LOGIN_ACCOUNT, &account).await?;
            db::throttle::forget(&state.db, &throttle::LOCKOUT, &user.id).await?;
            if user.totp_sealed.is_some() {
                // The password was right; the session is not signed in until the code is.
                let fail = |e| session_error(e);
                session.cycle_id().await.map_err(fail)?;
                session.clear().await;
                let pending =
                    Pending { user: user.id.clone(), stamp: password_stamp(&user), next, at: now.timestamp() };
                session.insert(PENDING_KEY, pending).await.map_err(fail)?;
                return Ok(Redirect::to("/dashboard/login/code").into_response());
            }
            start_session(&session, &user, &origin).await?;
            logged_in(&state, &origin, &user).await?;
            Ok(signed_in(&next, Words::of_user(user.language)))
        }
        user => {
            db::throttle::fail(&state.db, &throttle::LOGIN_ACCOUNT, &account, now).await?;
            db::throttle::fail(&state.db, &throttle::LOGIN_ADDRESS, &address, now).await?;
            if let Some(user) = user {
                let entry = origin.audit(user.shop_id, &user, "user.login_failed").on("user", &user.id);
                let entry = entry.changing(vec![Change::of("step", None::<String>, "password")]);
                db::audit::record_alone(&state.db, &entry.ended(Outcome::Refused), now).await?;
                if lockout::failed(&state, &user, &origin.caller, now).await? {
                    return Ok(locked(now + throttle::LOCKED_FOR));
                }
            }
            tracing::info!("dashboard login refused");
            Ok(refuse(StatusCode::UNPROCESSABLE_ENTITY, words.t("Wrong e-mail or password.").to_string()))
        }
    }
}

/// Records a login (the password, and the code when the user has two-step login).
async fn logged_in(state: &AppState, origin: &Origin, user: &users::Model) -> Result<(), AppError> {
    let with = if user.totp_sealed.is_some() { "password and code" } else { "password" };
    let entry = origin.audit(user.shop_id, user, "user.logged_in").on("user", &user.id);
    let entry = entry.changing(vec![Change::of("with", None::<String>, with)]);
    db::audit::record_alone(&state.db, &entry, origin.now).await?;
    Ok(())
}

/// A login whose password was right, waiting for its two-step code.
#[derive(Serialize, Deserialize)]
struct Pending {
    user: String,
    /// The password's stamp when it was given: a password changed meanwhile ends it.
    stamp: String,
    next: String,
    /// When the password was given (Unix seconds).
    at: i64,
}

const PENDING_KEY: &str = "two_step_pending";
/// How long a right password waits for its code.
const PENDING_SECONDS: i64 = 300;

#[derive(Template)]
#[template(path = "dashboard/login_code.html")]
struct CodePage {
    words: Words,
    csrf: String,
    problem: String,
}

/// The pending login's user, while the code may still be given.
async fn pending(
    state: &AppState,
    session: &Session,
    now: chrono::DateTime<Utc>,
) -> Result<Option<(users::Model, String)>, AppError> {
    let Some(pending) = session.get::<Pending>(PENDING_KEY).await.map_err(session_error)? else { return Ok(None) };
    if now.timestamp() - pending.at > PENDING_SECONDS {
        return Ok(None);
    }
    let user = db::users::by_id(&state.db, &pending.user).await?;
    Ok(user.filter(|u| password_stamp(u) == pending.stamp && u.totp_sealed.is_some()).map(|u| (u, pending.next)))
}

async fn code_page(State(state): State<AppState>, headers: HeaderMap, session: Session, origin: Origin) -> Page {
    if pending(&state, &session, origin.now).await?.is_none() {
        return see_other("/dashboard/login");
    }
    Ok(anonymous(&state, &headers, StatusCode::OK, |csrf, words| {
        render(StatusCode::OK, &CodePage { words, csrf, problem: String::new() })
    }))
}

/// The second step of a login: a code of the user's authenticator, or one of their recovery
/// codes. Wrong codes are counted per user wherever they come from, like passwords.
async fn code(
    State(state): State<AppState>,
    headers: HeaderMap,
    session: Session,
    origin: Origin,
    form: PostedForm,
) -> Page {
    check_anonymous(&headers, &form)?;
    let Some((user, next)) = pending(&state, &session, origin.now).await? else {
        return see_other("/dashboard/login");
    };
    // An account locked since its password was given waits like any other.
    if lockout::locked_until(&user, origin.now).is_some() {
        session.remove::<Pending>(PENDING_KEY).await.map_err(session_error)?;
        return see_other("/dashboard/login");
    }
    let words = Words::of_request(&headers);
    let refuse = |status: StatusCode, problem: String| {
        anonymous(&state, &headers, status, |csrf, words| render(StatusCode::OK, &CodePage { words, csrf, problem }))
    };
    // Codes go by the real time, as authenticator apps do.
    let now = Utc::now();
    if let Some(wait) = db::throttle::wait(&state.db, &throttle::TWO_STEP, &user.id, now).await? {
        let minutes = wait.as_secs() / 60 + 1;
        tracing::warn!("two-step login locked after repeated wrong codes");
        let problem = words.f("Too many failed attempts. Try again in {} minutes.", &[&minutes]);
        let mut response = refuse(StatusCode::TOO_MANY_REQUESTS, problem);
        response.headers_mut().insert(RETRY_AFTER, crate::web::error::retry_after(wait));
        return Ok(response);
    }
    let typed = form.get("code").unwrap_or("");
    if !crate::services::two_step::accept(&state, &user, typed, now).await? {
        db::throttle::fail(&state.db, &throttle::TWO_STEP, &user.id, now).await?;
        let entry = origin.audit(user.shop_id, &user, "user.login_failed").on("user", &user.id);
        let entry = entry.changing(vec![Change::of("step", None::<String>, "code")]);
        db::audit::record_alone(&state.db, &entry.ended(Outcome::Refused), origin.now).await?;
        tracing::info!("two-step code refused");
        let problem = words.t("That code is wrong or was used already. Type the newest code of your app.");
        return Ok(refuse(StatusCode::UNPROCESSABLE_ENTITY, problem.to_string()));
    }
    db::throttle::forget(&state.db, &throttle::TWO_STEP, &user.id).await?;
    start_session(&session, &user, &origin).await?;
    logged_in(&state, &origin, &user).await?;
    let words = Words::of_user(user.language);
    if matches!(Code::parse(typed), Some(Code::Recovery(_))) {
        // Each recovery code works once: the user learns how many are left, and where to
        // make new ones, before they run out.
        let left = i64::try_from(db::two_step::codes_left(&state.db, &user.id).await?).unwrap_or(0);
        let link = Some(("/dashboard/two-step".to_string(), words.t("Make new recovery codes").to_string()));
        notice(&session, &Notice { text: words.n(left, RECOVERY_CODE_USED), link }).await;
    }
    Ok(signed_in(&next, words))
}

/// What the first page says after a login with a recovery code.
const RECOVERY_CODE_USED: &str =
    k("You signed in with a recovery code; {} code is left.|You signed in with a recovery code; {} codes are left.");

async fn logout(State(state): State<AppState>, m: Merchant, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    m.session.flush().await.map_err(session_error)?;
    let entry = m.audit("session.ended").changing(vec![Change::of("reason", None::<String>, "logout")]);
    db::audit::record_alone(&state.db, &entry, m.origin.now).await?;
    Ok(Redirect::to("/dashboard/login").into_response())
}

async fn password_page(m: Merchant) -> Page {
    super::ok(&PasswordPage { chrome: m.chrome("settings").await, form: FormView::default() })
}

async fn change_password(State(state): State<AppState>, m: Merchant, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let body = form.to_json(&[], &[]);
    let r = Reader::new(&body);
    let mut errors = Errors::default();
    let current = form.get("current_password").unwrap_or("").to_string();
    if !crate::services::passwords::matches(current, m.user.password_hash.clone()).await {
        errors.add("current_password", "is wrong");
    }
    let password = new_password(&r, "password", &mut errors);
    let Some(password) = password.filter(|_| errors.is_empty()) else {
        let page = PasswordPage { chrome: m.chrome("settings").await, form: FormView::sent(&form, errors, m.words) };
        return Ok(render(StatusCode::UNPROCESSABLE_ENTITY, &page));
    };
    let hash = crate::services::passwords::hash(password).await?;
    let audit = m.audit("user.password_changed");
    let user = db::users::set_password(&state.db, m.user.clone(), hash, &audit, m.origin.now).await?;
    start_session(&m.session, &user, &m.origin).await?;
    m.flash(m.t("Your password was changed.")).await;
    see_other("/dashboard/settings")
}
