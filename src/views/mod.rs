//! The objects as the API shows them: what its answers carry, what the event log keeps as
//! snapshots and what notifications send. Built from stored rows; only the subscription,
//! which nests its plan, customer and last payment, reads the database.

use chrono::{DateTime, Utc};

pub mod customer;
pub mod event;
pub mod payment;
pub mod plan;
pub mod product;
pub mod refund;
pub mod subscription;
pub mod webhook;

pub use customer::CustomerView;
pub use event::EventView;
pub use payment::PaymentView;
pub use plan::PlanView;
pub use product::ProductView;
pub use refund::RefundView;
pub use subscription::SubscriptionView;
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

/// The health check's answer.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct Health {
    /// Always `ok`.
    #[schema(value_type = String, example = "ok")]
    pub status: &'static str,
}

/// Times as the API shows them: UTC with milliseconds, `2026-11-22T10:15:30.123Z`.
pub fn timestamp(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}
