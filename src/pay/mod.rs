//! The public hosted pages a customer's browser is sent to: `/products/{id}/pay` and
//! `/plans/{id}/pay`. Clients that ask for JSON get the object's id and link instead.

use axum::Router;
use axum::http::{HeaderMap, header::ACCEPT};
use axum::response::{IntoResponse, Response};

use crate::app::AppState;
use crate::error::AppError;

mod page;
mod plans;
mod products;

pub use page::PageError;

/// Routes of the hosted pages.
pub fn router() -> Router<AppState> {
    Router::new().merge(products::router()).merge(plans::router())
}

/// Whether the client asked for JSON rather than a page.
fn wants_json(headers: &HeaderMap) -> bool {
    let accept = headers.get(ACCEPT).and_then(|v| v.to_str().ok()).unwrap_or("");
    accept.contains("application/json") && !accept.contains("text/html")
}

/// Answers a page, or its JSON form, or the error in the form the client asked for.
fn respond<P: IntoResponse, J: IntoResponse>(
    headers: &HeaderMap,
    loaded: Result<P, AppError>,
    json: impl FnOnce(&P) -> J,
) -> Response {
    match (loaded, wants_json(headers)) {
        (Ok(page), true) => json(&page).into_response(),
        (Ok(page), false) => page.into_response(),
        (Err(e), true) => e.into_response(),
        (Err(e), false) => PageError(e).into_response(),
    }
}
