//! Who is calling: the API authenticates a shop by HTTP Basic (shop id, secret key), then
//! checks that the key may be used from the caller's address and may make this request (its
//! permissions, against what the route needs: `domain::api_key::needs`, a route it does not
//! know needing a key without restrictions).

use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use axum::extract::MatchedPath;

use crate::db::{self, entities::shops};
use crate::domain::api_key::{self, Needs, Permissions};
use crate::domain::audit::Actor;
use crate::domain::throttle;
use crate::web::error::AppError;
use crate::web::state::AppState;
use std::sync::Arc;

/// The shop an API request is made by.
#[derive(Clone)]
pub struct ApiShop(pub Arc<shops::Model>);

impl FromRequestParts<AppState> for ApiShop {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, AppError> {
        // Authenticated already (by the idempotency layer).
        if let Some(shop) = parts.extensions.get::<ApiShop>() {
            return Ok(shop.clone());
        }
        let now = state.clock.now();
        let found = match basic_credentials(parts) {
            Some((user, password)) => match user.trim().parse::<i64>() {
                Ok(shop_id) => crate::services::shops::authenticate(state, shop_id, &password, now).await?,
                Err(_) => None,
            },
            None => None,
        };
        let address = crate::web::guard::client_ip(parts, state);
        // The right key always gets in, whatever other clients at its address sent.
        if let Some((shop, key)) = found {
            if !api_key::reachable(key.networks.as_deref(), address) {
                return Err(AppError::Forbidden("This API key may not be used from this address"));
            }
            let needs = match parts.extensions.get::<MatchedPath>() {
                Some(route) => api_key::needs(parts.method.as_str(), route.as_str()),
                None => Needs::Unrestricted,
            };
            if !Permissions::from_stored(key.permissions.as_deref()).allow(needs) {
                return Err(AppError::PermissionMissing(Permissions::name(needs)));
            }
            parts.extensions.insert(KeyAccess(key.permissions.is_some()));
            db::audit::acting::act_as(Actor::api_key(&key.id, &key.name, key.prefix.as_deref()));
            crate::services::api_keys::note_use(state, &key, address, now);
            return Ok(ApiShop(shop));
        }
        // Wrong ones count in the database (every instance sees them); over the limit, an
        // address's wrong keys are answered 429 without counting them any more.
        if let Some(wait) = address.and_then(|a| state.api_locks.wait(a, now)) {
            return Err(too_many(wait));
        }
        if let Some(address) = address {
            let key = address.to_string();
            let limit = throttle::Limit { max: state.config.api_auth_failures, ..throttle::API_AUTH };
            db::throttle::fail(&state.db, &limit, &key, now).await?;
            if let Some(wait) = db::throttle::wait(&state.db, &limit, &key, now).await? {
                state.api_locks.lock(address, now, wait);
            }
        }
        Err(AppError::Unauthorized)
    }
}

/// Whether the request's key is restricted, for the few checks a route's permission cannot
/// make alone (see [`KeyAccess::may_set_notification_url`]).
#[derive(Clone, Copy, Debug)]
pub struct KeyAccess(bool);

impl KeyAccess {
    /// Refuses a restricted key a body that sets a `notification_url` other than `current`
    /// (the object's own, on an update): the shop's notifications carry its standard key, so
    /// only a key without restrictions may choose where they go (403 naming `unrestricted`).
    /// Clearing it sends them to the shop's own notification URL, which is allowed.
    pub fn may_set_notification_url(
        self,
        body: &serde_json::Map<String, serde_json::Value>,
        current: Option<&str>,
    ) -> Result<(), AppError> {
        let sent = body.get("notification_url").and_then(|v| v.as_str()).map(str::trim);
        let changes = sent.is_some_and(|url| !url.is_empty() && Some(url) != current);
        match self.0 && changes {
            true => Err(AppError::PermissionMissing(Permissions::name(Needs::Unrestricted))),
            false => Ok(()),
        }
    }
}

impl FromRequestParts<AppState> for KeyAccess {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, AppError> {
        ApiShop::from_request_parts(parts, state).await?;
        Ok(parts.extensions.get::<KeyAccess>().copied().unwrap_or(KeyAccess(true)))
    }
}

fn too_many(wait: std::time::Duration) -> AppError {
    AppError::TooManyRequests(
        "Too many requests with wrong credentials from this address; try again later".into(),
        wait,
    )
}

fn basic_credentials(parts: &Parts) -> Option<(String, String)> {
    let value = parts.headers.get(AUTHORIZATION)?.to_str().ok()?;
    let (scheme, encoded) = value.trim().split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let decoded = String::from_utf8(STANDARD.decode(encoded.trim()).ok()?).ok()?;
    let (user, password) = decoded.split_once(':')?;
    Some((user.to_string(), password.to_string()))
}
