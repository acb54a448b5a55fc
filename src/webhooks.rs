//! The delivery worker: empties the outbox that events fill. Every instance runs one; a
//! delivery is claimed (an atomic UPDATE, `SKIP LOCKED` on PostgreSQL) before it is sent, so
//! two instances never send it at once, and a claim outlives the longest attempt. Requests
//! and billing runs only write outbox rows: a slow or dead receiver never holds them up.
//!
//! Standard Webhooks deliveries carry the event object, `webhook-id` (the event's id, the
//! same for every retry and redelivery), `webhook-timestamp` and `webhook-signature` (with
//! both secrets for a day after a rotation). bePaid notifications carry the object as bePaid
//! shapes it, HTTP Basic with the shop id and secret key, and `Content-Signature`.

use std::time::Duration;

use axum::http::{HeaderName, header};
use base64::Engine;
use chrono::{DateTime, Utc};
use futures::StreamExt;
use sea_orm::TransactionTrait;

use crate::db::entities::{events, shops, webhook_deliveries as deliveries, webhook_endpoints as endpoints};
use crate::db::webhooks::Attempted;
use crate::db::{self};
use crate::domain::ids::random_hex;
use crate::domain::webhook::{self as rules, DeliveryStatus, EndpointFields, Scheme};
use crate::error::AppError;
use crate::outbound::Answer;
use crate::state::AppState;
use crate::views::EventView;

/// A request ready to send: its headers and body.
type Prepared = (Vec<(HeaderName, String)>, Vec<u8>);

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
    tokio::spawn(async move {
        loop {
            if let Err(e) = deliver_due(&state, Utc::now()).await {
                tracing::error!(error = %e, "webhook deliveries failed");
            }
            tokio::time::sleep(POLL).await;
        }
    })
}

/// Sends every delivery due by `due_by` (now, or later to send retries early); answers how
/// many attempts were made.
pub async fn deliver_due(state: &AppState, due_by: DateTime<Utc>) -> Result<usize, AppError> {
    let mut made = 0;
    loop {
        let token = random_hex(12);
        let now = Utc::now();
        let claimed = db::webhooks::claim_due(&state.db, due_by, now, BATCH, &token, now + CLAIM).await?;
        if claimed.is_empty() {
            return Ok(made);
        }
        made += claimed.len();
        let attempts = futures::stream::iter(claimed).map(|d| attempt(state, d, &token)).buffer_unordered(CONCURRENT);
        let results: Vec<Result<(), AppError>> = attempts.collect().await;
        results.into_iter().collect::<Result<Vec<()>, AppError>>()?;
    }
}

/// One attempt of a claimed delivery, recorded with its outcome.
async fn attempt(state: &AppState, delivery: deliveries::Model, token: &str) -> Result<(), AppError> {
    let at = Utc::now();
    let prepared = prepare(state, &delivery, at).await?;
    let (answer, took) = match prepared {
        Ok((headers, body)) => {
            let (answer, took) = state.outbound.post(&delivery.url, &headers, body, rules::TIMEOUT).await;
            (answer.map_err(|e| e.0), took)
        }
        Err(why) => (Err(why), Duration::ZERO),
    };
    let delivered = matches!(&answer, Ok(a) if (200..300).contains(&a.status));
    let gone = matches!(&answer, Ok(a) if a.status == 410);
    let attempts = delivery.attempts + 1;
    let next = if delivered || gone { None } else { rules::next_attempt(attempts, at) };
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
    let txn = state.db.begin().await?;
    let held = db::webhooks::record_attempt(&txn, &delivery, token, &attempted).await?;
    if held && let Some(endpoint_id) = &delivery.endpoint_id {
        let (disable_before, reason) = match gone {
            true => (at + chrono::TimeDelta::days(1), "the receiver answered 410 Gone"),
            false => (at - rules::DISABLE_AFTER, "every delivery failed for 5 days"),
        };
        if db::webhooks::note_endpoint(&txn, endpoint_id, delivered, at, disable_before, reason).await? {
            tracing::warn!(endpoint = %endpoint_id, "disabled a webhook endpoint that keeps failing");
        }
    }
    txn.commit().await?;
    tracing::info!(
        delivery = %delivery.id, event = %delivery.event_id, url = %delivery.url, status = %status,
        http_status = ?attempted.status_code, latency_ms = attempted.latency_ms, error = ?attempted.error,
        "webhook attempt"
    );
    Ok(())
}

/// The headers and body of a delivery; `Err` with the reason when it cannot be sent at all
/// (its endpoint was disabled, its event is gone).
async fn prepare(
    state: &AppState,
    delivery: &deliveries::Model,
    at: DateTime<Utc>,
) -> Result<Result<Prepared, String>, AppError> {
    let Some(event) = db::find::<events::Entity>(&state.db, delivery.shop_id, &delivery.event_id).await? else {
        return Ok(Err("the event no longer exists".into()));
    };
    match delivery.scheme {
        Scheme::StandardWebhooks => {
            let endpoint = match &delivery.endpoint_id {
                Some(id) => db::webhooks::endpoint(&state.db, id).await?,
                None => None,
            };
            let Some(endpoint) = endpoint.filter(|e| e.enabled) else {
                return Ok(Err("the endpoint is disabled or deleted".into()));
            };
            Ok(standard(state, &endpoint, &event, at))
        }
        Scheme::Bepaid => {
            let shop = db::shops::find(&state.db, delivery.shop_id).await?.ok_or(AppError::NotFound("Shop"))?;
            Ok(Ok(bepaid(state, &shop, &event).await?))
        }
    }
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
async fn bepaid(state: &AppState, shop: &shops::Model, event: &events::Model) -> Result<Prepared, AppError> {
    let object: serde_json::Value = serde_json::from_str(&event.data).unwrap_or_default();
    let body = serde_json::to_vec(&rules::bepaid_body(event.kind, &object))
        .map_err(|e| AppError::Internal(format!("a notification body: {e}")))?;
    let keys = crate::keys::key_pair(&state.db, &state.vault, shop).await?;
    let mut headers = vec![(HeaderName::from_static("content-signature"), keys.sign(&body)?)];
    if let Some(secret) = crate::keys::api_secret(&state.vault, shop) {
        let credentials = base64::engine::general_purpose::STANDARD.encode(format!("{}:{secret}", shop.id));
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
    now: DateTime<Utc>,
) -> Result<(endpoints::Model, String), AppError> {
    let id = db::webhooks::new_endpoint_id();
    let secret = new_secret();
    let sealed = state.vault.seal(secret.as_bytes(), &endpoint_secret_context(&id));
    let endpoint = db::webhooks::insert_endpoint(&state.db, shop_id, fields, id, sealed, now).await?;
    Ok((endpoint, secret))
}

/// Gives an endpoint a new signing secret (shown this once); the old one keeps signing
/// beside it for a day, so receivers can switch without losing a delivery.
pub async fn rotate_secret(
    state: &AppState,
    endpoint: endpoints::Model,
    now: DateTime<Utc>,
) -> Result<(endpoints::Model, String), AppError> {
    let secret = new_secret();
    let sealed = state.vault.seal(secret.as_bytes(), &endpoint_secret_context(&endpoint.id));
    let overlap = now + rules::ROTATION_OVERLAP;
    Ok((db::webhooks::rotate_secret(&state.db, endpoint, sealed, overlap, now).await?, secret))
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
    let count = crate::events::redeliver(&state.db, &event, endpoint).await?;
    Ok(count)
}
