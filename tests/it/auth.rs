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

    async fn an_expired_or_revoked_key_is_answered_as_a_wrong_one(app) {
        use paydesk::db::entities::api_keys::{Column, Entity};
        use sea_orm::sea_query::Expr;
        use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
        let shop = app.shop("Shop").await;
        let set = |column: Column, at: Option<chrono::DateTime<chrono::Utc>>| {
            Entity::update_many().col_expr(column, Expr::value(at)).filter(Column::ShopId.eq(shop.id)).exec(&app.db)
        };
        let answer = || async {
            let response = app.anon(Method::GET, "/products").basic_auth(shop.id, Some(&shop.secret)).send().await.unwrap();
            (response.status(), response.json::<serde_json::Value>().await.unwrap())
        };
        let wrong = app.anon(Method::GET, "/products").basic_auth(shop.id, Some("sk_wrong")).send().await.unwrap();
        let wrong = (wrong.status(), wrong.json::<serde_json::Value>().await.unwrap());
        let now = chrono::Utc::now();
        set(Column::ExpiresAt, Some(now + chrono::Duration::minutes(5))).await.unwrap();
        assert_eq!(answer().await.0, StatusCode::OK, "a key that expires later works until then");
        set(Column::ExpiresAt, Some(now - chrono::Duration::seconds(1))).await.unwrap();
        assert_eq!(answer().await, wrong, "an expired key");
        set(Column::ExpiresAt, None).await.unwrap();
        assert_eq!(answer().await.0, StatusCode::OK);
        set(Column::RevokedAt, Some(now)).await.unwrap();
        assert_eq!(answer().await, wrong, "a revoked key");
    }

    async fn a_key_rotated_by_an_earlier_paydesk_during_an_upgrade_works_and_the_one_it_replaced_does_not(app) {
        use paydesk::db::entities::shops::{Column, Entity};
        use sea_orm::sea_query::Expr;
        use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
        let shop = app.shop("Shop").await;
        let works = |secret: String| {
            let request = app.anon(Method::GET, "/products").basic_auth(shop.id, Some(secret));
            async move { request.send().await.unwrap().status() }
        };
        // What the version before writes when it rotates: only the shop's digest.
        let rotated = "sk_rotated_by_the_version_before".to_string();
        Entity::update_many()
            .col_expr(Column::SecretDigest, Expr::value(paydesk::db::shops::digest(&rotated)))
            .col_expr(Column::UpdatedAt, Expr::value(chrono::Utc::now()))
            .filter(Column::Id.eq(shop.id))
            .exec(&app.db)
            .await
            .unwrap();
        assert_eq!(works(rotated).await, StatusCode::OK);
        assert_eq!(works(shop.secret.clone()).await, StatusCode::UNAUTHORIZED);
    }
}
