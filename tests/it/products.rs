//! Products: spec 2.1 and 4.1.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::helpers::*;

fn with(mut body: Value, key: &str, value: Value) -> Value {
    body[key] = value;
    body
}

db_tests! {
    async fn pages_and_json_are_compressed_for_clients_that_accept_it(app) {
        let shop = app.shop("Shop").await;
        let mut body = test_product_body();
        body["visible_fields"] = json!(["country", "email"]);
        let product = app.product(&shop, &body).await;
        let path = format!("/products/{}/pay", product["id"].as_str().unwrap());
        let plain = app.client.get(format!("{}{path}", app.base)).send().await.unwrap();
        assert!(plain.headers().get("content-encoding").is_none());
        let plain_size = plain.bytes().await.unwrap().len();
        let gzip = app.client.get(format!("{}{path}", app.base)).header("accept-encoding", "gzip").send().await.unwrap();
        assert_eq!(gzip.headers()["content-encoding"], "gzip");
        let gzip_size = gzip.bytes().await.unwrap().len();
        assert!(gzip_size * 3 < plain_size, "{gzip_size} of {plain_size} bytes");
        // A list of products is worth compressing; one product, smaller than a TCP segment, is not.
        for _ in 0..3 {
            app.product(&shop, &body).await;
        }
        let api = app.req(&shop, Method::GET, "/products").header("accept-encoding", "gzip").send().await.unwrap();
        assert_eq!(api.headers()["content-encoding"], "gzip");
        let one = format!("/products/{}", product["id"].as_str().unwrap());
        let one = app.req(&shop, Method::GET, &one).header("accept-encoding", "gzip").send().await.unwrap();
        assert!(one.headers().get("content-encoding").is_none());
        assert!(one.bytes().await.unwrap().len() < paydesk::app::COMPRESSED_FROM as usize);
        // The page's CSRF token is masked afresh on every page, and each one works.
        let (first, second) = (app.open_form(&path).await, app.open_form(&path).await);
        assert_ne!(first.csrf, second.csrf);
    }

    async fn urls_are_stored_returned_and_followed_in_their_normalised_form(app) {
        let shop = app.shop("Shop").await;
        let body = with(with(test_product_body(), "return_url", json!("http:evil.example")),
                        "notification_url", json!("HTTPS://Hooks.Example:443/a/../paydesk"));
        let (status, p) = app.post(&shop, "/products", &body).await;
        assert_eq!(status, StatusCode::CREATED, "{p}");
        assert_eq!(p["return_url"], "http://evil.example/");
        assert_eq!(p["notification_url"], "https://hooks.example/paydesk");
        let id = p["id"].as_str().unwrap();
        let (_, read) = app.get(&shop, &format!("/products/{id}")).await;
        assert_eq!(read["return_url"], "http://evil.example/", "stored as returned");
        let paid = app.pay(id, cards::SUCCESS, &[]).await;
        assert!(paid.location().starts_with("http://evil.example/?payment_id="), "{}", paid.location());
    }

    async fn a_stored_word_outside_its_vocabulary_is_an_error_never_a_default(app) {
        use sea_orm::ConnectionTrait;
        let shop = app.shop("Shop").await;
        let product = app.product(&shop, &product_body()).await;
        let id = product["id"].as_str().unwrap();
        app.db.execute_unprepared(&format!("UPDATE products SET language = 'xx' WHERE id = '{id}'")).await.unwrap();
        let (status, body) = app.get(&shop, &format!("/products/{id}")).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(body["message"], "Internal server error");
    }

    async fn creating_a_product_returns_every_field_of_the_spec(app) {
        let shop = app.shop("Books").await;
        let body = json!({
            "name": "Gift card", "description": "A card worth 9.90", "currency": "EUR",
            "amount": "990", "quantity": "5", "expired_at": "2030-06-30T23:59:59+02:00",
            "visible_fields": ["first_name", "email"], "test": true, "language": "ru",
            "transaction_type": "authorization", "return_url": "https://books.example/thanks",
            "shop_id": shop.id,
        });
        let (status, p) = app.post(&shop, "/products", &body).await;
        assert_eq!(status, StatusCode::CREATED, "{p}");
        let id = p["id"].as_str().unwrap();
        assert!(id.starts_with("prd_") && id.len() == 20, "{id}");
        assert_eq!(p["name"], "Gift card");
        assert_eq!(p["description"], "A card worth 9.90");
        assert_eq!(p["currency"], "EUR");
        assert_eq!(p["amount"], 990);
        assert_eq!(p["quantity"], 5);
        assert_eq!(p["infinite"], false);
        assert_eq!(p["language"], "ru");
        assert_eq!(p["transaction_type"], "authorization");
        assert_eq!(p["test"], true);
        assert_eq!(p["additional_data"], json!({}));
        assert_eq!(p["pay_url"], format!("{}/products/{id}/pay", app.base));
        assert_eq!(p["payment_url"], p["pay_url"]);
        assert_eq!(p["confirm_url"], format!("https://checkout.paydesk.test/v2/confirm_order/{id}/{}", shop.id));
        assert_eq!(p["visible_fields"], json!(["first_name", "email"]));
        assert_eq!(p["immortal"], false);
        assert_eq!(p["expired_at"], "2030-06-30T21:59:59.000Z");
        assert_eq!(p["return_url"], "https://books.example/thanks");
        assert_eq!(p["shop_id"], shop.id);
        assert!(is_api_time(&p["created_at"]) && is_api_time(&p["updated_at"]), "{p}");

        let (status, fetched) = app.get(&shop, &format!("/products/{id}")).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(fetched, p);
    }

    async fn defaults_apply_and_numbers_are_accepted_as_numbers(app) {
        let shop = app.shop("Books").await;
        let body = json!({"name": "Poster", "description": "A2", "currency": "JPY", "amount": 1500,
                          "infinite": true, "immortal": true});
        let p = app.product(&shop, &body).await;
        assert_eq!(p["amount"], 1500);
        assert_eq!(p["quantity"], Value::Null);
        assert_eq!(p["infinite"], true);
        assert_eq!(p["language"], "en");
        assert_eq!(p["transaction_type"], "payment");
        assert_eq!(p["test"], false);
        assert_eq!(p["visible_fields"], json!([]));
        assert_eq!(p["expired_at"], Value::Null);
        assert_eq!(p["return_url"], Value::Null);
    }

    async fn unknown_fields_are_ignored(app) {
        let shop = app.shop("Books").await;
        let body = with(with(product_body(), "dynamic_billing_descriptor", json!("BOOKS*1")),
                        "notification_url", json!("https://books.example/hook"));
        let p = app.product(&shop, &body).await;
        assert!(p.get("dynamic_billing_descriptor").is_none());
    }

    async fn an_empty_request_names_every_required_field(app) {
        let shop = app.shop("Books").await;
        let (status, body) = app.post(&shop, "/products", &json!({})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        for field in ["name", "description", "currency", "amount", "quantity", "expired_at"] {
            assert_eq!(body["errors"][field], json!(["can't be blank"]), "{field}");
        }
        assert_eq!(
            body["message"],
            "Name can't be blank. Description can't be blank. Currency can't be blank. \
             Amount can't be blank. Quantity can't be blank. Expired at can't be blank"
        );
    }

    async fn every_field_rule_is_enforced(app) {
        let shop = app.shop("Books").await;
        let cases: Vec<(&str, Value, Vec<&str>)> = vec![
            ("name", json!(""), vec!["can't be blank"]),
            ("name", json!("x".repeat(256)), vec!["is too long (maximum is 255 characters)"]),
            ("description", json!("   "), vec!["can't be blank"]),
            ("currency", json!("EURO"), vec!["is not in alpha-3 format", "is an unknown code"]),
            ("currency", json!("eur"), vec!["is not in alpha-3 format", "is an unknown code"]),
            ("currency", json!("ABC"), vec!["is an unknown code"]),
            ("amount", json!("9.90"), vec!["is not a number"]),
            ("amount", json!("0"), vec!["must be greater than or equal to 1"]),
            ("amount", json!(12.5), vec!["must be an integer"]),
            ("quantity", json!("five"), vec!["is not a number"]),
            ("quantity", json!(-1), vec!["must be greater than or equal to 0"]),
            ("visible_fields", json!(["email", "shoe_size"]), vec!["is not included in the list"]),
            ("visible_fields", json!("email"), vec!["is invalid"]),
            ("test", json!("yes"), vec!["must be true or false"]),
            ("expired_at", json!("2030-06-30T23:59:59Z"), vec!["must be in the format YYYY-MM-DDThh:mm:ss+hh:mm"]),
            ("expired_at", json!("2030-06-30"), vec!["must be in the format YYYY-MM-DDThh:mm:ss+hh:mm"]),
            ("return_url", json!("/thanks"), vec!["is not an absolute http or https URL"]),
            ("return_url", json!("javascript:alert(1)"), vec!["is not an absolute http or https URL"]),
            ("language", json!("xx"), vec!["is not included in the list"]),
            ("transaction_type", json!("refund"), vec!["is not included in the list"]),
            ("shop_id", json!(shop.id + 1), vec!["does not match the authenticated shop"]),
            ("shop_id", json!("abc"), vec!["is not a number"]),
        ];
        for (field, value, messages) in cases {
            let (status, body) = app.post(&shop, "/products", &with(product_body(), field, value)).await;
            assert_invalid(status, &body, field, &messages);
        }
        let (_, list) = app.get(&shop, "/products").await;
        assert_eq!(list, json!([]), "nothing invalid was stored");
    }

    async fn quantity_and_infinite_exclude_each_other(app) {
        let shop = app.shop("Books").await;
        let (status, body) = app.post(&shop, "/products", &with(product_body(), "infinite", json!(true))).await;
        assert_invalid(status, &body, "quantity", &["must be blank"]);
        let mut finite = product_body();
        finite.as_object_mut().unwrap().remove("quantity");
        let (status, body) = app.post(&shop, "/products", &finite).await;
        assert_invalid(status, &body, "quantity", &["can't be blank"]);
        let p = app.product(&shop, &with(finite, "infinite", json!(true))).await;
        assert_eq!(p["quantity"], Value::Null);
    }

    async fn expired_at_is_required_unless_immortal(app) {
        let shop = app.shop("Books").await;
        let mut body = product_body();
        body.as_object_mut().unwrap().remove("expired_at");
        let (status, errors) = app.post(&shop, "/products", &body).await;
        assert_invalid(status, &errors, "expired_at", &["can't be blank"]);
        let p = app.product(&shop, &with(body, "immortal", json!(true))).await;
        assert_eq!((p["immortal"].clone(), p["expired_at"].clone()), (json!(true), Value::Null));
    }

    async fn update_changes_only_the_fields_sent(app) {
        let shop = app.shop("Books").await;
        let p = app.product(&shop, &product_body()).await;
        let path = format!("/products/{}", p["id"].as_str().unwrap());
        let response = app.req(&shop, Method::PUT, &path)
            .json(&json!({"amount": "1200", "infinite": false, "quantity": "10"}))
            .send().await.unwrap();
        assert_eq!(response.status(), StatusCode::NO_CONTENT);
        assert_eq!(response.text().await.unwrap(), "");
        let (_, after) = app.get(&shop, &path).await;
        assert_eq!(after["amount"], 1200);
        assert_eq!(after["quantity"], 10);
        assert_eq!(after["name"], p["name"]);
        assert_eq!(after["created_at"], p["created_at"]);
        assert!(after["updated_at"].as_str() >= p["updated_at"].as_str());

        let (status, _) = app.put(&shop, &path, &json!({"infinite": true})).await;
        assert_eq!(status, StatusCode::NO_CONTENT);
        let (_, after) = app.get(&shop, &path).await;
        assert_eq!((after["infinite"].clone(), after["quantity"].clone()), (json!(true), Value::Null));
    }

    async fn update_validates_the_fields_sent_and_keeps_the_product_on_error(app) {
        let shop = app.shop("Books").await;
        let p = app.product(&shop, &product_body()).await;
        let path = format!("/products/{}", p["id"].as_str().unwrap());
        for (body, field, messages) in [
            (json!({"currency": "EURO"}), "currency", vec!["is not in alpha-3 format", "is an unknown code"]),
            (json!({"name": ""}), "name", vec!["can't be blank"]),
            (json!({"amount": "abc"}), "amount", vec!["is not a number"]),
            (json!({"infinite": true, "quantity": "3"}), "quantity", vec!["must be blank"]),
            (json!({"expired_at": "soon"}), "expired_at", vec!["must be in the format YYYY-MM-DDThh:mm:ss+hh:mm"]),
        ] {
            let (status, errors) = app.put(&shop, &path, &body).await;
            assert_invalid(status, &errors, field, &messages);
        }
        let (_, after) = app.get(&shop, &path).await;
        assert_eq!(after, p, "a refused update changes nothing");
    }

    async fn unknown_products_are_404_with_a_json_body(app) {
        let shop = app.shop("Books").await;
        for path in ["/products/prd_0000000000000000", "/products/nonsense", "/products/%27%20OR%201=1"] {
            let (status, body) = app.get(&shop, path).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
            assert_eq!(body["message"], "Product not found");
            let (status, _) = app.put(&shop, path, &json!({"amount": "1"})).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
        }
    }
}
