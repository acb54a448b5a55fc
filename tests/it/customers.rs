//! Customers: spec 2.3 and 4.3.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

db_tests! {
    async fn creating_a_customer_returns_every_field(app) {
        let shop = app.shop("Shop").await;
        let body = json!({
            "first_name": "Ann", "last_name": "Lee", "address": "1 Main St", "city": "Albany",
            "country": "US", "zip": "12207-1234", "state": "NY", "phone": "+1 518 555 0100",
            "email": "ann@example.com", "ip": "203.0.113.9", "external_id": "crm-42",
        });
        let (status, c) = app.post(&shop, "/customers", &body).await;
        assert_eq!(status, StatusCode::CREATED, "{c}");
        let id = c["id"].as_str().unwrap();
        assert!(id.starts_with("cst_") && id.len() == 20);
        for (k, v) in body.as_object().unwrap() {
            assert_eq!(&c[k], v, "{k}");
        }
        let (status, fetched) = app.get(&shop, &format!("/customers/{id}")).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(fetched, c);
    }

    async fn only_email_and_ip_are_required(app) {
        let shop = app.shop("Shop").await;
        let (status, c) = app.post(&shop, "/customers", &json!({"email": "bo@example.org", "ip": "2001:db8::7"})).await;
        assert_eq!(status, StatusCode::CREATED);
        assert_eq!(c["country"], Value::Null);
        assert_eq!(c["external_id"], Value::Null);
        let (status, body) = app.post(&shop, "/customers", &json!({})).await;
        assert_invalid(status, &body, "email", &["can't be blank"]);
        assert_invalid(status, &body, "ip", &["can't be blank"]);
        assert_eq!(body["message"], "Email can't be blank. Ip can't be blank");
    }

    async fn every_customer_rule_is_enforced(app) {
        let shop = app.shop("Shop").await;
        let cases: Vec<(Value, &str, Vec<&str>)> = vec![
            (json!({"email": "not-an-email"}), "email", vec!["is invalid"]),
            (json!({"ip": "999.1.1.1"}), "ip", vec!["is invalid"]),
            (json!({"ip": "localhost"}), "ip", vec!["is invalid"]),
            (json!({"ip": null}), "ip", vec!["can't be blank"]),
            (json!({"country": "USA"}), "country", vec!["is not an ISO 3166-1 alpha-2 code"]),
            (json!({"country": "XX"}), "country", vec!["is not an ISO 3166-1 alpha-2 code"]),
            (json!({"country": "US", "zip": "1234"}), "zip", vec!["must be NNNNN or NNNNN-NNNN for the US"]),
            (json!({"country": "US", "zip": "12345-12"}), "zip", vec!["must be NNNNN or NNNNN-NNNN for the US"]),
            (json!({"country": "US", "state": "New York"}), "state", vec!["is invalid"]),
            (json!({"country": "CA", "state": "NY"}), "state", vec!["is invalid"]),
            (json!({"country": "DE", "state": "BY"}), "state", vec!["may be sent only when country is US or CA"]),
            (json!({"state": "NY"}), "state", vec!["may be sent only when country is US or CA"]),
            (json!({"external_id": "x".repeat(256)}), "external_id", vec!["is too long (maximum is 255 characters)"]),
            (json!({"first_name": ["Ann"]}), "first_name", vec!["must be a string"]),
            (json!({"zip": {"code": 1}}), "zip", vec!["must be a string"]),
        ];
        for (change, field, messages) in cases {
            let mut body = customer_body();
            for (k, v) in change.as_object().unwrap() {
                body[k] = v.clone();
            }
            let (status, errors) = app.post(&shop, "/customers", &body).await;
            assert_invalid(status, &errors, field, &messages);
        }
        let (_, list) = app.get(&shop, "/customers").await;
        assert_eq!(list, json!([]));
    }

    async fn postal_rules_accept_what_they_should(app) {
        let shop = app.shop("Shop").await;
        for change in [
            json!({"country": "US", "zip": "12345", "state": "CA"}),
            json!({"country": "CA", "zip": "K1A 0B1", "state": "ON"}),
            json!({"country": "GB", "zip": "SW1A 1AA"}),
            json!({"external_id": "x".repeat(255)}),
        ] {
            let mut body = customer_body();
            for (k, v) in change.as_object().unwrap() {
                body[k] = v.clone();
            }
            let (status, c) = app.post(&shop, "/customers", &body).await;
            assert_eq!(status, StatusCode::CREATED, "{change}: {c}");
        }
    }

    async fn unknown_customers_are_404(app) {
        let shop = app.shop("Shop").await;
        let (status, body) = app.get(&shop, "/customers/cst_0000000000000000").await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(body["message"], "Customer not found");
    }
}
