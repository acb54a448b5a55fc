//! Bad requests of every kind get a clear JSON error, never a 500 or a plain-text body.

use reqwest::{Method, StatusCode, header};
use serde_json::{Value, json};

use crate::helpers::*;

db_tests! {
    async fn malformed_bodies_get_json_errors(app) {
        let shop = app.shop("Shop").await;
        for path in ["/products", "/plans", "/customers"] {
            for (raw, expected) in [
                ("{\"name\": ", StatusCode::BAD_REQUEST),
                ("not json", StatusCode::BAD_REQUEST),
                ("[1, 2]", StatusCode::BAD_REQUEST),
                ("\"text\"", StatusCode::BAD_REQUEST),
                (&"[".repeat(200) as &str, StatusCode::BAD_REQUEST),
                ("", StatusCode::UNPROCESSABLE_ENTITY),
            ] {
                let (status, body) = send(
                    app.req(&shop, Method::POST, path).header(header::CONTENT_TYPE, "application/json").body(raw.to_string()),
                )
                .await;
                assert_eq!(status, expected, "{path} {raw:.20}: {body}");
                assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()));
                assert!(body["errors"].is_object(), "{body}");
            }
        }
    }

    async fn wrong_json_types_are_named_per_field(app) {
        let shop = app.shop("Shop").await;
        let body = json!({"name": ["x"], "description": {"a": 1}, "currency": 978, "amount": true,
                          "quantity": [5], "infinite": "no", "visible_fields": [1], "expired_at": 5});
        let (status, errors) = app.post(&shop, "/products", &body).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{errors}");
        for field in ["name", "description", "currency", "amount", "quantity", "infinite", "visible_fields", "expired_at"] {
            assert!(errors["errors"][field].is_array(), "{field}: {errors}");
        }
    }

    async fn oversized_and_non_json_bodies_are_refused(app) {
        let shop = app.shop("Shop").await;
        let mut body = product_body();
        body["description"] = json!("x".repeat(1_100_000));
        let (status, error) = app.post(&shop, "/products", &body).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
        assert!(error["message"].as_str().unwrap().contains("too large"));

        let form = app.req(&shop, Method::POST, "/products").header(header::CONTENT_TYPE, "application/x-www-form-urlencoded").body("name=x");
        let (status, error) = send(form).await;
        assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
        assert_eq!(error["message"], "Content-Type must be application/json");

        let charset = app.req(&shop, Method::POST, "/products")
            .header(header::CONTENT_TYPE, "application/json; charset=utf-8")
            .body(product_body().to_string());
        let (status, _) = send(charset).await;
        assert_eq!(status, StatusCode::CREATED);
    }

    async fn unknown_routes_and_methods_answer_json(app) {
        let shop = app.shop("Shop").await;
        let (status, body) = app.get(&shop, "/nothing/here").await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert!(body["message"].is_string());
        let (status, body) = send(app.req(&shop, Method::DELETE, "/products")).await;
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(body["message"], "Method not allowed");
    }

    async fn health_check_reports_the_database(app) {
        let (status, body) = send(app.anon(Method::GET, "/healthz")).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(body, json!({"status": "ok"}));
        let _: Value = body;
    }
}

#[tokio::test]
async fn the_embedded_database_runs_in_wal_mode_with_foreign_keys() {
    use sea_orm::{ConnectionTrait, Statement};
    let app = TestApp::spawn(Backend::Sqlite).await;
    for (pragma, expected) in [("journal_mode", "wal"), ("foreign_keys", "1")] {
        let row = app
            .db
            .query_one(Statement::from_string(app.db.get_database_backend(), format!("PRAGMA {pragma}")))
            .await
            .unwrap()
            .unwrap();
        let value: String = row
            .try_get_by_index::<String>(0)
            .or_else(|_| row.try_get_by_index::<i32>(0).map(|v| v.to_string()))
            .unwrap();
        assert_eq!(value, expected, "{pragma}");
    }
}
