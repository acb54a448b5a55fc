//! One error type for the whole app. It answers as JSON (the API's error body) and marks the
//! answer with a [`Failure`], from which the app renders the error page of the dashboard or
//! the hosted pages instead when the request was theirs (see `app::error_pages`). Server
//! faults are logged and answered with a generic message.

use axum::Json;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use sea_orm::DbErr;

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
    /// An API key restricted to less than the request needs: 403, naming the permission
    /// (`payments:write`).
    #[error("This API key lacks the permission `{0}`: it may not make this request")]
    PermissionMissing(String),
    /// No such object (of this shop): 404.
    #[error("{0} not found")]
    NotFound(&'static str),
    /// A list's `starting_after` names no object of the list: 404 (the id is well formed,
    /// the object missing).
    #[error("Starting after is not an id of this list")]
    UnknownCursor,
    /// The object is not in a state that allows this: 409.
    #[error("{0}")]
    Conflict(String),
    /// A misused `Idempotency-Key` (invalid, or reused with another request): 422.
    #[error("{}", .0.message())]
    Idempotency(Errors),
    /// The request with this `Idempotency-Key` is still running: 409.
    #[error("A request with this Idempotency-Key is still being processed; retry when it has finished")]
    IdempotencyRunning,
    /// The acquirer declined: 502.
    #[error("The acquirer declined: {0}")]
    Declined(String),
    /// The acquirer failed, or its answer was lost: 502. The message says which.
    #[error("{0}")]
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
    /// The instance cannot serve now (its database is unreachable, or it is stopping): 503.
    #[error("{0}")]
    Unavailable(&'static str),
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
            ListError::UnknownCursor => AppError::UnknownCursor,
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
            AppError::Forbidden(_) | AppError::PermissionMissing(_) => StatusCode::FORBIDDEN,
            AppError::NotFound(_) | AppError::UnknownCursor => StatusCode::NOT_FOUND,
            AppError::Conflict(_) | AppError::IdempotencyRunning => StatusCode::CONFLICT,
            AppError::Idempotency(_) => StatusCode::UNPROCESSABLE_ENTITY,
            AppError::Acquirer(_) | AppError::Declined(_) => StatusCode::BAD_GATEWAY,
            AppError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            AppError::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            AppError::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            AppError::Db(e) if duplicate(e) => StatusCode::CONFLICT,
            AppError::Db(_) | AppError::Panic | AppError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            AppError::TooManyRequests(..) => StatusCode::TOO_MANY_REQUESTS,
            AppError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    /// The machine-readable `code` of the answer: one of [`ERROR_CODES`], stable across
    /// versions, for programs to branch on (the `message` is for people and may change).
    pub fn code(&self) -> &'static str {
        match self {
            AppError::Validation(_) => "parameter_invalid",
            AppError::BadRequest(_) => "invalid_request",
            AppError::Unauthorized => "authentication_failed",
            AppError::Forbidden(_) => "forbidden",
            AppError::PermissionMissing(_) => "permission_missing",
            AppError::NotFound(_) | AppError::UnknownCursor => "resource_missing",
            AppError::Conflict(_) => "invalid_state",
            AppError::Idempotency(_) | AppError::IdempotencyRunning => "idempotency_error",
            AppError::Declined(_) => "card_declined",
            AppError::Acquirer(_) => "acquirer_error",
            AppError::MethodNotAllowed => "method_not_allowed",
            AppError::PayloadTooLarge => "payload_too_large",
            AppError::UnsupportedMediaType => "unsupported_media_type",
            AppError::TooManyRequests(..) => "rate_limited",
            AppError::Db(e) if duplicate(e) => "concurrent_request",
            AppError::Db(_) | AppError::Panic | AppError::Internal(_) => "internal_error",
            AppError::Unavailable(_) => "service_unavailable",
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
        let base;
        let errors = match &self {
            AppError::Validation(errors) | AppError::Idempotency(errors) => Some(errors),
            AppError::UnknownCursor => {
                base = Errors::one("starting_after", "is not an id of this list");
                Some(&base)
            }
            AppError::BadRequest(_) => {
                base = Errors::one("base", message.clone());
                Some(&base)
            }
            _ => None,
        };
        let body = ErrorBody { message: &message, errors, code: self.code() };
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

/// The body of an error answer (in the OpenAPI document: `Error`).
#[derive(serde::Serialize, utoipa::ToSchema)]
#[schema(as = Error)]
pub struct ErrorBody<'a> {
    /// What went wrong, for people: for invalid parameters, each field with its first
    /// problem, joined by ". ". Wording may change.
    #[schema(value_type = String, example = "Title can't be blank")]
    message: &'a str,
    /// 400 and 422 only: each field (nested ones as `plan.interval`, the body as `base`,
    /// headers by name) with every problem found, in the order of the fields.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<std::collections::BTreeMap<String, Vec<String>>>, nullable = false)]
    errors: Option<&'a Errors>,
    /// What went wrong, for programs: one of the stable codes listed in the API docs.
    #[schema(value_type = ErrorCode)]
    code: &'static str,
}

/// The `code` of an error answer, in the OpenAPI document.
pub struct ErrorCode;

impl utoipa::PartialSchema for ErrorCode {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::schema::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .enum_values(Some(ERROR_CODES.iter().copied()))
            .description(Some("What went wrong, for programs; stable across versions"))
            .into()
    }
}

impl utoipa::ToSchema for ErrorCode {}

/// Every `code` an error answer can carry.
pub const ERROR_CODES: &[&str] = &[
    "parameter_invalid",
    "invalid_request",
    "authentication_failed",
    "permission_missing",
    "forbidden",
    "resource_missing",
    "invalid_state",
    "idempotency_error",
    "card_declined",
    "acquirer_error",
    "method_not_allowed",
    "payload_too_large",
    "unsupported_media_type",
    "rate_limited",
    "concurrent_request",
    "internal_error",
    "service_unavailable",
];

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
pub fn duplicate(e: &DbErr) -> bool {
    matches!(e.sql_err(), Some(sea_orm::SqlErr::UniqueConstraintViolation(_)))
}
