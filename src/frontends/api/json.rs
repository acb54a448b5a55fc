//! The request body of the API: a JSON object, with every failure answered in the API's
//! own JSON error shape (never axum's plain-text rejections).

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::{StatusCode, header::CONTENT_TYPE};
use serde_json::{Map, Value};

use crate::domain::Errors;
use crate::domain::input::storable;
use crate::web::error::AppError;

/// A request body that is a JSON object; an empty body, or `null`, reads as `{}`.
pub struct JsonObject(pub Map<String, Value>);

impl<S: Send + Sync> FromRequest<S> for JsonObject {
    type Rejection = AppError;

    async fn from_request(req: Request, state: &S) -> Result<Self, AppError> {
        if let Some(content_type) = req.headers().get(CONTENT_TYPE) {
            let essence = content_type.to_str().unwrap_or("").split(';').next().unwrap_or("").trim();
            let essence = essence.to_ascii_lowercase();
            if essence != "application/json" && !essence.ends_with("+json") {
                return Err(AppError::UnsupportedMediaType);
            }
        }
        let bytes = Bytes::from_request(req, state).await.map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                AppError::PayloadTooLarge
            } else {
                AppError::BadRequest(rejection.body_text())
            }
        })?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(JsonObject(Map::new()));
        }
        match serde_json::from_slice(&bytes) {
            // `null` is a body with nothing in it, as an empty one.
            Ok(Value::Null) => Ok(JsonObject(Map::new())),
            Ok(Value::Object(map)) => {
                let mut errors = Errors::default();
                unstorable(&map, "", &mut errors);
                errors.into_result(|| JsonObject(map)).map_err(AppError::from)
            }
            Ok(_) => Err(AppError::BadRequest("Request body must be a JSON object".into())),
            Err(e) => Err(AppError::BadRequest(format!("Request body is not valid JSON: {e}"))),
        }
    }
}

/// Names (as `plan.interval`) every field whose name or text the database cannot store.
fn unstorable(map: &Map<String, Value>, prefix: &str, errors: &mut Errors) {
    for (key, value) in map {
        let name = format!("{prefix}{key}");
        match value {
            _ if !storable(key) => errors.add(&name, "is invalid"),
            Value::String(text) if !storable(text) => errors.add(&name, "is invalid"),
            Value::Object(inner) => unstorable(inner, &format!("{name}."), errors),
            Value::Array(items) if items.iter().any(|v| v.as_str().is_some_and(|t| !storable(t))) => {
                errors.add(&name, "is invalid")
            }
            _ => {}
        }
    }
}
