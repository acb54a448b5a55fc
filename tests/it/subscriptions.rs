//! Subscriptions and the billing engine, walked through with test clocks over HTTP.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

/// A test plan with `change` applied.
pub async fn plan(app: &TestApp, shop: &Shop, change: Value) -> String {
    let mut body = plan_body();
    body["test"] = json!(true);
    for (k, v) in change.as_object().unwrap() {
        body[k] = v.clone();
    }
    let (status, plan) = app.post(shop, "/plans", &body).await;
    assert_eq!(status, StatusCode::CREATED, "{plan}");
    plan["id"].as_str().unwrap().to_string()
}

pub async fn clock(app: &TestApp, shop: &Shop, at: &str) -> String {
    let (status, clock) = app.post(shop, "/test_clocks", &json!({"frozen_time": at})).await;
    assert_eq!(status, StatusCode::CREATED, "{clock}");
    assert_eq!(clock["status"], "ready");
    clock["id"].as_str().unwrap().to_string()
}

pub fn card_json(number: &str) -> Value {
    json!({"number": number, "exp_month": 12, "exp_year": 2040, "cvc": "123", "holder": "Ann Lee"})
}

pub async fn subscribe(app: &TestApp, shop: &Shop, plan: &str, clock: &str, number: &str) -> Value {
    let body = json!({"plan": {"id": plan}, "customer": customer_body(), "card": card_json(number), "test_clock": clock,
                      "tracking_id": "order-42"});
    let (status, sub) = app.post(shop, "/subscriptions", &body).await;
    assert_eq!(status, StatusCode::CREATED, "{sub}");
    sub
}

pub async fn advance(app: &TestApp, shop: &Shop, clock: &str, to: &str) -> Value {
    let (status, body) = app.post(shop, &format!("/test_clocks/{clock}/advance"), &json!({"frozen_time": to})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["status"], "ready");
    body
}

pub async fn get_sub(app: &TestApp, shop: &Shop, id: &str) -> Value {
    let (status, sub) = app.get(shop, &format!("/subscriptions/{id}")).await;
    assert_eq!(status, StatusCode::OK);
    sub
}

/// The subscription's charges, oldest first: (time, amount, status).
async fn charges(app: &TestApp, shop: &Shop, sub: &str) -> Vec<(String, i64, String)> {
    let (_, list) = app.get(shop, &format!("/payments?subscription={sub}&limit=1000")).await;
    let mut rows: Vec<(String, i64, String)> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["created_at"].as_str().unwrap().to_string(),
                p["amount"].as_i64().unwrap(),
                p["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    rows.reverse();
    rows
}

fn times(rows: &[(String, i64, String)]) -> Vec<&str> {
    rows.iter().map(|(t, _, _)| t.as_str()).collect()
}

pub async fn make_card(app: &TestApp, shop: &Shop, sub: &str, outcome: &str) {
    let (status, body) =
        app.post(shop, &format!("/subscriptions/{sub}/test_card_outcome"), &json!({"outcome": outcome})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

db_tests! {
    async fn a_monthly_plan_with_a_7_day_trial_bills_through_14_months(app) {
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({"trial": {"amount": 100, "interval": 7, "interval_unit": "day"}})).await;
        let clock = clock(&app, &shop, "2026-01-01T10:00:00Z").await;
        let sub = subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await;
        let id = sub["id"].as_str().unwrap();
        assert!(id.starts_with("sbs_"));
        assert_eq!(sub["state"], "trial");
        assert_eq!(sub["renew_at"], "2026-01-08T10:00:00.000Z");
        assert_eq!(sub["trial_ends_at"], "2026-01-08T10:00:00.000Z");
        assert_eq!(sub["active_to"], "2026-01-08T10:00:00.000Z");
        assert_eq!(sub["tracking_id"], "order-42");
        assert_eq!(sub["plan"]["id"], plan.as_str());
        assert_eq!(sub["customer"]["email"], "ann@example.com");
        assert_eq!(sub["card"], json!({"brand": "visa", "last_4": "0000", "exp_month": 12, "exp_year": 2040}));
        assert_eq!(sub["last_transaction"]["amount"], 100);
        assert_eq!(sub["paid_billing_cycles"], 0);

        advance(&app, &shop, &clock, "2027-03-01T00:00:00Z").await;
        let rows = charges(&app, &shop, id).await;
        assert_eq!(rows.len(), 1 + 14, "{rows:?}");
        assert_eq!(rows[0], ("2026-01-01T10:00:00.000Z".into(), 100, "succeeded".into()));
        assert!(rows[1..].iter().all(|(_, amount, status)| *amount == 990 && status == "succeeded"));
        assert_eq!(rows[1].0, "2026-01-08T10:00:00.000Z");
        assert_eq!(rows[2].0, "2026-02-08T10:00:00.000Z");
        assert_eq!(rows[14].0, "2027-02-08T10:00:00.000Z");
        let sub = get_sub(&app, &shop, id).await;
        assert_eq!(sub["state"], "active");
        assert_eq!(sub["paid_billing_cycles"], 14);
        assert_eq!(sub["renew_at"], "2027-03-08T10:00:00.000Z");
        assert_eq!(sub["current_period"], json!({"start": "2027-02-08T10:00:00.000Z", "end": "2027-03-08T10:00:00.000Z"}));
    }

    async fn a_plan_started_on_january_31_bills_on_the_last_day_of_short_months(app) {
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2026-01-31T12:00:00Z").await;
        let sub = subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await;
        assert_eq!(sub["state"], "active");
        advance(&app, &shop, &clock, "2026-06-01T00:00:00Z").await;
        let rows = charges(&app, &shop, sub["id"].as_str().unwrap()).await;
        assert_eq!(
            times(&rows),
            ["2026-01-31T12:00:00.000Z", "2026-02-28T12:00:00.000Z", "2026-03-31T12:00:00.000Z", "2026-04-30T12:00:00.000Z", "2026-05-31T12:00:00.000Z"]
        );
    }

    async fn declines_are_retried_daily_until_the_attempts_are_used_up(app) {
        let shop = app.shop("Gym").await;
        for (attempts, retries) in [(None, 3), (Some(5), 5)] {
            let change = attempts.map_or(json!({}), |n| json!({"number_payment_attempts": n}));
            let plan = plan(&app, &shop, change).await;
            let clock = clock(&app, &shop, "2026-03-10T12:00:00Z").await;
            let sub = subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await;
            let id = sub["id"].as_str().unwrap();
            make_card(&app, &shop, id, "declined").await;
            advance(&app, &shop, &clock, "2026-04-10T12:00:00Z").await;
            let after_first = get_sub(&app, &shop, id).await;
            assert_eq!(after_first["state"], "failed_attempt");
            assert_eq!(after_first["number_failed_payment_attempts"], 1);
            assert_eq!(after_first["renew_at"], "2026-04-11T03:00:00.000Z");
            advance(&app, &shop, &clock, "2026-05-01T00:00:00Z").await;
            let rows = charges(&app, &shop, id).await;
            assert_eq!(rows.len(), 1 + retries, "{rows:?}");
            let expected: Vec<String> = std::iter::once("2026-04-10T12:00:00.000Z".to_string())
                .chain((1..retries).map(|d| format!("2026-04-{:02}T03:00:00.000Z", 10 + d)))
                .collect();
            assert_eq!(times(&rows[1..]), expected);
            assert!(rows[1..].iter().all(|(_, _, status)| status == "failed"));
            let sub = get_sub(&app, &shop, id).await;
            assert_eq!(sub["state"], "failed");
            assert_eq!(sub["renew_at"], Value::Null);
            assert_eq!(sub["cancel_reason"], "payment attempts exhausted");
            assert_eq!(sub["cancelled_at"], expected.last().unwrap().as_str());
        }
    }

    async fn processing_errors_are_retried_every_hour_and_end_in_error(app) {
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2026-03-10T12:20:00Z").await;
        let sub = subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await;
        let id = sub["id"].as_str().unwrap();
        make_card(&app, &shop, id, "processing_error").await;
        advance(&app, &shop, &clock, "2026-04-11T00:00:00Z").await;
        let rows = charges(&app, &shop, id).await;
        assert_eq!(times(&rows[1..]), ["2026-04-10T12:20:00.000Z", "2026-04-10T13:00:00.000Z", "2026-04-10T14:00:00.000Z"]);
        assert!(rows[1..].iter().all(|(_, _, status)| status == "error"));
        assert_eq!(get_sub(&app, &shop, id).await["state"], "error");
    }

    async fn a_trial_counts_as_a_first_payment_only_when_the_plan_says_so(app) {
        let shop = app.shop("Gym").await;
        for (as_first, state, attempts) in [(true, "failed_attempt", 2), (false, "failed", 2)] {
            let trial = json!({"amount": 100, "interval": 7, "interval_unit": "day", "as_first_payment": as_first});
            let plan = plan(&app, &shop, json!({"trial": trial})).await;
            let clock = clock(&app, &shop, "2026-05-01T10:00:00Z").await;
            let sub = subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await;
            let id = sub["id"].as_str().unwrap();
            make_card(&app, &shop, id, "declined").await;
            advance(&app, &shop, &clock, "2026-05-08T12:00:00Z").await;
            let sub = get_sub(&app, &shop, id).await;
            assert_eq!(sub["state"], state, "as_first_payment {as_first}");
            assert_eq!(charges(&app, &shop, id).await.len(), attempts);
        }
    }

    async fn billing_cycles_end_the_subscription_as_expired(app) {
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({"infinite": false, "billing_cycles": 3})).await;
        let clock = clock(&app, &shop, "2026-01-15T09:00:00Z").await;
        let sub = subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await;
        let id = sub["id"].as_str().unwrap();
        advance(&app, &shop, &clock, "2026-03-20T00:00:00Z").await;
        let sub = get_sub(&app, &shop, id).await;
        assert_eq!((sub["state"].clone(), sub["paid_billing_cycles"].clone()), (json!("active"), json!(3)));
        advance(&app, &shop, &clock, "2026-08-01T00:00:00Z").await;
        let sub = get_sub(&app, &shop, id).await;
        assert_eq!(sub["state"], "expired");
        assert_eq!(sub["active_to"], "2026-04-15T09:00:00.000Z");
        assert_eq!(sub["renew_at"], Value::Null);
        assert_eq!(charges(&app, &shop, id).await.len(), 3);
    }

    async fn an_hourly_plan_with_night_prevention_waits_for_morning(app) {
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({"plan": {"amount": 50, "interval": 1, "interval_unit": "hour"}, "prevent_payments_at_night": true})).await;
        let clock = clock(&app, &shop, "2026-06-01T18:30:00Z").await;
        let sub = subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await;
        advance(&app, &shop, &clock, "2026-06-02T10:00:00Z").await;
        let rows = charges(&app, &shop, sub["id"].as_str().unwrap()).await;
        assert_eq!(
            times(&rows),
            ["2026-06-01T18:30:00.000Z", "2026-06-01T19:30:00.000Z", "2026-06-02T08:00:00.000Z", "2026-06-02T08:30:00.000Z", "2026-06-02T09:30:00.000Z"]
        );
    }

    async fn a_subscription_without_a_card_redirects_the_customer_to_enter_it(app) {
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({})).await;
        let (_, customer) = app.post(&shop, "/customers", &customer_body()).await;
        let body = json!({"plan_id": plan, "customer_id": customer["id"], "return_url": "https://gym.example/welcome",
                          "additional_data": {"source": "app"}, "dynamic_billing_descriptor": "GYM"});
        let (status, sub) = app.post(&shop, "/subscriptions", &body).await;
        assert_eq!(status, StatusCode::CREATED, "{sub}");
        assert_eq!(sub["state"], "redirecting");
        assert_eq!(sub["card"], Value::Null);
        assert_eq!(sub["additional_data"], json!({"source": "app"}));
        let id = sub["id"].as_str().unwrap();
        let url = sub["redirect_url"].as_str().unwrap();
        assert_eq!(url, format!("{}/subscriptions/{id}/pay", app.base));
        let path = url.strip_prefix(&app.base).unwrap();
        let form = app.open_form(path).await;
        let page = app.submit(path, &form, &card(cards::SUCCESS)).await;
        assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.html);
        assert!(page.location().starts_with("https://gym.example/welcome?payment_id=pay_"));
        let sub = get_sub(&app, &shop, id).await;
        assert_eq!(sub["state"], "active");
        assert_eq!(sub["redirect_url"], Value::Null);
        assert_eq!(app.page(path).await.status, StatusCode::CONFLICT, "the card is given once");
    }

    async fn subscription_requests_are_validated(app) {
        let shop = app.shop("Gym").await;
        let other = app.shop("Other").await;
        let test_plan = plan(&app, &shop, json!({})).await;
        let (_, live_plan) = app.post(&shop, "/plans", &plan_body()).await;
        let (_, foreign) = app.post(&other, "/customers", &customer_body()).await;
        let clock = clock(&app, &shop, "2026-01-01T00:00:00Z").await;
        for (body, field) in [
            (json!({"customer": customer_body()}), "plan_id"),
            (json!({"plan": {"id": "pln_0000000000000000"}, "customer": customer_body()}), "plan.id"),
            (json!({"plan": {"id": test_plan}}), "customer"),
            (json!({"plan": {"id": test_plan}, "customer": {"id": foreign["id"]}}), "customer.id"),
            (json!({"plan": {"id": test_plan}, "customer": {"email": "x", "ip": "1.1.1.1"}}), "customer.email"),
            (json!({"plan": {"id": test_plan}, "customer": customer_body(), "card": card_json("4242424242424242")}), "card.number"),
            (json!({"plan": {"id": test_plan}, "customer": customer_body(), "card": {"number": "1"}}), "card.cvc"),
            (json!({"plan": {"id": live_plan["id"]}, "customer": customer_body(), "test_clock": clock}), "test_clock"),
        ] {
            let (status, errors) = app.post(&shop, "/subscriptions", &body).await;
            assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {errors}");
            assert!(errors["errors"][field].is_array(), "{field}: {errors}");
        }
        let (_, list) = app.get(&shop, "/subscriptions").await;
        assert_eq!(list, json!([]));
        let (status, _) = app.get(&other, "/subscriptions/sbs_0000000000000000").await;
        assert_eq!(status, StatusCode::NOT_FOUND);
    }

    async fn a_canceled_subscription_is_never_charged_again(app) {
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2026-01-10T12:00:00Z").await;
        let sub = subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await;
        let id = sub["id"].as_str().unwrap();
        let (status, canceled) = app.post(&shop, &format!("/subscriptions/{id}/cancel"), &json!({"cancel_reason": "moved away"})).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!((canceled["state"].clone(), canceled["cancel_reason"].clone()), (json!("canceled"), json!("moved away")));
        assert_eq!(canceled["cancelled_at"], "2026-01-10T12:00:00.000Z", "at the clock's time");
        advance(&app, &shop, &clock, "2026-06-01T00:00:00Z").await;
        assert_eq!(charges(&app, &shop, id).await.len(), 1);
        let (status, _) = app.post(&shop, &format!("/subscriptions/{id}/cancel"), &json!({})).await;
        assert_eq!(status, StatusCode::CONFLICT);
        let other = app.shop("Other").await;
        let (status, _) = app.post(&other, &format!("/subscriptions/{id}/cancel"), &json!({})).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (_, listed) = app.get(&shop, "/subscriptions?state=canceled").await;
        assert_eq!(listed[0]["id"], id);
    }

    async fn the_timeline_lists_every_state_change_and_charge_newest_first(app) {
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2026-03-10T12:00:00Z").await;
        let sub = subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await;
        let id = sub["id"].as_str().unwrap();
        make_card(&app, &shop, id, "declined").await;
        advance(&app, &shop, &clock, "2026-04-11T12:00:00Z").await;
        app.post(&shop, &format!("/subscriptions/{id}/cancel"), &json!({"cancel_reason": "card lost"})).await;
        let (status, events) = app.get(&shop, &format!("/subscriptions/{id}/events")).await;
        assert_eq!(status, StatusCode::OK, "{events}");
        let lines: Vec<(String, String, String, String)> = events
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                let text = |v: &Value| v.as_str().unwrap_or("-").to_string();
                (text(&e["type"]), text(&e["to_state"]), text(&e["payment"]["status"]), text(&e["occurred_at"]))
            })
            .collect();
        let line = |kind: &str, state: &str, payment: &str, at: &str| {
            (kind.to_string(), state.to_string(), payment.to_string(), at.to_string())
        };
        assert_eq!(
            lines,
            vec![
                line("state_change", "canceled", "-", "2026-04-11T12:00:00.000Z"),
                line("charge", "failed_attempt", "failed", "2026-04-11T03:00:00.000Z"),
                line("charge", "failed_attempt", "failed", "2026-04-10T12:00:00.000Z"),
                line("charge", "active", "succeeded", "2026-03-10T12:00:00.000Z"),
            ],
            "{events:#}"
        );
        // Created with its card: the timeline begins with that first charge.
        assert_eq!(events[3]["from_state"], Value::Null);
        // Each charge says which period it pays and which attempt it is.
        let billing: Vec<Value> = events.as_array().unwrap().iter().filter_map(|e| e["payment"].get("billing").cloned()).collect();
        assert_eq!(billing, vec![
            json!({"trial": false, "period": 2, "attempt": 2}),
            json!({"trial": false, "period": 2, "attempt": 1}),
            json!({"trial": false, "period": 1, "attempt": 1}),
        ]);
        assert_eq!(events[0]["reason"], "card lost");
        assert_eq!(events[1]["renew_at"], "2026-04-12T03:00:00.000Z", "the next retry");
        assert_eq!(events[1]["payment"]["amount"], 990);

        let (status, page) = app.get(&shop, &format!("/subscriptions/{id}/events?limit=2")).await;
        assert_eq!((status, page.as_array().unwrap().len()), (StatusCode::OK, 2));
        let other = app.shop("Other").await;
        assert_eq!(app.get(&other, &format!("/subscriptions/{id}/events")).await.0, StatusCode::NOT_FOUND);
    }

    async fn test_clocks_only_move_forward(app) {
        let shop = app.shop("Gym").await;
        let clock = clock(&app, &shop, "2026-01-10T12:00:00Z").await;
        let advance = format!("/test_clocks/{clock}/advance");
        let (status, errors) = app.post(&shop, &advance, &json!({"frozen_time": "2026-01-01T00:00:00Z"})).await;
        assert_eq!((status, &errors["code"]), (StatusCode::CONFLICT, &json!("invalid_state")));
        assert_eq!(errors["message"], "The clock is at 2026-01-10T12:00:00.000Z; it only moves forward");
        // To its own time: nothing to do, and said so with the clock as it is.
        let (status, same) = app.post(&shop, &advance, &json!({"frozen_time": "2026-01-10T13:00:00+01:00"})).await;
        assert_eq!((status, &same["frozen_time"]), (StatusCode::OK, &json!("2026-01-10T12:00:00.000Z")));
        assert_eq!(same["status"], "ready");
        let (status, errors) = app.post(&shop, "/test_clocks", &json!({"frozen_time": "soon"})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{errors}");
        let (status, got) = app.get(&shop, &format!("/test_clocks/{clock}")).await;
        assert_eq!((status, got["frozen_time"].clone()), (StatusCode::OK, json!("2026-01-10T12:00:00.000Z")));
        let other = app.shop("Other").await;
        assert_eq!(app.get(&other, &format!("/test_clocks/{clock}")).await.0, StatusCode::NOT_FOUND);
    }
}

#[tokio::test]
async fn a_daily_plan_keeps_its_local_time_across_the_berlin_dst_change() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let args = paydesk::config::ConfigArgs { timezone: Some("Europe/Berlin".into()), ..Default::default() };
        let app = TestApp::spawn_with(backend, args).await;
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({"plan": {"amount": 100, "interval": 1, "interval_unit": "day"}})).await;
        let clock = clock(&app, &shop, "2026-03-27T08:30:00Z").await; // 09:30 CET
        let sub = subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await;
        advance(&app, &shop, &clock, "2026-03-31T00:00:00Z").await;
        let rows = charges(&app, &shop, sub["id"].as_str().unwrap()).await;
        assert_eq!(
            times(&rows),
            [
                "2026-03-27T08:30:00.000Z",
                "2026-03-28T08:30:00.000Z",
                "2026-03-29T07:30:00.000Z",
                "2026-03-30T07:30:00.000Z"
            ],
            "{backend:?}: 09:30 local before and after the change"
        );
    }
}

db_tests! {
    async fn a_test_card_follows_a_schedule_of_outcomes(app) {
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2026-03-10T12:00:00Z").await;
        let sub = subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await;
        let id = sub["id"].as_str().unwrap();
        assert_eq!(sub["test_card_schedule"], json!([]));
        let path = format!("/subscriptions/{id}/test_card_outcome");
        let tell = |body: Value| send(app.req(&shop, reqwest::Method::POST, &path).json(&body));
        // Declines from April, succeeds again from the day after the April charge.
        let (status, _) = tell(json!({"outcome": "succeeds", "from": "2026-04-11T00:00:00Z"})).await;
        assert_eq!(status, StatusCode::OK);
        let (status, told) = tell(json!({"outcome": "declined", "from": "2026-04-01T00:00:00Z"})).await;
        assert_eq!(status, StatusCode::OK, "{told}");
        assert_eq!(told["test_card_schedule"], json!([
            {"from": "2026-04-01T00:00:00.000Z", "outcome": "declined"},
            {"from": "2026-04-11T00:00:00.000Z", "outcome": "succeeds"},
        ]));
        // A moment before the clock's time is refused; nothing changes.
        let (status, errors) = tell(json!({"outcome": "declined", "from": "2026-03-01T00:00:00Z"})).await;
        assert_invalid(status, &errors, "from", &["must not be before the subscription's current time, 2026-03-10T12:00:00.000Z"]);
        assert_eq!(get_sub(&app, &shop, id).await["test_card_schedule"].as_array().unwrap().len(), 2);
        // The same moment again replaces its outcome.
        let (_, told) = tell(json!({"outcome": "insufficient_funds", "from": "2026-04-01T00:00:00Z"})).await;
        assert_eq!(told["test_card_schedule"][0]["outcome"], "insufficient_funds");

        advance(&app, &shop, &clock, "2026-04-12T00:00:00Z").await;
        let rows = charges(&app, &shop, id).await;
        let statuses: Vec<&str> = rows.iter().map(|(_, _, s)| s.as_str()).collect();
        assert_eq!(statuses, ["succeeded", "failed", "succeeded"], "{rows:?}");
        assert_eq!(times(&rows)[1..], ["2026-04-10T12:00:00.000Z", "2026-04-11T03:00:00.000Z"]);
        let sub = get_sub(&app, &shop, id).await;
        assert_eq!(sub["state"], "active");
        assert_eq!(sub["last_transaction"]["billing"], json!({"trial": false, "period": 2, "attempt": 2}));
        // A live subscription has no card to tell.
        let live_plan = {
            let mut body = plan_body();
            body["test"] = json!(false);
            app.post(&shop, "/plans", &body).await.1
        };
        let (_, live) = app.post(&shop, "/subscriptions", &json!({"plan": {"id": live_plan["id"]}, "customer": customer_body()})).await;
        let path = format!("/subscriptions/{}/test_card_outcome", live["id"].as_str().unwrap());
        let (status, body) = app.post(&shop, &path, &json!({"outcome": "declined"})).await;
        assert_eq!((status, &body["code"]), (StatusCode::CONFLICT, &json!("invalid_state")));
    }

    async fn a_subscription_whose_first_charge_fails_says_so(app) {
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2026-03-10T12:00:00Z").await;
        let sub = subscribe(&app, &shop, &plan, &clock, cards::DECLINED).await;
        assert_eq!((sub["state"].as_str(), sub["cancel_reason"].as_str()), (Some("failed"), Some("first payment failed")));
        assert_eq!(sub["last_transaction"]["billing"], json!({"trial": false, "period": 1, "attempt": 1}));
        let id = sub["id"].as_str().unwrap();
        let (_, events) = app.get(&shop, &format!("/subscriptions/{id}/events")).await;
        let events = events.as_array().unwrap();
        assert_eq!(events.len(), 1, "{events:?}");
        assert_eq!((events[0]["type"].as_str(), &events[0]["from_state"]), (Some("charge"), &Value::Null));
        // One that paid and later ran out of attempts says that instead.
        let sub = subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await;
        let id = sub["id"].as_str().unwrap();
        make_card(&app, &shop, id, "declined").await;
        advance(&app, &shop, &clock, "2026-04-14T00:00:00Z").await;
        let sub = get_sub(&app, &shop, id).await;
        assert_eq!((sub["state"].as_str(), sub["cancel_reason"].as_str()), (Some("failed"), Some("payment attempts exhausted")));
    }
}
