//! Webhook endpoints, the outbox of deliveries (filled in the transaction of each event,
//! emptied by workers that claim rows like the billing engine claims charges) and the log of
//! every attempt.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{
    ActiveModelTrait, ActiveValue::NotSet, ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, DbErr,
    EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect, Set,
};

use super::entities::{webhook_attempts as attempts, webhook_deliveries as deliveries, webhook_endpoints as endpoints};
use super::{ListError, Listed, Page, ShopOwned};
use crate::domain::audit::{self, Change, Entry};
use crate::domain::ids::{DELIVERY, WEBHOOK_ENDPOINT, new_id};
use crate::domain::webhook::{DeliveryStatus, EndpointFields, Scheme};

impl ShopOwned for endpoints::Entity {
    const SEQ: endpoints::Column = endpoints::Column::Seq;
    const ID: endpoints::Column = endpoints::Column::Id;
    const SHOP: endpoints::Column = endpoints::Column::ShopId;
    fn public_id(row: &endpoints::Model) -> &str {
        &row.id
    }
}

impl ShopOwned for deliveries::Entity {
    const SEQ: deliveries::Column = deliveries::Column::Seq;
    const ID: deliveries::Column = deliveries::Column::Id;
    const SHOP: deliveries::Column = deliveries::Column::ShopId;
    fn public_id(row: &deliveries::Model) -> &str {
        &row.id
    }
}

/// What the audit trail shows of an endpoint (its secret only as changed).
fn audited(endpoint: Option<&endpoints::Model>) -> serde_json::Value {
    match endpoint {
        Some(e) => serde_json::json!({
            "url": e.url, "description": e.description, "enabled_events": e.enabled_events, "enabled": e.enabled,
        }),
        None => serde_json::json!({}),
    }
}

/// Records `audit` about `endpoint` inside `txn`: what changed between `before` and `after`.
async fn record(
    txn: &impl ConnectionTrait,
    audit: &Entry,
    before: Option<&endpoints::Model>,
    after: Option<&endpoints::Model>,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    let id = before.or(after).map(|e| e.id.clone()).unwrap_or_default();
    let mut changes = audit::changes(&audited(before), &audited(after), &[]);
    if before.map(|e| &e.secret_sealed) != after.map(|e| &e.secret_sealed) && after.is_some() {
        changes.push(Change::secret("secret", before.is_some()));
    }
    super::audit::record(txn, &audit.clone().on("webhook_endpoint", id).changing(changes), now).await?;
    Ok(())
}

/// Stores a new endpoint with its (sealed) secret, recorded as `audit`.
pub async fn insert_endpoint(
    db: &DatabaseConnection,
    shop_id: i64,
    fields: &EndpointFields,
    id: String,
    secret_sealed: String,
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<endpoints::Model, DbErr> {
    let at = now;
    let now = super::now_millis(now);
    let txn = crate::db::begin(db).await?;
    let endpoint = endpoints::ActiveModel {
        seq: NotSet,
        id: Set(id),
        shop_id: Set(shop_id),
        url: Set(fields.url.clone().unwrap_or_default()),
        description: Set(fields.description.clone().flatten()),
        enabled_events: Set(fields.enabled_events.as_ref().map(|e| e.to_db()).unwrap_or_else(|| "*".into())),
        enabled: Set(fields.enabled.unwrap_or(true)),
        secret_sealed: Set(secret_sealed),
        previous_secret_sealed: Set(None),
        previous_secret_until: Set(None),
        failing_since: Set(None),
        disabled_reason: Set(None),
        created_at: Set(now),
        updated_at: Set(now),
    }
    .insert(&txn)
    .await?;
    record(&txn, audit, None, Some(&endpoint), at).await?;
    txn.commit().await?;
    Ok(endpoint)
}

/// A new endpoint's id (chosen before the row, as its secret is sealed to it).
pub fn new_endpoint_id() -> String {
    new_id(WEBHOOK_ENDPOINT)
}

/// Applies an update, recorded as `audit`; enabling an endpoint clears why it was disabled
/// and its failures.
pub async fn update_endpoint(
    db: &DatabaseConnection,
    endpoint: endpoints::Model,
    fields: &EndpointFields,
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<endpoints::Model, DbErr> {
    let before = endpoint.clone();
    let mut row: endpoints::ActiveModel = endpoint.into();
    if let Some(url) = &fields.url {
        row.url = Set(url.clone());
    }
    if let Some(description) = &fields.description {
        row.description = Set(description.clone());
    }
    if let Some(events) = &fields.enabled_events {
        row.enabled_events = Set(events.to_db());
    }
    if let Some(enabled) = fields.enabled {
        row.enabled = Set(enabled);
        if enabled {
            row.disabled_reason = Set(None);
            row.failing_since = Set(None);
        }
    }
    row.updated_at = Set(super::now_millis(now));
    let txn = crate::db::begin(db).await?;
    let after = row.update(&txn).await?;
    record(&txn, audit, Some(&before), Some(&after), now).await?;
    txn.commit().await?;
    Ok(after)
}

/// Deletes an endpoint and its deliveries still waiting, recorded as `audit`.
pub async fn delete_endpoint(
    db: &DatabaseConnection,
    endpoint: &endpoints::Model,
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    let txn = crate::db::begin(db).await?;
    deliveries::Entity::delete_many()
        .filter(deliveries::Column::EndpointId.eq(endpoint.id.as_str()))
        .filter(deliveries::Column::Status.eq(DeliveryStatus::Pending))
        .exec(&txn)
        .await?;
    let gone =
        endpoints::Entity::delete_many().filter(endpoints::Column::Id.eq(endpoint.id.as_str())).exec(&txn).await?;
    if gone.rows_affected == 1 {
        record(&txn, audit, Some(endpoint), None, now).await?;
    }
    txn.commit().await?;
    Ok(())
}

/// Replaces the signing secret, recorded as `audit`; the one it replaces keeps signing until
/// `overlap_until`.
pub async fn rotate_secret(
    db: &DatabaseConnection,
    endpoint: endpoints::Model,
    new_sealed: String,
    overlap_until: DateTime<Utc>,
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<endpoints::Model, DbErr> {
    let before = endpoint.clone();
    let previous = endpoint.secret_sealed.clone();
    let mut row: endpoints::ActiveModel = endpoint.into();
    row.previous_secret_sealed = Set(Some(previous));
    row.previous_secret_until = Set(Some(super::now_millis(overlap_until)));
    row.secret_sealed = Set(new_sealed);
    row.updated_at = Set(super::now_millis(now));
    let txn = crate::db::begin(db).await?;
    let after = row.update(&txn).await?;
    record(&txn, audit, Some(&before), Some(&after), now).await?;
    txn.commit().await?;
    Ok(after)
}

/// The enabled endpoints of these shops.
pub async fn enabled_endpoints(db: &impl ConnectionTrait, shop_ids: &[i64]) -> Result<Vec<endpoints::Model>, DbErr> {
    endpoints::Entity::find()
        .filter(endpoints::Column::ShopId.is_in(shop_ids.iter().copied()))
        .filter(endpoints::Column::Enabled.eq(true))
        .all(db)
        .await
}

/// A delivery about to be queued.
pub struct NewDelivery {
    pub shop_id: i64,
    pub event_id: String,
    pub endpoint_id: Option<String>,
    pub url: String,
    pub scheme: Scheme,
    /// Set for the deliveries of a fan-out (one per event and target); none for a redelivery.
    pub dedupe_key: Option<String>,
    pub test: bool,
}

/// Queues deliveries, due at once; one whose key is queued already is left out.
pub async fn enqueue(db: &impl ConnectionTrait, new: Vec<NewDelivery>, now: DateTime<Utc>) -> Result<(), DbErr> {
    let now = super::now_millis(now);
    let rows: Vec<deliveries::ActiveModel> = new
        .into_iter()
        .map(|d| deliveries::ActiveModel {
            seq: NotSet,
            id: Set(new_id(DELIVERY)),
            shop_id: Set(d.shop_id),
            event_id: Set(d.event_id),
            endpoint_id: Set(d.endpoint_id),
            url: Set(d.url),
            scheme: Set(d.scheme),
            dedupe_key: Set(d.dedupe_key.unwrap_or_else(|| new_id("redelivery_"))),
            status: Set(DeliveryStatus::Pending),
            attempts: Set(0),
            next_attempt_at: Set(now),
            claim_token: Set(None),
            claimed_until: Set(None),
            last_status_code: Set(None),
            last_error: Set(None),
            test: Set(d.test),
            created_at: Set(now),
            updated_at: Set(now),
        })
        .collect();
    let once = OnConflict::column(deliveries::Column::DedupeKey).do_nothing().to_owned();
    for chunk in rows.chunks(300) {
        match deliveries::Entity::insert_many(chunk.to_vec()).on_conflict(once.clone()).exec_without_returning(db).await
        {
            Ok(_) | Err(DbErr::RecordNotInserted) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Endpoints by id (the delivery worker's view).
pub async fn endpoints_by_ids(db: &impl ConnectionTrait, ids: Vec<String>) -> Result<Vec<endpoints::Model>, DbErr> {
    endpoints::Entity::find().filter(endpoints::Column::Id.is_in(ids)).all(db).await
}

/// Claims up to `limit` deliveries due by `due_by` for `token` until `lease_until`, unless
/// another worker holds a claim that has not run out at `now`; answers the claimed ones.
pub async fn claim_due(
    db: &impl ConnectionTrait,
    due_by: DateTime<Utc>,
    now: DateTime<Utc>,
    limit: u64,
    token: &str,
    lease_until: DateTime<Utc>,
) -> Result<Vec<deliveries::Model>, DbErr> {
    super::outbox::claim(
        db,
        "webhook_deliveries",
        DeliveryStatus::Pending.as_str(),
        (due_by, now),
        limit,
        token,
        lease_until,
    )
    .await?;
    deliveries::Entity::find()
        .filter(deliveries::Column::ClaimToken.eq(token))
        .filter(deliveries::Column::Status.eq(DeliveryStatus::Pending))
        .order_by_asc(deliveries::Column::Seq)
        .all(db)
        .await
}

/// How many deliveries wait to be sent (first attempts and retries).
pub async fn count_waiting(db: &impl ConnectionTrait) -> Result<u64, DbErr> {
    deliveries::Entity::find().filter(deliveries::Column::Status.eq(DeliveryStatus::Pending)).count(db).await
}

/// The columns of the deliveries' outbox.
const OUTBOX: super::outbox::Columns<deliveries::Column> = super::outbox::Columns {
    id: deliveries::Column::Id,
    status: deliveries::Column::Status,
    attempts: deliveries::Column::Attempts,
    next_attempt_at: deliveries::Column::NextAttemptAt,
    claim_token: deliveries::Column::ClaimToken,
    claimed_until: deliveries::Column::ClaimedUntil,
    last_code: deliveries::Column::LastStatusCode,
    last_error: deliveries::Column::LastError,
    updated_at: deliveries::Column::UpdatedAt,
};

/// What one attempt got.
pub struct Attempted {
    pub at: DateTime<Utc>,
    pub status_code: Option<i32>,
    pub latency_ms: i64,
    pub response_head: Option<String>,
    pub error: Option<String>,
    /// The delivery's status after it, and when it is tried again.
    pub status: DeliveryStatus,
    pub next_attempt_at: Option<DateTime<Utc>>,
}

/// Records an attempt of a delivery claimed under `token`; answers whether the claim still
/// held (another worker took over an expired claim otherwise, and this attempt is logged
/// but changes nothing).
pub async fn record_attempt(
    db: &impl ConnectionTrait,
    delivery: &deliveries::Model,
    token: &str,
    attempted: &Attempted,
) -> Result<bool, DbErr> {
    attempts::ActiveModel {
        seq: NotSet,
        delivery_id: Set(delivery.id.clone()),
        shop_id: Set(delivery.shop_id),
        at: Set(super::now_millis(attempted.at)),
        status_code: Set(attempted.status_code),
        latency_ms: Set(attempted.latency_ms),
        response_head: Set(attempted.response_head.clone()),
        error: Set(attempted.error.clone()),
    }
    .insert(db)
    .await?;
    let ended = super::outbox::Ended {
        status: attempted.status.as_str(),
        at: attempted.at,
        next_attempt_at: attempted.next_attempt_at,
        code: attempted.status_code,
        error: attempted.error.clone(),
    };
    let updated =
        super::outbox::end_attempt::<deliveries::Entity>(&OUTBOX, &delivery.id, token, &ended).exec(db).await?;
    Ok(updated.rows_affected == 1)
}

/// Notes how an endpoint's delivery went: a success clears its failures; a failure starts
/// them (if not started) and, when they started before `disable_before`, disables it for
/// `reason`. Answers whether this disabled it.
pub async fn note_endpoint(
    db: &impl ConnectionTrait,
    endpoint_id: &str,
    succeeded: bool,
    now: DateTime<Utc>,
    disable_before: DateTime<Utc>,
    reason: &str,
) -> Result<bool, DbErr> {
    let never: Option<DateTime<Utc>> = None;
    let of = || endpoints::Entity::update_many().filter(endpoints::Column::Id.eq(endpoint_id));
    if succeeded {
        of().col_expr(endpoints::Column::FailingSince, Expr::value(never))
            .filter(endpoints::Column::FailingSince.is_not_null())
            .exec(db)
            .await?;
        return Ok(false);
    }
    of().col_expr(endpoints::Column::FailingSince, Expr::value(Some(super::now_millis(now))))
        .filter(endpoints::Column::FailingSince.is_null())
        .exec(db)
        .await?;
    let disabled = of()
        .col_expr(endpoints::Column::Enabled, Expr::value(false))
        .col_expr(endpoints::Column::DisabledReason, Expr::value(Some(reason)))
        .filter(endpoints::Column::Enabled.eq(true))
        .filter(endpoints::Column::FailingSince.lt(super::now_millis(disable_before)))
        .exec(db)
        .await?;
    Ok(disabled.rows_affected == 1)
}

/// A page of the shop's deliveries (of one endpoint or one event, if given), newest first.
pub async fn list_deliveries(
    db: &impl ConnectionTrait,
    shop_id: i64,
    page: &Page,
    endpoint_id: Option<&str>,
    event_id: Option<&str>,
) -> Result<Listed<deliveries::Model>, ListError> {
    let mut condition = Condition::all();
    if let Some(id) = endpoint_id {
        condition = condition.add(deliveries::Column::EndpointId.eq(id));
    }
    if let Some(id) = event_id {
        condition = condition.add(deliveries::Column::EventId.eq(id));
    }
    super::list_where::<deliveries::Entity>(db, shop_id, page, condition).await
}

/// The attempts of a delivery, newest first (at most `limit`).
pub async fn attempts_of(
    db: &impl ConnectionTrait,
    delivery_ids: &[&str],
    limit: u64,
) -> Result<Vec<attempts::Model>, DbErr> {
    attempts::Entity::find()
        .filter(attempts::Column::DeliveryId.is_in(delivery_ids.iter().copied()))
        .order_by_desc(attempts::Column::Seq)
        .limit(limit)
        .all(db)
        .await
}

/// Deletes the deliveries that ended (delivered, or failed for good) before `before`, with
/// their attempts; answers how many deliveries went.
pub async fn prune_ended(db: &impl ConnectionTrait, before: DateTime<Utc>) -> Result<u64, DbErr> {
    let waiting = DeliveryStatus::Pending.as_str();
    super::outbox::prune(db, ("webhook_deliveries", waiting), ("webhook_attempts", "delivery_id"), before).await
}
