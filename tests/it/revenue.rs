//! Monthly recurring revenue (docs/revenue.md): the movements kept as subscriptions change on
//! a test clock, to the cent, and a rebuild from the events that gives exactly what was kept.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;
use crate::subscriptions::{advance, card_json, clock, plan};

/// The shop's movements, oldest first: (kind, MRR change, paused change, subscribers change,
/// the subscription's time).
async fn movements(app: &TestApp, shop: &Shop) -> Vec<(String, i64, i64, i64, String)> {
    let rows = paydesk::db::mrr::of_shop(&app.db, shop.id).await.unwrap();
    rows.iter()
        .map(|m| {
            let at = m.occurred_at.format("%Y-%m-%dT%H:%M").to_string();
            (m.kind.as_str().to_string(), m.mrr, m.paused, m.subscribers, at)
        })
        .collect()
}

fn moved(kind: &str, mrr: i64, paused: i64, subscribers: i64, at: &str) -> (String, i64, i64, i64, String) {
    (kind.to_string(), mrr, paused, subscribers, at.to_string())
}

/// Every movement as kept, but for its number.
async fn kept(app: &TestApp, shop: &Shop) -> Vec<Value> {
    let rows = paydesk::db::mrr::of_shop(&app.db, shop.id).await.unwrap();
    rows.iter()
        .map(|m| {
            json!([
                m.test,
                m.currency.code,
                m.customer_id,
                m.subscription_id,
                m.event_id,
                m.kind.as_str(),
                m.mrr,
                m.paused,
                m.subscribers,
                m.mrr_after,
                m.paused_after,
                m.occurred_at.to_rfc3339()
            ])
        })
        .collect()
}

/// Rebuilds the shop's movements and asserts they are the ones kept.
async fn rebuilt_as_kept(app: &TestApp, shop: &Shop) {
    let before = kept(app, shop).await;
    let made = paydesk::services::revenue::rebuild(&app.db, shop.id).await.unwrap();
    assert_eq!(made, before.len());
    assert_eq!(kept(app, shop).await, before, "a rebuild gives the movements kept");
}

async fn subscribe_customer(app: &TestApp, shop: &Shop, plan: &str, clock: &str, customer: Value) -> Value {
    let body =
        json!({"plan": {"id": plan}, "customer": customer, "card": card_json(cards::SUCCESS), "test_clock": clock});
    let (status, sub) = app.post(shop, "/subscriptions", &body).await;
    assert_eq!(status, StatusCode::CREATED, "{sub}");
    sub
}

async fn post_ok(app: &TestApp, shop: &Shop, path: &str, body: Value) -> Value {
    let (status, answer) = app.post(shop, path, &body).await;
    assert_eq!(status, StatusCode::OK, "{path}: {answer}");
    answer
}

db_tests! {
    async fn a_subscription_counts_from_its_first_paid_period_until_it_ends_and_a_pause_is_apart(app) {
        let shop = app.shop("Gym").await;
        let gold = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2026-01-10T10:00:00Z").await;
        let sub = subscribe_customer(&app, &shop, &gold, &clock, customer_body()).await;
        let (id, customer) = (sub["id"].as_str().unwrap().to_string(), sub["customer"]["id"].clone());
        // A renewal leaves MRR as it is.
        advance(&app, &shop, &clock, "2026-02-10T11:00:00Z").await;
        post_ok(&app, &shop, &format!("/subscriptions/{id}/pause"), json!({})).await;
        advance(&app, &shop, &clock, "2026-02-20T11:00:00Z").await;
        post_ok(&app, &shop, &format!("/subscriptions/{id}/resume"), json!({})).await;
        post_ok(&app, &shop, &format!("/subscriptions/{id}/cancel"), json!({})).await;
        // The customer comes back with a new subscription: a reactivation.
        advance(&app, &shop, &clock, "2026-03-01T09:00:00Z").await;
        subscribe_customer(&app, &shop, &gold, &clock, json!({"id": customer})).await;
        assert_eq!(movements(&app, &shop).await, vec![
            moved("new", 990, 0, 1, "2026-01-10T10:00"),
            moved("pause", -990, 990, -1, "2026-02-10T11:00"),
            moved("resume", 990, -990, 1, "2026-02-20T11:00"),
            moved("churn", -990, 0, -1, "2026-02-20T11:00"),
            moved("reactivation", 990, 0, 1, "2026-03-01T09:00"),
        ]);
        rebuilt_as_kept(&app, &shop).await;
    }

    async fn a_trial_counts_once_converted_and_a_yearly_plan_a_twelfth(app) {
        let shop = app.shop("Gym").await;
        let trial = json!({"trial": {"amount": 0, "interval": 7, "interval_unit": "day"}});
        let gold = plan(&app, &shop, trial).await;
        let yearly = plan(&app, &shop, json!({"plan": {"amount": 10_000, "interval": 12, "interval_unit": "month"}})).await;
        let clock = clock(&app, &shop, "2026-01-10T10:00:00Z").await;
        subscribe_customer(&app, &shop, &gold, &clock, customer_body()).await;
        let declined = json!({"plan": {"id": gold}, "customer": {"email": "bob@example.com", "ip": "203.0.113.9"},
                              "card": card_json(cards::SUCCESS), "test_clock": clock});
        let (_, bob) = app.post(&shop, "/subscriptions", &declined).await;
        crate::subscriptions::make_card(&app, &shop, bob["id"].as_str().unwrap(), "declined").await;
        subscribe_customer(&app, &shop, &yearly, &clock, json!({"email": "cy@example.com", "ip": "203.0.113.9"})).await;
        // Ann's trial converts when its first period is paid; Bob's conversion is declined.
        advance(&app, &shop, &clock, "2026-01-17T11:00:00Z").await;
        assert_eq!(movements(&app, &shop).await, vec![
            moved("new", 833, 0, 1, "2026-01-10T10:00"),
            moved("new", 990, 0, 1, "2026-01-17T10:00"),
        ]);
        rebuilt_as_kept(&app, &shop).await;
    }
}
