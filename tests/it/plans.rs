//! Plans: spec 2.2 and 4.2.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

db_tests! {
    async fn creating_a_plan_returns_the_plan_object(app) {
        let shop = app.shop("Gym").await;
        let body = json!({
            "test": true, "title": "Gold", "currency": "USD", "language": "de",
            "plan": {"amount": "1990", "interval": 1, "interval_unit": "month"},
            "trial": {"amount": 100, "interval": "7", "interval_unit": "day", "as_first_payment": true},
            "infinite": false, "billing_cycles": 12, "number_payment_attempts": 5,
            "prevent_payments_at_night": true,
        });
        let (status, p) = app.post(&shop, "/plans", &body).await;
        assert_eq!(status, StatusCode::CREATED, "{p}");
        let id = p["id"].as_str().unwrap();
        assert!(id.starts_with("pln_") && id.len() == 20);
        assert_eq!(p["title"], "Gold");
        assert_eq!(p["currency"], "USD");
        assert_eq!(p["language"], "de");
        assert_eq!(p["plan"], json!({"amount": 1990, "interval": 1, "interval_unit": "month"}));
        assert_eq!(p["trial"], json!({"amount": 100, "interval": 7, "interval_unit": "day", "as_first_payment": true}));
        assert_eq!(p["number_payment_attempts"], 5);
        assert_eq!(p["test"], true);
        assert_eq!(p["infinite"], false);
        assert_eq!(p["billing_cycles"], 12);
        assert_eq!(p["prevent_payments_at_night"], true);
        assert_eq!(p["pay_url"], format!("{}/plans/{id}/pay", app.base));
        assert!(is_api_time(&p["created_at"]) && is_api_time(&p["updated_at"]));

        let (status, fetched) = app.get(&shop, &format!("/plans/{id}")).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(fetched, p);
    }

    async fn defaults_follow_the_spec(app) {
        let shop = app.shop("Gym").await;
        let (_, p) = app.post(&shop, "/plans", &plan_body()).await;
        assert_eq!(p["number_payment_attempts"], 3);
        assert_eq!(p["infinite"], true);
        assert_eq!(p["billing_cycles"], Value::Null);
        assert_eq!(p["prevent_payments_at_night"], false);
        assert_eq!(p["language"], "en");
        assert_eq!(p["test"], false);
        assert_eq!(p["trial"], json!({"amount": null, "interval": null, "interval_unit": null, "as_first_payment": false}));
    }

    async fn blank_title_and_bad_currency_give_the_body_of_the_spec(app) {
        let shop = app.shop("Gym").await;
        let mut body = plan_body();
        body["title"] = json!("");
        body["currency"] = json!("EURO");
        let response = app.req(&shop, reqwest::Method::POST, "/plans").json(&body).send().await.unwrap();
        assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(
            response.text().await.unwrap(),
            r#"{"message":"Title can't be blank. Currency is not in alpha-3 format","errors":{"title":["can't be blank"],"currency":["is not in alpha-3 format","is an unknown code"]},"code":"parameter_invalid"}"#
        );
    }

    async fn every_plan_rule_is_enforced(app) {
        let shop = app.shop("Gym").await;
        let cases: Vec<(Value, &str, Vec<&str>)> = vec![
            (json!({"plan": null}), "plan.amount", vec!["can't be blank"]),
            (json!({"plan": "monthly"}), "plan", vec!["must be an object"]),
            (json!({"plan": {"amount": 990, "interval": 1}}), "plan.interval_unit", vec!["can't be blank"]),
            (json!({"plan": {"amount": 990, "interval": 1, "interval_unit": "week"}}), "plan.interval_unit", vec!["is not included in the list"]),
            (json!({"plan": {"amount": 990, "interval": 0, "interval_unit": "day"}}), "plan.interval", vec!["must be greater than or equal to 1"]),
            (json!({"plan": {"amount": "x", "interval": 1, "interval_unit": "day"}}), "plan.amount", vec!["is not a number"]),
            (json!({"plan": {"amount": 0, "interval": 1, "interval_unit": "day"}}), "plan.amount", vec!["must be greater than or equal to 1"]),
            (json!({"trial": {"amount": 100}}), "trial.interval", vec!["can't be blank"]),
            (json!({"trial": {"interval": 7, "interval_unit": "day"}}), "trial.amount", vec!["can't be blank"]),
            (json!({"trial": {"amount": 100, "interval": 7, "interval_unit": "year"}}), "trial.interval_unit", vec!["is not included in the list"]),
            (json!({"trial": {"amount": -1, "interval": 7}}), "trial.amount", vec!["must be greater than or equal to 0"]),
            (json!({"number_payment_attempts": 0}), "number_payment_attempts", vec!["must be greater than or equal to 1"]),
            (json!({"infinite": false}), "billing_cycles", vec!["can't be blank"]),
            (json!({"infinite": false, "billing_cycles": 0}), "billing_cycles", vec!["must be greater than or equal to 1"]),
            (json!({"language": "xx"}), "language", vec!["is not included in the list"]),
            (json!({"currency": "ABC"}), "currency", vec!["is an unknown code"]),
            (json!({"title": null}), "title", vec!["can't be blank"]),
            (json!({"prevent_payments_at_night": "sometimes"}), "prevent_payments_at_night", vec!["must be true or false"]),
        ];
        for (change, field, messages) in cases {
            let mut body = plan_body();
            for (k, v) in change.as_object().unwrap() {
                body[k] = v.clone();
            }
            let (status, errors) = app.post(&shop, "/plans", &body).await;
            assert_invalid(status, &errors, field, &messages);
        }
        let (_, list) = app.get(&shop, "/plans").await;
        assert_eq!(list, json!([]));
    }

    async fn billing_cycles_are_ignored_for_infinite_plans(app) {
        let shop = app.shop("Gym").await;
        let mut body = plan_body();
        body["billing_cycles"] = json!(6);
        let (status, p) = app.post(&shop, "/plans", &body).await;
        assert_eq!(status, StatusCode::CREATED);
        assert_eq!(p["billing_cycles"], Value::Null);
        assert_eq!(p["infinite"], true);
    }

    async fn a_free_trial_in_the_plans_unit_is_allowed(app) {
        let shop = app.shop("Gym").await;
        let mut body = plan_body();
        body["trial"] = json!({"amount": 0, "interval": 14});
        let (status, p) = app.post(&shop, "/plans", &body).await;
        assert_eq!(status, StatusCode::CREATED, "{p}");
        assert_eq!(p["trial"], json!({"amount": 0, "interval": 14, "interval_unit": "month", "as_first_payment": false}));
    }

    async fn unknown_plans_are_404(app) {
        let shop = app.shop("Gym").await;
        let (status, body) = app.get(&shop, "/plans/pln_0000000000000000").await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(body["message"], "Plan not found");
    }
}
