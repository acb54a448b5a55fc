//! Pieces shared by the hosted pages: the error page and money as people read it.

use askama::Template;
use askama_web::WebTemplate;
use axum::response::{IntoResponse, Response};

use crate::domain::currency;
use crate::error::AppError;

/// An error shown as an HTML page with the error's status.
pub struct PageError(pub AppError);

#[derive(Template, WebTemplate)]
#[template(path = "error.html")]
struct ErrorPage {
    lang: &'static str,
    status: u16,
    title: &'static str,
    message: String,
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        let status = self.0.status();
        let page = ErrorPage {
            lang: "en",
            status: status.as_u16(),
            title: status.canonical_reason().unwrap_or("Error"),
            message: self.0.public_message(),
        };
        (status, page).into_response()
    }
}

/// `990` `EUR` → `9.90 EUR`.
pub fn price(amount: i64, code: &str) -> String {
    match currency::find(code) {
        Some(c) => format!("{} {}", currency::format_minor(amount, c), c.code),
        None => format!("{amount} {code}"),
    }
}
