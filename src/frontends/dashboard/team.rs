//! The shop's users: who they are and their roles, invitations that carry a role, giving
//! another role and removing a user. A shop always keeps an owner who can sign in.

use askama::Template;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use chrono::Utc;

use super::form::{FormView, PostedForm};
use super::{Chrome, Merchant, Page, k, local, ok, render, role_name, see_other};
use crate::db::entities::users;
use crate::db::users::{Invitation, MemberChanged, NewUserError};
use crate::db::{self};
use crate::domain::Errors;
use crate::domain::access::{MemberChange, Permission, Refusal, Role};
use crate::domain::account::email;
use crate::domain::input::Reader;
use crate::web::error::AppError;
use crate::web::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/dashboard/settings/users", get(page).post(invite))
        .route("/dashboard/settings/users/{id}/role", post(give_role))
        .route("/dashboard/settings/users/{id}/remove", post(remove))
        .route("/dashboard/settings/users/{id}/two-step", post(reset_two_step))
        .route("/dashboard/settings/invitation", get(invitation))
}

/// How long an invitation link works.
const INVITATION_DAYS: i64 = 7;

#[derive(Template)]
#[template(path = "dashboard/team.html")]
struct TeamPage {
    chrome: Chrome,
    users: Vec<Member>,
    /// The roles this user may give: `(word, name)`.
    roles: Vec<(&'static str, &'static str)>,
    form: FormView,
    /// Why the change just asked for was refused, if it was.
    problem: String,
}

/// One of the shop's users, as the page lists them.
struct Member {
    id: String,
    email: String,
    role: Role,
    role_name: &'static str,
    since: String,
    /// Invited, and not yet through their link.
    invited: bool,
    /// The user looking at the page.
    me: bool,
    /// Whether the user looking may change this one's role or remove them.
    managed: bool,
    /// Whether they sign in with two-step login.
    two_step: bool,
}

impl TeamPage {
    async fn new(state: &AppState, m: &Merchant, form: FormView) -> Result<Self, AppError> {
        let users = db::users::of_shop(&state.db, m.shop.id).await?;
        let manages = |role: Role| m.can.change_users && m.user.role.manages(role);
        Ok(TeamPage {
            chrome: m.chrome("settings").await,
            roles: Role::ALL.iter().filter(|r| manages(**r)).map(|r| (r.as_str(), m.t(role_name(*r)))).collect(),
            users: users
                .iter()
                .map(|u| Member {
                    id: u.id.clone(),
                    email: u.email.clone(),
                    role: u.role,
                    role_name: m.t(role_name(u.role)),
                    since: local(u.created_at, m.tz),
                    invited: u.invite_hash.is_some(),
                    me: u.id == m.user.id,
                    managed: manages(u.role),
                    two_step: u.totp_sealed.is_some(),
                })
                .collect(),
            form,
            problem: String::new(),
        })
    }
}

async fn page(State(state): State<AppState>, m: Merchant) -> Page {
    ok(&TeamPage::new(&state, &m, FormView::filled(vec![("role", Role::Support.as_str().into())])).await?)
}

/// A role sent by a form, if it is one this user may give.
fn role_given(m: &Merchant, form: &PostedForm, errors: &mut Errors) -> Option<Role> {
    let role = Role::parse(form.get("role").unwrap_or(""));
    match role {
        Some(role) if m.user.role.manages(role) => Some(role),
        _ => {
            errors.add("role", "is not included in the list");
            None
        }
    }
}

/// Invites another user with a role: a one-time link, shown once to whoever invited them,
/// where the new user sets their own password.
async fn invite(State(state): State<AppState>, m: Merchant, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let body = form.to_json(&[], &[]);
    let mut errors = Errors::default();
    let address = email(&Reader::new(&body), "email", &mut errors);
    let role = role_given(&m, &form, &mut errors);
    if let (Some(address), Some(role)) = (address, role)
        && errors.is_empty()
    {
        let token = crate::domain::ids::random_hex(32);
        let placeholder = crate::services::passwords::hash(crate::domain::ids::random_hex(16)).await?;
        let now = Utc::now();
        let invitation = Invitation {
            email: &address,
            role,
            placeholder_hash: placeholder,
            invite_hash: crate::domain::ids::hash_token(&token),
            expires_at: now + chrono::Duration::days(INVITATION_DAYS),
        };
        match db::users::invite(&state.db, m.shop.id, invitation, &m.audit("user.invited"), now).await {
            Ok(_) => {
                tracing::info!(shop_id = m.shop.id, %role, "dashboard user invited");
                let link = format!("{}/dashboard/invite/{token}", state.config.base_url);
                let sealed = state.vault.seal(link.as_bytes(), &invitation_context(&m));
                m.session
                    .insert(NEW_INVITATION, (address, role.as_str(), sealed))
                    .await
                    .map_err(|e| AppError::Internal(e.to_string()))?;
                return see_other("/dashboard/settings/invitation");
            }
            Err(NewUserError::EmailTaken) => errors.add("email", "has already been taken"),
            Err(NewUserError::Db(e)) => return Err(e.into()),
        }
    }
    let page = TeamPage::new(&state, &m, FormView::sent(&form, errors, m.words)).await?;
    Ok(render(StatusCode::UNPROCESSABLE_ENTITY, &page))
}

/// The session's slot for a new invitation link until its page shows it.
const NEW_INVITATION: &str = "new_invitation";

fn invitation_context(m: &Merchant) -> String {
    format!("dashboard-invitation:{}:{}", m.shop.id, m.user.id)
}

#[derive(Template)]
#[template(path = "dashboard/invitation.html")]
struct InvitationPage {
    chrome: Chrome,
    email: String,
    /// Who the link lets in, where, and as what.
    invited: String,
    link: String,
    days: i64,
}

/// The new invitation link, once: the page after an invitation.
async fn invitation(State(state): State<AppState>, m: Merchant) -> Page {
    let kept: Option<(String, String, String)> = m.session.remove(NEW_INVITATION).await.ok().flatten();
    let opened = kept.and_then(|(email, role, sealed)| {
        Some((email, Role::parse(&role)?, state.vault.open_text(&sealed, &invitation_context(&m)).ok()?))
    });
    let Some((email, role, link)) = opened else {
        m.flash(
            m.t("An invitation link is shown only once. Remove the invited user and invite them again if it was lost."),
        )
        .await;
        return see_other("/dashboard/settings/users");
    };
    let invited = m.f("{} joins {} as {}.", &[&email, &m.shop.name, &m.t(role_name(role))]);
    ok(&InvitationPage { chrome: m.chrome("settings").await, email, invited, link, days: INVITATION_DAYS })
}

/// Gives another role to a user of the shop.
async fn give_role(State(state): State<AppState>, m: Merchant, Path(id): Path<String>, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let mut errors = Errors::default();
    let Some(role) = role_given(&m, &form, &mut errors) else {
        let page = TeamPage::new(&state, &m, FormView::sent(&form, errors, m.words)).await?;
        return Ok(render(StatusCode::UNPROCESSABLE_ENTITY, &page));
    };
    let audit = m.audit("user.role_changed");
    let change = MemberChange::Role(role);
    let changed = db::users::change_member(&state.db, m.shop.id, &m.user.id, &id, change, &audit, Utc::now());
    let before = match done(&m, changed.await?)? {
        Ok(before) => before,
        Err(problem) => return refused(&state, &m, problem).await,
    };
    tracing::info!(shop_id = m.shop.id, from = %before.role, to = %role, "dashboard user given another role");
    m.flash(&m.f("{} is now {}.", &[&before.email, &m.t(role_name(role))])).await;
    see_other(if before.id == m.user.id && !role.can(Permission::ReadUsers) {
        "/dashboard"
    } else {
        "/dashboard/settings/users"
    })
}

/// Removes another user of the shop, after a confirmation; nobody removes themselves.
async fn remove(State(state): State<AppState>, m: Merchant, Path(id): Path<String>, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let users = db::users::of_shop(&state.db, m.shop.id).await?;
    let user = users.into_iter().find(|u| u.id == id).ok_or(AppError::NotFound("User"))?;
    if form.get("confirm") != Some("yes") {
        let page = super::ConfirmPage {
            chrome: m.chrome("settings").await,
            title: m.f("Remove {}?", &[&user.email]),
            lines: vec![
                m.f("{} can no longer log in to this shop, and is logged out everywhere now.", &[&user.email]),
                m.t("What they did stays. You can invite them again later.").into(),
            ],
            action: format!("/dashboard/settings/users/{id}/remove"),
            fields: Vec::new(),
            button: m.t("Remove the user").into(),
            back: "/dashboard/settings/users".into(),
            back_label: k("Keep them"),
        };
        return ok(&page);
    }
    let audit = m.audit("user.removed");
    let changed =
        db::users::change_member(&state.db, m.shop.id, &m.user.id, &id, MemberChange::Remove, &audit, Utc::now());
    let before = match done(&m, changed.await?)? {
        Ok(before) => before,
        Err(problem) => return refused(&state, &m, problem).await,
    };
    tracing::info!(shop_id = m.shop.id, role = %before.role, "dashboard user removed");
    m.flash(&m.f("{} was removed from the shop.", &[&before.email])).await;
    see_other("/dashboard/settings/users")
}

/// Turns off the two-step login of another user who lost both their device and their recovery
/// codes, after a confirmation: they sign in with their password and set it up again.
async fn reset_two_step(State(state): State<AppState>, m: Merchant, Path(id): Path<String>, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let users = db::users::of_shop(&state.db, m.shop.id).await?;
    let user = users.into_iter().find(|u| u.id == id).ok_or(AppError::NotFound("User"))?;
    if user.id == m.user.id || !m.user.role.manages(user.role) {
        return Err(AppError::Forbidden(super::access::REFUSED));
    }
    if form.get("confirm") != Some("yes") {
        let page = super::ConfirmPage {
            chrome: m.chrome("settings").await,
            title: m.f("Reset two-step login of {}?", &[&user.email]),
            lines: vec![
                m.f(
                    "{} then signs in with the password alone, until they set up two-step login again.",
                    &[&user.email],
                ),
                m.t("Do this only when you know it is them asking: their device and recovery codes are lost.").into(),
            ],
            action: format!("/dashboard/settings/users/{id}/two-step"),
            fields: Vec::new(),
            button: m.t("Reset two-step login").into(),
            back: "/dashboard/settings/users".into(),
            back_label: k("Keep it"),
        };
        return ok(&page);
    }
    if db::two_step::disable(&state.db, &user.id, &m.audit("two_step.reset"), Utc::now()).await? {
        tracing::info!(shop_id = m.shop.id, "two-step login of a user reset");
    }
    m.flash(&m.f("Two-step login of {} was reset.", &[&user.email])).await;
    see_other("/dashboard/settings/users")
}

/// The user as they were before a change that was made, or what the team page says of a
/// change the shop's rules refuse (the last owner stays; nobody removes themselves).
fn done(m: &Merchant, changed: MemberChanged) -> Result<Result<users::Model, &'static str>, AppError> {
    match changed {
        MemberChanged::Done(before) => Ok(Ok(*before)),
        MemberChanged::Missing => Err(AppError::NotFound("User")),
        MemberChanged::Refused(Refusal::LastOwner) => {
            Ok(Err(m.t("The shop needs an owner who can sign in: make another user owner first.")))
        }
        MemberChanged::Refused(Refusal::Yourself) => {
            Ok(Err(m.t("You cannot remove yourself; another user of the shop can")))
        }
        MemberChanged::Refused(Refusal::NotAllowed) => Err(AppError::Forbidden(super::access::REFUSED)),
    }
}

/// The team page, 409, saying why the change was refused; nothing was changed.
async fn refused(state: &AppState, m: &Merchant, problem: &str) -> Page {
    let mut page = TeamPage::new(state, m, FormView::filled(vec![("role", Role::Support.as_str().into())])).await?;
    page.problem = problem.to_string();
    Ok(render(StatusCode::CONFLICT, &page))
}
