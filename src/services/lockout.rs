//! Accounts locked by wrong passwords (PCI DSS 8.3.4): the tenth wrong password for one
//! account within a day, wherever they came from, locks it for 30 minutes, and its user is
//! mailed a link that opens it at once. A stranger can keep a user out for a while, never
//! without the user knowing; the shop's owners are told too (a security notice).

use chrono::{DateTime, Utc};

use crate::db::entities::users;
use crate::db::mails::{NewMail, Rendered};
use crate::db::{self};
use crate::domain::audit::{Actor, Change, Entry, Origin};
use crate::domain::ids::{hash_token, random_hex};
use crate::domain::mail::MailKind;
use crate::domain::throttle::{LOCKED_FOR, LOCKOUT};
use crate::web::error::AppError;
use crate::web::state::AppState;

/// Whether `user` is locked at `now`, and until when.
pub fn locked_until(user: &users::Model, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    user.locked_until.filter(|until| *until > now)
}

/// Counts a wrong password for `user`; the one that reaches the limit locks the account and
/// mails the link. Answers whether this one locked it.
pub async fn failed(
    state: &AppState,
    user: &users::Model,
    origin: &Origin,
    now: DateTime<Utc>,
) -> Result<bool, AppError> {
    db::throttle::fail(&state.db, &LOCKOUT, &user.id, now).await?;
    if db::throttle::wait(&state.db, &LOCKOUT, &user.id, now).await?.is_none() {
        return Ok(false);
    }
    let until = now + LOCKED_FOR;
    let token = random_hex(24);
    let mail = match state.mailer {
        Some(_) => Some(unlock_mail(state, user, until, &token).await?),
        None => None,
    };
    let entry =
        Entry::new(user.shop_id, Actor::system(), origin.clone(), "user.locked").on("user", &user.id).changing(vec![
            Change::of("wrong_passwords", None::<u32>, LOCKOUT.max),
            Change::of("locked_until", None::<String>, Change::moment(until)),
        ]);
    let locked = db::users::lock(&state.db, &user.id, (until, hash_token(&token)), mail, &entry, now).await?;
    if locked {
        // The count starts again once the lock is over.
        db::throttle::forget(&state.db, &LOCKOUT, &user.id).await?;
        tracing::warn!(user = %user.id, "account locked after repeated wrong passwords");
    }
    Ok(locked)
}

/// The mail with the link that opens the account, written now (the link is only known now).
async fn unlock_mail(
    state: &AppState,
    user: &users::Model,
    until: DateTime<Utc>,
    token: &str,
) -> Result<NewMail, AppError> {
    let shop = crate::services::shops::find(state, user.shop_id).await?.ok_or(AppError::NotFound("Shop"))?;
    let url = format!("{}/dashboard/unlock/{token}", state.config.base_url);
    let letter = crate::services::mail::account_locked(&shop, user.language, &user.email, until, &url);
    let (html_body, text_body) = letter.render()?;
    let rendered = Rendered {
        customer_id: None,
        message_id: None,
        to_address: user.email.clone(),
        language: letter.lang.to_string(),
        subject: letter.subject,
        text_body,
        html_body,
    };
    Ok(NewMail::written(
        user.shop_id,
        MailKind::AccountLocked,
        user.id.clone(),
        state.config.mail_from.clone(),
        rendered,
    ))
}
