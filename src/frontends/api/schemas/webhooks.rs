//! Webhooks and the shop's notification settings: what the endpoints, the deliveries list, redelivering an event and `PUT /shop` accept.

use super::*;

/// A new webhook endpoint. The answer shows its signing secret, this once.
#[derive(ToSchema)]
#[schema(example = json!({
    "url": "https://erp.example/paydesk", "enabled_events": ["payment.*", "refund.failed"],
    "description": "ERP"
}))]
pub struct WebhookEndpointCreate {
    /// Where deliveries are POSTed: an absolute `http` or `https` URL of at most 2048
    /// characters. Private and loopback addresses are refused (422) unless the instance allows
    /// them (`PAYDESK_WEBHOOKS_ALLOW_PRIVATE`).
    #[schema(
        max_length = 2048,
        pattern = r"^https?://([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z]([A-Za-z0-9-]*[A-Za-z0-9])?(:[0-9]{1,4})?([/?#][^\x00]*)?$"
    )]
    url: String,
    /// A note for the merchant, at most 1000 characters.
    #[schema(max_length = 1000, pattern = r"^[^\x00]*$")]
    description: Option<String>,
    /// Which events the endpoint receives (at least one entry; duplicates are ignored).
    #[schema(min_items = 1, default = json!(["*"]))]
    enabled_events: Option<Vec<EnabledEventEntry>>,
    /// Whether deliveries are made.
    #[schema(default = true)]
    enabled: Option<FlexibleBoolean>,
}

/// A change to a webhook endpoint (`PUT` or `POST /webhook_endpoints/{id}`): only what is
/// sent changes. `null` leaves `url` and `enabled_events` as they are and clears
/// `description`. Enabling an endpoint clears its failure record.
#[derive(ToSchema)]
#[schema(example = json!({"enabled": false}))]
pub struct WebhookEndpointUpdate {
    /// Where deliveries are POSTed: an absolute `http` or `https` URL.
    #[schema(
        max_length = 2048,
        pattern = r"^$|^https?://([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z]([A-Za-z0-9-]*[A-Za-z0-9])?(:[0-9]{1,4})?([/?#][^\x00]*)?$"
    )]
    url: Option<String>,
    /// A note for the merchant, at most 1000 characters (`null` or blank clears it).
    #[schema(max_length = 1000, pattern = r"^[^\x00]*$")]
    description: Option<String>,
    /// Which events the endpoint receives (at least one entry).
    #[schema(min_items = 1)]
    enabled_events: Option<Vec<EnabledEventEntry>>,
    /// Whether deliveries are made.
    enabled: Option<FlexibleBoolean>,
}

/// The shop's notification settings (`PUT` or `POST /shop`); the body may be empty.
#[derive(ToSchema)]
#[schema(example = json!({"notification_url": "https://erp.example/bepaid"}))]
pub struct ShopUpdate {
    /// Where bePaid-style notifications go when the product or subscription names none: an
    /// absolute `http` or `https` URL; `null` or blank clears it, absent leaves it.
    #[schema(
        max_length = 2048,
        pattern = r"^$|^https?://([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z]([A-Za-z0-9-]*[A-Za-z0-9])?(:[0-9]{1,4})?([/?#][^\x00]*)?$"
    )]
    notification_url: Option<String>,
    /// Whether a dispute of a subscription's payment cancels the subscription at once.
    #[schema(nullable = false)]
    cancel_disputed_subscriptions: Option<FlexibleBoolean>,
    /// Whether a card a dispute stands against (open, lost, accepted or expired) is refused
    /// for new payments and subscriptions.
    #[schema(nullable = false)]
    refuse_disputed_cards: Option<FlexibleBoolean>,
    /// Whether an actionable early fraud warning refunds its payment and cancels its
    /// subscription.
    #[schema(nullable = false)]
    refund_fraud_warnings: Option<FlexibleBoolean>,
}

/// Sending an event again (`POST /events/{id}/redeliver`); the body may be empty.
#[derive(ToSchema)]
#[schema(example = json!({"endpoint_id": "we_0123456789abcdef"}))]
pub struct Redeliver {
    /// Only to this endpoint (even one that does not take the event's type; 404 if unknown).
    /// Absent: to every target of the event.
    #[schema(max_length = 64, pattern = r"^[A-Za-z0-9_]{1,64}$")]
    endpoint_id: Option<String>,
}

/// `GET /webhook_deliveries`: each delivery with its last attempts.
#[derive(serde::Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DeliveryFilterParams {
    /// Page size, 1 to 1000.
    #[param(minimum = 1, maximum = 1000, default = 100)]
    limit: Option<u64>,
    /// The last id of the previous page (an id of this list, else 404); empty means the first.
    #[param(max_length = 64, pattern = r"^[A-Za-z0-9_]{0,64}$")]
    starting_after: Option<String>,
    /// Deliveries to this endpoint (`we_…`).
    endpoint_id: Option<String>,
    /// Deliveries of this event (`evt_…`).
    event_id: Option<String>,
}
