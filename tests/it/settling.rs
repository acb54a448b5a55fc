//! Settling a payment made on the processor's page is one step: its status, the unit a
//! failed payment gives back and the customer a paid one makes are seen together or not at
//! all, however many settlings (the processor's notification, the customer's return, the
//! receipt, the sweep) run at once.

use futures::future::join_all;
use reqwest::StatusCode;
use serde_json::json;

use crate::bepaid_pay::{new_product, quantity, shop_taking_cards_on, sweep, token_of};
use crate::helpers::*;

/// Reads the payment and its product until the payment is settled, checking at every read
/// that whoever sees it settled sees all of it.
async fn watch(app: &TestApp, shop: &Shop, payment_id: &str, product_id: &str, units_if_failed: i64) {
    for _ in 0..2000 {
        let (_, payment) = app.get(shop, &format!("/payments/{payment_id}")).await;
        match payment["status"].as_str().unwrap() {
            "processing" => tokio::task::yield_now().await,
            "succeeded" => {
                assert!(payment["customer_id"].is_string(), "paid, yet no customer: {payment}");
                return;
            }
            _ => {
                assert_eq!(
                    quantity(app, shop, product_id).await,
                    units_if_failed,
                    "failed, yet its unit is held: {payment}"
                );
                return;
            }
        }
    }
    panic!("never settled");
}

db_tests! {
    async fn whoever_sees_a_processor_page_payment_settled_sees_its_customer_or_its_unit_back(app) {
        let (shop, gateway) = shop_taking_cards_on(&app, "processor_page").await;
        let product = new_product(&app, &shop, json!({"visible_fields": ["email"], "quantity": 100})).await;
        let id = product["id"].as_str().unwrap();
        let path = format!("/products/{id}/pay");
        for round in 0..6 {
            let form = app.open_form(&path).await;
            let token = token_of(&app.submit(&path, &form, &[("email", "ann@example.com")]).await, &gateway);
            let (_, list) = app.get(&shop, &format!("/payments?product={id}&limit=1")).await;
            let pay_id = list[0]["id"].as_str().unwrap().to_string();
            let paid = round % 2 == 0;
            let units_if_failed = quantity(&app, &shop, id).await + 1;
            let uid = match paid {
                true => gateway.pay_checkout(&token, "4200000000000000"),
                false => {
                    gateway.expire_checkout(&token);
                    None
                }
            };
            let back = format!("/payments/{pay_id}/return");
            let receipt = format!("/receipts/{pay_id}");
            let gw = &gateway;
            let settlings = async {
                let mut all = Vec::new();
                for _ in 0..3 {
                    all.push(Box::pin(async { app.page(&back).await; }) as std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>);
                    all.push(Box::pin(async { app.page(&receipt).await; }));
                    if let Some(uid) = &uid {
                        all.push(Box::pin(async move { assert_eq!(gw.notify(uid, false).await, 200); }));
                    }
                }
                all.push(Box::pin(async { sweep(&app, 61).await; }));
                join_all(all).await;
            };
            tokio::join!(settlings, watch(&app, &shop, &pay_id, id, units_if_failed));
            let (status, payment) = app.get(&shop, &format!("/payments/{pay_id}")).await;
            assert_eq!(status, StatusCode::OK);
            let expected = if paid { "succeeded" } else { "failed" };
            assert_eq!(payment["status"], expected, "{payment}");
        }
        let (_, customers) = app.get(&shop, "/customers").await;
        assert_eq!(customers.as_array().unwrap().len(), 1, "one customer for one e-mail");
        assert_eq!(quantity(&app, &shop, id).await, 97, "three sold, three given back");
    }
}
