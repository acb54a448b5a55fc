//! Who is using the dashboard: the signed-in user, their shop, and the session that holds
//! them, with its CSRF token and a one-time flash message.

use axum::extract::{FromRequestParts, MatchedPath};
use axum::http::header::SET_COOKIE;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Redirect, Response};
use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use tower_sessions::Session;

use super::{Words, k};
use crate::db::entities::{shops, users};
use crate::db::sessions::keys;
use crate::db::{self};
use crate::domain::audit::{self, Actor, Entry};
use crate::domain::ids::random_hex;
use crate::web::error::AppError;
use crate::web::state::AppState;

/// Session keys.
pub const USER_KEY: &str = keys::USER;
/// A stamp of the password the session was opened with: changing the password ends every
/// other session of the user.
pub const STAMP_KEY: &str = "password_stamp";
/// When the session last gave the password (and a code): at login, and again before what
/// can redirect money or access (see [`super::reauth`]).
pub const FRESH_KEY: &str = "authenticated_at";
const CSRF_KEY: &str = "csrf";
const FLASH_KEY: &str = "flash";
const NOTICE_KEY: &str = "notice";

/// Something the next page says plainly (not a success: something to know, or to do next),
/// with a link to where it is done.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Notice {
    pub text: String,
    /// Where it is done, and the link's words.
    pub link: Option<(String, String)>,
}

/// Where a request comes from (as the audit trail records it), and when by the dashboard's
/// clock.
#[derive(Debug, Clone)]
pub struct Origin {
    pub now: DateTime<Utc>,
    pub caller: audit::Origin,
}

impl FromRequestParts<AppState> for Origin {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        Ok(origin(parts, state))
    }
}

fn origin(parts: &Parts, state: &AppState) -> Origin {
    Origin { now: state.clock.now(), caller: crate::web::guard::caller(parts, state) }
}

impl Origin {
    /// An entry of the shop's audit trail: `action` of `user`, from here.
    pub fn audit(&self, shop_id: i64, user: &users::Model, action: &str) -> Entry {
        Entry::new(shop_id, Actor::user(&user.id, &user.email, user.role), self.caller.clone(), action)
    }
}

/// A signed-in merchant. Pages that take one redirect strangers to the login page.
pub struct Merchant {
    pub user: users::Model,
    pub shop: std::sync::Arc<shops::Model>,
    /// The zone the dashboard shows times in.
    pub tz: Tz,
    /// The token every form of this session must send back, masked afresh for this page.
    pub csrf: String,
    /// The session's token itself.
    token: String,
    pub session: Session,
    /// The language the user reads the dashboard in.
    pub words: super::Words,
    /// What the user's role may do.
    pub can: super::access::Can,
    /// Where the request comes from.
    pub origin: Origin,
}

impl FromRequestParts<AppState> for Merchant {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        let fail = |e: AppError| e.into_response();
        let session =
            Session::from_request_parts(parts, state).await.map_err(|(_, m)| fail(AppError::BadRequest(m.into())))?;
        let user_id: Option<String> = session.get(USER_KEY).await.map_err(|e| fail(session_error(e)))?;
        let user = match user_id {
            Some(id) => db::users::by_id(&state.db, &id).await.map_err(|e| fail(e.into()))?,
            None => None,
        };
        let stamp: Option<String> = session.get(STAMP_KEY).await.map_err(|e| fail(session_error(e)))?;
        let user = user.filter(|u| stamp.as_deref() == Some(password_stamp(u).as_str()));
        let shop = match &user {
            Some(u) => crate::services::shops::find(state, u.shop_id).await.map_err(|e| fail(e.into()))?,
            None => None,
        };
        let to_login = |ended: &str| {
            let next = parts.uri.path_and_query().map(|p| p.as_str()).unwrap_or("/dashboard");
            let next = url::form_urlencoded::byte_serialize(next.as_bytes()).collect::<String>();
            Redirect::to(&format!("/dashboard/login?next={next}{ended}")).into_response()
        };
        let (Some(user), Some(shop)) = (user, shop) else {
            return Err(to_login(""));
        };
        let origin = origin(parts, state);
        if let Some(reason) = ended(&session, &shop, origin.now).await.map_err(fail)? {
            session.flush().await.map_err(|e| fail(session_error(e)))?;
            let entry = origin.audit(shop.id, &user, "session.ended");
            let entry = entry.changing(vec![audit::Change::of("reason", None::<String>, reason)]);
            db::audit::record_alone(&state.db, &entry, origin.now).await.map_err(|e| fail(e.into()))?;
            return Err(to_login("&ended=1"));
        }
        // Its last use is kept to the minute: a session written on every request would make
        // each page a write, and a minute only ever ends a session sooner.
        let seen: Option<i64> = session.get(keys::SEEN_AT).await.map_err(|e| fail(session_error(e)))?;
        if seen.is_none_or(|seen| origin.now.timestamp() - seen >= SEEN_STEP_SECONDS) {
            session.insert(keys::SEEN_AT, origin.now.timestamp()).await.map_err(|e| fail(session_error(e)))?;
        }
        // Checked before the handler runs, whatever it is: a route not in the table is refused.
        let route = parts.extensions.get::<MatchedPath>().map(|p| p.as_str()).unwrap_or("");
        // A shop that requires two-step login lets a user without it do nothing but set it up.
        if shop.two_step_required && user.totp_sealed.is_none() && !super::access::ENROLMENT.contains(&route) {
            return Err(Redirect::to("/dashboard/two-step").into_response());
        }
        match super::access::needed(parts.method.as_str(), route) {
            Some(permission) if user.role.can(permission) => {}
            needed => {
                tracing::warn!(route, role = %user.role, ?needed, "dashboard request refused to the user's role");
                let asked = format!("{} {}", parts.method, parts.uri.path());
                let entry = origin.audit(shop.id, &user, "access.refused").on("route", route);
                let entry = entry.changing(vec![audit::Change::of("request", None::<String>, asked)]);
                let entry = entry.ended(audit::Outcome::Refused);
                db::audit::record_alone(&state.db, &entry, origin.now).await.map_err(|e| fail(e.into()))?;
                return Err(fail(AppError::Forbidden(super::access::REFUSED)));
            }
        }
        let token = csrf_token(&session).await.map_err(fail)?;
        let csrf = crate::web::csrf::mask(&token);
        let tz = crate::services::shops::zone(state, &shop);
        let words = super::Words::of_user(user.language);
        let can = super::access::Can::of(user.role);
        db::audit::acting::act_as(Actor::user(&user.id, &user.email, user.role));
        Ok(Merchant { user, shop, tz, csrf, token, session, words, can, origin })
    }
}

/// Why the session has ended by `now`, if it has (see [`crate::domain::session::ended`]). A
/// session from before its times were kept has ended too.
async fn ended(session: &Session, shop: &shops::Model, now: DateTime<Utc>) -> Result<Option<&'static str>, AppError> {
    let time = |key| async move {
        let seconds: Option<i64> = session.get(key).await.map_err(session_error)?;
        Ok::<_, AppError>(seconds.and_then(|s| DateTime::from_timestamp(s, 0)))
    };
    let (Some(signed_in), Some(seen)) = (time(keys::SIGNED_IN_AT).await?, time(keys::SEEN_AT).await?) else {
        return Ok(Some("from an earlier version"));
    };
    Ok(crate::domain::session::ended(signed_in, seen, shop.session_idle_minutes, now))
}

/// Signs `user` in: a new session id (against fixation), the stamp of their password, a new
/// CSRF token, and where and when (for the user's list of sessions). Giving the password
/// (and code) makes the session fresh for sensitive changes.
pub async fn start_session(session: &Session, user: &users::Model, origin: &Origin) -> Result<(), AppError> {
    let fail = |e| session_error(e);
    session.cycle_id().await.map_err(fail)?;
    session.clear().await;
    session.insert(USER_KEY, &user.id).await.map_err(fail)?;
    session.insert(STAMP_KEY, password_stamp(user)).await.map_err(fail)?;
    session.insert(keys::USER_AGENT, origin.caller.user_agent.as_deref().unwrap_or("")).await.map_err(fail)?;
    session.insert(keys::ADDRESS, origin.caller.address.as_deref().unwrap_or("")).await.map_err(fail)?;
    for key in [keys::SIGNED_IN_AT, keys::SEEN_AT, FRESH_KEY] {
        session.insert(key, origin.now.timestamp()).await.map_err(fail)?;
    }
    csrf_token(session).await?;
    Ok(())
}

impl Merchant {
    /// An entry of the shop's audit trail: `action` of the signed-in user, from here.
    pub fn audit(&self, action: &str) -> Entry {
        self.origin.audit(self.shop.id, &self.user, action)
    }

    /// Refuses a form whose token is not this session's.
    pub fn check(&self, sent: Option<&str>) -> Result<(), AppError> {
        match sent {
            Some(sent) if crate::web::csrf::same(&self.token, sent) => Ok(()),
            _ => Err(AppError::Forbidden(k("The form has expired: reload the page and send it again"))),
        }
    }

    /// Leaves a message for the next page this session opens.
    pub async fn flash(&self, message: &str) {
        flash(&self.session, message).await
    }

    /// What was done, or `None` when its object had moved on (captured, voided or cancelled
    /// meanwhile, by a second click or another user): the next page then says why, as a
    /// flash message, instead of an error page.
    pub async fn unless_moved_on<T>(&self, done: Result<T, AppError>) -> Result<Option<T>, AppError> {
        match done {
            Ok(done) => Ok(Some(done)),
            Err(AppError::Conflict(why)) => {
                self.flash(&self.words.rule(&why)).await;
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// The notice left by an earlier request, once.
    pub async fn take_notice(&self) -> Option<Notice> {
        let notice: Option<Notice> = self.session.get(NOTICE_KEY).await.ok().flatten();
        if notice.is_some() {
            let _ = self.session.remove::<Notice>(NOTICE_KEY).await;
        }
        notice
    }

    /// The message left by the previous request, once.
    pub async fn take_flash(&self) -> Option<String> {
        // Looked at first: a removal marks the session changed, to be written again.
        let flash: Option<String> = self.session.get(FLASH_KEY).await.ok().flatten();
        if flash.is_some() {
            let _ = self.session.remove::<String>(FLASH_KEY).await;
        }
        flash
    }
}

/// What identifies the user's current password, without being the hash itself.
pub fn password_stamp(user: &users::Model) -> String {
    use sha2::{Digest, Sha256};
    crate::domain::ids::hex(&Sha256::digest(user.password_hash.as_bytes())[..8])
}

/// Leaves a message for the next page `session` opens.
pub async fn flash(session: &Session, message: &str) {
    if let Err(e) = session.insert(FLASH_KEY, message).await {
        tracing::warn!(error = %e, "cannot store a flash message");
    }
}

/// Leaves a notice for the next page `session` opens.
pub async fn notice(session: &Session, notice: &Notice) {
    if let Err(e) = session.insert(NOTICE_KEY, notice).await {
        tracing::warn!(error = %e, "cannot store a notice");
    }
}

/// The session's CSRF token, made on first use.
pub async fn csrf_token(session: &Session) -> Result<String, AppError> {
    if let Some(token) = session.get::<String>(CSRF_KEY).await.map_err(session_error)? {
        return Ok(token);
    }
    let token = random_hex(16);
    session.insert(CSRF_KEY, &token).await.map_err(session_error)?;
    Ok(token)
}

/// How often a session's last use is written: a use within this long of the one stored is
/// not written again.
const SEEN_STEP_SECONDS: i64 = 60;

/// A session store failure, as the app's error.
pub fn session_error(e: tower_sessions::session::Error) -> AppError {
    AppError::Internal(format!("session: {e}"))
}

/// The 303 into the dashboard after signing in, remembering the user's language in this
/// browser for the pages before the next login.
pub fn signed_in(to: &str, words: Words) -> Response {
    let mut response = Redirect::to(to).into_response();
    response.headers_mut().append(SET_COOKIE, words.cookie());
    response
}
