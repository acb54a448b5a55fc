//! Moving subscriptions to another plan, walked through with test clocks over HTTP: an
//! upgrade now with its exact proration, another interval, a change at the period end, a
//! preview equal to what is then charged, a declined change, and changes fired at once or
//! against a renewal: one outcome, never two charges.

use futures::future::join_all;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::bepaid_pay::events_of;
use crate::helpers::*;
use crate::subscriptions::{advance, clock, get_sub, make_card, plan, subscribe};

/// The subscription's payments, oldest first: (time, amount, status, plan).
async fn charges(app: &TestApp, shop: &Shop, sub: &str) -> Vec<(String, i64, String, String)> {
    let (_, list) = app.get(shop, &format!("/payments?subscription={sub}&limit=1000")).await;
    let mut rows: Vec<_> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let s = |k: &str| p[k].as_str().unwrap_or_default().to_string();
            (s("created_at"), p["amount"].as_i64().unwrap(), s("status"), s("plan_id"))
        })
        .collect();
    rows.reverse();
    rows
}

async fn change(app: &TestApp, shop: &Shop, id: &str, body: Value) -> (StatusCode, Value) {
    app.post(shop, &format!("/subscriptions/{id}/change_plan"), &body).await
}

async fn preview(app: &TestApp, shop: &Shop, id: &str, body: Value) -> (StatusCode, Value) {
    app.post(shop, &format!("/subscriptions/{id}/change_plan/preview"), &body).await
}

/// A shop with a monthly Gold (9.90) and Platinum (29.90), and a Gold subscription paid on
/// 2026-03-01 on a clock.
async fn gold_subscriber(app: &TestApp) -> (Shop, String, String, String, String) {
    let shop = app.shop("Gym").await;
    let gold = plan(app, &shop, json!({"title": "Gold"})).await;
    let platinum = plan(
        app,
        &shop,
        json!({"title": "Platinum", "plan": {"amount": 2990, "interval": 1, "interval_unit": "month"}}),
    )
    .await;
    let clock = clock(app, &shop, "2026-03-01T00:00:00Z").await;
    let id = subscribe(app, &shop, &gold, &clock, cards::SUCCESS).await["id"].as_str().unwrap().to_string();
    (shop, gold, platinum, clock, id)
}

db_tests! {
    async fn an_upgrade_mid_period_charges_its_exact_proration_as_previewed(app) {
        let (shop, gold, platinum, clock, id) = gold_subscriber(&app).await;
        advance(&app, &shop, &clock, "2026-03-21T12:00:00Z").await;
        let (status, seen) = preview(&app, &shop, &id, json!({"plan": platinum})).await;
        assert_eq!(status, StatusCode::OK, "{seen}");
        // 10.5 of March's 31 days are left: 990 × 10.5/31 = 335.32, 2990 × 10.5/31 = 1012.74.
        assert_eq!(
            seen,
            json!({"object": "plan_change_preview", "subscription": id, "plan": platinum, "at": "now",
                   "proration_date": "2026-03-21T12:00:00.000Z", "currency": "EUR", "credit": 335, "charge": 1013,
                   "amount_due": 678, "period_end": "2026-04-01T00:00:00.000Z",
                   "next_charge_at": "2026-04-01T00:00:00.000Z", "next_charge_amount": 2990})
        );
        assert_eq!(get_sub(&app, &shop, &id).await["plan"]["id"], gold, "a preview changes nothing");
        assert_eq!(charges(&app, &shop, &id).await.len(), 1);

        let (status, changed) = change(&app, &shop, &id, json!({"plan": {"id": platinum}, "proration_date": seen["proration_date"]})).await;
        assert_eq!(status, StatusCode::OK, "{changed}");
        assert_eq!(changed["plan"]["id"], platinum);
        assert_eq!(changed["pending_plan_change"], Value::Null);
        assert_eq!((changed["last_transaction"]["amount"].as_i64(), changed["last_transaction"]["status"].as_str()), (Some(678), Some("succeeded")));
        assert_eq!((changed["renew_at"].as_str(), changed["active_to"].as_str()), (Some("2026-04-01T00:00:00.000Z"), Some("2026-04-01T00:00:00.000Z")));
        assert_eq!(changed["paid_billing_cycles"], 1, "the proration pays no period of its own");
        let events = events_of(&app, &shop, "subscription.plan_changed").await;
        assert_eq!(events.len(), 1);
        assert_eq!(events[0]["data"]["object"]["plan"]["id"], platinum);
        assert!(events_of(&app, &shop, "subscription.renewed").await.len() == 1, "the change is not a renewal");

        advance(&app, &shop, &clock, "2026-04-01T01:00:00Z").await;
        let rows = charges(&app, &shop, &id).await;
        let seen: Vec<(&str, i64, &str)> = rows.iter().map(|r| (r.0.as_str(), r.1, r.3.as_str())).collect();
        assert_eq!(
            seen,
            [
                ("2026-03-01T00:00:00.000Z", 990, gold.as_str()),
                ("2026-03-21T12:00:00.000Z", 678, platinum.as_str()),
                ("2026-04-01T00:00:00.000Z", 2990, platinum.as_str())
            ]
        );
        // Asked again: it is the plan already.
        let (status, again) = change(&app, &shop, &id, json!({"plan": platinum})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{again}");
    }

    async fn another_interval_starts_the_new_plans_period_at_the_change(app) {
        let (shop, _, _, clock, id) = gold_subscriber(&app).await;
        let yearly = plan(&app, &shop, json!({"title": "Gold yearly", "plan": {"amount": 9900, "interval": 12, "interval_unit": "month"}})).await;
        advance(&app, &shop, &clock, "2026-03-16T12:00:00Z").await;
        let (_, seen) = preview(&app, &shop, &id, json!({"plan_id": yearly})).await;
        assert_eq!((seen["credit"].as_i64(), seen["charge"].as_i64(), seen["amount_due"].as_i64()), (Some(495), Some(9900), Some(9405)), "{seen}");
        let (status, changed) = change(&app, &shop, &id, json!({"plan_id": yearly})).await;
        assert_eq!(status, StatusCode::OK, "{changed}");
        assert_eq!(changed["last_transaction"]["amount"], 9405);
        assert_eq!(changed["current_period"], json!({"start": "2026-03-16T12:00:00.000Z", "end": "2027-03-16T12:00:00.000Z"}));
        assert_eq!(changed["renew_at"], "2027-03-16T12:00:00.000Z");
        assert_eq!(changed["paid_billing_cycles"], 2, "the new plan's first period is paid");
        advance(&app, &shop, &clock, "2027-03-16T13:00:00Z").await;
        let rows = charges(&app, &shop, &id).await;
        assert_eq!(rows.iter().map(|r| r.1).collect::<Vec<_>>(), [990, 9405, 9900], "{rows:?}");
        assert_eq!(rows[2].0, "2027-03-16T12:00:00.000Z");
    }

    async fn a_downgrade_waits_for_the_period_end_and_can_be_withdrawn(app) {
        let (shop, gold, _, clock, id) = gold_subscriber(&app).await;
        let silver = plan(&app, &shop, json!({"title": "Silver", "plan": {"amount": 490, "interval": 1, "interval_unit": "month"}})).await;
        advance(&app, &shop, &clock, "2026-03-10T00:00:00Z").await;
        let (status, refused) = change(&app, &shop, &id, json!({"plan": silver})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
        assert!(refused["errors"]["at"][0].as_str().unwrap().contains("is for the period end: now it would leave a credit of 3.55 EUR"), "{refused}");
        let (_, seen) = preview(&app, &shop, &id, json!({"plan": silver, "at": "period_end"})).await;
        assert_eq!((seen["amount_due"].as_i64(), seen["next_charge_at"].as_str(), seen["next_charge_amount"].as_i64()),
                   (Some(0), Some("2026-04-01T00:00:00.000Z"), Some(490)), "{seen}");
        let (status, set) = change(&app, &shop, &id, json!({"plan": silver, "at": "period_end"})).await;
        assert_eq!(status, StatusCode::OK, "{set}");
        assert_eq!(set["plan"]["id"], gold, "not yet");
        assert_eq!(set["pending_plan_change"], json!({"plan": silver, "at": "period_end", "amount_due": null}));
        assert_eq!(events_of(&app, &shop, "subscription.plan_change_scheduled").await.len(), 1);
        // Taken back, then asked again.
        let (status, kept) = change(&app, &shop, &id, json!({"plan": gold, "at": "period_end"})).await;
        assert_eq!((status, &kept["pending_plan_change"]), (StatusCode::OK, &Value::Null), "{kept}");
        assert_eq!(events_of(&app, &shop, "subscription.plan_change_withdrawn").await.len(), 1);
        change(&app, &shop, &id, json!({"plan": silver, "at": "period_end"})).await;

        advance(&app, &shop, &clock, "2026-05-01T01:00:00Z").await;
        let rows = charges(&app, &shop, &id).await;
        let seen: Vec<(&str, i64)> = rows.iter().map(|r| (r.0.as_str(), r.1)).collect();
        assert_eq!(seen, [("2026-03-01T00:00:00.000Z", 990), ("2026-04-01T00:00:00.000Z", 490), ("2026-05-01T00:00:00.000Z", 490)]);
        let sub = get_sub(&app, &shop, &id).await;
        assert_eq!((sub["plan"]["id"].as_str(), sub["state"].as_str()), (Some(silver.as_str()), Some("active")));
        assert_eq!(sub["pending_plan_change"], Value::Null);
        assert_eq!(events_of(&app, &shop, "subscription.plan_changed").await.len(), 1);
    }

    async fn a_declined_change_changes_nothing_and_the_period_goes_on(app) {
        let (shop, gold, platinum, clock, id) = gold_subscriber(&app).await;
        advance(&app, &shop, &clock, "2026-03-21T12:00:00Z").await;
        make_card(&app, &shop, &id, "declined").await;
        let (status, refused) = change(&app, &shop, &id, json!({"plan": platinum})).await;
        assert_eq!(status, StatusCode::BAD_GATEWAY, "{refused}");
        assert!(refused["message"].as_str().unwrap().contains("the plan was not changed"), "{refused}");
        let sub = get_sub(&app, &shop, &id).await;
        assert_eq!((sub["plan"]["id"].as_str(), sub["state"].as_str()), (Some(gold.as_str()), Some("active")));
        assert_eq!((sub["renew_at"].as_str(), &sub["pending_plan_change"]), (Some("2026-04-01T00:00:00.000Z"), &Value::Null));
        assert_eq!(sub["number_failed_payment_attempts"], 0, "a refused change is no failed renewal");
        assert_eq!(events_of(&app, &shop, "subscription.plan_changed").await.len(), 0);
        make_card(&app, &shop, &id, "succeeds").await;
        advance(&app, &shop, &clock, "2026-04-01T01:00:00Z").await;
        let rows = charges(&app, &shop, &id).await;
        let seen: Vec<(i64, &str)> = rows.iter().map(|r| (r.1, r.2.as_str())).collect();
        assert_eq!(seen, [(990, "succeeded"), (678, "failed"), (990, "succeeded")]);
    }

    async fn a_trial_changes_plan_at_once_and_the_new_price_is_charged_when_it_ends(app) {
        let shop = app.shop("Gym").await;
        let gold = plan(&app, &shop, json!({"trial": {"amount": 0, "interval": 14, "interval_unit": "day"}})).await;
        let platinum = plan(&app, &shop, json!({"plan": {"amount": 2990, "interval": 1, "interval_unit": "month"}})).await;
        let clock = clock(&app, &shop, "2026-03-01T00:00:00Z").await;
        let id = subscribe(&app, &shop, &gold, &clock, cards::SUCCESS).await["id"].as_str().unwrap().to_string();
        let (status, changed) = change(&app, &shop, &id, json!({"plan": platinum})).await;
        assert_eq!(status, StatusCode::OK, "{changed}");
        assert_eq!((changed["state"].as_str(), changed["plan"]["id"].as_str()), (Some("trial"), Some(platinum.as_str())));
        assert_eq!(changed["renew_at"], "2026-03-15T00:00:00.000Z");
        assert_eq!(changed["trial_ends_at"], "2026-03-15T00:00:00.000Z", "the trial ends where it did");
        // To a plan with a longer trial: it still ends where it began to.
        let long = json!({"trial": {"amount": 0, "interval": 30, "interval_unit": "day"}});
        let longer = plan(&app, &shop, long).await;
        let (_, changed) = change(&app, &shop, &id, json!({"plan": longer})).await;
        assert_eq!((changed["trial_ends_at"].as_str(), changed["renew_at"].as_str()),
            (Some("2026-03-15T00:00:00.000Z"), Some("2026-03-15T00:00:00.000Z")), "{changed}");
        let (_, changed) = change(&app, &shop, &id, json!({"plan": platinum})).await;
        assert_eq!(changed["trial_ends_at"], "2026-03-15T00:00:00.000Z", "{changed}");
        advance(&app, &shop, &clock, "2026-03-15T01:00:00Z").await;
        let rows = charges(&app, &shop, &id).await;
        assert_eq!(rows.iter().map(|r| r.1).collect::<Vec<_>>(), [0, 2990], "{rows:?}");
    }

    async fn a_change_refuses_what_makes_no_sense(app) {
        let (shop, _, platinum, clock, id) = gold_subscriber(&app).await;
        let dollars = plan(&app, &shop, json!({"currency": "USD"})).await;
        let mut live = plan_body();
        live["title"] = json!("Live");
        let (_, live) = app.post(&shop, "/plans", &live).await;
        let archived = plan(&app, &shop, json!({"title": "Old"})).await;
        app.post(&shop, &format!("/plans/{archived}/archive"), &json!({})).await;
        for (body, field) in [
            (json!({}), "plan"),
            (json!({"plan": "pln_0000000000000000"}), "plan"),
            (json!({"plan": dollars}), "plan"),
            (json!({"plan": live["id"]}), "plan"),
            (json!({"plan": archived}), "plan"),
            (json!({"plan": platinum, "at": "tomorrow"}), "at"),
            (json!({"plan": platinum, "proration_date": "2026-04-01T00:00:00Z"}), "proration_date"),
            (json!({"plan": platinum, "proration_date": "2026-02-01T00:00:00Z"}), "proration_date"),
        ] {
            for (status, refused) in [change(&app, &shop, &id, body.clone()).await, preview(&app, &shop, &id, body.clone()).await] {
                assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {refused}");
                assert!(refused["errors"][field].is_array(), "{body}: {refused}");
            }
        }
        let other = app.shop("Records").await;
        assert_eq!(change(&app, &other, &id, json!({"plan": platinum})).await.0, StatusCode::NOT_FOUND);
        // In its retries, ending or paused with its period: nothing changes plan.
        app.post(&shop, &format!("/subscriptions/{id}"), &json!({"cancel_at_period_end": true})).await;
        assert_eq!(change(&app, &shop, &id, json!({"plan": platinum})).await.0, StatusCode::CONFLICT);
        app.post(&shop, &format!("/subscriptions/{id}"), &json!({"cancel_at_period_end": false})).await;
        make_card(&app, &shop, &id, "declined").await;
        advance(&app, &shop, &clock, "2026-04-01T01:00:00Z").await;
        assert_eq!(get_sub(&app, &shop, &id).await["state"], "failed_attempt");
        assert_eq!(change(&app, &shop, &id, json!({"plan": platinum})).await.0, StatusCode::CONFLICT);
    }

    async fn changes_sent_at_once_charge_once(app) {
        let (shop, _, platinum, clock, id) = gold_subscriber(&app).await;
        advance(&app, &shop, &clock, "2026-03-21T12:00:00Z").await;
        let answers = join_all((0..6).map(|_| change(&app, &shop, &id, json!({"plan": platinum})))).await;
        let ok = answers.iter().filter(|(s, _)| *s == StatusCode::OK).count();
        assert!(ok >= 1, "{answers:?}");
        for (status, body) in &answers {
            assert!(
                *status == StatusCode::OK || *status == StatusCode::CONFLICT || *status == StatusCode::UNPROCESSABLE_ENTITY,
                "{status} {body}"
            );
        }
        let rows = charges(&app, &shop, &id).await;
        assert_eq!(rows.iter().map(|r| r.1).collect::<Vec<_>>(), [990, 678], "one change, one charge: {rows:?}");
        assert_eq!(events_of(&app, &shop, "subscription.plan_changed").await.len(), 1);
    }

    async fn a_change_racing_a_renewal_has_one_outcome(app) {
        let shop = app.shop("Gym").await;
        let gold = plan(&app, &shop, json!({"title": "Gold"})).await;
        let platinum = plan(&app, &shop, json!({"title": "Platinum", "plan": {"amount": 2990, "interval": 1, "interval_unit": "month"}})).await;
        for round in 0..4 {
            let clock = clock(&app, &shop, "2026-03-31T23:59:00Z").await;
            let id = subscribe(&app, &shop, &gold, &clock, cards::SUCCESS).await["id"].as_str().unwrap().to_string();
            advance(&app, &shop, &clock, "2026-04-30T23:58:00Z").await;
            let (advance_path, to) = (format!("/test_clocks/{clock}/advance"), json!({"frozen_time": "2026-05-01T00:00:30Z"}));
            let (advanced, (status, answer)) = tokio::join!(app.post(&shop, &advance_path, &to), change(&app, &shop, &id, json!({"plan": platinum})));
            assert_eq!(advanced.0, StatusCode::OK, "{advanced:?}");
            let rows = charges(&app, &shop, &id).await;
            // A change made as the new period began is prorated at that moment too: a renewal
            // is a charge of a plan's whole price.
            let whole = |r: &&(String, i64, String, String)| r.1 == 990 || r.1 == 2990;
            let renewals = rows.iter().filter(|r| r.0.starts_with("2026-04-30T23:59:00")).filter(whole).count();
            let prorations = rows.iter().filter(|r| !whole(r)).count();
            assert!(prorations <= 1, "round {round}: {rows:?}");
            assert!(rows.iter().all(|r| r.2 == "succeeded"), "round {round}: {rows:?}");
            let sub = get_sub(&app, &shop, &id).await;
            match status {
                StatusCode::OK => assert_eq!(sub["plan"]["id"], platinum, "round {round}"),
                StatusCode::CONFLICT => assert_eq!(sub["plan"]["id"], gold, "round {round}: {answer}"),
                other => panic!("round {round}: {other} {answer}"),
            }
            assert_eq!(sub["pending_plan_change"], Value::Null, "round {round}: {sub}");
            // The period that began at the renewal is charged once, whichever plan it is on.
            assert_eq!(renewals, 1, "round {round}: {rows:?}");
        }
    }
}
