//! HTTP Basic authentication of shops (spec 5, design.md).

use reqwest::{Method, StatusCode, header};
use serde_json::json;

use crate::helpers::*;

db_tests! {
    async fn requests_without_valid_credentials_get_401_with_a_challenge(app) {
        let shop = app.shop("Shop").await;
        let other = app.shop("Other").await;
        let requests = [
            app.anon(Method::GET, "/products"),
            app.anon(Method::GET, "/products").basic_auth(shop.id, Some("sk_wrong")),
            app.anon(Method::GET, "/products").basic_auth(shop.id, None::<&str>),
            app.anon(Method::GET, "/products").basic_auth("not-a-number", Some(&shop.secret)),
            app.anon(Method::GET, "/products").basic_auth(other.id, Some(&shop.secret)),
            app.anon(Method::GET, "/products").basic_auth(999_999, Some(&shop.secret)),
            app.anon(Method::GET, "/products").header(header::AUTHORIZATION, "Bearer abc"),
            app.anon(Method::GET, "/products").header(header::AUTHORIZATION, "Basic %%%"),
            app.anon(Method::POST, "/products").json(&product_body()),
            app.anon(Method::POST, "/plans").json(&plan_body()),
            app.anon(Method::POST, "/customers").json(&customer_body()),
            app.anon(Method::GET, "/customers/cst_0000000000000000"),
            app.anon(Method::PUT, "/products/prd_0000000000000000").json(&json!({})),
        ];
        for request in requests {
            let response = request.send().await.unwrap();
            assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
            assert_eq!(response.headers()[header::WWW_AUTHENTICATE], "Basic realm=\"paydesk\"");
            let body: serde_json::Value = response.json().await.unwrap();
            assert!(body["message"].as_str().unwrap().contains("credentials"));
        }
        let (_, list) = app.get(&shop, "/products").await;
        assert_eq!(list, json!([]), "nothing was created without credentials");
    }

    async fn the_right_key_is_accepted(app) {
        let shop = app.shop("Shop").await;
        let (status, _) = app.get(&shop, "/products").await;
        assert_eq!(status, StatusCode::OK);
    }
}
