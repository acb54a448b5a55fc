//! Tenant isolation: a shop never reads, lists or changes another shop's objects.

use reqwest::StatusCode;
use serde_json::json;

use crate::helpers::*;

db_tests! {
    async fn a_shop_never_sees_or_changes_another_shops_objects(app) {
        let alice = app.shop("Alice").await;
        let bob = app.shop("Bob").await;
        let product = app.product(&alice, &product_body()).await;
        let (_, plan) = app.post(&alice, "/plans", &plan_body()).await;
        let (_, customer) = app.post(&alice, "/customers", &customer_body()).await;

        for (path, id) in [("products", &product), ("plans", &plan), ("customers", &customer)] {
            let id = id["id"].as_str().unwrap();
            let (status, body) = app.get(&bob, &format!("/{path}/{id}")).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
            assert!(body["message"].is_string());
            let (_, list) = app.get(&bob, &format!("/{path}")).await;
            assert_eq!(list, json!([]), "{path}");
            let (status, _) = app.get(&bob, &format!("/{path}?starting_after={id}")).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "a cursor of another shop is no id of this list");
            let (status, _) = app.get(&alice, &format!("/{path}/{id}")).await;
            assert_eq!(status, StatusCode::OK);
        }

        let path = format!("/products/{}", product["id"].as_str().unwrap());
        let (status, _) = app.put(&bob, &path, &json!({"amount": "1"})).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (_, unchanged) = app.get(&alice, &path).await;
        assert_eq!(unchanged, product);
    }

    async fn a_shop_cannot_create_products_for_another_shop(app) {
        let alice = app.shop("Alice").await;
        let bob = app.shop("Bob").await;
        let mut body = product_body();
        body["shop_id"] = json!(alice.id.to_string());
        let (status, errors) = app.post(&bob, "/products", &body).await;
        assert_invalid(status, &errors, "shop_id", &["does not match the authenticated shop"]);
        let (_, list) = app.get(&alice, "/products").await;
        assert_eq!(list, json!([]));
    }
}
