//! Links to the subscriber page: a random token (only its digest is kept) that opens the
//! customer's page once, before it expires. Mails carry one each; a subscriber asking by
//! e-mail and the API get one that lasts an hour.

use chrono::{DateTime, TimeDelta, Utc};
use sea_orm::{ConnectionTrait, DbErr};

use crate::config::Config;
use crate::db::portal::Opening;
use crate::domain::ids::random_hex;
use crate::domain::vocab::PortalTokenKind::Link as LINK;

/// How long a link asked for (by the subscriber, or minted through the API) opens the page.
pub const ASKED: TimeDelta = TimeDelta::hours(1);
/// How long the link in a receipt or reminder opens it: mails are read days later.
pub const IN_MAIL: TimeDelta = TimeDelta::days(7);

/// A new link opening the page for `opening` until `now + life`: its URL and end.
pub async fn mint(
    db: &impl ConnectionTrait,
    config: &Config,
    opening: &Opening<'_>,
    life: TimeDelta,
    now: DateTime<Utc>,
) -> Result<(String, DateTime<Utc>), DbErr> {
    let token = random_hex(24);
    let expires_at = crate::db::now_millis(now + life);
    crate::db::portal::insert(db, LINK, &token, opening, expires_at, now).await?;
    Ok((crate::web::urls::portal_link(config, &token), expires_at))
}
