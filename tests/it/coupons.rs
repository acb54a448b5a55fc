//! Coupons over HTTP: made, listed and archived; applied to subscriptions for once, N periods
//! or for ever, walked through with test clocks; the last redemption taken once of many at once.

use futures::future::join_all;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::bepaid_pay::events_of;
use crate::helpers::*;
use crate::subscriptions::{advance, clock, plan, subscribe};

pub async fn coupon(app: &TestApp, shop: &Shop, body: Value) -> Value {
    let mut body = body;
    body["test"] = json!(true);
    let (status, coupon) = app.post(shop, "/coupons", &body).await;
    assert_eq!(status, StatusCode::CREATED, "{coupon}");
    coupon
}

/// The subscription's payments, oldest first: (time, amount, discount).
async fn charges(app: &TestApp, shop: &Shop, sub: &str) -> Vec<(String, i64, Value)> {
    let (_, list) = app.get(shop, &format!("/payments?subscription={sub}&limit=1000")).await;
    let mut rows: Vec<_> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            assert_eq!(p["status"], "succeeded", "{p}");
            (p["created_at"].as_str().unwrap().to_string(), p["amount"].as_i64().unwrap(), p["discount"].clone())
        })
        .collect();
    rows.reverse();
    rows
}

async fn apply(app: &TestApp, shop: &Shop, sub: &str, code: &str) -> (StatusCode, Value) {
    app.post(shop, &format!("/subscriptions/{sub}/discount"), &json!({"coupon": code})).await
}

db_tests! {
    async fn coupons_are_made_listed_and_archived(app) {
        let shop = app.shop("Gym").await;
        let made = coupon(&app, &shop, json!({"code": " spring-25 ", "name": "Spring", "percent_off": 25, "duration": "repeating", "duration_in_periods": 3, "max_redemptions": 10})).await;
        assert!(made["id"].as_str().unwrap().starts_with("cpn_"));
        assert_eq!(
            (made["code"].as_str(), made["percent_off"].as_i64(), made["duration"].as_str(), made["times_redeemed"].as_i64()),
            (Some("SPRING-25"), Some(25), Some("repeating"), Some(0))
        );
        assert_eq!((made["plans"].clone(), made["object"].clone()), (json!([]), json!("coupon")));
        // The same code in any case is taken in its mode; live mode has codes of its own.
        let (status, taken) = app.post(&shop, "/coupons", &json!({"code": "Spring-25", "percent_off": 5, "test": true})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{taken}");
        assert_eq!(taken["errors"]["code"], json!(["has already been taken"]));
        let (status, _) = app.post(&shop, "/coupons", &json!({"code": "SPRING-25", "percent_off": 5})).await;
        assert_eq!(status, StatusCode::CREATED, "a live coupon may share the code");
        for (body, field) in [
            (json!({"code": "X", "amount_off": 500}), "currency"),
            (json!({"code": "X", "percent_off": 150}), "percent_off"),
            (json!({"code": "X", "percent_off": 10, "plans": ["pln_0000000000000000"]}), "plans"),
            (json!({"code": "X", "percent_off": 10, "redeem_by": "2020-01-01T00:00:00Z"}), "redeem_by"),
            (json!({"code": "X", "percent_off": 10, "redeem_by": "soon"}), "redeem_by"),
            (json!({"code": "X Y", "percent_off": 10}), "code"),
        ] {
            let (status, refused) = app.post(&shop, "/coupons", &body).await;
            assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {refused}");
            assert!(refused["errors"][field].is_array(), "{body}: {refused}");
        }
        let id = made["id"].as_str().unwrap();
        let (_, listed) = app.get(&shop, "/coupons").await;
        assert_eq!(listed.as_array().unwrap().len(), 2);
        let (status, archived) = app.post(&shop, &format!("/coupons/{id}/archive"), &json!({})).await;
        assert_eq!(status, StatusCode::OK);
        assert!(archived["archived_at"].is_string());
        let other = app.shop("Records").await;
        assert_eq!(app.get(&other, &format!("/coupons/{id}")).await.0, StatusCode::NOT_FOUND);
        assert_eq!(app.get(&shop, &format!("/coupons/{id}")).await.0, StatusCode::OK);
    }

    async fn a_discount_for_two_periods_takes_its_percent_off_two_renewals(app) {
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2026-03-01T00:00:00Z").await;
        let id = subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await["id"].as_str().unwrap().to_string();
        let made = coupon(&app, &shop, json!({"code": "twice25", "percent_off": 25, "duration": "repeating", "duration_in_periods": 2})).await;
        let (status, discounted) = apply(&app, &shop, &id, "TWICE25").await;
        assert_eq!(status, StatusCode::OK, "{discounted}");
        assert_eq!(discounted["discount"], json!({"coupon": made["id"], "periods_left": 2}));
        assert_eq!(events_of(&app, &shop, "subscription.discount_applied").await.len(), 1);
        let (status, again) = apply(&app, &shop, &id, "TWICE25").await;
        assert_eq!(status, StatusCode::CONFLICT, "{again}");
        advance(&app, &shop, &clock, "2026-06-01T01:00:00Z").await;
        let rows = charges(&app, &shop, &id).await;
        let off = json!({"coupon": made["id"], "amount": 248});
        assert_eq!(
            rows,
            [
                ("2026-03-01T00:00:00.000Z".to_string(), 990, Value::Null),
                ("2026-04-01T00:00:00.000Z".to_string(), 742, off.clone()),
                ("2026-05-01T00:00:00.000Z".to_string(), 742, off),
                ("2026-06-01T00:00:00.000Z".to_string(), 990, Value::Null),
            ]
        );
        let (_, sub) = app.get(&shop, &format!("/subscriptions/{id}")).await;
        assert_eq!(sub["discount"], Value::Null, "used up");
        let (_, coupon) = app.get(&shop, &format!("/coupons/{}", made["id"].as_str().unwrap())).await;
        assert_eq!(coupon["times_redeemed"], 1);
    }

    async fn once_and_forever_discounts_and_a_free_period_that_charges_nothing(app) {
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2026-03-01T00:00:00Z").await;
        let free = subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await["id"].as_str().unwrap().to_string();
        let fiver = subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await["id"].as_str().unwrap().to_string();
        coupon(&app, &shop, json!({"code": "FREEMONTH", "percent_off": 100})).await;
        coupon(&app, &shop, json!({"code": "FIVE", "amount_off": 500, "currency": "EUR", "duration": "forever"})).await;
        coupon(&app, &shop, json!({"code": "DOLLARS", "amount_off": 500, "currency": "USD"})).await;
        let (status, refused) = apply(&app, &shop, &fiver, "dollars").await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
        assert_eq!(refused["errors"]["coupon"], json!(["does not apply to this plan's currency"]));
        assert_eq!(apply(&app, &shop, &free, "freemonth").await.0, StatusCode::OK);
        assert_eq!(apply(&app, &shop, &fiver, "five").await.0, StatusCode::OK);
        advance(&app, &shop, &clock, "2026-06-01T01:00:00Z").await;
        let amounts = |rows: Vec<(String, i64, Value)>| rows.iter().map(|r| r.1).collect::<Vec<_>>();
        assert_eq!(amounts(charges(&app, &shop, &free).await), [990, 0, 990, 990], "one free month, paid with nothing charged");
        assert_eq!(amounts(charges(&app, &shop, &fiver).await), [990, 490, 490, 490]);
        let (_, sub) = app.get(&shop, &format!("/subscriptions/{fiver}")).await;
        assert_eq!(sub["discount"]["periods_left"], Value::Null);
        assert_eq!(sub["paid_billing_cycles"], 4);
        // Taken away: full price from the next charge.
        let removed = app.req(&shop, Method::DELETE, &format!("/subscriptions/{fiver}/discount")).send().await.unwrap();
        assert_eq!(removed.status(), StatusCode::OK);
        assert_eq!(events_of(&app, &shop, "subscription.discount_removed").await.len(), 1);
        advance(&app, &shop, &clock, "2026-07-01T01:00:00Z").await;
        assert_eq!(amounts(charges(&app, &shop, &fiver).await), [990, 490, 490, 490, 990]);
    }

    async fn the_last_redemption_is_taken_once_of_many_at_once(app) {
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2026-03-01T00:00:00Z").await;
        let made = coupon(&app, &shop, json!({"code": "LAST", "percent_off": 50, "max_redemptions": 2})).await;
        let mut subs = Vec::new();
        for _ in 0..8 {
            subs.push(subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await["id"].as_str().unwrap().to_string());
        }
        apply(&app, &shop, &subs[0], "LAST").await;
        let answers = join_all(subs[1..].iter().map(|id| apply(&app, &shop, id, "last"))).await;
        let won = answers.iter().filter(|(s, _)| *s == StatusCode::OK).count();
        assert_eq!(won, 1, "{answers:?}");
        for (status, body) in answers.iter().filter(|(s, _)| *s != StatusCode::OK) {
            assert_eq!(*status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
            assert_eq!(body["errors"]["coupon"], json!(["has been used up"]), "{body}");
        }
        let (_, coupon) = app.get(&shop, &format!("/coupons/{}", made["id"].as_str().unwrap())).await;
        assert_eq!(coupon["times_redeemed"], 2);
        let mut discounted = 0;
        for id in &subs {
            discounted += usize::from(!app.get(&shop, &format!("/subscriptions/{id}")).await.1["discount"].is_null());
        }
        assert_eq!(discounted, 2);
    }

    async fn a_coupon_for_other_plans_archived_or_unknown_is_refused(app) {
        let shop = app.shop("Gym").await;
        let gold = plan(&app, &shop, json!({})).await;
        let other = plan(&app, &shop, json!({"title": "Other"})).await;
        let clock = clock(&app, &shop, "2026-03-01T00:00:00Z").await;
        let id = subscribe(&app, &shop, &gold, &clock, cards::SUCCESS).await["id"].as_str().unwrap().to_string();
        coupon(&app, &shop, json!({"code": "OTHERONLY", "percent_off": 10, "plans": [other]})).await;
        let old = coupon(&app, &shop, json!({"code": "OLD", "percent_off": 10})).await;
        app.post(&shop, &format!("/coupons/{}/archive", old["id"].as_str().unwrap()), &json!({})).await;
        let mut live = json!({"code": "LIVEONLY", "percent_off": 10});
        live["test"] = json!(false);
        app.post(&shop, "/coupons", &live).await;
        for (code, why) in [("otheronly", "does not apply to this plan"), ("old", "is no longer valid"),
                            ("nothing", "is not a valid code"), ("liveonly", "is not a valid code")] {
            let (status, refused) = apply(&app, &shop, &id, code).await;
            assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{code}: {refused}");
            assert_eq!(refused["errors"]["coupon"], json!([why]), "{code}");
        }
        let (status, refused) = app.post(&shop, &format!("/subscriptions/{id}/discount"), &json!({})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
        let rival = app.shop("Rival").await;
        assert_eq!(apply(&app, &rival, &id, "OLD").await.0, StatusCode::NOT_FOUND);
    }

    async fn a_customer_applies_a_code_on_the_plans_page_and_pays_the_discounted_first_period(app) {
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({})).await;
        let path = format!("/plans/{plan}/pay");
        assert!(!app.page(&path).await.html.contains("f-coupon"), "no coupons, no field");
        let made = coupon(&app, &shop, json!({"code": "SAVE25", "percent_off": 25, "duration": "repeating", "duration_in_periods": 3})).await;
        let page = app.page(&path).await.html;
        assert!(page.contains("id=\"f-coupon\""), "{page}");

        let form = app.open_form(&path).await;
        let wrong = app.submit(&path, &form, &[("apply_coupon", "1"), ("coupon", "SAVE52")]).await;
        assert_eq!(wrong.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(wrong.html.contains("There is no such coupon code."), "{}", wrong.html);
        let applied = app.submit(&path, &form, &[("apply_coupon", "1"), ("coupon", " save25 ")]).await;
        assert_eq!(applied.status, StatusCode::OK);
        assert!(applied.html.contains("Coupon SAVE25: 25% off each of the first 3 payments of the plan."), "{}", applied.html);
        assert_eq!(hidden(&applied.html, "coupon").as_deref(), Some("SAVE25"), "the payment form carries it");
        let (_, coupon_now) = app.get(&shop, &format!("/coupons/{}", made["id"].as_str().unwrap())).await;
        assert_eq!(coupon_now["times_redeemed"], 0, "applying redeems nothing");

        let mut fields = card(cards::SUCCESS);
        fields.extend([("email", "ann@example.com"), ("coupon", "SAVE25")]);
        let paid = app.submit(&path, &form, &fields).await;
        assert_eq!(paid.status, StatusCode::SEE_OTHER, "{}", paid.html);
        let (_, payments) = app.get(&shop, "/payments").await;
        let payment = &payments[0];
        assert_eq!((payment["amount"].as_i64(), payment["discount"]["amount"].as_i64()), (Some(742), Some(248)), "{payment}");
        let (_, sub) = app.get(&shop, &format!("/subscriptions/{}", payment["subscription_id"].as_str().unwrap())).await;
        assert_eq!(sub["discount"], json!({"coupon": made["id"], "periods_left": 2}), "{sub}");
        let receipt = app.page(&format!("/receipts/{}", payment["id"].as_str().unwrap())).await.html;
        assert!(receipt.contains("−€2.48 (SAVE25)"), "{receipt}");
        assert!(receipt.contains("€7.42 on"), "the next charge with its discount: {receipt}");
        let (_, coupon_now) = app.get(&shop, &format!("/coupons/{}", made["id"].as_str().unwrap())).await;
        assert_eq!(coupon_now["times_redeemed"], 1);
    }

    async fn a_declined_card_gives_the_redemption_back_and_the_last_one_goes_to_one_page(app) {
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({})).await;
        let path = format!("/plans/{plan}/pay");
        let made = coupon(&app, &shop, json!({"code": "ONLYONE", "percent_off": 50, "max_redemptions": 1})).await;
        let redeemed = || async { app.get(&shop, &format!("/coupons/{}", made["id"].as_str().unwrap())).await.1["times_redeemed"].as_i64() };
        let form = app.open_form(&path).await;
        let mut declined = card(cards::DECLINED);
        declined.extend([("email", "ann@example.com"), ("coupon", "ONLYONE")]);
        assert_eq!(app.submit(&path, &form, &declined).await.status, StatusCode::PAYMENT_REQUIRED);
        assert_eq!(redeemed().await, Some(0), "given back");

        let forms = join_all((0..5).map(|_| app.open_form(&path))).await;
        let mut fields = card(cards::SUCCESS);
        fields.extend([("email", "bob@example.com"), ("coupon", "onlyone")]);
        let answers = join_all(forms.iter().map(|form| app.submit(&path, form, &fields))).await;
        let paid = answers.iter().filter(|a| a.status == StatusCode::SEE_OTHER).count();
        assert_eq!(paid, 1, "{:?}", answers.iter().map(|a| a.status).collect::<Vec<_>>());
        for refused in answers.iter().filter(|a| a.status != StatusCode::SEE_OTHER) {
            assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
            assert!(refused.html.contains("This coupon has been used up."), "{}", refused.html);
        }
        assert_eq!(redeemed().await, Some(1));
        let (_, payments) = app.get(&shop, "/payments?status=succeeded").await;
        let discounted: Vec<&Value> = payments.as_array().unwrap().iter().filter(|p| !p["discount"].is_null()).collect();
        assert_eq!(discounted.len(), 1, "{payments}");
        assert!(!app.page(&path).await.html.contains("f-coupon"), "nothing left to redeem: no field");
    }
}
