//! The subscriber page: who may see it and for how long. A link (from a mail, asked for by
//! e-mail, or minted through the API) opens it once, with a POST (mail scanners open every
//! GET they find); that opens a session of an hour, kept in a cookie. Asking for a link never
//! tells whether the address is known.

use chrono::{DateTime, TimeDelta, Utc};
use sea_orm::DbErr;

use crate::db::entities::{customers, portal_tokens};
use crate::db::mails::{NewMail, Rendered};
use crate::db::portal::Opening;
use crate::db::{self};
use crate::domain::ids::random_hex;
use crate::domain::mail::MailKind;
use crate::domain::throttle::PORTAL_LINKS;
use crate::domain::vocab::Language;
use crate::domain::vocab::PortalTokenKind::{Link as LINK, Session as SESSION};
use crate::services::mail::links;
use crate::web::error::AppError;
use crate::web::state::AppState;

/// How long a session lasts.
pub const SESSION_LIFE: TimeDelta = TimeDelta::hours(1);
/// Customers with one address a request sends links to, at most.
const PER_ADDRESS: u64 = 3;

/// What opening a link came to.
pub enum Opened {
    /// A new session: its token for the cookie, and what it opens.
    Session(String, portal_tokens::Model),
    /// The link was used before.
    Used(portal_tokens::Model),
    /// The link expired unused.
    Expired(portal_tokens::Model),
    /// No such link.
    Unknown,
}

/// Uses a link (once: of two at once, one opens a session).
pub async fn open(state: &AppState, link: &str, now: DateTime<Utc>) -> Result<Opened, DbErr> {
    if let Some(used) = db::portal::use_link(&state.db, link, now).await? {
        let token = random_hex(24);
        let opening = Opening {
            shop_id: used.shop_id,
            customer_id: &used.customer_id,
            language: used.language,
            return_url: used.return_url.as_deref(),
        };
        db::portal::insert(&state.db, SESSION, &token, &opening, now + SESSION_LIFE, now).await?;
        return Ok(Opened::Session(token, used));
    }
    Ok(match db::portal::find(&state.db, LINK, link).await? {
        Some(found) if found.used_at.is_some() => Opened::Used(found),
        Some(found) => Opened::Expired(found),
        None => Opened::Unknown,
    })
}

/// The live session of a cookie's token.
pub async fn session(state: &AppState, token: &str, now: DateTime<Utc>) -> Result<Option<portal_tokens::Model>, DbErr> {
    Ok(db::portal::find(&state.db, SESSION, token).await?.filter(|s| s.expires_at > now))
}

/// A link for `customer` (an hour), for the API: its URL and end.
pub async fn mint(
    state: &AppState,
    customer: &customers::Model,
    language: Language,
    return_url: Option<&str>,
    now: DateTime<Utc>,
) -> Result<(String, DateTime<Utc>), DbErr> {
    let opening = Opening { shop_id: customer.shop_id, customer_id: &customer.id, language, return_url };
    let txn = crate::db::begin(&state.db).await?;
    let minted = links::mint(&txn, &state.config, &opening, links::ASKED, now).await?;
    let change = vec![crate::domain::audit::Change::of(
        "expires_at",
        None::<String>,
        crate::domain::audit::Change::moment(minted.1),
    )];
    let object = ("customer", customer.id.as_str());
    db::audit::record_acting(&txn, customer.shop_id, "customer.portal_link_created", object, change, now).await?;
    txn.commit().await?;
    Ok(minted)
}

/// Mails each of the shop's customers with this address (up to 3) a link to their page;
/// nothing when none has it, when the instance sends no mail, or when the address (or the
/// asking browser's) asked too often: the answer is the same either way.
pub async fn request(
    state: &AppState,
    shop_id: i64,
    email: &str,
    client: &str,
    language: Language,
    now: DateTime<Utc>,
) -> Result<(), AppError> {
    if state.mailer.is_none() {
        return Ok(());
    }
    let keys = [format!("{shop_id}|{}", email.trim().to_lowercase()), format!("ip|{client}")];
    for key in &keys {
        if db::throttle::wait(&state.db, &PORTAL_LINKS, key, now).await?.is_some() {
            return Ok(());
        }
    }
    for key in &keys {
        db::throttle::fail(&state.db, &PORTAL_LINKS, key, now).await?;
    }
    for customer in db::customers::by_email(&state.db, shop_id, email, PER_ADDRESS).await? {
        send_link(state, &customer, language, now).await?;
    }
    Ok(())
}

/// Mails the customer a new link to their page (an hour).
pub async fn send_link(
    state: &AppState,
    customer: &customers::Model,
    language: Language,
    now: DateTime<Utc>,
) -> Result<(), AppError> {
    let Some(shop) = crate::services::shops::find(state, customer.shop_id).await? else { return Ok(()) };
    let (url, _) = mint(state, customer, language, None, now).await?;
    let letter = crate::services::mail::portal_link(&shop, language, false, &url);
    let (html_body, text_body) = letter.render()?;
    let settings = db::mails::settings_of(&state.db, &[shop.id]).await?;
    let sender = settings.get(&shop.id).and_then(|(_, from)| from.clone());
    let rendered = Rendered {
        customer_id: Some(customer.id.clone()),
        message_id: None,
        to_address: customer.email.clone(),
        language: letter.lang.to_string(),
        subject: letter.subject,
        text_body,
        html_body,
    };
    let sender = sender.unwrap_or_else(|| state.config.mail_from.clone());
    let mail = NewMail::written(shop.id, MailKind::PortalLink, customer.id.clone(), sender, rendered);
    db::mails::enqueue(&state.db, vec![mail], now).await?;
    Ok(())
}
