//! The addresses paydesk hands out: where the hosted pages live. The API, the dashboard and
//! the pages themselves build them here, so that they always agree.

use crate::config::Config;

/// A product's pay page: `{base_url}/products/<id>/pay`.
pub fn product_pay(config: &Config, id: &str) -> String {
    format!("{}/products/{id}/pay", config.base_url)
}

/// A product's order confirmation: `{checkout_url}/v2/confirm_order/<id>/<shop_id>`.
pub fn confirm_order(config: &Config, id: &str, shop_id: i64) -> String {
    format!("{}/v2/confirm_order/{id}/{shop_id}", config.checkout_url)
}

/// A plan's subscription page: `{base_url}/plans/<id>/pay`.
pub fn plan_pay(config: &Config, id: &str) -> String {
    format!("{}/plans/{id}/pay", config.base_url)
}

/// The page where a subscriber enters a card: `{base_url}/subscriptions/<id>/pay`.
pub fn subscription_pay(config: &Config, id: &str) -> String {
    format!("{}/subscriptions/{id}/pay", config.base_url)
}

/// A payment's receipt: `{base_url}/receipts/<payment_id>`.
pub fn receipt(config: &Config, payment_id: &str) -> String {
    format!("{}/receipts/{payment_id}", config.base_url)
}

/// An invoice's or credit note's page, public by its id: `{base_url}/documents/{id}`.
pub fn document(config: &Config, id: &str) -> String {
    format!("{}/documents/{id}", config.base_url)
}

/// Where a customer comes back to from the processor's page or their bank's check:
/// `{base_url}/payments/<payment_id>/return`.
pub fn payment_return(config: &Config, payment_id: &str) -> String {
    format!("{}/payments/{payment_id}/return", config.base_url)
}

/// Where a customer who left the processor's page without paying lands:
/// `{base_url}/payments/<payment_id>/back`.
pub fn payment_back(config: &Config, payment_id: &str) -> String {
    format!("{}/payments/{payment_id}/back", config.base_url)
}

/// Where a shop's bePaid notifications go: `{base_url}/notifications/bepaid/<shop_id>`.
pub fn bepaid_notifications(config: &Config, shop_id: i64) -> String {
    format!("{}/notifications/bepaid/{shop_id}", config.base_url)
}

/// Where a shop's Stripe account sends its webhooks (the endpoint the merchant adds).
pub fn stripe_webhooks(config: &Config, shop_id: i64) -> String {
    format!("{}/notifications/stripe/{shop_id}", config.base_url)
}

/// A link that opens a customer's subscriber page once: `{base_url}/portal/links/<token>`.
pub fn portal_link(config: &Config, token: &str) -> String {
    format!("{}/portal/links/{token}", config.base_url)
}

/// Where a subscriber asks for a link by e-mail: `{base_url}/portal/<shop_id>`.
pub fn portal_request(config: &Config, shop_id: i64) -> String {
    format!("{}/portal/{shop_id}", config.base_url)
}
