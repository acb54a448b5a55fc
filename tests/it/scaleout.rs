//! Several instances on one PostgreSQL: two real `paydesk serve` processes share dashboard
//! sessions, see a key rotated on the other at once, and both run the billing engine without
//! charging anything twice.

use std::time::Duration;

use reqwest::StatusCode;

use crate::crash::{charged_once_each, child, kill};
use crate::dashboard::{Merchant, PASSWORD, api_shop, log_in, sign_up};
use crate::helpers::*;

#[tokio::test]
async fn two_instances_share_sessions_keys_and_the_billing_engine() {
    let app = TestApp::spawn(Backend::Postgres).await;
    let owner = sign_up(&app, "Gym", "owner@gym.example").await;
    let shop = api_shop(&owner).await;
    let ids = crate::engine::due_subscriptions(&app, &shop, 150).await;

    // Both instances run the scheduler, which bills what is due as it starts.
    let (first, a) = child(&app, "on").await;
    let _first = Stopped(Some(first));
    let (second, b) = child(&app, "on").await;
    let _second = Stopped(Some(second));

    // A session made on one instance is a session on the other.
    let (on_a, done) = log_in(&a, "owner@gym.example", PASSWORD).await;
    assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.html);
    let on_b = Merchant { base: b.base.clone(), client: on_a.client.clone(), csrf: on_a.csrf.clone() };
    let settings = on_b.get("/dashboard/settings").await;
    assert_eq!(settings.status, StatusCode::OK, "{}", settings.html);
    assert!(settings.html.contains(&format!("data-testid=\"shop-id\">{}<", shop.id)));
    let renamed = on_b.post("/dashboard/settings", &[("name", "Gym North"), ("url", ""), ("timezone", "")]).await;
    assert_eq!(renamed.status, StatusCode::SEE_OTHER, "{}", renamed.html);
    assert!(on_a.get("/dashboard/settings").await.html.contains("Gym North"), "the change shows on the other");

    // A key rotated on one instance stops working on the other at once, each time.
    let mut key = shop.clone();
    for _ in 0..10 {
        let (status, _) = b.get(&key, "/products").await;
        assert_eq!(status, StatusCode::OK, "the current key works on the other instance (and is cached there)");
        let rotated = api_shop(&on_a).await;
        let (status, _) = b.get(&key, "/products").await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "the old key stopped at once on the other instance");
        let (status, _) = b.get(&rotated, "/products").await;
        assert_eq!(status, StatusCode::OK, "the new key works there");
        key = rotated;
    }

    // Both engines ran over the same due subscriptions: each period is charged once.
    let patience = Patience::start();
    loop {
        let (_, paid) = app.get(&key, "/payments?status=succeeded&limit=1000").await;
        if paid.as_array().unwrap().len() >= ids.len() {
            break;
        }
        assert!(!patience.spent(), "the engines did not charge every due subscription");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Let any late duplicate show itself.
    tokio::time::sleep(Duration::from_millis(500)).await;
    charged_once_each(&app, &key, &ids, 1).await;
}

/// Kills its instance when the test ends, passed or failed.
struct Stopped(Option<std::process::Child>);

impl Drop for Stopped {
    fn drop(&mut self) {
        if let Some(child) = self.0.take() {
            kill(child);
        }
    }
}

/// Two instances on PostgreSQL take payments at once, and one is killed in the middle of the
/// burst: every payment that went through has one invoice, and the series has no gap and no
/// number twice.
#[tokio::test]
async fn invoice_numbers_stay_gapless_with_two_instances_and_one_killed_mid_burst() {
    let app = TestApp::spawn(Backend::Postgres).await;
    let shop = app.shop("Gym").await;
    crate::invoices::set_seller(&app, &shop).await;
    let mut body = test_product_body();
    body["infinite"] = serde_json::json!(true);
    body.as_object_mut().unwrap().remove("quantity");
    let product = app.product(&shop, &body).await["id"].as_str().unwrap().to_string();
    let (first, a) = child(&app, "off").await;
    let (second, b) = child(&app, "off").await;
    let _second = Stopped(Some(second));

    let pay = |on: &TestApp| {
        let (on, product) = (on.pointed_at(on.base.clone()), product.clone());
        tokio::spawn(async move {
            let paid = on.pay(&product, cards::SUCCESS, &[]).await;
            paid.status
        })
    };
    let mut burst: Vec<_> = (0..24).flat_map(|_| [pay(&a), pay(&b)]).collect();
    // The first instance dies while its share of the burst is under way.
    tokio::time::sleep(Duration::from_millis(150)).await;
    kill(first);
    burst.extend((0..8).map(|_| pay(&b)));
    for task in burst {
        let _ = task.await;
    }

    let (_, paid) = app.get(&shop, "/payments?status=succeeded&limit=1000").await;
    let paid: Vec<String> = paid.as_array().unwrap().iter().map(|p| p["id"].as_str().unwrap().to_string()).collect();
    assert!(paid.len() >= 8, "the surviving instance took its payments: {}", paid.len());
    let listed = crate::invoices::invoices(&app, &shop, "").await;
    let mut numbers: Vec<i64> = listed.iter().map(|i| i["sequence"].as_i64().unwrap()).collect();
    numbers.sort_unstable();
    assert_eq!(numbers, (1..=listed.len() as i64).collect::<Vec<_>>(), "no gap, no number twice");
    let mut invoiced: Vec<String> = listed.iter().map(|i| i["payment_id"].as_str().unwrap().to_string()).collect();
    invoiced.sort();
    let mut expected = paid.clone();
    expected.sort();
    assert_eq!(invoiced, expected, "each payment that went through has exactly one invoice");
}
