//! Real money through a shop's Stripe account, against paydesk's own Stripe double, for what
//! localstripe lacks: Checkout Sessions (products, plans that save the card, free trials in
//! setup mode, abandoned pages), the outcome read from Stripe and never from the return URL,
//! answers lost under every fault (one PaymentIntent, found again by its metadata or replayed
//! under its key), `authentication_required` on a renewal, declines and processing errors
//! following the retry table by their kind, and webhooks: repeated, forged, stale, rolled
//! secrets, and refunds and captures made in Stripe's dashboard.

mod checkout;
mod faults;
mod renewals;

use chrono::{Duration, Utc};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::bepaid_pay::{events_of, new_product, payment_of, quantity, set_card, stored, sweep};
use crate::doubles::stripe::{self as double, Fault, HOLD, StripeDouble, WEBHOOK_SECRET};
use crate::helpers::*;
use crate::portal::{Visitor, minted, open};
use crate::subscriptions::{advance, card_json, clock, plan};

/// The app with Stripe's API at a new double (answers waited for 2 seconds), and a shop of
/// it whose test payments go through the double, cards typed on `entry`.
pub async fn stripe_shop(backend: Backend, entry: &str) -> (TestApp, Shop, StripeDouble) {
    let stripe = StripeDouble::start().await;
    let args = paydesk::config::ConfigArgs {
        stripe_api_url: Some(stripe.url.clone()),
        processor_timeout_seconds: Some("2".into()),
        ..Default::default()
    };
    let app = TestApp::spawn_with(backend, args).await;
    let shop = app.shop("Corner Books").await;
    let body = json!({"kind": "stripe", "card_entry": entry,
                      "test": {"secret_key": double::SECRET, "webhook_secret": WEBHOOK_SECRET}});
    let (status, processor) = app.put(&shop, "/shop/processor", &body).await;
    assert_eq!(status, StatusCode::OK, "{processor}");
    (app, shop, stripe)
}

/// The Checkout Session an answer sends the customer to.
pub fn session_of(page: &Page, stripe: &StripeDouble) -> String {
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.html);
    let prefix = format!("{}/pay/", stripe.url);
    page.location().strip_prefix(&prefix).unwrap_or_else(|| panic!("to Stripe's page: {}", page.location())).to_string()
}

/// A subscription on a test clock started on Checkout with 4242 (its customer's id, the
/// Stripe Customer its card belongs to), whose saved card then behaves as `number`.
async fn started_on_checkout(
    app: &TestApp,
    shop: &Shop,
    stripe: &StripeDouble,
    plan: &str,
    clock: &str,
    number: &str,
) -> (String, String, String) {
    let id = awaiting_card(app, shop, plan, clock).await;
    let card_page = format!("/subscriptions/{id}/pay");
    let form = app.open_form(&card_page).await;
    let session = session_of(&app.submit(&card_page, &form, &[]).await, stripe);
    stripe.pay_session(&session, "4242424242424242").unwrap();
    app.page(&format!("/payments/{}/return", stripe.session(&session).form["client_reference_id"])).await;
    let (customer, stripe_customer) = saved_card_behaves_as(app, stripe, &id, number).await;
    (id, customer, stripe_customer)
}

/// A subscription of `plan` on `clock` made through the API without a card, waiting for it
/// on its card page (`/subscriptions/{id}/pay`): its id.
pub async fn awaiting_card(app: &TestApp, shop: &Shop, plan: &str, clock: &str) -> String {
    let body = json!({"plan": {"id": plan}, "customer": customer_body(), "test_clock": clock});
    let (status, sub) = app.post(shop, "/subscriptions", &body).await;
    assert_eq!(status, StatusCode::CREATED, "{sub}");
    sub["id"].as_str().unwrap().to_string()
}

/// Makes the card an active subscription saved with its Stripe Customer behave as `number`
/// from now on: the subscription's customer and that Stripe Customer.
pub async fn saved_card_behaves_as(app: &TestApp, stripe: &StripeDouble, id: &str, number: &str) -> (String, String) {
    let kept =
        paydesk::db::find_public::<paydesk::db::entities::subscriptions::Entity>(&app.db, id).await.unwrap().unwrap();
    assert_eq!(kept.state.as_str(), "active");
    let stripe_customer = kept.card_token.unwrap().split_once('/').unwrap().0.to_string();
    set_card(app, id, &format!("{stripe_customer}/{}", stripe.attach_card(&stripe_customer, number))).await;
    (kept.customer_id, stripe_customer)
}

/// Where the shop's Stripe webhooks go.
fn hook(app: &TestApp, shop: &Shop) -> String {
    format!("{}/notifications/stripe/{}", app.base, shop.id)
}
