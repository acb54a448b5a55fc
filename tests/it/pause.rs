//! Pausing and resuming subscriptions, walked through with test clocks over HTTP: nothing is
//! charged or retried while paused; a resume starts a new period charged at once or goes on
//! with the old schedule; every step is an event, once, whatever is sent at once.

use futures::future::join_all;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::bepaid_pay::events_of;
use crate::helpers::*;
use crate::subscriptions::{advance, clock, get_sub, make_card, plan, subscribe};

/// The subscription's charges, oldest first: (time, amount, status, period).
async fn charges(app: &TestApp, shop: &Shop, sub: &str) -> Vec<(String, i64, String, Value)> {
    let (_, list) = app.get(shop, &format!("/payments?subscription={sub}&limit=1000")).await;
    let mut rows: Vec<_> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let when = p["created_at"].as_str().unwrap().to_string();
            (when, p["amount"].as_i64().unwrap(), p["status"].as_str().unwrap().to_string(), p["billing"].clone())
        })
        .collect();
    rows.reverse();
    rows
}

fn times<T, U, V>(rows: &[(String, T, U, V)]) -> Vec<&str> {
    rows.iter().map(|r| r.0.as_str()).collect()
}

async fn pause(app: &TestApp, shop: &Shop, id: &str, body: Value) -> (StatusCode, Value) {
    app.post(shop, &format!("/subscriptions/{id}/pause"), &body).await
}

async fn resume(app: &TestApp, shop: &Shop, id: &str, body: Value) -> (StatusCode, Value) {
    app.post(shop, &format!("/subscriptions/{id}/resume"), &body).await
}

/// The reasons of the subscription's timeline, oldest first.
async fn reasons(app: &TestApp, shop: &Shop, id: &str) -> Vec<String> {
    let (_, lines) = app.get(shop, &format!("/subscriptions/{id}/events?limit=100")).await;
    let mut reasons: Vec<String> =
        lines.as_array().unwrap().iter().filter_map(|l| l["reason"].as_str().map(str::to_string)).collect();
    reasons.reverse();
    reasons
}

db_tests! {
    async fn a_paused_subscription_is_not_charged_and_resumes_with_a_new_period_charged_at_once(app) {
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2026-01-01T10:00:00Z").await;
        let id = subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await["id"].as_str().unwrap().to_string();
        advance(&app, &shop, &clock, "2026-01-15T10:00:00Z").await;

        // Double-clicked: one pause, one event; the second only finds it paused.
        let answers = join_all((0..4).map(|_| pause(&app, &shop, &id, json!({})))).await;
        for (status, paused) in &answers {
            assert_eq!(*status, StatusCode::OK, "{paused}");
            assert_eq!(paused["state"], "paused");
        }
        let paused = get_sub(&app, &shop, &id).await;
        assert_eq!((paused["renew_at"].clone(), paused["paused_at"].clone()), (Value::Null, json!("2026-01-15T10:00:00.000Z")));
        assert_eq!((paused["resume_at"].clone(), paused["current_period"].clone()), (Value::Null, Value::Null));
        assert_eq!(paused["active_to"], "2026-02-01T10:00:00.000Z", "what was paid stays paid");
        assert_eq!(events_of(&app, &shop, "subscription.paused").await.len(), 1);

        // Two renewals go by uncharged.
        advance(&app, &shop, &clock, "2026-03-10T10:00:00Z").await;
        assert_eq!(charges(&app, &shop, &id).await.len(), 1, "nothing charged while paused");
        assert_eq!(get_sub(&app, &shop, &id).await["state"], "paused");

        // Resumed with a new period: charged at once, the periods count from now.
        let (status, resumed) = resume(&app, &shop, &id, json!({"billing": "new_period"})).await;
        assert_eq!(status, StatusCode::OK, "{resumed}");
        assert_eq!(resumed["state"], "active");
        assert_eq!(resumed["last_transaction"]["status"], "succeeded");
        assert_eq!(resumed["last_transaction"]["amount"], 990);
        assert_eq!(resumed["current_period"], json!({"start": "2026-03-10T10:00:00.000Z", "end": "2026-04-10T10:00:00.000Z"}));
        assert_eq!(resumed["renew_at"], "2026-04-10T10:00:00.000Z");
        assert_eq!(resumed["trial_ends_at"], Value::Null);
        assert_eq!(events_of(&app, &shop, "subscription.resumed").await.len(), 1);
        let (status, again) = resume(&app, &shop, &id, json!({})).await;
        assert_eq!(status, StatusCode::CONFLICT, "{again}");
        assert_eq!(again["message"], "The subscription is not paused");

        advance(&app, &shop, &clock, "2026-04-10T11:00:00Z").await;
        let rows = charges(&app, &shop, &id).await;
        assert_eq!(
            times(&rows),
            ["2026-01-01T10:00:00.000Z", "2026-03-10T10:00:00.000Z", "2026-04-10T10:00:00.000Z"],
            "{rows:?}"
        );
        assert!(rows.iter().all(|r| r.2 == "succeeded" && r.1 == 990), "{rows:?}");
        assert_eq!(get_sub(&app, &shop, &id).await["paid_billing_cycles"], 3);
        assert_eq!(
            reasons(&app, &shop, &id).await,
            ["paused by the merchant", "resumed with a new period"],
        );
    }

    async fn a_pause_from_the_period_end_resumes_on_its_date_on_the_old_schedule(app) {
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2026-01-01T10:00:00Z").await;
        let id = subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await["id"].as_str().unwrap().to_string();
        let body = json!({"at": "period_end", "resume_at": "2026-03-15T00:00:00Z", "resume_billing": "continue"});
        let (status, marked) = pause(&app, &shop, &id, body.clone()).await;
        assert_eq!(status, StatusCode::OK, "{marked}");
        assert_eq!((marked["state"].as_str(), marked["pause_at_period_end"].as_bool()), (Some("active"), Some(true)));
        assert_eq!((marked["resume_at"].as_str(), marked["resume_billing"].as_str()), (Some("2026-03-15T00:00:00.000Z"), Some("continue")));
        assert_eq!(marked["renew_at"], "2026-02-01T10:00:00.000Z", "its period runs to its end");
        assert_eq!(events_of(&app, &shop, "subscription.pause_requested").await.len(), 1);
        // A cancel for the period end is taken (it wins over the pause to come); while it is
        // set, a pause now is refused.
        let (status, _) = app.post(&shop, &format!("/subscriptions/{id}"), &json!({"cancel_at_period_end": true})).await;
        assert_eq!(status, StatusCode::OK, "a cancel wins over a pause to come");
        let (status, refused) = pause(&app, &shop, &id, json!({})).await;
        assert_eq!(status, StatusCode::CONFLICT, "{refused}");
        app.post(&shop, &format!("/subscriptions/{id}"), &json!({"cancel_at_period_end": false})).await;

        advance(&app, &shop, &clock, "2026-02-10T00:00:00Z").await;
        let paused = get_sub(&app, &shop, &id).await;
        assert_eq!(paused["state"], "paused", "{paused}");
        assert_eq!((paused["paused_at"].as_str(), paused["renew_at"].as_str()), (Some("2026-02-01T10:00:00.000Z"), Some("2026-03-15T00:00:00.000Z")));
        assert_eq!(paused["pause_at_period_end"], false);
        assert_eq!(charges(&app, &shop, &id).await.len(), 1, "the period end charged nothing");

        // On its date it resumes; the next charge is the old schedule's first period after it.
        advance(&app, &shop, &clock, "2026-03-20T00:00:00Z").await;
        let resumed = get_sub(&app, &shop, &id).await;
        assert_eq!((resumed["state"].as_str(), resumed["renew_at"].as_str()), (Some("active"), Some("2026-04-01T10:00:00.000Z")));
        assert_eq!(resumed["resume_at"], Value::Null);
        advance(&app, &shop, &clock, "2026-05-01T11:00:00Z").await;
        let rows = charges(&app, &shop, &id).await;
        assert_eq!(
            times(&rows),
            ["2026-01-01T10:00:00.000Z", "2026-04-01T10:00:00.000Z", "2026-05-01T10:00:00.000Z"],
            "{rows:?}"
        );
        assert_eq!(events_of(&app, &shop, "subscription.paused").await.len(), 1);
        assert_eq!(events_of(&app, &shop, "subscription.resumed").await.len(), 1);
        assert_eq!(
            reasons(&app, &shop, &id).await,
            ["paused at the end of the paid period", "resumed on its date on its old schedule"],
        );
    }

    async fn each_change_answers_the_subscription_its_event_holds_and_a_read_shows(app) {
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({})).await;
        let other = crate::subscriptions::plan(&app, &shop, json!({"title": "Gym, green"})).await;
        let clock = clock(&app, &shop, "2026-01-01T10:00:00Z").await;
        let id = subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await["id"].as_str().unwrap().to_string();
        let changes = [
            ("pause", json!({"at": "period_end"}), "subscription.pause_requested"),
            ("resume", json!({}), "subscription.pause_withdrawn"),
            ("pause", json!({"at": "now"}), "subscription.paused"),
            ("resume", json!({"billing": "continue"}), "subscription.resumed"),
            ("change_plan", json!({"plan": other, "at": "now"}), "subscription.plan_changed"),
            ("change_plan", json!({"plan": plan, "at": "period_end"}), "subscription.plan_change_scheduled"),
            ("cancel", json!({}), "subscription.canceled"),
        ];
        for (action, body, kind) in changes {
            let (status, answer) = app.post(&shop, &format!("/subscriptions/{id}/{action}"), &body).await;
            assert_eq!(status, StatusCode::OK, "{action} {body}: {answer}");
            let events = events_of(&app, &shop, kind).await;
            assert_eq!(events.len(), 1, "{kind}");
            assert_eq!(events[0]["data"]["object"], answer, "{action} {body} answers what {kind} holds");
            assert_eq!(get_sub(&app, &shop, &id).await, answer, "{action} {body} answers what a read shows");
        }
    }

    async fn a_pause_set_for_the_period_end_is_withdrawn_by_a_resume(app) {
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2026-01-01T10:00:00Z").await;
        let id = subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await["id"].as_str().unwrap().to_string();
        pause(&app, &shop, &id, json!({"at": "period_end"})).await;
        let (status, kept) = resume(&app, &shop, &id, json!({})).await;
        assert_eq!(status, StatusCode::OK, "{kept}");
        assert_eq!((kept["state"].as_str(), kept["pause_at_period_end"].as_bool()), (Some("active"), Some(false)));
        assert_eq!(events_of(&app, &shop, "subscription.pause_withdrawn").await.len(), 1);
        advance(&app, &shop, &clock, "2026-02-01T11:00:00Z").await;
        assert_eq!(charges(&app, &shop, &id).await.len(), 2, "renewed as usual");
        assert_eq!(events_of(&app, &shop, "subscription.paused").await.len(), 0);
    }

    async fn a_pause_during_retries_stops_them_and_the_resume_charges_a_fresh_period(app) {
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({"number_payment_attempts": 3})).await;
        let clock = clock(&app, &shop, "2026-01-01T10:00:00Z").await;
        let id = subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await["id"].as_str().unwrap().to_string();
        make_card(&app, &shop, &id, "declined").await;
        advance(&app, &shop, &clock, "2026-02-01T11:00:00Z").await;
        let failing = get_sub(&app, &shop, &id).await;
        assert_eq!((failing["state"].as_str(), failing["renew_at"].as_str()), (Some("failed_attempt"), Some("2026-02-02T03:00:00.000Z")));

        let (status, paused) = pause(&app, &shop, &id, json!({"resume_at": "2026-02-20T09:00:00Z"})).await;
        assert_eq!(status, StatusCode::OK, "{paused}");
        assert_eq!((paused["state"].as_str(), paused["renew_at"].as_str()), (Some("paused"), Some("2026-02-20T09:00:00.000Z")));
        // Asked again while paused: only the resume moves.
        let (status, moved) = pause(&app, &shop, &id, json!({"resume_at": "2026-02-10T09:00:00Z"})).await;
        assert_eq!((status, moved["renew_at"].as_str()), (StatusCode::OK, Some("2026-02-10T09:00:00.000Z")));
        assert_eq!(moved["paused_at"], "2026-02-01T11:00:00.000Z");
        advance(&app, &shop, &clock, "2026-02-09T00:00:00Z").await;
        assert_eq!(charges(&app, &shop, &id).await.len(), 2, "no retry while paused");

        make_card(&app, &shop, &id, "succeeds").await;
        advance(&app, &shop, &clock, "2026-02-10T10:00:00Z").await;
        let resumed = get_sub(&app, &shop, &id).await;
        assert_eq!(resumed["state"], "active", "{resumed}");
        assert_eq!(resumed["number_failed_payment_attempts"], 0);
        assert_eq!(resumed["renew_at"], "2026-03-10T09:00:00.000Z", "periods count from the resume");
        let rows = charges(&app, &shop, &id).await;
        assert_eq!(
            rows.iter().map(|r| (r.0.as_str(), r.2.as_str())).collect::<Vec<_>>(),
            [
                ("2026-01-01T10:00:00.000Z", "succeeded"),
                ("2026-02-01T10:00:00.000Z", "failed"),
                ("2026-02-10T09:00:00.000Z", "succeeded")
            ]
        );
        // The declined period is never charged again: the new one is a period of its own.
        assert_eq!(rows[1].3, json!({"trial": false, "period": 2, "attempt": 1}));
        assert_eq!(rows[2].3, json!({"trial": false, "period": 3, "attempt": 1}));
        assert_eq!(events_of(&app, &shop, "subscription.paused").await.len(), 1);
        assert_eq!(events_of(&app, &shop, "subscription.resumed").await.len(), 1);
    }

    async fn a_trial_paused_and_resumed_before_its_end_on_the_old_schedule_is_a_trial_again(app) {
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({"trial": {"amount": 0, "interval": 14, "interval_unit": "day"}})).await;
        let clock = clock(&app, &shop, "2026-01-01T10:00:00Z").await;
        let id = subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await["id"].as_str().unwrap().to_string();
        advance(&app, &shop, &clock, "2026-01-03T10:00:00Z").await;
        pause(&app, &shop, &id, json!({})).await;
        advance(&app, &shop, &clock, "2026-01-05T10:00:00Z").await;
        let (status, resumed) = resume(&app, &shop, &id, json!({"billing": "continue"})).await;
        assert_eq!(status, StatusCode::OK, "{resumed}");
        assert_eq!((resumed["state"].as_str(), resumed["renew_at"].as_str()), (Some("trial"), Some("2026-01-15T10:00:00.000Z")));
        assert_eq!(resumed["trial_ends_at"], "2026-01-15T10:00:00.000Z");
        // Paused again and resumed with a new period: the trial ends there, charged at once.
        pause(&app, &shop, &id, json!({})).await;
        let (_, fresh) = resume(&app, &shop, &id, json!({})).await;
        assert_eq!(fresh["state"], "active", "{fresh}");
        assert_eq!(fresh["last_transaction"]["amount"], 990);
        assert_eq!(fresh["renew_at"], "2026-02-05T10:00:00.000Z");
        assert_eq!(fresh["trial_ends_at"], "2026-01-15T10:00:00.000Z", "where the trial would have ended");
    }

    async fn pausing_and_resuming_refuse_what_makes_no_sense(app) {
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2026-01-01T10:00:00Z").await;
        let id = subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await["id"].as_str().unwrap().to_string();
        for (body, field) in [
            (json!({"at": "tomorrow"}), "at"),
            (json!({"at": 1}), "at"),
            (json!({"resume_at": "2025-12-31T00:00:00Z"}), "resume_at"),
            (json!({"resume_at": "soon"}), "resume_at"),
            (json!({"resume_billing": "later"}), "resume_billing"),
        ] {
            let (status, refused) = pause(&app, &shop, &id, body.clone()).await;
            assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {refused}");
            assert!(refused["errors"][field].is_array(), "{refused}");
        }
        let (status, refused) = resume(&app, &shop, &id, json!({"billing": "whenever"})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
        let (status, refused) = resume(&app, &shop, &id, json!({})).await;
        assert_eq!((status, refused["message"].as_str()), (StatusCode::CONFLICT, Some("The subscription is not paused")));
        // Another shop's subscription is not found.
        let other = app.shop("Records").await;
        assert_eq!(pause(&app, &other, &id, json!({})).await.0, StatusCode::NOT_FOUND);
        assert_eq!(resume(&app, &other, &id, json!({})).await.0, StatusCode::NOT_FOUND);
        // Waiting for its card: nothing to pause.
        let (_, waiting) = app.post(&shop, "/subscriptions", &json!({"plan_id": plan, "customer": customer_body()})).await;
        let (status, _) = pause(&app, &shop, waiting["id"].as_str().unwrap(), json!({})).await;
        assert_eq!(status, StatusCode::CONFLICT);
        // A paused subscription can be cancelled; then nothing more.
        pause(&app, &shop, &id, json!({})).await;
        let (status, canceled) = app.post(&shop, &format!("/subscriptions/{id}/cancel"), &json!({})).await;
        assert_eq!((status, canceled["state"].as_str()), (StatusCode::OK, Some("canceled")));
        assert_eq!(pause(&app, &shop, &id, json!({})).await.0, StatusCode::CONFLICT);
        assert_eq!(resume(&app, &shop, &id, json!({})).await.0, StatusCode::CONFLICT);
    }

    async fn resumes_sent_at_once_charge_the_new_period_once(app) {
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2026-01-01T10:00:00Z").await;
        let id = subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await["id"].as_str().unwrap().to_string();
        for round in 0..3 {
            pause(&app, &shop, &id, json!({})).await;
            let answers = join_all((0..6).map(|_| resume(&app, &shop, &id, json!({})))).await;
            let ok = answers.iter().filter(|(s, _)| *s == StatusCode::OK).count();
            assert_eq!(ok, 1, "round {round}: {answers:?}");
            assert!(answers.iter().all(|(s, _)| *s == StatusCode::OK || *s == StatusCode::CONFLICT), "{answers:?}");
            assert_eq!(charges(&app, &shop, &id).await.len(), round + 2, "round {round}: one charge per resume");
        }
        assert_eq!(events_of(&app, &shop, "subscription.resumed").await.len(), 3);
    }

    async fn a_pause_racing_a_renewal_has_one_outcome(app) {
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({})).await;
        for round in 0..4 {
            let clock = clock(&app, &shop, "2026-01-01T10:00:00Z").await;
            let id = subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await["id"].as_str().unwrap().to_string();
            let (advance_path, to) = (format!("/test_clocks/{clock}/advance"), json!({"frozen_time": "2026-02-01T11:00:00Z"}));
            let (advanced, (status, answer)) = tokio::join!(
                app.post(&shop, &advance_path, &to),
                pause(&app, &shop, &id, json!({}))
            );
            assert_eq!(advanced.0, StatusCode::OK, "{advanced:?}");
            let sub = get_sub(&app, &shop, &id).await;
            let rows = charges(&app, &shop, &id).await;
            match status {
                // Paused before the renewal, or right after it: never a charge in a pause.
                StatusCode::OK => {
                    assert_eq!(sub["state"], "paused", "round {round}: {sub}");
                    assert!(rows.len() <= 2, "round {round}: {rows:?}");
                }
                // The renewal was in flight: it happened, and the pause did not.
                StatusCode::CONFLICT => {
                    assert_eq!(sub["state"], "active", "round {round}: {answer}");
                    assert_eq!(rows.len(), 2);
                }
                other => panic!("round {round}: {other} {answer}"),
            }
            assert!(rows.iter().all(|r| r.2 == "succeeded"), "{rows:?}");
        }
    }
}

/// Across the clocks going forward in Berlin, a resumed schedule keeps its local time.
#[tokio::test]
async fn a_daily_plan_resumes_at_its_local_time_across_the_berlin_dst_change() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let args = paydesk::config::ConfigArgs { timezone: Some("Europe/Berlin".into()), ..Default::default() };
        let app = TestApp::spawn_with(backend, args).await;
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({"plan": {"amount": 100, "interval": 1, "interval_unit": "day"}})).await;
        let clock = clock(&app, &shop, "2026-03-27T08:30:00Z").await; // 09:30 CET
        let old = subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await["id"].as_str().unwrap().to_string();
        let fresh = subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await["id"].as_str().unwrap().to_string();
        advance(&app, &shop, &clock, "2026-03-27T12:00:00Z").await;
        pause(&app, &shop, &old, json!({"resume_at": "2026-03-29T12:00:00Z", "resume_billing": "continue"})).await;
        pause(&app, &shop, &fresh, json!({})).await;
        advance(&app, &shop, &clock, "2026-03-28T20:30:00Z").await; // 21:30 CET
        let (status, resumed) = resume(&app, &shop, &fresh, json!({})).await;
        assert_eq!(status, StatusCode::OK, "{resumed}");
        advance(&app, &shop, &clock, "2026-03-31T00:00:00Z").await;
        let rows = charges(&app, &shop, &old).await;
        assert_eq!(
            times(&rows),
            ["2026-03-27T08:30:00.000Z", "2026-03-30T07:30:00.000Z"],
            "{backend:?}: 09:30 local on the old schedule, after the change too"
        );
        let rows = charges(&app, &shop, &fresh).await;
        assert_eq!(
            times(&rows),
            [
                "2026-03-27T08:30:00.000Z",
                "2026-03-28T20:30:00.000Z",
                "2026-03-29T19:30:00.000Z",
                "2026-03-30T19:30:00.000Z"
            ],
            "{backend:?}: 21:30 local from the resume, before and after the change"
        );
    }
}
