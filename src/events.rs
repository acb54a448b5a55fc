//! Recording what happened: every change an integrator would act on becomes an event of the
//! append-only log, written with a snapshot of the object (as the API shows it) in the same
//! transaction as the change. A subscription's timeline lines and its events are stored
//! together by [`timeline`], so the two never disagree.

use std::collections::BTreeMap;

use sea_orm::{ConnectionTrait, DbErr};

use crate::config::Config;
use crate::db::entities::{payments, products, refunds, subscription_events, subscriptions};
use crate::db::{self, events::NewEvent};
use crate::domain::event::EventType;
use crate::domain::vocab::PaymentStatus;
use crate::views::{PaymentView, ProductView, RefundView, SubscriptionView};

/// An event about a payment.
pub fn payment(kind: EventType, p: &payments::Model) -> NewEvent {
    new(p.shop_id, kind, &p.id, p.test, &PaymentView::from(p))
}

/// An event about a refund.
pub fn refund(kind: EventType, r: &refunds::Model) -> NewEvent {
    new(r.shop_id, kind, &r.id, r.test, &RefundView::from(r))
}

/// An event about a product.
pub fn product(kind: EventType, p: &products::Model, config: &Config) -> NewEvent {
    new(p.shop_id, kind, &p.id, p.test, &ProductView::new(p, config))
}

fn new(shop_id: i64, kind: EventType, id: &str, test: bool, view: &impl serde::Serialize) -> NewEvent {
    let data = serde_json::to_value(view).unwrap_or_default();
    NewEvent { shop_id, kind, object_id: id.to_string(), test, data }
}

/// Appends events to the log.
pub async fn record(db: &impl ConnectionTrait, events: Vec<NewEvent>) -> Result<(), DbErr> {
    if !events.is_empty() {
        db::events::append(db, events).await?;
    }
    Ok(())
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
    if lines.is_empty() {
        return Ok(());
    }
    let mut by_shop: BTreeMap<i64, Vec<subscriptions::Model>> = BTreeMap::new();
    for line in &lines {
        by_shop.entry(line.sub.shop_id).or_default().push(line.sub.clone());
    }
    let mut views = std::collections::HashMap::new();
    for subs in by_shop.values() {
        let loaded = SubscriptionView::load_all(db, config, subs).await?;
        for (sub, view) in subs.iter().zip(loaded) {
            views.insert(sub.id.clone(), serde_json::to_value(&view).unwrap_or_default());
        }
    }
    let mut events = Vec::new();
    let mut rows = Vec::with_capacity(lines.len());
    for line in lines {
        let from = line.row.from_state.clone().unwrap();
        let to = line.row.to_state.clone().unwrap();
        let data = views.get(&line.sub.id).cloned().unwrap_or_default();
        for kind in EventType::of_subscription_change(from, to, line.charge) {
            let (shop_id, object_id, test) = (line.sub.shop_id, line.sub.id.clone(), line.sub.test);
            events.push(NewEvent { shop_id, kind, object_id, test, data: data.clone() });
        }
        rows.push(line.row);
    }
    db::subscriptions::insert_events(db, rows).await?;
    record(db, events).await
}
