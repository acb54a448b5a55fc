//! One error type for the whole app. It answers as JSON (the API's error body) and marks the
//! answer with a [`Failure`], from which the app renders the error page of the dashboard or
//! the hosted pages instead when the request was theirs (see `app::error_pages`). Server
//! faults are logged and answered with a generic message.

use axum::Json;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use sea_orm::DbErr;
use serde_json::json;

use crate::db::ListError;
use crate::domain::Errors;

/// Everything a request can fail with.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// Invalid or missing parameters (spec section 7): 422.
    #[error("{}", .0.message())]
    Validation(Errors),
    /// A body that is not a JSON object, or a malformed request: 400.
    #[error("{0}")]
    BadRequest(String),
    /// Missing or wrong credentials: 401 with `WWW-Authenticate`.
    #[error("Invalid or missing credentials: use HTTP Basic with your shop id and secret key")]
    Unauthorized,
    /// A form without its CSRF token, or another refusal of a browser request: 403.
    #[error("{0}")]
    Forbidden(&'static str),
    /// No such object (of this shop): 404.
    #[error("{0} not found")]
    NotFound(&'static str),
    /// The object is not in a state that allows this: 409.
    #[error("{0}")]
    Conflict(String),
    /// The acquirer refused or failed: 502.
    #[error("The acquirer refused: {0}")]
    Acquirer(String),
    /// The path exists, the method does not: 405.
    #[error("Method not allowed")]
    MethodNotAllowed,
    /// The body is over the limit: 413.
    #[error("Request body is too large (the limit is 1 MiB)")]
    PayloadTooLarge,
    /// A body that is not JSON: 415.
    #[error("Content-Type must be application/json")]
    UnsupportedMediaType,
    /// A bug: a handler panicked. 500; the cause is logged.
    #[error("Internal server error")]
    Panic,
    /// A fault of paydesk itself (a stopped worker, a task that failed): 500; the cause is
    /// logged, never shown.
    #[error("{0}")]
    Internal(String),
    /// Too many attempts: 429, with when to try again.
    #[error("{0}")]
    TooManyRequests(String, std::time::Duration),
    /// The database is unreachable or failed: 500 (503 for health checks).
    #[error(transparent)]
    Db(#[from] DbErr),
}

impl From<Errors> for AppError {
    fn from(errors: Errors) -> Self {
        AppError::Validation(errors)
    }
}

impl From<ListError> for AppError {
    fn from(e: ListError) -> Self {
        match e {
            ListError::UnknownCursor => {
                let mut errors = Errors::default();
                errors.add("starting_after", "is not an id of this list");
                AppError::Validation(errors)
            }
            ListError::Db(e) => AppError::Db(e),
        }
    }
}

impl AppError {
    /// The status code of this error.
    pub fn status(&self) -> StatusCode {
        match self {
            AppError::Validation(_) => StatusCode::UNPROCESSABLE_ENTITY,
            AppError::BadRequest(_) => StatusCode::BAD_REQUEST,
            AppError::Unauthorized => StatusCode::UNAUTHORIZED,
            AppError::Forbidden(_) => StatusCode::FORBIDDEN,
            AppError::NotFound(_) => StatusCode::NOT_FOUND,
            AppError::Conflict(_) => StatusCode::CONFLICT,
            AppError::Acquirer(_) => StatusCode::BAD_GATEWAY,
            AppError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            AppError::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            AppError::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            AppError::Db(e) if duplicate(e) => StatusCode::CONFLICT,
            AppError::Db(_) | AppError::Panic | AppError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            AppError::TooManyRequests(..) => StatusCode::TOO_MANY_REQUESTS,
        }
    }

    /// The text shown to the client: never the inside of a server fault.
    pub fn public_message(&self) -> String {
        match self {
            AppError::Db(e) if duplicate(e) => {
                tracing::warn!(error = %e, "a duplicate key answered as a conflict");
                "This request conflicts with another one made at the same time; read the object again".to_string()
            }
            AppError::Db(e) => {
                tracing::error!(error = %e, "database error");
                "Internal server error".to_string()
            }
            AppError::Internal(cause) => {
                tracing::error!(cause = %cause, "internal error");
                "Internal server error".to_string()
            }
            other => other.to_string(),
        }
    }
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let status = self.status();
        let message = self.public_message();
        let body = match &self {
            AppError::Validation(errors) => json!({"message": message, "errors": errors}),
            AppError::BadRequest(_) => json!({"message": message, "errors": {"base": [message]}}),
            _ => json!({"message": message}),
        };
        let mut response = (status, Json(body)).into_response();
        response.extensions_mut().insert(Failure { message });
        if let AppError::TooManyRequests(_, wait) = &self {
            response.headers_mut().insert(header::RETRY_AFTER, retry_after(*wait));
        }
        if matches!(self, AppError::Unauthorized) {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, header::HeaderValue::from_static("Basic realm=\"paydesk\""));
        }
        response
    }
}

/// The mark of an error answer: what the client is told. The app renders a page from it
/// for the dashboard and the hosted pages.
#[derive(Debug, Clone)]
pub struct Failure {
    pub message: String,
}

/// A `Retry-After` value: whole seconds, at least one.
pub fn retry_after(wait: std::time::Duration) -> header::HeaderValue {
    header::HeaderValue::from(wait.as_secs().max(1) + u64::from(wait.subsec_nanos() > 0))
}

/// Whether a database error is a unique key that another request took first: the client's
/// race, answered 409, never a 500.
fn duplicate(e: &DbErr) -> bool {
    matches!(e.sql_err(), Some(sea_orm::SqlErr::UniqueConstraintViolation(_)))
}
