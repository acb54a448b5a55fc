//! The delivery worker: empties the outbox that events fill. Every instance runs one; a
//! delivery is claimed (an atomic UPDATE, `SKIP LOCKED` on PostgreSQL) before it is sent, so
//! two instances never send it at once, and a claim outlives the longest attempt. Requests
//! and billing runs only write outbox rows: a slow or dead receiver never holds them up.
//!
//! Standard Webhooks deliveries carry the event object, `webhook-id` (the event's id, the
//! same for every retry and redelivery), `webhook-timestamp` and `webhook-signature` (with
//! both secrets for a day after a rotation). bePaid notifications carry the object as bePaid
//! shapes it, HTTP Basic with the shop id and secret key, and `Content-Signature`.

use std::collections::HashMap;
use std::time::Duration;

use axum::http::{HeaderName, header};
use base64::Engine;
use chrono::{DateTime, Utc};
use futures::StreamExt;

use crate::db::entities::{events, webhook_deliveries as deliveries, webhook_endpoints as endpoints};
use crate::db::webhooks::Attempted;
use crate::db::{self};
use crate::domain::audit::{Change, Entry};
use crate::domain::ids::random_hex;
use crate::domain::webhook::{self as rules, DeliveryStatus, EndpointFields, Scheme};
use crate::external::outbound::Answer;
use crate::external::telemetry;
use crate::services::keys::KeyPair;
use crate::web::error::AppError;
use crate::web::state::AppState;
use crate::web::views::EventView;

/// A request ready to send: its headers and body.
type Prepared = (Vec<(HeaderName, String)>, Vec<u8>);

/// Events one fan-out takes.
const FAN_OUT: u64 = 500;
/// Deliveries one claim takes.
const BATCH: u64 = 50;
/// Deliveries in flight at once per instance.
const CONCURRENT: usize = 16;
/// How long a claim holds: longer than any attempt.
const CLAIM: chrono::TimeDelta = chrono::TimeDelta::seconds(60);
/// How often the worker looks for due deliveries.
const POLL: Duration = Duration::from_millis(500);

/// Runs the worker of this instance until the process ends.
pub fn start(state: AppState) -> tokio::task::JoinHandle<()> {
    crate::services::worker::every(state, POLL, "webhook deliveries", |state| async move {
        deliver_due(&state, Utc::now()).await
    })
}

/// Fans out the events recorded meanwhile, then sends every delivery due by `due_by` (now,
/// or later to send retries early); answers how many attempts were made.
pub async fn deliver_due(state: &AppState, due_by: DateTime<Utc>) -> Result<usize, AppError> {
    while crate::services::events::fan_out(&state.db, FAN_OUT).await? > 0 {}
    // What was fanned out just now is due too.
    let due_by = due_by.max(Utc::now());
    let mut made = 0;
    loop {
        // A stopping instance records the batch it holds and claims no more.
        if state.lifecycle.is_stopping() {
            return Ok(made);
        }
        let token = random_hex(12);
        let now = Utc::now();
        let claimed = db::webhooks::claim_due(&state.db, due_by, now, BATCH, &token, now + CLAIM).await?;
        if claimed.is_empty() {
            return Ok(made);
        }
        made += claimed.len();
        let context = Context::load(state, &claimed).await?;
        let attempts = futures::stream::iter(claimed).map(|d| attempt(state, &context, d)).buffer_unordered(CONCURRENT);
        let attempted: Vec<(deliveries::Model, Attempted)> = attempts.collect().await;
        record(state, &token, attempted).await?;
    }
}

/// What a batch of deliveries needs, read once: their events, endpoints, and the shops'
/// keys for notifications.
struct Context {
    events: HashMap<String, events::Model>,
    endpoints: HashMap<String, endpoints::Model>,
    /// Per shop: its id, key pair and secret key (if kept).
    shops: HashMap<i64, (KeyPair, Option<String>)>,
}

impl Context {
    async fn load(state: &AppState, batch: &[deliveries::Model]) -> Result<Context, AppError> {
        let event_ids = batch.iter().map(|d| d.event_id.clone()).collect();
        let events = db::events::by_ids(&state.db, event_ids).await?;
        let endpoint_ids = batch.iter().filter_map(|d| d.endpoint_id.clone()).collect();
        let endpoints = db::webhooks::endpoints_by_ids(&state.db, endpoint_ids).await?;
        let mut shop_ids: Vec<i64> = batch.iter().filter(|d| d.scheme == Scheme::Bepaid).map(|d| d.shop_id).collect();
        shop_ids.sort_unstable();
        shop_ids.dedup();
        let mut shops = HashMap::new();
        for shop_id in shop_ids {
            let shop = crate::services::shops::find(state, shop_id).await?.ok_or(AppError::NotFound("Shop"))?;
            let keys = crate::services::keys::key_pair(state, &shop).await?;
            shops.insert(shop_id, (keys, crate::services::keys::api_secret(&state.vault, &shop)));
        }
        Ok(Context {
            events: events.into_iter().map(|e| (e.id.clone(), e)).collect(),
            endpoints: endpoints.into_iter().map(|e| (e.id.clone(), e)).collect(),
            shops,
        })
    }

    /// The headers and body of a delivery; `Err` with the reason when it cannot be sent at
    /// all (its endpoint was disabled or deleted, its event is gone).
    fn prepare(&self, state: &AppState, delivery: &deliveries::Model, at: DateTime<Utc>) -> Result<Prepared, String> {
        let event = self.events.get(&delivery.event_id).ok_or("the event no longer exists")?;
        match delivery.scheme {
            Scheme::StandardWebhooks => {
                let endpoint = delivery.endpoint_id.as_ref().and_then(|id| self.endpoints.get(id));
                let endpoint = endpoint.filter(|e| e.enabled).ok_or("the endpoint is disabled or deleted")?;
                standard(state, endpoint, event, at)
            }
            Scheme::Bepaid => {
                let (keys, secret) = self.shops.get(&delivery.shop_id).ok_or("the shop is gone")?;
                bepaid(delivery.shop_id, keys, secret.as_deref(), event).map_err(|e| e.to_string())
            }
        }
    }
}

/// One attempt of a claimed delivery, recorded with its outcome.
async fn attempt(state: &AppState, context: &Context, delivery: deliveries::Model) -> (deliveries::Model, Attempted) {
    let at = Utc::now();
    let (answer, took, unsendable) = match context.prepare(state, &delivery, at) {
        Ok((headers, body)) => {
            let (answer, took) = state.outbound.post(&delivery.url, &headers, body, rules::TIMEOUT).await;
            (answer.map_err(|e| e.0), took, false)
        }
        Err(why) => (Err(why), Duration::ZERO, true),
    };
    let delivered = matches!(&answer, Ok(a) if (200..300).contains(&a.status));
    let gone = matches!(&answer, Ok(a) if a.status == GONE);
    let attempts = delivery.attempts + 1;
    // A delivery that cannot be sent at all (its endpoint disabled or deleted) is not tried
    // again: it fails now, and is sent again by hand once the endpoint is back.
    let next = if delivered || gone || unsendable { None } else { rules::next_attempt(attempts, at) };
    let status = match (delivered, next) {
        (true, _) => DeliveryStatus::Delivered,
        (false, Some(_)) => DeliveryStatus::Pending,
        (false, None) => DeliveryStatus::Failed,
    };
    let (status_code, response_head, error) = match &answer {
        Ok(Answer { status, head }) => (Some(i32::from(*status)), Some(head.clone()), None),
        Err(why) => (None, None, Some(why.clone())),
    };
    let attempted = Attempted {
        at,
        status_code,
        latency_ms: i64::try_from(took.as_millis()).unwrap_or(i64::MAX),
        response_head,
        error,
        status,
        next_attempt_at: next,
    };
    (delivery, attempted)
}

/// 410 Gone: the receiver asks for no more deliveries.
const GONE: u16 = 410;

/// Records the attempts of a batch in one transaction, and notes how each endpoint fared.
async fn record(state: &AppState, token: &str, attempted: Vec<(deliveries::Model, Attempted)>) -> Result<(), AppError> {
    let txn = crate::db::begin(&state.db).await?;
    for (delivery, attempted) in &attempted {
        let held = db::webhooks::record_attempt(&txn, delivery, token, attempted).await?;
        if held && let Some(endpoint_id) = &delivery.endpoint_id {
            let (at, delivered) = (attempted.at, attempted.status == DeliveryStatus::Delivered);
            let (disable_before, reason) = match attempted.status_code == Some(i32::from(GONE)) {
                true => (at + chrono::TimeDelta::days(1), "the receiver answered 410 Gone"),
                false => (at - rules::DISABLE_AFTER, "every delivery failed for 5 days"),
            };
            if db::webhooks::note_endpoint(&txn, endpoint_id, delivered, at, disable_before, reason).await? {
                tracing::warn!(endpoint = %endpoint_id, "disabled a webhook endpoint that keeps failing");
            }
        }
    }
    txn.commit().await?;
    for (delivery, attempted) in &attempted {
        telemetry::delivery(match attempted.status {
            DeliveryStatus::Delivered => "delivered",
            DeliveryStatus::Failed => "failed",
            _ => "retrying",
        });
        tracing::info!(
            delivery = %delivery.id, event = %delivery.event_id, url = %delivery.url, status = %attempted.status,
            http_status = ?attempted.status_code, latency_ms = attempted.latency_ms, error = ?attempted.error,
            "webhook attempt"
        );
    }
    Ok(())
}

/// A Standard Webhooks delivery: the event object, signed with the endpoint's secret (and
/// the one it replaced, during the day after a rotation).
fn standard(
    state: &AppState,
    endpoint: &endpoints::Model,
    event: &events::Model,
    at: DateTime<Utc>,
) -> Result<Prepared, String> {
    let body = serde_json::to_vec(&EventView::from(event)).map_err(|e| e.to_string())?;
    let timestamp = at.timestamp();
    let context = endpoint_secret_context(&endpoint.id);
    let mut secrets = vec![endpoint.secret_sealed.as_str()];
    if let (Some(previous), Some(until)) = (&endpoint.previous_secret_sealed, endpoint.previous_secret_until)
        && until > at
    {
        secrets.push(previous);
    }
    let mut signatures = Vec::new();
    for sealed in secrets {
        let secret = state.vault.open_text(sealed, &context).map_err(|e| e.to_string())?;
        signatures.push(rules::sign(&secret, &event.id, timestamp, &body).ok_or("a malformed signing secret")?);
    }
    let headers = vec![
        (HeaderName::from_static("webhook-id"), event.id.clone()),
        (HeaderName::from_static("webhook-timestamp"), timestamp.to_string()),
        (HeaderName::from_static("webhook-signature"), signatures.join(" ")),
    ];
    Ok((headers, body))
}

/// A bePaid notification: the object as bePaid shapes it, with the shop's Basic auth (when
/// paydesk keeps its secret) and the RSA `Content-Signature` of the exact body.
fn bepaid(shop_id: i64, keys: &KeyPair, secret: Option<&str>, event: &events::Model) -> Result<Prepared, AppError> {
    let object: serde_json::Value = serde_json::from_str(&event.data).unwrap_or_default();
    let child = event.child_transaction.as_deref().and_then(|c| serde_json::from_str(c).ok());
    let body = serde_json::to_vec(&rules::bepaid_body(event.kind, &object, child.as_ref()))
        .map_err(|e| AppError::Internal(format!("a notification body: {e}")))?;
    let mut headers = vec![(HeaderName::from_static("content-signature"), keys.sign(&body)?)];
    if let Some(secret) = secret {
        let credentials = base64::engine::general_purpose::STANDARD.encode(format!("{shop_id}:{secret}"));
        headers.push((header::AUTHORIZATION, format!("Basic {credentials}")));
    }
    Ok((headers, body))
}

/// What an endpoint's sealed secrets are bound to.
fn endpoint_secret_context(endpoint_id: &str) -> String {
    format!("webhook-endpoint-secret:{endpoint_id}")
}

/// A new endpoint of the shop; answers it with its signing secret, shown this once.
pub async fn create_endpoint(
    state: &AppState,
    shop_id: i64,
    fields: &EndpointFields,
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<(endpoints::Model, String), AppError> {
    let id = db::webhooks::new_endpoint_id();
    let secret = new_secret();
    let sealed = state.vault.seal(secret.as_bytes(), &endpoint_secret_context(&id));
    let endpoint = db::webhooks::insert_endpoint(&state.db, shop_id, fields, id, sealed, audit, now).await?;
    Ok((endpoint, secret))
}

/// Gives an endpoint a new signing secret (shown this once); the old one keeps signing
/// beside it for a day, so receivers can switch without losing a delivery.
pub async fn rotate_secret(
    state: &AppState,
    endpoint: endpoints::Model,
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<(endpoints::Model, String), AppError> {
    let secret = new_secret();
    let sealed = state.vault.seal(secret.as_bytes(), &endpoint_secret_context(&endpoint.id));
    let overlap = now + rules::ROTATION_OVERLAP;
    Ok((db::webhooks::rotate_secret(&state.db, endpoint, sealed, overlap, audit, now).await?, secret))
}

/// The endpoint's current signing secret.
pub fn secret_of(state: &AppState, endpoint: &endpoints::Model) -> Result<String, AppError> {
    state
        .vault
        .open_text(&endpoint.secret_sealed, &endpoint_secret_context(&endpoint.id))
        .map_err(|e| AppError::Internal(format!("the secret of {}: {e}", endpoint.id)))
}

fn new_secret() -> String {
    let mut random = [0u8; 32];
    getrandom::getrandom(&mut random).expect("the operating system's random generator");
    rules::new_secret(random)
}

/// Sends the shop's event again: to one endpoint (even one that does not take its type),
/// or to every enabled endpoint that takes it and its notification URL. Answers the new
/// deliveries' count.
pub async fn redeliver(
    state: &AppState,
    shop_id: i64,
    event_id: &str,
    endpoint: Option<&endpoints::Model>,
) -> Result<usize, AppError> {
    let event = db::find::<events::Entity>(&state.db, shop_id, event_id).await?.ok_or(AppError::NotFound("Event"))?;
    let txn = crate::db::begin(&state.db).await?;
    let count = crate::services::events::redeliver(&txn, &event, endpoint).await?;
    let changes = vec![
        Change::of("endpoint", None::<String>, endpoint.map(|e| e.id.as_str())),
        Change::of("deliveries", None::<usize>, count),
    ];
    db::audit::record_acting(&txn, shop_id, "event.redelivered", ("event", event_id), changes, Utc::now()).await?;
    txn.commit().await?;
    Ok(count)
}
