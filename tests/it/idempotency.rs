//! `Idempotency-Key` on the API's POSTs: the first result is replayed, never run twice.

use futures::future::join_all;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::helpers::*;

/// POSTs `body` to `path` as `shop` under `key`: status, body, and whether it was a replay.
async fn post_keyed(app: &TestApp, shop: &Shop, path: &str, key: &str, body: &Value) -> (StatusCode, Value, bool) {
    let response = app.req(shop, Method::POST, path).header("Idempotency-Key", key).json(body).send().await.unwrap();
    let status = response.status();
    let replayed = response.headers().get("idempotent-replayed").is_some_and(|v| v == "true");
    assert_eq!(response.headers()["content-type"], "application/json");
    (status, response.json().await.unwrap(), replayed)
}

db_tests! {
    async fn a_retried_create_returns_the_first_result(app) {
        let shop = app.shop("Books").await;
        let (status, first, replayed) = post_keyed(&app, &shop, "/products", "order-1", &test_product_body()).await;
        assert_eq!((status, replayed), (StatusCode::CREATED, false));
        let (status, again, replayed) = post_keyed(&app, &shop, "/products", "order-1", &test_product_body()).await;
        assert_eq!((status, replayed), (StatusCode::CREATED, true));
        assert_eq!(again, first);
        assert_eq!(app.get(&shop, "/products").await.1.as_array().unwrap().len(), 1);
        // Parameters in another order and spacing are the same parameters.
        let reordered: Value = serde_json::from_str(&format!("{{\"name\": {}, {}", json!("Gift card"),
            &test_product_body().to_string()[1..].replace("\"name\":\"Gift card\",", ""))).unwrap();
        assert!(post_keyed(&app, &shop, "/products", "order-1", &reordered).await.2, "a replay");
    }

    async fn a_key_reused_for_other_parameters_or_another_path_is_refused(app) {
        let shop = app.shop("Books").await;
        post_keyed(&app, &shop, "/products", "k", &test_product_body()).await;
        let mut other = test_product_body();
        other["amount"] = json!(1200);
        let (status, errors, _) = post_keyed(&app, &shop, "/products", "k", &other).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{errors}");
        assert!(errors["errors"]["Idempotency-Key"][0].as_str().unwrap().contains("same path and parameters"));
        let (status, _, _) = post_keyed(&app, &shop, "/customers", "k", &customer_body()).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(app.get(&shop, "/customers").await.1, json!([]));
    }

    async fn a_refused_request_keeps_nothing_under_its_key(app) {
        let shop = app.shop("Books").await;
        let (status, _, _) = post_keyed(&app, &shop, "/customers", "c-1", &json!({"email": "nope"})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        let (status, created, replayed) = post_keyed(&app, &shop, "/customers", "c-1", &customer_body()).await;
        assert_eq!((status, replayed), (StatusCode::CREATED, false), "{created}");
        let long = "k".repeat(256);
        let (status, errors, _) = post_keyed(&app, &shop, "/customers", &long, &customer_body()).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{errors}");
        assert!(errors["errors"]["Idempotency-Key"].is_array());
        assert_eq!(post_keyed(&app, &shop, "/customers", &"k".repeat(255), &customer_body()).await.0, StatusCode::CREATED);
    }

    async fn keys_belong_to_their_shop(app) {
        let (a, b) = (app.shop("A").await, app.shop("B").await);
        let (_, first, _) = post_keyed(&app, &a, "/customers", "same", &customer_body()).await;
        let (status, second, replayed) = post_keyed(&app, &b, "/customers", "same", &customer_body()).await;
        assert_eq!((status, replayed), (StatusCode::CREATED, false));
        assert_ne!(first["id"], second["id"]);
    }

    async fn the_same_key_sent_many_times_at_once_runs_once(app) {
        let shop = app.shop("Gym").await;
        let mut plan = plan_body();
        plan["test"] = json!(true);
        let (_, plan) = app.post(&shop, "/plans", &plan).await;
        let card = json!({"number": cards::SUCCESS, "exp_month": 12, "exp_year": 2040, "cvc": "123", "holder": "Ann Lee"});
        let request = json!({"plan_id": plan["id"], "customer": customer_body(), "card": card});
        for round in 0..3 {
            let key = format!("signup-{round}");
            let answers = join_all((0..10).map(|_| post_keyed(&app, &shop, "/subscriptions", &key, &request))).await;
            let created: Vec<_> = answers.iter().filter(|a| a.0 == StatusCode::CREATED).collect();
            for (status, body, _) in &answers {
                assert!([StatusCode::CREATED, StatusCode::CONFLICT].contains(status), "{status}: {body}");
            }
            assert!(created.iter().all(|a| a.1["id"] == created[0].1["id"]), "one subscription");
            let again = post_keyed(&app, &shop, "/subscriptions", &key, &request).await;
            assert_eq!((again.0, again.2), (StatusCode::CREATED, true));
            let (_, subs) = app.get(&shop, "/subscriptions").await;
            assert_eq!(subs.as_array().unwrap().len(), round + 1, "round {round}");
            let (_, paid) = app.get(&shop, "/payments").await;
            assert_eq!(paid.as_array().unwrap().len(), round + 1, "round {round}: one charge per key");
        }
    }

    async fn actions_replay_their_first_answer(app) {
        let shop = app.shop("Books").await;
        let mut body = test_product_body();
        body["transaction_type"] = json!("authorization");
        let product = app.product(&shop, &body).await;
        app.pay(product["id"].as_str().unwrap(), cards::SUCCESS, &[]).await;
        let (_, payments) = app.get(&shop, "/payments").await;
        let path = format!("/payments/{}/capture", payments[0]["id"].as_str().unwrap());
        let (status, first, _) = post_keyed(&app, &shop, &path, "cap", &json!({})).await;
        assert_eq!(status, StatusCode::OK, "{first}");
        let (status, again, replayed) = post_keyed(&app, &shop, &path, "cap", &json!({})).await;
        assert_eq!((status, replayed), (StatusCode::OK, true), "the capture is not tried again");
        assert_eq!(again, first);
        let (status, _, _) = post_keyed(&app, &shop, &path, "cap-2", &json!({})).await;
        assert_eq!(status, StatusCode::CONFLICT, "a new key is a new capture, refused");
    }
}
