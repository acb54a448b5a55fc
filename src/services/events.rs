//! Recording what happened: every change an integrator would act on becomes an event of the
//! append-only log, written with a snapshot of the object (as the API shows it) in the same
//! transaction as the change. The log is the webhooks' outbox: [`fan_out`] queues each
//! event's deliveries, one per webhook endpoint that takes its type, and a bePaid
//! notification for a product's payment or a subscription with a notification URL (the
//! object's, else the shop's). A subscription's timeline lines and its events are stored
//! together by [`timeline`], so the two never disagree.

use std::collections::{BTreeMap, HashMap};

use sea_orm::{ConnectionTrait, DatabaseConnection, DbErr};

use crate::config::Config;
use chrono::Utc;

use crate::db::entities::{
    events, payments, plans, products, refunds, subscription_events, subscriptions, webhook_endpoints,
};
use crate::db::mails::NewMail;
use crate::db::webhooks::NewDelivery;
use crate::db::{self, events::NewEvent};
use crate::domain::event::EventType;
use crate::domain::mail::MailKind;
use crate::domain::vocab::PaymentStatus;
use crate::domain::webhook::{EnabledEvents, Scheme};
use crate::web::views::{PaymentView, PlanView, ProductView, RefundView, SubscriptionParts as Parts, SubscriptionView};

/// An event about a payment.
pub fn payment(kind: EventType, p: &payments::Model) -> NewEvent {
    new(p.shop_id, kind, &p.id, p.test, &PaymentView::from(p))
}

/// An event about a payment's capture, void or refund: the child transaction `uid` of
/// `amount` it reports goes with it (bePaid-style notifications give it as bePaid does).
pub fn payment_child(kind: EventType, p: &payments::Model, uid: &str, amount: i64) -> NewEvent {
    NewEvent { child: Some(serde_json::json!({"uid": uid, "amount": amount})), ..payment(kind, p) }
}

/// An event about a refund.
pub fn refund(kind: EventType, r: &refunds::Model) -> NewEvent {
    new(r.shop_id, kind, &r.id, r.test, &RefundView::from(r))
}

/// An event about a product.
pub fn product(kind: EventType, p: &products::Model, config: &Config) -> NewEvent {
    new(p.shop_id, kind, &p.id, p.test, &ProductView::new(p, config))
}

/// An event about a plan.
pub fn plan(kind: EventType, p: &plans::Model, config: &Config) -> NewEvent {
    new(p.shop_id, kind, &p.id, p.test, &PlanView::new(p, config))
}

/// An event about a subscription that changed without a line on its timeline (a cancel
/// asked for the end of its period, or withdrawn; a new card).
pub async fn subscription(
    db: &impl ConnectionTrait,
    config: &Config,
    kind: EventType,
    sub: &subscriptions::Model,
) -> Result<NewEvent, DbErr> {
    let view = SubscriptionView::load_all(db, config, std::slice::from_ref(sub)).await?.pop();
    let data = view.map(|v| serde_json::to_value(&v).unwrap_or_default()).unwrap_or_default();
    Ok(NewEvent { shop_id: sub.shop_id, kind, object_id: sub.id.clone(), test: sub.test, data, child: None })
}

/// Records an event about a subscription that changed without a line on its timeline, in
/// the caller's transaction; answers the subscription as the event shows it.
pub async fn record_about(
    db: &impl ConnectionTrait,
    config: &Config,
    kind: EventType,
    sub: &subscriptions::Model,
) -> Result<SubscriptionView, DbErr> {
    record_of(db, config, Parts::default(), kind, sub).await
}

/// [`record_about`], its snapshot made of `parts` read before the transaction (see
/// [`timeline_of`]).
pub async fn record_of(
    db: &impl ConnectionTrait,
    config: &Config,
    mut parts: Parts,
    kind: EventType,
    sub: &subscriptions::Model,
) -> Result<SubscriptionView, DbErr> {
    parts.complete(db, std::slice::from_ref(sub)).await?;
    let view = SubscriptionView::of(config, sub, &parts);
    let data = serde_json::to_value(&view).unwrap_or_default();
    let event = NewEvent { shop_id: sub.shop_id, kind, object_id: sub.id.clone(), test: sub.test, data, child: None };
    record(db, config, vec![event]).await?;
    Ok(view)
}

fn new(shop_id: i64, kind: EventType, id: &str, test: bool, view: &impl serde::Serialize) -> NewEvent {
    let data = serde_json::to_value(view).unwrap_or_default();
    NewEvent { shop_id, kind, object_id: id.to_string(), test, data, child: None }
}

/// Appends events to the log, with the subscriber mails they cause (when the instance sends
/// mail and the shop sends that kind): both are outboxes written in the caller's
/// transaction. Their deliveries are queued by [`fan_out`], so recording costs a request or
/// a billing run the same with or without webhooks.
pub async fn record(db: &impl ConnectionTrait, config: &Config, events: Vec<NewEvent>) -> Result<(), DbErr> {
    let mut batch = db::Batch::new(db);
    record_into(db, config, &mut batch, events).await?;
    batch.send(db).await
}

/// [`record`], what it writes added to `batch` (sent by the caller in `db`), so that a change
/// sends its rows in one go.
async fn record_into(
    db: &impl ConnectionTrait,
    config: &Config,
    batch: &mut db::Batch,
    events: Vec<NewEvent>,
) -> Result<(), DbErr> {
    if events.is_empty() {
        return Ok(());
    }
    // The mails the events cause: (the event's place, its kind).
    let causes: Vec<(usize, MailKind)> = match config.smtp {
        Some(_) => {
            events.iter().enumerate().filter_map(|(i, e)| Some((i, MailKind::of_event(e.kind, &e.data)?))).collect()
        }
        None => Vec::new(),
    };
    let about: Vec<(i64, String, bool)> =
        causes.iter().map(|&(i, _)| (events[i].shop_id, events[i].object_id.clone(), events[i].test)).collect();
    let ids = db::events::append_into(db, batch, &events).await?;
    crate::services::revenue::follow(db, batch, &events, &ids).await?;
    if causes.is_empty() {
        return Ok(());
    }
    let mut shop_ids: Vec<i64> = about.iter().map(|a| a.0).collect();
    shop_ids.sort_unstable();
    shop_ids.dedup();
    let settings = db::mails::settings_of(db, &shop_ids).await?;
    let mut mails = Vec::new();
    for ((i, kind), (shop_id, object_id, test)) in causes.into_iter().zip(about) {
        let Some((shop_settings, from)) = settings.get(&shop_id) else { continue };
        if shop_settings.sends(kind) {
            let sender = from.clone().unwrap_or_else(|| config.mail_from.clone());
            mails.push(NewMail::of_event(shop_id, kind, object_id, ids[i].clone(), test, sender));
        }
    }
    db::mails::enqueue_into(batch, mails, Utc::now());
    Ok(())
}

/// Queues the deliveries of the oldest `limit` events not fanned out yet: one to each
/// enabled endpoint that takes the event's type, and a bePaid notification where the object
/// (or the shop) has a notification URL. Workers may fan out at once: each event's
/// delivery to each target is queued once. Answers how many events were fanned out.
pub async fn fan_out(db: &DatabaseConnection, limit: u64) -> Result<usize, DbErr> {
    let events = db::events::not_fanned_out(db, limit).await?;
    if events.is_empty() {
        return Ok(0);
    }
    let deliveries = targets(db, &events).await?;
    let txn = crate::db::begin(db).await?;
    db::webhooks::enqueue(&txn, deliveries, Utc::now()).await?;
    db::events::mark_fanned_out(&txn, events.iter().map(|e| e.id.clone()).collect()).await?;
    txn.commit().await?;
    Ok(events.len())
}

/// The deliveries of `events` to their targets as they are now.
async fn targets(db: &impl ConnectionTrait, events: &[events::Model]) -> Result<Vec<NewDelivery>, DbErr> {
    let data: Vec<serde_json::Value> =
        events.iter().map(|e| serde_json::from_str(&e.data).unwrap_or_default()).collect();
    let notify = notification_urls(db, events, &data).await?;
    let mut shop_ids: Vec<i64> = events.iter().map(|e| e.shop_id).collect();
    shop_ids.sort_unstable();
    shop_ids.dedup();
    let endpoints = db::webhooks::enabled_endpoints(db, &shop_ids).await?;
    let mut deliveries = Vec::new();
    for (event, notify) in events.iter().zip(notify) {
        for endpoint in endpoints.iter().filter(|e| e.shop_id == event.shop_id) {
            if EnabledEvents::from_db(&endpoint.enabled_events).takes(event.kind) {
                let key = format!("{}:{}", event.id, endpoint.id);
                let target = (Some(endpoint.id.clone()), endpoint.url.clone(), Scheme::StandardWebhooks);
                deliveries.push(delivery(event, target, Some(key)));
            }
        }
        if let Some(url) = notify {
            deliveries.push(delivery(event, (None, url, Scheme::Bepaid), Some(format!("{}:bepaid", event.id))));
        }
    }
    Ok(deliveries)
}

/// Queues an event's deliveries again: to `endpoint` only, or to all its targets as they
/// are now (the endpoints that take it, and its notification URL).
pub async fn redeliver(
    db: &impl ConnectionTrait,
    event: &events::Model,
    endpoint: Option<&webhook_endpoints::Model>,
) -> Result<usize, DbErr> {
    let mut deliveries = match endpoint {
        Some(e) => vec![delivery(event, (Some(e.id.clone()), e.url.clone(), Scheme::StandardWebhooks), None)],
        None => targets(db, std::slice::from_ref(event)).await?,
    };
    for d in &mut deliveries {
        d.dedupe_key = None;
    }
    let count = deliveries.len();
    db::webhooks::enqueue(db, deliveries, Utc::now()).await?;
    Ok(count)
}

fn delivery(
    event: &events::Model,
    target: (Option<String>, String, Scheme),
    dedupe_key: Option<String>,
) -> NewDelivery {
    let (endpoint_id, url, scheme) = target;
    NewDelivery {
        shop_id: event.shop_id,
        event_id: event.id.clone(),
        endpoint_id,
        url,
        scheme,
        dedupe_key,
        test: event.test,
    }
}

/// Where each event's bePaid notification goes: a product payment's to its product's
/// `notification_url`, a subscription's to its own; else (and a dispute's) to the shop's
/// default; none for other events, or without any URL.
async fn notification_urls(
    db: &impl ConnectionTrait,
    events: &[events::Model],
    data: &[serde_json::Value],
) -> Result<Vec<Option<String>>, DbErr> {
    let notified = |e: &events::Model, d: &serde_json::Value| match e.kind.object() {
        "payment" => d["product_id"].as_str().is_some(),
        "subscription" | "dispute" => true,
        _ => false,
    };
    if !events.iter().zip(data).any(|(e, d)| notified(e, d)) {
        return Ok(vec![None; events.len()]);
    }
    let product_ids: Vec<&str> = data.iter().filter_map(|d| d["product_id"].as_str()).collect();
    let products = db::products::notification_urls(db, &product_ids).await?;
    let mut shop_ids: Vec<i64> = events.iter().map(|e| e.shop_id).collect();
    shop_ids.sort_unstable();
    shop_ids.dedup();
    let defaults = db::shops::notification_urls(db, &shop_ids).await?;
    Ok(events
        .iter()
        .zip(data)
        .map(|(e, d)| {
            if !notified(e, d) {
                return None;
            }
            let own = match e.kind.object() {
                "payment" => d["product_id"].as_str().and_then(|id| products.get(id).cloned().flatten()),
                "dispute" => None,
                _ => d["notification_url"].as_str().map(str::to_string),
            };
            own.or_else(|| defaults.get(&e.shop_id).cloned().flatten())
        })
        .collect())
}

/// A line of a subscription's timeline about to be stored: the subscription as the change
/// left it, and the status of the charge the line records, if any.
pub struct Line {
    pub row: subscription_events::ActiveModel,
    pub sub: subscriptions::Model,
    pub charge: Option<PaymentStatus>,
}

/// The first line of a new subscription's timeline.
pub fn created(sub: &subscriptions::Model, now: chrono::DateTime<chrono::Utc>) -> Line {
    let row = db::subscriptions::event_row(sub, None, (sub.state, None), None, None, now);
    Line { row, sub: sub.clone(), charge: None }
}

/// Stores timeline lines and the events they mean, in the caller's transaction.
pub async fn timeline(db: &impl ConnectionTrait, config: &Config, lines: Vec<Line>) -> Result<(), DbErr> {
    store(db, config, Parts::default(), Vec::new(), lines, None).await.map(drop)
}

/// [`timeline`], recording `earlier` (events made before, of changes without a line) first,
/// in the same call.
pub async fn timeline_after(
    db: &impl ConnectionTrait,
    config: &Config,
    earlier: Vec<NewEvent>,
    lines: Vec<Line>,
) -> Result<(), DbErr> {
    store(db, config, Parts::default(), earlier, lines, None).await.map(drop)
}

/// [`timeline`] of one line, then the event `also` (if any) about its subscription: one
/// snapshot and one append for all. The snapshot is made of `parts` read before the
/// transaction, so that the writer holds its turn (on SQLite) for less; what the changed
/// subscription names anew is read in it. Answers the subscription as the events show it.
pub async fn timeline_of(
    db: &impl ConnectionTrait,
    config: &Config,
    parts: Parts,
    line: Line,
    also: Option<EventType>,
) -> Result<SubscriptionView, DbErr> {
    let id = line.sub.id.clone();
    let mut views = store(db, config, parts, Vec::new(), vec![line], also).await?;
    views.remove(&id).ok_or(DbErr::RecordNotFound(id))
}

/// Subscriptions as the events just recorded show them, by id.
type Views = HashMap<String, SubscriptionView>;

async fn store(
    db: &impl ConnectionTrait,
    config: &Config,
    mut parts: Parts,
    earlier: Vec<NewEvent>,
    lines: Vec<Line>,
    also: Option<EventType>,
) -> Result<Views, DbErr> {
    if lines.is_empty() {
        record(db, config, earlier).await?;
        return Ok(Views::new());
    }
    let mut by_shop: BTreeMap<i64, Vec<subscriptions::Model>> = BTreeMap::new();
    for line in &lines {
        by_shop.entry(line.sub.shop_id).or_default().push(line.sub.clone());
    }
    let (mut views, mut data) = (Views::new(), HashMap::new());
    for subs in by_shop.values() {
        parts.complete(db, subs).await?;
        for sub in subs {
            let view = SubscriptionView::of(config, sub, &parts);
            data.insert(sub.id.clone(), serde_json::to_value(&view).unwrap_or_default());
            views.insert(sub.id.clone(), view);
        }
    }
    let mut events = earlier;
    let mut rows = Vec::with_capacity(lines.len());
    for line in lines {
        let from = line.row.from_state.clone().unwrap();
        let to = line.row.to_state.clone().unwrap();
        let data = data.get(&line.sub.id).cloned().unwrap_or_default();
        let kinds = EventType::of_subscription_change(from, to, line.charge).into_iter().chain(also);
        for kind in kinds {
            let (shop_id, object_id, test) = (line.sub.shop_id, line.sub.id.clone(), line.sub.test);
            events.push(NewEvent { shop_id, kind, object_id, test, data: data.clone(), child: None });
        }
        rows.push(line.row);
    }
    let mut batch = db::Batch::new(db);
    batch.insert(rows, None);
    record_into(db, config, &mut batch, events).await?;
    batch.send(db).await?;
    Ok(views)
}
