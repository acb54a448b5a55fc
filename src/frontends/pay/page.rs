//! Pieces shared by the hosted pages: the page with its summary, form or notice; the error
//! page; and the headers every hosted page carries.

use askama::Template;
use askama_web::WebTemplate;
use axum::http::header::{CACHE_CONTROL, CONTENT_SECURITY_POLICY, SET_COOKIE};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use chrono::Utc;

use super::form::FormView;
use crate::db::entities::payments;
use crate::domain::checkout::signed_return;
use crate::web::guard::csp;
use crate::web::i18n::{EN, Texts};
use crate::web::state::AppState;

/// What is being paid for, as the top of every hosted page shows it.
pub struct Summary {
    pub shop_name: String,
    pub title: String,
    pub description: String,
    pub price: String,
    /// "every month" for plans.
    pub every: Option<String>,
    /// A plan's terms, sentence by sentence (today's charge, the next ones, how to cancel).
    pub terms: Vec<String>,
    /// A test page's banner: the test cards to pay with and what each does; empty when live.
    pub test_cards: Vec<(String, &'static str)>,
    /// The tax of the price, when it names a rate above 0 %.
    pub tax: Option<String>,
}

/// The tax note of a page whose price is `price` (a product's: its tax and total are shown)
/// taxed as `taxing` says; none for an untaxed or 0 % price. `asks_vat_id`: the page asks
/// for a VAT id (a business in another EU country is then reverse-charged).
pub async fn tax_note(
    state: &crate::web::state::AppState,
    t: &Texts,
    shop_id: i64,
    taxing: &crate::domain::tax::Taxing,
    price: Option<(i64, crate::domain::currency::Currency)>,
    asks_vat_id: bool,
) -> Result<Option<String>, sea_orm::DbErr> {
    use crate::db::entities::tax_rates;
    let Some(id) = taxing.rate_id.as_deref() else { return Ok(None) };
    let Some(rate) = crate::db::find::<tax_rates::Entity>(&state.db, shop_id, id).await?.filter(|r| r.percentage > 0)
    else {
        return Ok(None);
    };
    let exclusive = taxing.behavior == crate::domain::tax::TaxBehavior::Exclusive;
    let amounts = price.and_then(|(amount, currency)| {
        let (charged, tax) = crate::domain::tax::charged(amount, rate.rate(), taxing.behavior, false)?;
        Some((t.price(tax, currency), t.price(charged, currency)))
    });
    let named = format!("{} {} %", rate.name, crate::domain::tax::format_percentage(rate.percentage));
    let seller = crate::db::sellers::find(&state.db, shop_id).await?;
    let reverse = asks_vat_id && exclusive && seller.country.as_deref().is_some_and(crate::domain::vat_id::is_eu);
    Ok(Some(t.tax_note(&named, exclusive, amounts, reverse)))
}

/// The test cards a test page offers, grouped as printed on a card, with what each does.
pub fn test_cards(t: &Texts, test: bool) -> Vec<(String, &'static str)> {
    use crate::external::acquirer::Behaviour;
    use crate::external::acquirer::simulated::TEST_CARDS;
    if !test {
        return Vec::new();
    }
    let shown = [Behaviour::Succeeds, Behaviour::Declined, Behaviour::InsufficientFunds];
    shown
        .iter()
        .zip(t.test_card_outcomes)
        .filter_map(|(behaviour, outcome)| {
            let (number, _, _) = TEST_CARDS.iter().find(|(_, b, _)| b == behaviour)?;
            let grouped: Vec<&str> = number.as_bytes().chunks(4).filter_map(|c| std::str::from_utf8(c).ok()).collect();
            Some((grouped.join(" "), outcome))
        })
        .collect()
}

/// A real processor's test cards (in its test mode, as the processor prints them): one
/// that goes through, one declined, one that asks for 3-D Secure.
pub fn processor_test_cards(t: &Texts, test: bool, cards: [&'static str; 3]) -> Vec<(String, &'static str)> {
    if !test {
        return Vec::new();
    }
    let [paid, declined, bank] = cards;
    vec![
        (paid.into(), t.test_card_outcomes[0]),
        (declined.into(), t.test_card_outcomes[1]),
        (bank.into(), t.test_card_3ds),
    ]
}

/// Why the form is not shown, or what happened.
pub struct Notice {
    pub title: &'static str,
    pub body: &'static str,
}

/// A hosted payment page: the summary, then a notice or the form.
#[derive(Template, WebTemplate)]
#[template(path = "pay/page.html")]
pub struct PayPage {
    pub t: &'static Texts,
    pub summary: Summary,
    pub notice: Option<Notice>,
    pub form: Option<FormView>,
    /// A way back without paying (the subscriber's page): its address and words.
    pub back: Option<(String, &'static str)>,
}

/// Answers a hosted page: never cached, the CSRF cookie when new, and a CSP whose
/// `form-action` also allows where the browser is sent after its form: `after` (where it
/// goes once paid) and `elsewhere` (origins of the processor's card page and bank checks).
pub fn respond_page(
    status: StatusCode,
    page: impl IntoResponse,
    cookie: Option<HeaderValue>,
    after: Option<&str>,
    elsewhere: &[String],
) -> Response {
    let mut response = (status, page).into_response();
    let headers = response.headers_mut();
    if let Some(cookie) = cookie {
        headers.append(SET_COOKIE, cookie);
    }
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    let origin = after.and_then(|u| url::Url::parse(u).ok()).map(|u| u.origin().ascii_serialization());
    let targets: Vec<String> = origin.into_iter().chain(elsewhere.iter().cloned()).collect();
    if let Ok(policy) = HeaderValue::from_str(&csp(&targets)) {
        headers.insert(CONTENT_SECURITY_POLICY, policy);
    }
    response
}

/// The 303 after a payment went through: to `target` (the product's return URL, else the
/// shop's URL), told the payment's id and status and signed with the shop's secret key
/// ([`signed_return`]); without a target, to paydesk's receipt.
pub fn redirect_after(
    state: &AppState,
    target: Option<&str>,
    secret: Option<&str>,
    payment: &payments::Model,
) -> Response {
    let status = payment.status.as_str();
    let to = target.and_then(|t| signed_return(t, &payment.id, status, secret, Utc::now()));
    let receipt = crate::web::urls::receipt(&state.config, &payment.id);
    Redirect::to(&to.unwrap_or(receipt)).into_response()
}

#[derive(Template, WebTemplate)]
#[template(path = "error.html")]
struct ErrorPage {
    t: &'static Texts,
    status: u16,
    title: &'static str,
    message: String,
}

/// The hosted pages' error page: the status and what the customer is told.
pub fn error_page(status: StatusCode, message: String) -> Response {
    let page =
        ErrorPage { t: &EN, status: status.as_u16(), title: status.canonical_reason().unwrap_or("Error"), message };
    (status, page).into_response()
}
