//! The public hosted pages a customer's browser is sent to: `/products/{id}/pay` (and its
//! order confirmation), `/plans/{id}/pay`, and `/receipts/{payment_id}`. Clients that ask
//! for JSON get the object's id and link instead of a page.

use axum::Router;
use axum::http::{HeaderMap, StatusCode, header::ACCEPT, header::RETRY_AFTER};
use axum::response::{IntoResponse, Response};

use std::net::IpAddr;

use chrono::{DateTime, Utc};
use sea_orm::{DatabaseConnection, DbErr};

use crate::db::checkout_attempts::Claim;
use crate::db::{self, entities::payments};
use crate::domain::Errors;
use crate::domain::throttle;
use crate::domain::vocab::PaymentStatus;
use crate::services::payments::PayError;
use crate::web::csrf;
use crate::web::error::AppError;
use crate::web::state::AppState;
use crate::web::urls;

mod documents;
mod form;
mod page;
pub mod plans;
mod portal;
pub mod products;
mod receipts;
mod subscriptions;

pub use page::error_page;
pub use products::preview as preview_product;

use crate::web::i18n::Texts;
use form::FormView;
use page::{Notice, PayPage, Summary, respond_page};

/// Routes of the hosted pages.
pub fn router() -> Router<AppState> {
    Router::new()
        .merge(products::router())
        .merge(plans::router())
        .merge(receipts::router())
        .merge(documents::router())
        .merge(portal::router())
        .merge(subscriptions::router())
        .route_layer(axum::middleware::from_fn(detach_submits))
}

/// Submitted forms run in a task of their own (see [`crate::web::guard::detached`]): a payment
/// finishes, and is recorded, even if the browser goes away mid-request.
async fn detach_submits(request: axum::extract::Request, next: axum::middleware::Next) -> Response {
    match request.method() == axum::http::Method::POST {
        true => crate::web::guard::detached(next.run(request)).await,
        false => next.run(request).await,
    }
}

/// The checkout attempt of a submitted form, if the form carries this browser's CSRF token
/// and a well-formed attempt id.
fn attempt_of(headers: &HeaderMap, sent: &std::collections::HashMap<String, String>) -> Option<String> {
    if !csrf::verify(headers, sent.get("csrf").map(String::as_str)) {
        return None;
    }
    sent.get("attempt").filter(|a| a.len() == 32 && a.bytes().all(|b| b.is_ascii_hexdigit())).cloned()
}

/// Whether the client asked for JSON rather than a page.
fn wants_json(headers: &HeaderMap) -> bool {
    let accept = headers.get(ACCEPT).and_then(|v| v.to_str().ok()).unwrap_or("");
    accept.contains("application/json") && !accept.contains("text/html")
}

/// The JSON form of a pay link for API clients, or the error in JSON.
fn link_json(loaded: Result<(String, &'static str, String), AppError>) -> Response {
    match loaded {
        Ok((id, object, pay_url)) => axum::Json(crate::web::views::PayLink { id, object, pay_url }).into_response(),
        Err(e) => e.into_response(),
    }
}

/// One hosted payment page in the making: what it sells, in which language, where its form
/// posts, and where the browser goes after paying.
struct Checkout<'a> {
    state: &'a AppState,
    /// The id of what is paid for (a product, plan or subscription): attempts and the
    /// card-testing limit are counted per page.
    target: String,
    t: &'static Texts,
    summary: Summary,
    action: String,
    after: Option<String>,
    /// The shop: its secret key signs the way back to `after`.
    shop: &'a crate::db::entities::shops::Model,
    fields: Vec<crate::domain::vocab::VisibleField>,
    submit: String,
    /// Test mode: the page lists test cards and pays through the shop's test account.
    test: bool,
    /// The card is typed on this page (else on the processor's page, after it).
    card: bool,
    /// Where the processor may send the browser after the form (its card page, its bank
    /// checks): origins the page's form may lead to.
    elsewhere: Vec<String>,
    /// The shop can take this mode's payments (a live one needs a real processor, or the
    /// operator's consent to the simulation; a processor needs an account for the mode).
    payable: bool,
    /// A plan's page of a shop with coupons to redeem: its coupon form as it stands.
    coupon: Option<form::CouponView>,
}

impl Checkout<'_> {
    /// Where the card is typed, as the shop's processor takes it: on this form, or on the
    /// processor's page after it (the form then asks only the details, and its button goes
    /// on); a real processor's test cards are listed in test mode; and whether the page can
    /// be paid at all.
    async fn entry(mut self) -> Self {
        let found = crate::services::payments::acquirer_for(self.state, self.shop.id, self.test).await;
        if let Err(e @ (PayError::Db(_) | PayError::Internal(_))) = &found {
            tracing::error!(shop = self.shop.id, error = %e, "finding the shop's payment processor failed");
        }
        self.payable = found.is_ok();
        if let Ok(acquirer) = found {
            if !acquirer.is_simulated() {
                self.summary.test_cards = page::processor_test_cards(self.t, self.test, acquirer.test_cards());
            }
            self.elsewhere = acquirer.customer_origins();
            if acquirer.hosted() {
                self.card = false;
                self.submit = self.t.continue_to_payment.to_string();
            }
        }
        self
    }

    fn secure(&self) -> bool {
        self.state.config.base_url.starts_with("https://")
    }

    /// The page with a notice and no form.
    fn notice(mut self, status: StatusCode, title: &'static str, body: &'static str) -> Response {
        // Nothing can be paid here: no test cards to pay with, no terms to agree to.
        self.summary.test_cards.clear();
        self.summary.terms.clear();
        let page =
            PayPage { t: self.t, summary: self.summary, notice: Some(Notice { title, body }), form: None, back: None };
        respond_page(status, page, None, None, &[])
    }

    /// The page as a merchant previews it: the form, under a note that this is a preview
    /// (and whether paying it moves money).
    fn preview(self, headers: &HeaderMap) -> Response {
        let (csrf, cookie) = csrf::issue(headers, self.secure());
        let sent = Default::default();
        let body = match self.summary.test_cards.is_empty() {
            true => self.t.preview_body,
            false => self.t.preview_test_body,
        };
        let mut form = FormView::new(self.t, self.action, csrf, &self.fields, &sent, &Errors::default(), self.submit);
        form.card = self.card;
        let notice = Notice { title: self.t.preview_title, body };
        let page = PayPage { t: self.t, summary: self.summary, notice: Some(notice), form: Some(form), back: None };
        respond_page(StatusCode::OK, page, cookie, self.after.as_deref(), &self.elsewhere)
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
        form.card = self.card;
        form.coupon = self.coupon;
        // The code could not be redeemed when paying (the last redemption went elsewhere).
        if let (Some(coupon), Some(why)) = (form.coupon.as_mut(), errors.get("coupon").and_then(|m| m.first())) {
            coupon.code = sent.get("coupon").cloned().unwrap_or_default();
            (coupon.error, coupon.note) = (Some(self.t.problem("coupon", why)), None);
        }
        let page = PayPage { t: self.t, summary: self.summary, notice: None, form: Some(form), back: None };
        respond_page(status, page, cookie, self.after.as_deref(), &self.elsewhere)
    }

    /// Answers a submitted form: checks the CSRF token, the fields and the card-testing
    /// limit, claims the form's checkout attempt (a repeated or concurrent submit of the same
    /// form never pays again: it is shown the first one's result), pays with `pay`, and sends
    /// the browser on, or shows what went wrong with the form to try again.
    async fn submit<F, Fut>(
        self,
        headers: &HeaderMap,
        address: IpAddr,
        sent: std::collections::HashMap<String, String>,
        pay: F,
    ) -> Result<Response, AppError>
    where
        F: FnOnce(crate::domain::checkout::Checkout) -> Fut,
        Fut: Future<Output = Result<payments::Model, PayError>>,
    {
        let t = self.t;
        let Some(attempt) = attempt_of(headers, &sent) else {
            return Ok(self.notice(StatusCode::FORBIDDEN, t.expired_session, ""));
        };
        let now = Utc::now();
        let parsed = crate::domain::checkout::Checkout::parse(&self.fields, &sent, self.card, now);
        let checkout = match parsed {
            Ok(checkout) => checkout,
            Err(errors) => return Ok(self.form(StatusCode::UNPROCESSABLE_ENTITY, headers, &sent, &errors, None)),
        };
        let db = &self.state.db;
        let key = format!("{}|{address}", self.target);
        if let Some(wait) = db::throttle::wait(db, &throttle::DECLINES, &key, now).await? {
            let mut response = self.notice(StatusCode::TOO_MANY_REQUESTS, t.too_many_title, t.too_many_body);
            response.headers_mut().insert(RETRY_AFTER, crate::web::error::retry_after(wait));
            return Ok(response);
        }
        let lease = now + self.state.config.lease;
        let payment = match db::checkout_attempts::claim(db, &attempt, &self.target, lease, now).await? {
            Claim::Won => match pay(checkout).await {
                Ok(payment) => {
                    db::checkout_attempts::finish(db, &attempt, &payment.id, Utc::now()).await?;
                    if payment.status == PaymentStatus::Failed {
                        db::throttle::fail(db, &throttle::DECLINES, &key, Utc::now()).await?;
                    }
                    payment
                }
                // A database failure may come after the money moved: the attempt stays taken
                // (a repeat is told to check before paying again), never reopened.
                Err(PayError::Db(e)) => return Err(e.into()),
                Err(PayError::Internal(cause)) => return Err(AppError::Internal(cause)),
                Err(refused) => {
                    db::checkout_attempts::release(db, &attempt, Utc::now()).await?;
                    return Ok(self.refused(headers, &sent, refused));
                }
            },
            Claim::Done(payment_id) => match db::find_public::<payments::Entity>(db, &payment_id).await? {
                Some(payment) => payment,
                None => return Ok(self.notice(StatusCode::FORBIDDEN, t.expired_session, "")),
            },
            Claim::Running { until } => match wait_for(db, &attempt, until).await? {
                Some(payment) => payment,
                None if until < Utc::now() => {
                    let failure = Some((t.interrupted_title.to_string(), t.interrupted_body.to_string()));
                    return Ok(self.form(StatusCode::CONFLICT, headers, &sent, &Errors::default(), failure));
                }
                None => return Ok(self.notice(StatusCode::CONFLICT, t.in_progress_title, t.in_progress_body)),
            },
            Claim::Foreign => return Ok(self.notice(StatusCode::FORBIDDEN, t.expired_session, "")),
        };
        Ok(self.paid(headers, &sent, &payment))
    }

    /// The answer to a form whose payment was made: on to the merchant (or the receipt) if it
    /// went through, else the form again with the reason, to try another card.
    fn paid(
        self,
        headers: &HeaderMap,
        sent: &std::collections::HashMap<String, String>,
        payment: &payments::Model,
    ) -> Response {
        if payment.status == PaymentStatus::Processing {
            // The customer authenticates with their bank first (3-D Secure), or the processor's
            // answer is not known yet: the receipt tells how it ends.
            let to = payment.action_url.clone().unwrap_or_else(|| urls::receipt(&self.state.config, &payment.id));
            return axum::response::Redirect::to(&to).into_response();
        }
        if payment.failure_code.is_none() {
            let secret = crate::services::keys::api_secret(&self.state.vault, self.shop);
            return page::redirect_after(self.state, self.after.as_deref(), secret.as_deref(), payment);
        }
        let t = self.t;
        let code = payment.failure_code.as_deref().unwrap_or("");
        let title = match payment.status {
            _ if code == crate::external::acquirer::PAGE_UNAVAILABLE => t.page_unavailable_title,
            PaymentStatus::Error => t.error_title,
            _ => t.declined_title,
        };
        let reason = t.failure(code, payment.failure_message.as_deref().unwrap_or(""));
        self.form(StatusCode::PAYMENT_REQUIRED, headers, sent, &Errors::default(), Some((title.to_string(), reason)))
    }

    /// The answer to a form refused before anything was charged.
    fn refused(
        self,
        headers: &HeaderMap,
        sent: &std::collections::HashMap<String, String>,
        refused: PayError,
    ) -> Response {
        let t = self.t;
        match refused {
            PayError::Invalid(errors) => self.form(StatusCode::UNPROCESSABLE_ENTITY, headers, sent, &errors, None),
            PayError::Expired => self.notice(StatusCode::GONE, t.expired_title, t.expired_body),
            PayError::SoldOut => self.notice(StatusCode::CONFLICT, t.sold_out_title, t.sold_out_body),
            PayError::Archived => self.notice(StatusCode::GONE, t.archived_title, t.archived_body),
            PayError::LiveUnavailable => {
                self.notice(StatusCode::SERVICE_UNAVAILABLE, t.unavailable_title, t.unavailable_body)
            }
            PayError::InProgress => self.notice(StatusCode::CONFLICT, t.in_progress_title, t.in_progress_body),
            PayError::Db(e) => AppError::Db(e).into_response(),
            PayError::Internal(cause) => AppError::Internal(cause).into_response(),
        }
    }
}

/// The payment of an attempt another submit is making, once it is known (until its lease
/// runs out, at most half a minute).
async fn wait_for(
    db: &DatabaseConnection,
    attempt: &str,
    until: DateTime<Utc>,
) -> Result<Option<payments::Model>, DbErr> {
    let give_up = until.min(Utc::now() + chrono::Duration::seconds(30));
    while Utc::now() < give_up {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        if let Some(payment_id) = db::checkout_attempts::paid_by(db, attempt).await? {
            return db::find_public::<payments::Entity>(db, &payment_id).await;
        }
    }
    Ok(None)
}
