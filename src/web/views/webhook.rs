//! Webhook endpoints and deliveries as the API shows them.

use serde::Serialize;
use utoipa::ToSchema;

use super::timestamp;
use crate::db::entities::{webhook_attempts, webhook_deliveries, webhook_endpoints};
use crate::domain::webhook::{DeliveryStatus, EnabledEvents, Scheme};

/// A webhook endpoint; `secret` only in the answer that made it (create, rotation).
#[derive(Serialize, ToSchema)]
#[schema(as = WebhookEndpoint)]
pub struct EndpointView {
    id: String,
    url: String,
    description: Option<String>,
    enabled_events: Vec<String>,
    enabled: bool,
    /// Why paydesk disabled it (failing deliveries), if it did.
    disabled_reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    secret: Option<String>,
    shop_id: i64,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    created_at: String,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    updated_at: String,
}

impl EndpointView {
    /// The endpoint, with its secret when it is to be shown.
    pub fn new(e: &webhook_endpoints::Model, secret: Option<String>) -> Self {
        EndpointView {
            id: e.id.clone(),
            url: e.url.clone(),
            description: e.description.clone(),
            enabled_events: EnabledEvents::from_db(&e.enabled_events).entries().to_vec(),
            enabled: e.enabled,
            disabled_reason: e.disabled_reason.clone(),
            secret,
            shop_id: e.shop_id,
            created_at: timestamp(e.created_at),
            updated_at: timestamp(e.updated_at),
        }
    }
}

/// A delivery of an event, with its latest attempts.
#[derive(Serialize, ToSchema)]
#[schema(as = WebhookDelivery)]
pub struct DeliveryView {
    id: String,
    event_id: String,
    endpoint_id: Option<String>,
    url: String,
    scheme: Scheme,
    status: DeliveryStatus,
    attempts: i32,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    next_attempt_at: Option<String>,
    last_status_code: Option<i32>,
    last_error: Option<String>,
    test: bool,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    created_at: String,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    updated_at: String,
    recent_attempts: Vec<AttemptView>,
}

/// One attempt of a delivery.
#[derive(Serialize, ToSchema)]
#[schema(as = WebhookAttempt)]
pub struct AttemptView {
    at: String,
    status_code: Option<i32>,
    latency_ms: i64,
    response_head: Option<String>,
    error: Option<String>,
}

impl DeliveryView {
    /// The delivery with those of `attempts` that are its own.
    pub fn new(d: &webhook_deliveries::Model, attempts: &[webhook_attempts::Model]) -> Self {
        DeliveryView {
            id: d.id.clone(),
            event_id: d.event_id.clone(),
            endpoint_id: d.endpoint_id.clone(),
            url: d.url.clone(),
            scheme: d.scheme,
            status: d.status,
            attempts: d.attempts,
            next_attempt_at: (d.status == DeliveryStatus::Pending).then(|| timestamp(d.next_attempt_at)),
            last_status_code: d.last_status_code,
            last_error: d.last_error.clone(),
            test: d.test,
            created_at: timestamp(d.created_at),
            updated_at: timestamp(d.updated_at),
            recent_attempts: attempts
                .iter()
                .filter(|a| a.delivery_id == d.id)
                .map(|a| AttemptView {
                    at: timestamp(a.at),
                    status_code: a.status_code,
                    latency_ms: a.latency_ms,
                    response_head: a.response_head.clone(),
                    error: a.error.clone(),
                })
                .collect(),
        }
    }
}

/// A deleted object.
#[derive(Serialize, ToSchema)]
pub struct Deleted {
    pub id: String,
    /// Always `true`.
    pub deleted: bool,
}

/// An event queued to be sent again.
#[derive(Serialize, ToSchema)]
pub struct Redelivered {
    pub event_id: String,
    /// How many deliveries were queued.
    pub deliveries: usize,
}

/// The shop's settings that integrations read.
#[derive(Serialize, ToSchema)]
#[schema(as = Shop)]
pub struct ShopView {
    pub id: i64,
    pub name: String,
    /// The shop's site: where customers return when a product has no `return_url`.
    pub url: Option<String>,
    /// Where bePaid-style notifications go when the product or subscription names none.
    pub notification_url: Option<String>,
    /// PEM of the RSA key that verifies notifications' `Content-Signature`.
    pub public_key: String,
    /// The same key as bare base64 (as bePaid's back office shows it).
    pub public_key_base64: String,
    /// Whether notifications carry Basic auth (the shop's secret key is kept sealed).
    pub notifications_authenticated: bool,
    /// Whether a dispute of a subscription's payment cancels the subscription at once, so
    /// its card is never charged again (on by default).
    pub cancel_disputed_subscriptions: bool,
    /// Whether a card a dispute stands against (open, or lost, accepted or expired: not won)
    /// is refused for new payments and subscriptions of the shop (on by default).
    pub refuse_disputed_cards: bool,
    /// Whether an early fraud warning about a payment that can still be refunded (and has no
    /// dispute) refunds it and cancels its subscription (off by default).
    pub refund_fraud_warnings: bool,
}
