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
        let vat = made(&app, &shop, json!({"name": " VAT ", "percentage": 19, "country": "de"})).await;
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
            (json!({"name": "VAT", "category": "exempt"}), "exemption_reason", "can't be blank"),
            (json!({"name": "VAT", "percentage": 19, "exemption_reason": "x"}), "exemption_reason", "must be blank unless the category is exempt"),
            (json!({"name": "VAT", "percentage": 19, "category": "reduced"}), "category", "is not included in the list"),
            (json!({"name": "VAT", "percentage": 19, "country": "XX"}), "country", "is not included in the list"),
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
