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
