//! Who is calling: the API authenticates a shop by HTTP Basic (shop id, secret key).

use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use chrono::Utc;

use crate::db::{self, entities::shops};
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
        let shop = match basic_credentials(parts) {
            Some((user, password)) => match user.trim().parse::<i64>() {
                Ok(shop_id) => crate::services::shops::authenticate(state, shop_id, &password).await?,
                Err(_) => None,
            },
            None => None,
        };
        // The right key always gets in, whatever other clients at its address sent.
        if let Some(shop) = shop {
            db::audit::acting::act_as(crate::domain::audit::Actor::api_key());
            return Ok(ApiShop(shop));
        }
        // Wrong ones count in the database (every instance sees them); over the limit, an
        // address's wrong keys are answered 429 without counting them any more.
        let address = crate::web::guard::client_ip(parts, state);
        let now = Utc::now();
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
