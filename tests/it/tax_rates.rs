//! Tax rates over HTTP: made with every rule checked, read, listed, archived, and kept apart
//! per shop; each change in the audit trail.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

async fn made(app: &TestApp, shop: &Shop, body: Value) -> Value {
    let (status, rate) = app.post(shop, "/tax_rates", &body).await;
    assert_eq!(status, StatusCode::CREATED, "{body}: {rate}");
    rate
}

db_tests! {
    async fn tax_rates_are_made_read_listed_and_archived(app) {
        let shop = app.shop("Gym").await;
        let vat = made(&app, &shop, json!({"name": " VAT ", "percentage": 19, "country": "DE"})).await;
        let id = vat["id"].as_str().unwrap();
        assert!(id.starts_with("txr_"), "{vat}");
        assert_eq!(
            (&vat["object"], &vat["name"], &vat["percentage"], &vat["category"], &vat["country"], &vat["exemption_reason"]),
            (&json!("tax_rate"), &json!("VAT"), &json!(19.0), &json!("standard"), &json!("DE"), &Value::Null)
        );
        assert_eq!(vat["archived_at"], Value::Null);
        let reduced = made(&app, &shop, json!({"name": "MWST reduziert", "percentage": "2.6000", "country": "CH"})).await;
        assert_eq!(reduced["percentage"], json!(2.6));
        assert_eq!(made(&app, &shop, json!({"name": "x", "percentage": 0.1 + 0.2})).await["percentage"], json!(0.3));
        let exempt = made(&app, &shop, json!({"name": "Exempt", "category": "exempt", "exemption_reason": "Article 132(1)(j)"})).await;
        assert_eq!((&exempt["percentage"], &exempt["category"]), (&json!(0.0), &json!("exempt")));
        let zero = made(&app, &shop, json!({"name": "Zero", "category": "zero_rated", "percentage": "0"})).await;
        assert_eq!(zero["percentage"], json!(0.0));

        let (status, one) = app.get(&shop, &format!("/tax_rates/{id}")).await;
        assert_eq!((status, &one), (StatusCode::OK, &vat));
        let (status, listed) = app.get(&shop, "/tax_rates?limit=2").await;
        assert_eq!(status, StatusCode::OK);
        let names: Vec<&str> = listed.as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["Zero", "Exempt"], "newest first, paged");

        let (status, archived) = app.post(&shop, &format!("/tax_rates/{id}/archive"), &json!({})).await;
        assert_eq!(status, StatusCode::OK, "{archived}");
        let at = archived["archived_at"].clone();
        assert!(at.is_string(), "{archived}");
        let (status, again) = app.post(&shop, &format!("/tax_rates/{id}/archive"), &json!({})).await;
        assert_eq!((status, &again["archived_at"]), (StatusCode::OK, &at), "asked again, nothing changes");

        let other = app.shop("Records").await;
        assert_eq!(app.get(&other, &format!("/tax_rates/{id}")).await.0, StatusCode::NOT_FOUND);
        assert_eq!(app.post(&other, &format!("/tax_rates/{id}/archive"), &json!({})).await.0, StatusCode::NOT_FOUND);
        assert_eq!(app.get(&other, "/tax_rates").await.1, json!([]));
        assert_eq!(app.get(&shop, "/tax_rates/txr_0000000000000000").await.0, StatusCode::NOT_FOUND);

        let (_, trail) = app.get(&shop, "/audit_events?limit=100").await;
        let actions: Vec<&str> = trail.as_array().unwrap().iter().map(|r| r["action"].as_str().unwrap()).collect();
        assert_eq!(actions.iter().filter(|a| **a == "tax_rate.created").count(), 5, "{actions:?}");
        assert_eq!(actions.iter().filter(|a| **a == "tax_rate.archived").count(), 1, "once: {actions:?}");
        let created = trail.as_array().unwrap().iter().rfind(|r| r["action"] == "tax_rate.created").unwrap();
        let percentage = created["changes"].as_array().unwrap().iter().find(|c| c["field"] == "percentage").unwrap();
        assert_eq!(percentage["after"], json!("19"), "{created}");
    }

    async fn a_bad_rate_is_refused_with_its_field_named_and_nothing_made(app) {
        let shop = app.shop("Gym").await;
        for (body, field, message) in [
            (json!({"percentage": 19}), "name", "can't be blank"),
            (json!({"name": "VAT"}), "percentage", "can't be blank"),
            (json!({"name": "VAT", "percentage": 100.5}), "percentage", "must be less than or equal to 100"),
            (json!({"name": "VAT", "percentage": -1}), "percentage", "must be greater than or equal to 0"),
            (json!({"name": "VAT", "percentage": "19.12345"}), "percentage", "may have at most 4 decimals"),
            (json!({"name": "VAT", "percentage": "19,5"}), "percentage", "is not a number"),
            (json!({"name": "VAT", "percentage": 0}), "percentage", "must be greater than 0 for a standard rate"),
            (json!({"name": "VAT", "percentage": 5, "category": "zero_rated"}), "percentage", "must be 0 for a zero-rated rate"),
            (json!({"name": "VAT", "percentage": 5, "category": "exempt", "exemption_reason": "x"}), "percentage", "must be 0 for an exempt rate"),
            (json!({"name": "VAT", "category": "exempt"}), "exemption_reason", "can't be blank"),
            (json!({"name": "VAT", "percentage": 19, "exemption_reason": "x"}), "exemption_reason", "must not be sent unless the category is exempt"),
            (json!({"name": "VAT", "percentage": 19, "category": "reduced"}), "category", "is not included in the list"),
            (json!({"name": "VAT", "percentage": 19, "country": "XX"}), "country", "is not an ISO 3166-1 alpha-2 code"),
            (json!({"name": "VAT", "percentage": "5.50000"}), "percentage", "may have at most 4 decimals"),
            (json!({"name": "V\u{0}T", "percentage": 19}), "name", ""),
        ] {
            let (status, refused) = app.post(&shop, "/tax_rates", &body).await;
            assert!(status == StatusCode::UNPROCESSABLE_ENTITY || status == StatusCode::BAD_REQUEST, "{body}: {status} {refused}");
            if !message.is_empty() {
                assert_eq!(refused["errors"][field], json!([message]), "{body}: {refused}");
            }
        }
        assert_eq!(app.get(&shop, "/tax_rates").await.1, json!([]));
    }
}

/// A seller's whole set of details in Germany.
fn berlin() -> Value {
    json!({
        "legal_name": "Corner Books GmbH", "address_line1": "Hauptstraße 1", "city": "Berlin",
        "postal_code": "10115", "country": "DE", "vat_id": "de 123.456-789", "registration_number": "HRB 12345",
        "invoice_footer": "IBAN DE02 1203 0000 0000 2020 51",
    })
}

db_tests! {
    async fn the_seller_is_set_as_a_whole_and_what_invoices_need_is_named(app) {
        let shop = app.shop("Gym").await;
        let (status, empty) = app.get(&shop, "/shop/seller").await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(empty["object"], "seller");
        assert_eq!(empty["missing"], json!(["legal_name", "address_line1", "city", "country"]));
        assert_eq!(empty["vat_id"], Value::Null);

        let (status, set) = app.put(&shop, "/shop/seller", &berlin()).await;
        assert_eq!(status, StatusCode::OK, "{set}");
        assert_eq!((&set["vat_id"], &set["missing"]), (&json!("DE123456789"), &json!([])));
        assert_eq!(app.get(&shop, "/shop/seller").await.1, set);

        // A field not sent is emptied.
        let (status, partial) = app.put(&shop, "/shop/seller", &json!({"legal_name": "Corner Books GmbH"})).await;
        assert_eq!(status, StatusCode::OK, "{partial}");
        assert_eq!(partial["missing"], json!(["address_line1", "city", "country"]));
        assert_eq!(partial["invoice_footer"], Value::Null);

        for (body, field, message) in [
            (json!({"country": "DE", "vat_id": "FR1A123456789"}), "vat_id", "is not in the form of the country's VAT ids"),
            (json!({"vat_id": "DE123456789"}), "country", "can't be blank when vat_id is given"),
            (json!({"country": "de"}), "country", "is not an ISO 3166-1 alpha-2 code"),
            (json!({"legal_name": "x".repeat(201)}), "legal_name", "is too long (maximum is 200 characters)"),
        ] {
            let (status, refused) = app.put(&shop, "/shop/seller", &body).await;
            assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {refused}");
            assert_eq!(refused["errors"][field], json!([message]), "{body}: {refused}");
        }
        assert_eq!(app.get(&shop, "/shop/seller").await.1, partial, "a refusal changes nothing");

        let other = app.shop("Records").await;
        assert_eq!(app.get(&other, "/shop/seller").await.1["legal_name"], Value::Null, "each shop its own");

        let (_, trail) = app.get(&shop, "/audit_events?limit=100").await;
        let records: Vec<&Value> = trail.as_array().unwrap().iter().filter(|r| r["action"] == "seller.updated").collect();
        assert_eq!(records.len(), 2, "one a change, none for a refusal: {records:?}");
        let first = records[1];
        assert_eq!(first["actor"]["type"], "api_key");
        let vat = first["changes"].as_array().unwrap().iter().find(|c| c["field"] == "vat_id").unwrap();
        assert_eq!((&vat["before"], &vat["after"]), (&Value::Null, &json!("DE123456789")));
        // The same details again change nothing and record nothing.
        app.put(&shop, "/shop/seller", &json!({"legal_name": "Corner Books GmbH"})).await;
        let (_, trail) = app.get(&shop, "/audit_events?limit=100").await;
        assert_eq!(trail.as_array().unwrap().iter().filter(|r| r["action"] == "seller.updated").count(), 2);
    }

    async fn twelve_sellers_set_at_once_leave_one_whole_set(app) {
        let shop = app.shop("Gym").await;
        let bodies: Vec<Value> = (0..12)
            .map(|i| {
                let mut body = berlin();
                body["legal_name"] = json!(format!("Corner Books {i}"));
                body["city"] = json!(format!("Berlin {i}"));
                body
            })
            .collect();
        let answers = futures::future::join_all(bodies.iter().map(|b| app.put(&shop, "/shop/seller", b))).await;
        for (status, body) in &answers {
            assert_eq!(*status, StatusCode::OK, "{body}");
        }
        let (_, kept) = app.get(&shop, "/shop/seller").await;
        let name = kept["legal_name"].as_str().unwrap();
        let i = name.strip_prefix("Corner Books ").unwrap();
        assert_eq!(kept["city"], json!(format!("Berlin {i}")), "one request's whole set: {kept}");
    }
}
