//! The event object: what happened, when, and the object as it was at that moment.

use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::timestamp;
use crate::db::entities::events;
use crate::domain::event::EventType;

/// An event as the API returns it (and Standard Webhooks deliveries carry it).
#[derive(Serialize, ToSchema)]
#[schema(as = Event)]
pub struct EventView {
    id: String,
    #[serde(rename = "type")]
    kind: EventType,
    /// The kind of object: `payment`, `refund`, `subscription`, `product`.
    #[schema(value_type = String, example = "payment")]
    object: &'static str,
    object_id: String,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    created_at: String,
    test: bool,
    data: EventData,
    shop_id: i64,
}

#[derive(Serialize, ToSchema)]
struct EventData {
    /// The object as it was when the event happened (a payment, refund, subscription or product).
    #[schema(value_type = Object)]
    object: Value,
}

impl From<&events::Model> for EventView {
    fn from(e: &events::Model) -> Self {
        EventView {
            id: e.id.clone(),
            kind: e.kind,
            object: e.kind.object(),
            object_id: e.object_id.clone(),
            created_at: timestamp(e.created_at),
            test: e.test,
            data: EventData { object: serde_json::from_str(&e.data).unwrap_or(Value::Null) },
            shop_id: e.shop_id,
        }
    }
}
