//! Two-step login: turning it on with a first code, checking a code at login (each code
//! once, recovery codes once each), new recovery codes, turning it off, and a shop that
//! requires it. Secrets are sealed by the vault; recovery codes are kept as digests.

use chrono::{DateTime, Utc};
use sea_orm::DbErr;

use crate::db::entities::users;
use crate::domain::audit::Entry;
use crate::domain::two_step::{self, Code, RECOVERY_CODES, SECRET_BYTES};
use crate::web::state::AppState;

/// A new authenticator secret.
pub fn new_secret() -> Vec<u8> {
    let mut secret = vec![0u8; SECRET_BYTES];
    getrandom::getrandom(&mut secret).expect("the operating system's random generator");
    secret
}

/// What the vault seals a user's secret under: it opens for that user only.
fn context(user_id: &str) -> String {
    format!("totp:{user_id}")
}

/// New recovery codes for `user_id`: the codes to show once, and the digests to keep.
pub fn new_codes(user_id: &str) -> (Vec<String>, Vec<String>) {
    let codes: Vec<String> = (0..RECOVERY_CODES)
        .map(|_| {
            let mut random = [0u8; 10];
            getrandom::getrandom(&mut random).expect("the operating system's random generator");
            two_step::recovery_code(random)
        })
        .collect();
    let digests = codes.iter().map(|c| two_step::recovery_digest(user_id, &c.replace('-', ""))).collect();
    (codes, digests)
}

/// Turns two-step login on for `user` with `secret`, if `typed` is its code at `now`: the
/// recovery codes to show once, or `None` when the code is wrong (or it was on already).
pub async fn enable(
    state: &AppState,
    user: &users::Model,
    secret: &[u8],
    typed: &str,
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<Option<Vec<String>>, DbErr> {
    let Some(Code::Totp(code)) = Code::parse(typed) else { return Ok(None) };
    let Some(step) = two_step::matching_step(secret, &code, now) else { return Ok(None) };
    let sealed = state.vault.seal(secret, &context(&user.id));
    let (codes, digests) = new_codes(&user.id);
    let enabled = crate::db::two_step::enable(&state.db, &user.id, sealed, step, digests, audit, now).await?;
    Ok(enabled.then_some(codes))
}

/// Whether `typed` is a code of `user`'s authenticator at `now` not used before, or one of
/// their recovery codes not used before; either is spent by being accepted.
pub async fn accept(state: &AppState, user: &users::Model, typed: &str, now: DateTime<Utc>) -> Result<bool, DbErr> {
    let Some(sealed) = &user.totp_sealed else { return Ok(false) };
    match Code::parse(typed) {
        Some(Code::Totp(code)) => {
            let Ok(secret) = state.vault.open(sealed, &context(&user.id)) else {
                tracing::error!("a two-step secret does not open with this instance's key");
                return Ok(false);
            };
            match two_step::matching_step(&secret, &code, now) {
                Some(step) => crate::db::two_step::spend_step(&state.db, &user.id, step).await,
                None => Ok(false),
            }
        }
        Some(Code::Recovery(normalised)) => {
            let digest = two_step::recovery_digest(&user.id, &normalised);
            crate::db::two_step::spend_code(&state.db, &user.id, &digest, now).await
        }
        None => Ok(false),
    }
}

/// New recovery codes for `user`, the old ones no longer working: the codes to show once.
pub async fn renew_codes(
    state: &AppState,
    user: &users::Model,
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<Vec<String>, DbErr> {
    let (codes, digests) = new_codes(&user.id);
    crate::db::two_step::renew_codes(&state.db, &user.id, digests, audit, now).await?;
    Ok(codes)
}
