//! Who is calling: the API authenticates a shop by HTTP Basic (shop id, secret key).

use axum::extract::FromRequestParts;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use crate::app::AppState;
use crate::db::{entities::shops, shops as shop_db};
use crate::error::AppError;

/// The shop an API request is made by.
pub struct ApiShop(pub shops::Model);

impl FromRequestParts<AppState> for ApiShop {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, AppError> {
        let (user, password) = basic_credentials(parts).ok_or(AppError::Unauthorized)?;
        let shop_id: i64 = user.trim().parse().map_err(|_| AppError::Unauthorized)?;
        shop_db::authenticate(&state.db, shop_id, &password).await?.map(ApiShop).ok_or(AppError::Unauthorized)
    }
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
