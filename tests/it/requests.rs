//! Bad requests of every kind get a clear JSON error, never a 500 or a plain-text body.

use reqwest::{Method, StatusCode, header};
use serde_json::{Value, json};

use crate::helpers::*;

db_tests! {
    async fn bodies_are_read_as_their_json_schema_says(app) {
        let shop = app.shop("Shop").await;
        // Text fields take text: a number is refused, not turned into text.
        let mut plan = plan_body();
        plan["title"] = json!(42);
        let (status, body) = app.post(&shop, "/plans", &plan).await;
        assert_invalid(status, &body, "title", &["must be a string"]);
        // A merchant's own reference may be a number (kept as its digits).
        let mut customer = customer_body();
        customer["external_id"] = json!(1042);
        let (status, body) = app.post(&shop, "/customers", &customer).await;
        assert_eq!((status, &body["external_id"]), (StatusCode::CREATED, &json!("1042")));
        // A whole number written with a fraction is that number; a real fraction is refused.
        let mut plan = plan_body();
        plan["plan"]["amount"] = json!(990.0);
        let (status, body) = app.post(&shop, "/plans", &plan).await;
        assert_eq!((status, &body["plan"]["amount"]), (StatusCode::CREATED, &json!(990)));
        plan["plan"]["amount"] = json!(990.5);
        let (status, body) = app.post(&shop, "/plans", &plan).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        // `null` as the whole body is a body with nothing in it.
        let (status, body) = send(app.req(&shop, Method::PUT, "/shop").header("content-type", "application/json").body("null")).await;
        assert_eq!((status, &body["id"]), (StatusCode::OK, &json!(shop.id)));
        let (status, body) = send(app.req(&shop, Method::POST, "/customers").header("content-type", "application/json").body("null")).await;
        assert_invalid(status, &body, "email", &["can't be blank"]);
        let (status, body) = send(app.req(&shop, Method::POST, "/customers").header("content-type", "application/json").body("[]")).await;
        assert_eq!((status, &body["code"]), (StatusCode::BAD_REQUEST, &json!("invalid_request")));
    }

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
        // The database goes away (its pool closes): the check says so, and so does every request.
        app.db.clone().close().await.unwrap();
        let (status, body) = send(app.anon(Method::GET, "/healthz")).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(body, json!({"message": "database unreachable", "code": "service_unavailable"}));
    }

    async fn errors_answer_in_the_shape_of_the_face_they_hit(app) {
        let html = |path: &'static str, method: Method| {
            app.anon(method, path).header(header::ACCEPT, "text/html,application/xhtml+xml,*/*;q=0.8").send()
        };
        // The dashboard answers its own error page, for unknown pages and methods alike.
        for (path, method, status) in [
            ("/dashboard/nothing", Method::GET, StatusCode::NOT_FOUND),
            ("/dashboard/login", Method::DELETE, StatusCode::METHOD_NOT_ALLOWED),
        ] {
            let response = html(path, method).await.unwrap();
            assert_eq!(response.status(), status, "{path}");
            assert!(response.headers()[header::CONTENT_TYPE].to_str().unwrap().starts_with("text/html"));
            let page = response.text().await.unwrap();
            assert!(page.contains("Back to the dashboard"), "{page}");
        }
        // A hosted page's error is a page for browsers and JSON for programs.
        let response = html("/products/prd_0000000000000000/pay", Method::GET).await.unwrap();
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
        assert!(response.text().await.unwrap().contains("<h1>Not Found</h1>"));
        let (status, body) = send(app.anon(Method::GET, "/products/prd_0000000000000000/pay").header(header::ACCEPT, "application/json")).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(body["message"], "Product not found");
        // A path of no face: a page for a browser, JSON for a program; the API is JSON always.
        let response = html("/nothing/here", Method::GET).await.unwrap();
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
        assert!(response.text().await.unwrap().contains("<h1>Not Found</h1>"));
        let (status, body) = send(app.anon(Method::GET, "/nothing/here")).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(body["message"], "Page not found");
        let response = html("/products", Method::GET).await.unwrap();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
        assert!(response.headers().contains_key(header::WWW_AUTHENTICATE));
        let body: Value = response.json().await.unwrap();
        assert!(body["message"].is_string());
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
