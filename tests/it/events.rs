//! The event log: every change an integrator acts on is one event, with the object as it
//! was, listed newest first and filtered by type, object and time, within the shop.

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::*;
use crate::subscriptions::{advance, clock, make_card, plan, subscribe};

/// The shop's events (newest first) as (type, object id).
async fn log(app: &TestApp, shop: &Shop, query: &str) -> Vec<(String, String)> {
    let (status, list) = app.get(shop, &format!("/events?limit=1000{query}")).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    list.as_array()
        .unwrap()
        .iter()
        .map(|e| (e["type"].as_str().unwrap().to_string(), e["object_id"].as_str().unwrap().to_string()))
        .collect()
}

fn types(log: &[(String, String)]) -> Vec<&str> {
    log.iter().rev().map(|(t, _)| t.as_str()).collect()
}

async fn only_payment(app: &TestApp, shop: &Shop, product: &str) -> String {
    let (_, list) = app.get(shop, &format!("/payments?product={product}")).await;
    list[0]["id"].as_str().unwrap().to_string()
}

db_tests! {
    async fn payments_refunds_and_stock_are_logged_once_with_their_snapshot(app) {
        let shop = app.shop("Books").await;
        let mut body = test_product_body();
        body["quantity"] = json!("1");
        let product = app.product(&shop, &body).await;
        let pid = product["id"].as_str().unwrap();
        app.pay(pid, cards::SUCCESS, &[]).await;
        let paid = only_payment(&app, &shop, pid).await;
        // The last unit is sold out when the payment takes it, before the card is charged.
        assert_eq!(log(&app, &shop, "").await, [
            ("payment.succeeded".to_string(), paid.clone()),
            ("product.sold_out".to_string(), pid.to_string()),
        ]);
        let (status, events) = app.get(&shop, "/events").await;
        assert_eq!(status, StatusCode::OK);
        let succeeded = &events[0];
        assert!(succeeded["id"].as_str().unwrap().starts_with("evt_"));
        assert_eq!((succeeded["object"].clone(), succeeded["test"].clone()), (json!("payment"), json!(true)));
        assert!(is_api_time(&succeeded["created_at"]));
        let (_, now) = app.get(&shop, &format!("/payments/{paid}")).await;
        assert_eq!(succeeded["data"]["object"], now, "the snapshot is the API's object");
        assert_eq!(events[1]["data"]["object"]["quantity"], 0);

        app.post(&shop, &format!("/payments/{paid}/refund"), &json!({"amount": 100})).await;
        let refunds = log(&app, &shop, "&type=refund.*").await;
        assert_eq!(types(&refunds), ["refund.succeeded"]);
        let (_, refunded) = app.get(&shop, "/events?type=payment.refunded").await;
        assert_eq!(refunded[0]["data"]["object"]["refunded_amount"], 100, "the payment as the refund left it");
        assert_eq!(refunded[0]["data"]["object"]["status"], "partially_refunded");
        let (_, first) = app.get(&shop, &format!("/events/{}", succeeded["id"].as_str().unwrap())).await;
        assert_eq!(first["data"]["object"]["status"], "succeeded", "an event keeps the object as it was");

        let declined = app.product(&shop, &test_product_body()).await;
        app.pay(declined["id"].as_str().unwrap(), cards::DECLINED, &[]).await;
        let mut body = test_product_body();
        body["transaction_type"] = json!("authorization");
        let held = app.product(&shop, &body).await;
        let hid = held["id"].as_str().unwrap();
        for _ in 0..2 {
            app.pay(hid, cards::SUCCESS, &[]).await;
        }
        let (_, holds) = app.get(&shop, &format!("/payments?product={hid}")).await;
        app.post(&shop, &format!("/payments/{}/capture", holds[0]["id"].as_str().unwrap()), &json!({})).await;
        app.post(&shop, &format!("/payments/{}/void", holds[1]["id"].as_str().unwrap()), &json!({})).await;
        let failing = app.product(&shop, &test_product_body()).await;
        let fid = failing["id"].as_str().unwrap();
        app.pay(fid, "4000000000005126", &[]).await;
        let failing_payment = only_payment(&app, &shop, fid).await;
        app.post(&shop, &format!("/payments/{failing_payment}/refund"), &json!({})).await;
        assert_eq!(types(&log(&app, &shop, "").await), [
            "product.sold_out", "payment.succeeded", "refund.succeeded", "payment.refunded", "payment.failed",
            "payment.authorized", "payment.authorized", "payment.captured", "payment.voided", "payment.succeeded",
            "refund.failed",
        ]);

        // Filters, paging and the shop's walls.
        let of_paid = log(&app, &shop, &format!("&object_id={paid}")).await;
        assert_eq!(types(&of_paid), ["payment.succeeded", "payment.refunded"]);
        assert_eq!(log(&app, &shop, "&type=payment.*&created[gte]=2099-01-01T00:00:00Z").await, []);
        assert_eq!(log(&app, &shop, "&type=payment.voided&created[lte]=4102444800").await.len(), 1);
        let (status, body) = app.get(&shop, "/events?type=payment.paid").await;
        assert_invalid(status, &body, "type", &["is not included in the list"]);
        let response = app.req(&shop, reqwest::Method::GET, "/events?type=payment.*&limit=2").send().await.unwrap();
        let link = response.headers()["link"].to_str().unwrap().to_string();
        assert!(link.contains("type=payment.*") || link.contains("type=payment.%2A"), "the next page keeps the filter: {link}");
        let other = app.shop("Other").await;
        assert_eq!(log(&app, &other, "").await, []);
        let id = succeeded["id"].as_str().unwrap();
        assert_eq!(app.get(&other, &format!("/events/{id}")).await.0, StatusCode::NOT_FOUND);
        assert_eq!(app.get(&shop, "/events/evt_0000000000000000").await.0, StatusCode::NOT_FOUND);
    }

    async fn a_subscription_logs_its_life_from_creation_to_its_end(app) {
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({"trial": {"amount": 100, "interval": 7, "interval_unit": "day"}})).await;
        let clock = clock(&app, &shop, "2026-03-10T12:00:00Z").await;
        let sub = subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await;
        let id = sub["id"].as_str().unwrap();
        advance(&app, &shop, &clock, "2026-03-17T12:00:00Z").await;
        make_card(&app, &shop, id, "declined").await;
        advance(&app, &shop, &clock, "2026-04-17T12:00:00Z").await;
        app.post(&shop, &format!("/subscriptions/{id}/cancel"), &json!({"cancel_reason": "moved away"})).await;
        let of_sub = log(&app, &shop, &format!("&object_id={id}")).await;
        assert_eq!(types(&of_sub), [
            "subscription.created", "subscription.renewed", "subscription.trial_started", "subscription.renewed",
            "subscription.payment_failed", "subscription.retry_scheduled", "subscription.canceled",
        ]);
        let (_, canceled) = app.get(&shop, "/events?type=subscription.canceled").await;
        let snapshot = &canceled[0]["data"]["object"];
        assert_eq!((snapshot["state"].clone(), snapshot["cancel_reason"].clone()), (json!("canceled"), json!("moved away")));
        assert_eq!(snapshot["plan"]["id"], plan.as_str(), "the whole subscription object");
        let (_, failed) = app.get(&shop, "/events?type=subscription.payment_failed").await;
        assert_eq!(failed[0]["data"]["object"]["state"], "failed_attempt");
        assert_eq!(failed[0]["data"]["object"]["last_transaction"]["status"], "failed");
        let charges = log(&app, &shop, "&type=payment.*").await;
        assert_eq!(types(&charges), ["payment.succeeded", "payment.succeeded", "payment.failed"]);

        // A subscription without a card: created, then nothing until the card comes.
        let (_, waiting) = app.post(&shop, "/subscriptions", &json!({"plan": {"id": plan}, "customer": customer_body()})).await;
        let wid = waiting["id"].as_str().unwrap();
        assert_eq!(types(&log(&app, &shop, &format!("&object_id={wid}")).await), ["subscription.created"]);
        let (_, created) = app.get(&shop, &format!("/events?object_id={wid}")).await;
        assert_eq!(created[0]["data"]["object"]["state"], "redirecting");
    }
}
