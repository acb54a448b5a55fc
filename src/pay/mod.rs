//! The public hosted pages a customer's browser is sent to: `/products/{id}/pay` (and its
//! order confirmation), `/plans/{id}/pay`, and `/receipts/{payment_id}`. Clients that ask
//! for JSON get the object's id and link instead of a page.

use axum::Router;
use axum::http::{HeaderMap, StatusCode, header::ACCEPT};
use axum::response::{IntoResponse, Response};

use crate::app::AppState;
use crate::domain::Errors;
use crate::error::AppError;
use crate::payments::PayError;

pub(crate) mod csrf;
mod form;
pub mod i18n;
mod page;
mod plans;
mod products;
mod receipts;
mod subscriptions;

pub use page::PageError;
pub use products::preview as preview_product;

use form::FormView;
use i18n::Texts;
use page::{Notice, PayPage, Summary, respond_page};

/// Routes of the hosted pages.
pub fn router() -> Router<AppState> {
    Router::new()
        .merge(products::router())
        .merge(plans::router())
        .merge(receipts::router())
        .merge(subscriptions::router())
}

/// Whether the client asked for JSON rather than a page.
fn wants_json(headers: &HeaderMap) -> bool {
    let accept = headers.get(ACCEPT).and_then(|v| v.to_str().ok()).unwrap_or("");
    accept.contains("application/json") && !accept.contains("text/html")
}

/// The JSON form of a pay link for API clients, or the error in JSON.
fn link_json(loaded: Result<(String, &'static str, String), AppError>) -> Response {
    match loaded {
        Ok((id, object, pay_url)) => {
            axum::Json(serde_json::json!({"id": id, "object": object, "pay_url": pay_url})).into_response()
        }
        Err(e) => e.into_response(),
    }
}

/// One hosted payment page in the making: what it sells, in which language, where its form
/// posts, and where the browser goes after paying.
struct Checkout<'a> {
    state: &'a AppState,
    t: &'static Texts,
    summary: Summary,
    action: String,
    after: Option<String>,
    fields: Vec<crate::domain::vocab::VisibleField>,
    submit: String,
}

impl Checkout<'_> {
    fn secure(&self) -> bool {
        self.state.config.base_url.starts_with("https://")
    }

    /// The page with a notice and no form.
    fn notice(self, status: StatusCode, title: &'static str, body: &'static str) -> Response {
        let page = PayPage { t: self.t, summary: self.summary, notice: Some(Notice { title, body }), form: None };
        respond_page(status, page, None, None)
    }

    /// The page as a merchant previews it: the form, under a note that this is a preview.
    fn preview(self, headers: &HeaderMap) -> Response {
        let (csrf, cookie) = csrf::issue(headers, self.secure());
        let sent = Default::default();
        let form = FormView::new(self.t, self.action, csrf, &self.fields, &sent, &Errors::default(), self.submit);
        let notice =
            Notice { title: "Preview", body: "This is the page your customers see; a payment made here is real." };
        let page = PayPage { t: self.t, summary: self.summary, notice: Some(notice), form: Some(form) };
        respond_page(StatusCode::OK, page, cookie, self.after.as_deref())
    }

    /// The page with its form, refilled from `sent`, showing `errors` or a `failure`.
    fn form(
        self,
        status: StatusCode,
        headers: &HeaderMap,
        sent: &std::collections::HashMap<String, String>,
        errors: &Errors,
        failure: Option<(String, String)>,
    ) -> Response {
        let (csrf, cookie) = csrf::issue(headers, self.secure());
        let mut form = FormView::new(self.t, self.action, csrf, &self.fields, sent, errors, self.submit);
        form.failure = failure;
        let page = PayPage { t: self.t, summary: self.summary, notice: None, form: Some(form) };
        respond_page(status, page, cookie, self.after.as_deref())
    }

    /// Answers a submitted form: checks the CSRF token and the fields, pays with `pay`, and
    /// sends the browser on, or shows what went wrong with the form to try again.
    async fn submit<F, Fut>(
        self,
        headers: &HeaderMap,
        sent: std::collections::HashMap<String, String>,
        pay: F,
    ) -> Response
    where
        F: FnOnce(crate::domain::checkout::Checkout) -> Fut,
        Fut: Future<Output = Result<crate::db::entities::payments::Model, PayError>>,
    {
        if !csrf::verify(headers, sent.get("csrf").map(String::as_str)) {
            let t = self.t;
            return self.notice(StatusCode::FORBIDDEN, t.expired_session, "");
        }
        let parsed = crate::domain::checkout::Checkout::parse(&self.fields, &sent, chrono::Utc::now());
        let checkout = match parsed {
            Ok(checkout) => checkout,
            Err(errors) => return self.form(StatusCode::UNPROCESSABLE_ENTITY, headers, &sent, &errors, None),
        };
        let t = self.t;
        match pay(checkout).await {
            Ok(payment) if payment.failure_code.is_none() => {
                page::redirect_after(self.state, self.after.as_deref(), &payment)
            }
            Ok(payment) => {
                let title = if payment.status == "error" { t.error_title } else { t.declined_title };
                let code = payment.failure_code.as_deref().unwrap_or("");
                let reason = t.failure(code, payment.failure_message.as_deref().unwrap_or(""));
                self.form(
                    StatusCode::PAYMENT_REQUIRED,
                    headers,
                    &sent,
                    &Errors::default(),
                    Some((title.to_string(), reason)),
                )
            }
            Err(PayError::Invalid(errors)) => {
                self.form(StatusCode::UNPROCESSABLE_ENTITY, headers, &sent, &errors, None)
            }
            Err(PayError::Expired) => self.notice(StatusCode::GONE, t.expired_title, t.expired_body),
            Err(PayError::SoldOut) => self.notice(StatusCode::CONFLICT, t.sold_out_title, t.sold_out_body),
            Err(PayError::LiveUnavailable) => {
                self.notice(StatusCode::SERVICE_UNAVAILABLE, t.unavailable_title, t.unavailable_body)
            }
            Err(PayError::Db(e)) => PageError(AppError::Db(e)).into_response(),
        }
    }
}
