//! Renewals whose answer is not known when their subscription ends (cancelled meanwhile):
//! the engine no longer claims them, so the sweep settles them by looking them up. A
//! charge the processor made is recorded, on a test clock too (whose times real time says
//! nothing about); one that never reached the processor is never sent after the cancel.

use chrono::{Duration, Utc};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::bepaid_pay::{bepaid_shop, sweep};
use crate::doubles::bepaid::Fault;
use crate::helpers::*;
use crate::subscriptions::{advance, card_json, clock, plan};

async fn payments_of(app: &TestApp, shop: &Shop, sub: &str) -> Vec<Value> {
    let (_, list) = app.get(shop, &format!("/payments?subscription={sub}")).await;
    list.as_array().unwrap().clone()
}

db_tests! {
    async fn a_lost_renewal_on_a_clock_ahead_of_real_time_is_recorded_as_charged_after_a_cancel(app) {
        let (shop, gateway) = bepaid_shop(&app).await;
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2031-01-01T10:00:00Z").await;
        let body = json!({"plan": {"id": plan}, "customer": customer_body(), "card": card_json("4200000000000000"),
                          "test_clock": clock});
        let (_, sub) = app.post(&shop, "/subscriptions", &body).await;
        let sub_id = sub["id"].as_str().unwrap();
        gateway.fail_next(&[Fault::BadGatewayAfter]);
        advance(&app, &shop, &clock, "2031-02-01T10:00:30Z").await;
        let (status, _) = app.post(&shop, &format!("/subscriptions/{sub_id}/cancel"), &json!({})).await;
        assert_eq!(status, StatusCode::OK);
        assert!(payments_of(&app, &shop, sub_id).await.iter().any(|p| p["status"] == "processing"));
        sweep(&app, 3).await;
        let payments = payments_of(&app, &shop, sub_id).await;
        assert_eq!(payments.len(), 2, "{payments:?}");
        assert!(payments.iter().all(|p| p["status"] == "succeeded"), "what the bank took is recorded: {payments:?}");
        assert_eq!(gateway.transactions().iter().filter(|t| t.kind == "payment").count(), 2, "looked up, not sent");
    }

    async fn a_renewal_that_never_reached_the_processor_is_not_sent_after_a_cancel(app) {
        let (shop, gateway) = bepaid_shop(&app).await;
        let plan = plan(&app, &shop, json!({})).await;
        let body = json!({"plan": {"id": plan}, "customer": customer_body(), "card": card_json("4200000000000000")});
        let (_, sub) = app.post(&shop, "/subscriptions", &body).await;
        let sub_id = sub["id"].as_str().unwrap();
        gateway.fail_next(&[Fault::ServerError]);
        let renewal = Utc::now() + Duration::days(32);
        paydesk::services::billing::run_due(&app.state, renewal).await.unwrap();
        assert!(payments_of(&app, &shop, sub_id).await.iter().any(|p| p["status"] == "processing"));
        let (status, _) = app.post(&shop, &format!("/subscriptions/{sub_id}/cancel"), &json!({})).await;
        assert_eq!(status, StatusCode::OK);
        sweep(&app, 33 * 24 * 60).await;
        let payments = payments_of(&app, &shop, sub_id).await;
        let renewal = payments.iter().find(|p| p["status"] != "succeeded").expect("the renewal");
        assert_eq!((renewal["status"].as_str(), renewal["failure_code"].as_str()), (Some("failed"), Some("not_charged")), "{renewal}");
        assert_eq!(gateway.transactions().iter().filter(|t| t.kind == "payment").count(), 1, "never sent after the cancel");
        sweep(&app, 34 * 24 * 60).await;
        assert_eq!(gateway.transactions().iter().filter(|t| t.kind == "payment").count(), 1);
    }
}
