//! What the dashboard does, through the API: archiving and restoring products and plans,
//! editing a plan's title and page language, and ending a subscription with its paid period
//! (and taking that back); each with its event, once, whatever is repeated or sent at once.

use futures::future::join_all;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::bepaid_pay::events_of;
use crate::helpers::*;
use crate::subscriptions::{advance, clock, plan, subscribe};

/// POSTs `path` (no body) `n` times at once, each under its own key or none.
async fn at_once(app: &TestApp, shop: &Shop, path: &str, n: usize) -> Vec<(StatusCode, Value)> {
    let calls = (0..n).map(|_| async {
        let response = app.req(shop, Method::POST, path).send().await.unwrap();
        (response.status(), response.json::<Value>().await.unwrap())
    });
    join_all(calls).await
}

db_tests! {
    async fn products_are_archived_and_restored_through_the_api_once_each(app) {
        let shop = app.shop("Books").await;
        let product = app.product(&shop, &test_product_body()).await;
        let id = product["id"].as_str().unwrap();
        assert_eq!(product["archived_at"], Value::Null);
        let answers = at_once(&app, &shop, &format!("/products/{id}/archive"), 6).await;
        assert!(answers.iter().all(|(s, p)| *s == StatusCode::OK && p["archived_at"].is_string()), "{answers:?}");
        assert_eq!(events_of(&app, &shop, "product.archived").await.len(), 1, "one change, one event");
        let page = app.page(&format!("/products/{id}/pay")).await;
        assert_eq!(page.status, StatusCode::GONE, "an archived product's link takes no payments");
        let (_, listed) = app.get(&shop, "/products").await;
        assert!(listed[0]["archived_at"].is_string(), "still listed, marked");

        // The same key replays; restoring is the other way.
        let keyed = || app.req(&shop, Method::POST, &format!("/products/{id}/restore")).header("Idempotency-Key", "r-1").send();
        let first = keyed().await.unwrap();
        assert_eq!(first.status(), StatusCode::OK);
        let again = keyed().await.unwrap();
        assert_eq!(again.headers()["idempotent-replayed"], "true");
        let (_, restored) = app.get(&shop, &format!("/products/{id}")).await;
        assert_eq!(restored["archived_at"], Value::Null);
        assert_eq!(events_of(&app, &shop, "product.restored").await.len(), 1);
        assert_eq!(app.pay(id, cards::SUCCESS, &[]).await.status, StatusCode::SEE_OTHER, "paid again");

        // Another shop's product is not found.
        let other = app.shop("Records").await;
        let (status, _) = app.post(&other, &format!("/products/{id}/archive"), &json!({})).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
    }

    async fn a_plan_is_renamed_archived_and_restored_through_the_api(app) {
        let shop = app.shop("Books").await;
        let plan = plan(&app, &shop, json!({"title": "Gold"})).await;
        let clock = clock(&app, &shop, "2026-01-01T10:00:00Z").await;
        let sub = subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await;
        let (status, renamed) = app.post(&shop, &format!("/plans/{plan}"), &json!({"title": "Gold yearly", "language": "ru"})).await;
        assert_eq!(status, StatusCode::OK, "{renamed}");
        assert_eq!((renamed["title"].as_str(), renamed["language"].as_str()), (Some("Gold yearly"), Some("ru")));
        assert_eq!(renamed["plan"]["amount"], 990, "the price stays");
        // Only the title, then the same again: nothing changes, no second event.
        let (_, same) = app.post(&shop, &format!("/plans/{plan}"), &json!({"title": "Gold yearly"})).await;
        assert_eq!(same["language"], "ru");
        let (status, put) = app.put(&shop, &format!("/plans/{plan}"), &json!({})).await;
        assert_eq!((status, put["title"].as_str()), (StatusCode::OK, Some("Gold yearly")));
        let updated = events_of(&app, &shop, "plan.updated").await;
        assert_eq!(updated.len(), 1);
        assert_eq!(updated[0]["data"]["object"]["title"], "Gold yearly");
        for (body, field) in [(json!({"title": " "}), "title"), (json!({"language": "xx"}), "language"),
                              (json!({"title": "x".repeat(256)}), "title")] {
            let (status, refused) = app.post(&shop, &format!("/plans/{plan}"), &body).await;
            assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
            assert!(refused["errors"][field].is_array(), "{refused}");
        }

        let answers = at_once(&app, &shop, &format!("/plans/{plan}/archive"), 6).await;
        assert!(answers.iter().all(|(s, _)| *s == StatusCode::OK), "{answers:?}");
        assert_eq!(events_of(&app, &shop, "plan.archived").await.len(), 1);
        assert_eq!(app.page(&format!("/plans/{plan}/pay")).await.status, StatusCode::GONE);
        // Its running subscription goes on.
        advance(&app, &shop, &clock, "2026-02-01T11:00:00Z").await;
        let (_, renewed) = app.get(&shop, &format!("/subscriptions/{}", sub["id"].as_str().unwrap())).await;
        assert_eq!(renewed["state"], "active", "{renewed}");
        assert_eq!(renewed["last_transaction"]["status"], "succeeded");
        let (status, restored) = app.post(&shop, &format!("/plans/{plan}/restore"), &json!({})).await;
        assert_eq!((status, &restored["archived_at"]), (StatusCode::OK, &Value::Null));
        assert_eq!(app.page(&format!("/plans/{plan}/pay")).await.status, StatusCode::OK);
        assert_eq!(events_of(&app, &shop, "plan.restored").await.len(), 1);
    }

    async fn a_subscription_ends_with_its_period_through_the_api_and_that_is_taken_back(app) {
        let shop = app.shop("Books").await;
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2026-01-01T10:00:00Z").await;
        let sub = subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await;
        let path = format!("/subscriptions/{}", sub["id"].as_str().unwrap());
        let body = json!({"cancel_at_period_end": true, "cancel_reason": "The customer asked"});
        let calls = (0..5).map(|_| app.post(&shop, &path, &body));
        for (status, answer) in join_all(calls).await {
            assert_eq!(status, StatusCode::OK, "{answer}");
            assert_eq!((answer["state"].as_str(), answer["cancel_at_period_end"].as_bool()), (Some("active"), Some(true)));
        }
        assert_eq!(events_of(&app, &shop, "subscription.cancellation_requested").await.len(), 1);
        let (status, kept) = app.post(&shop, &path, &json!({"cancel_at_period_end": false})).await;
        assert_eq!((status, kept["cancel_at_period_end"].as_bool()), (StatusCode::OK, Some(false)));
        assert_eq!(events_of(&app, &shop, "subscription.cancellation_withdrawn").await.len(), 1);
        let (status, refused) = app.post(&shop, &path, &json!({"cancel_at_period_end": "perhaps"})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");

        // Asked again, it ends with the period: the next charge is never made.
        app.post(&shop, &path, &json!({"cancel_at_period_end": true})).await;
        advance(&app, &shop, &clock, "2026-02-01T11:00:00Z").await;
        let (_, ended) = app.get(&shop, &path).await;
        assert_eq!(ended["state"], "canceled", "{ended}");
        let (_, payments) = app.get(&shop, &format!("/payments?subscription={}", sub["id"].as_str().unwrap())).await;
        assert_eq!(payments.as_array().unwrap().len(), 1, "only the first charge");
        let (status, _) = app.post(&shop, &path, &json!({"cancel_at_period_end": false})).await;
        assert_eq!(status, StatusCode::CONFLICT, "it has ended");
        let other = app.shop("Records").await;
        assert_eq!(app.post(&other, &path, &json!({"cancel_at_period_end": true})).await.0, StatusCode::NOT_FOUND);
    }
}
