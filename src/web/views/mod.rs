//! The objects as the API shows them: what its answers carry, what the event log keeps as
//! snapshots and what notifications send. Built from stored rows; only the subscription,
//! which nests its plan, customer and last payment, reads the database.

use chrono::{DateTime, Utc};

pub mod api_key;
pub mod audit;
pub mod coupon;
pub mod customer;
pub mod dispute;
pub mod document;
pub mod event;
pub mod payment;
pub mod plan;
pub mod processor;
pub mod product;
pub mod refund;
pub mod revenue;
pub mod seller;
pub mod subscription;
pub mod tax_rate;
pub mod webhook;

pub use audit::AuditEventView;
pub use coupon::CouponView;
pub use customer::CustomerView;
pub use dispute::DisputeView;
pub use document::DocumentView;
pub use event::EventView;
pub use payment::PaymentView;
pub use plan::PlanView;
pub use product::ProductView;
pub use refund::RefundView;
pub use subscription::{Parts as SubscriptionParts, SubscriptionView};
pub use tax_rate::TaxRateView;
pub use webhook::{DeliveryView, EndpointView};

/// A pay link as programs read it: what is paid for, and where to send the customer.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct PayLink {
    /// The product's or plan's id.
    pub id: String,
    /// `product` or `plan`.
    #[schema(value_type = String, example = "product")]
    pub object: &'static str,
    /// The hosted page to send the customer's browser to.
    #[schema(format = "uri")]
    pub pay_url: String,
}

/// The fields of a hosted pay form, as the browser sends them. Which customer fields the
/// page asks for is the product's `visible_fields` (a plan's page asks for `email`).
#[derive(utoipa::ToSchema)]
#[allow(dead_code)]
pub struct PayForm {
    /// The page's anti-forgery token (with its cookie).
    csrf: String,
    /// The form's attempt: 32 hex digits, one payment per attempt.
    attempt: String,
    /// The card number, spaces allowed.
    card_number: String,
    /// 1 to 12.
    card_exp_month: String,
    /// Two or four digits.
    card_exp_year: String,
    /// Three or four digits.
    card_cvc: String,
    card_holder: String,
    email: Option<String>,
    first_name: Option<String>,
    last_name: Option<String>,
    country: Option<String>,
    state: Option<String>,
    city: Option<String>,
    address: Option<String>,
    zip: Option<String>,
    phone: Option<String>,
    /// `YYYY-MM-DD`.
    birth_date: Option<String>,
    taxpayer_id: Option<String>,
}

/// The health check's answer.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct Health {
    /// Always `ok`.
    #[schema(value_type = String, example = "ok")]
    pub status: &'static str,
}

/// Times as the API shows them: UTC with milliseconds, `2026-11-22T10:15:30.123Z`.
pub fn timestamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
