//! Disputes and early fraud warnings with the simulated processor's card network: its test
//! cards are disputed, asked about or warned of a few minutes after they paid (at a test
//! clock's step for a subscription on one). Each dispute opens once, its money moves once
//! each way, a disputed subscription is cancelled and never charged again, and the
//! merchant's evidence or acceptance decides it.

use chrono::{Duration, Utc};
use futures::future::join_all;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::bepaid_pay::events_of;
use crate::helpers::*;
use crate::subscriptions::{advance, card_json, clock, get_sub, plan, subscribe};

pub const DISPUTED: &str = "4000000000000259";
const INQUIRED: &str = "4000000000001976";
const WARNED: &str = "4000000000005423";

/// Runs the card network in real time, `minutes` from now.
async fn network_in(app: &TestApp, minutes: i64) {
    paydesk::services::network::run(&app.state, None, Utc::now() + Duration::minutes(minutes)).await.unwrap();
}

/// A test product's payment made with `number`: its id.
async fn paid_with(app: &TestApp, shop: &Shop, number: &str) -> String {
    let product = app.product(shop, &test_product_body()).await;
    let id = product["id"].as_str().unwrap();
    app.pay(id, number, &[]).await;
    let (_, payments) = app.get(shop, &format!("/payments?product={id}")).await;
    let payment = &payments[0];
    assert_eq!(payment["status"], "succeeded", "{payment}");
    payment["id"].as_str().unwrap().to_string()
}

/// The payment's only dispute.
pub async fn dispute_of(app: &TestApp, shop: &Shop, payment: &str) -> Value {
    let (status, list) = app.get(shop, &format!("/disputes?payment={payment}")).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let [dispute] = list.as_array().unwrap().clone().try_into().unwrap();
    dispute
}

fn steps(dispute: &Value) -> Vec<&str> {
    dispute["history"].as_array().unwrap().iter().map(|h| h["step"].as_str().unwrap()).collect()
}

db_tests! {
    async fn a_disputed_subscription_is_cancelled_never_charged_again_and_won_with_evidence(app) {
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2026-01-01T10:00:00Z").await;
        let sub = subscribe(&app, &shop, &plan, &clock, DISPUTED).await;
        let sub_id = sub["id"].as_str().unwrap();
        let payment = sub["last_transaction"]["id"].as_str().unwrap().to_string();
        assert_eq!(sub["state"], "active");

        advance(&app, &shop, &clock, "2026-01-01T10:01:00Z").await;
        let (_, none) = app.get(&shop, "/disputes").await;
        assert_eq!(none, json!([]), "a minute after the payment nothing happened yet");

        advance(&app, &shop, &clock, "2026-01-01T11:00:00Z").await;
        let dispute = dispute_of(&app, &shop, &payment).await;
        assert_eq!((dispute["stage"].clone(), dispute["status"].clone()), (json!("chargeback"), json!("needs_response")));
        assert_eq!((dispute["amount"].clone(), dispute["fee"].clone()), (json!(990), json!(1500)));
        assert_eq!(dispute["withdrawn_amount"], 2490);
        assert_eq!(dispute["reason"], "fraudulent");
        assert_eq!(dispute["subscription_id"], sub_id);
        assert_eq!(dispute["responds_here"], true);
        assert_eq!(dispute["created_at"], "2026-01-01T10:02:00.000Z", "opened on the clock's time");
        assert_eq!(dispute["evidence_due_by"], "2026-01-08T10:02:00.000Z");
        assert_eq!(steps(&dispute), ["opened", "funds_withdrawn"]);
        let id = dispute["id"].as_str().unwrap().to_string();

        let (_, paid) = app.get(&shop, &format!("/payments/{payment}")).await;
        assert_eq!(paid["disputed_amount"], 990);
        assert_eq!(paid["dispute"], json!({"id": id, "status": "needs_response"}));
        let canceled = get_sub(&app, &shop, sub_id).await;
        assert_eq!((canceled["state"].clone(), canceled["cancel_reason"].clone()), (json!("canceled"), json!("payment disputed")));

        advance(&app, &shop, &clock, "2026-01-05T10:00:00Z").await;
        // Evidence staged, then submitted: under review, then won.
        let staged = json!({"evidence": {"customer_name": "Ann Lee", "service_date": "January"}, "submit": false});
        let (status, answered) = app.post(&shop, &format!("/disputes/{id}"), &staged).await;
        assert_eq!(status, StatusCode::OK, "{answered}");
        assert_eq!(answered["status"], "needs_response");
        let more = json!({"evidence": {"service_date": "", "product_description": "Gym membership, used 12 times"}});
        let (status, answered) = app.post(&shop, &format!("/disputes/{id}"), &more).await;
        assert_eq!(status, StatusCode::OK, "{answered}");
        assert_eq!(answered["status"], "under_review");
        assert_eq!(answered["evidence"], json!({"customer_name": "Ann Lee", "product_description": "Gym membership, used 12 times"}));
        let (status, again) = app.post(&shop, &format!("/disputes/{id}"), &more).await;
        assert_eq!(status, StatusCode::CONFLICT, "{again}");

        // Decided two minutes later; a month and more later the card was never charged again.
        advance(&app, &shop, &clock, "2026-03-15T10:00:00Z").await;
        let (_, charges) = app.get(&shop, &format!("/payments?subscription={sub_id}")).await;
        assert_eq!(charges.as_array().unwrap().len(), 1);
        let won = dispute_of(&app, &shop, &payment).await;
        assert_eq!(won["status"], "won");
        assert_eq!(won["withdrawn_amount"], 1500, "the amount came back, the fee did not");
        assert_eq!(steps(&won), ["opened", "funds_withdrawn", "evidence_staged", "evidence_submitted", "closed", "funds_reinstated"]);
        let (_, paid) = app.get(&shop, &format!("/payments/{payment}")).await;
        assert_eq!((paid["disputed_amount"].clone(), paid["dispute"]["status"].clone()), (json!(0), json!("won")));

        for (kind, count) in [("dispute.created", 1), ("dispute.updated", 2), ("dispute.closed", 1)] {
            assert_eq!(events_of(&app, &shop, kind).await.len(), count, "{kind}");
        }
        let [closed] = events_of(&app, &shop, "dispute.closed").await.try_into().unwrap();
        assert_eq!(closed["data"]["object"]["status"], "won");

        // Another shop sees none of it.
        let other = app.shop("Other").await;
        let (status, _) = app.get(&other, &format!("/disputes/{id}")).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (_, theirs) = app.get(&other, "/disputes").await;
        assert_eq!(theirs, json!([]));
    }

    async fn a_dispute_opens_once_however_often_the_network_runs_and_accepting_it_is_final(app) {
        let shop = app.shop("Books").await;
        let payment = paid_with(&app, &shop, DISPUTED).await;
        join_all((0..6).map(|_| network_in(&app, 3))).await;
        let dispute = dispute_of(&app, &shop, &payment).await;
        assert_eq!(steps(&dispute), ["opened", "funds_withdrawn"]);
        assert_eq!(events_of(&app, &shop, "dispute.created").await.len(), 1);
        let (_, paid) = app.get(&shop, &format!("/payments/{payment}")).await;
        assert_eq!(paid["disputed_amount"], paid["amount"], "taken back once");

        // The cardholder has the money: nothing is left to refund.
        let (status, refused) = app.post(&shop, &format!("/payments/{payment}/refund"), &json!({})).await;
        assert_eq!(status, StatusCode::CONFLICT, "{refused}");
        assert!(refused["message"].as_str().unwrap().contains("disputed"), "{refused}");

        let id = dispute["id"].as_str().unwrap();
        let (path, empty) = (format!("/disputes/{id}/close"), json!({}));
        let answers = join_all((0..4).map(|_| app.post(&shop, &path, &empty))).await;
        let accepted: Vec<_> = answers.iter().filter(|(s, _)| *s == StatusCode::OK).collect();
        assert_eq!(accepted.len(), 1, "{answers:?}");
        assert_eq!(accepted[0].1["status"], "accepted");
        assert!(answers.iter().all(|(s, _)| *s == StatusCode::OK || *s == StatusCode::CONFLICT), "{answers:?}");
        let (status, late) = app.post(&shop, &format!("/disputes/{id}"), &json!({"evidence": {"customer_name": "A"}})).await;
        assert_eq!(status, StatusCode::CONFLICT, "{late}");
        assert_eq!(late["message"], "This dispute is closed (accepted)");
        assert_eq!(events_of(&app, &shop, "dispute.closed").await.len(), 1);
        network_in(&app, 60 * 24 * 8).await;
        assert_eq!(dispute_of(&app, &shop, &payment).await["status"], "accepted", "stays accepted past its due date");
    }

    async fn revenue_counts_a_disputes_money_as_gone_and_a_won_ones_amount_as_back(app) {
        let shop = app.shop("Books").await;
        let net = || async { paydesk::db::payments::taken_since(&app.db, shop.id, None).await.unwrap().iter().map(|t| t.0).sum::<i64>() };
        let payment = paid_with(&app, &shop, DISPUTED).await;
        assert_eq!(net().await, 990);
        network_in(&app, 3).await;
        assert_eq!(net().await, -1500, "the amount (990 of 990) and the fee are gone");
        let id = dispute_of(&app, &shop, &payment).await["id"].as_str().unwrap().to_string();
        let (status, _) = app.post(&shop, &format!("/disputes/{id}"), &json!({"evidence": {"product_description": "A book"}})).await;
        assert_eq!(status, StatusCode::OK);
        network_in(&app, 10).await;
        assert_eq!(net().await, 990 - 1500, "won: the amount is back, the fee is not");
        paydesk::db::summaries::compact(&app.db).await.unwrap();
        assert_eq!(net().await, 990 - 1500, "the same once the summaries are folded");
    }

    async fn a_card_a_dispute_stands_against_is_refused_by_its_shop_until_the_dispute_is_won(app) {
        let shop = app.shop("Books").await;
        let payment = paid_with(&app, &shop, DISPUTED).await;
        network_in(&app, 3).await;
        let id = dispute_of(&app, &shop, &payment).await["id"].as_str().unwrap().to_string();
        let product = app.product(&shop, &test_product_body()).await;
        let product = product["id"].as_str().unwrap();
        let page = app.pay(product, DISPUTED, &[]).await;
        assert_eq!(page.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(page.html.contains("a payment with it is disputed"), "{}", page.html);
        let plan = plan(&app, &shop, json!({})).await;
        let body = json!({"plan": {"id": plan}, "customer": customer_body(), "card": card_json(DISPUTED)});
        let (status, refused) = app.post(&shop, "/subscriptions", &body).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
        assert!(refused["errors"]["card.number"][0].as_str().unwrap().contains("disputed"));
        // Another shop knows nothing of it.
        let other = app.shop("Games").await;
        paid_with(&app, &other, DISPUTED).await;
        // Nothing to submit is refused; won with evidence: taken again.
        let (status, empty) = app.post(&shop, &format!("/disputes/{id}"), &json!({})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{empty}");
        assert!(empty["errors"]["evidence"][0].as_str().unwrap().starts_with("can't be empty"), "{empty}");
        let (status, _) = app.post(&shop, &format!("/disputes/{id}"), &json!({"evidence": {"product_description": "A book"}})).await;
        assert_eq!(status, StatusCode::OK);
        network_in(&app, 10).await;
        assert_eq!(dispute_of(&app, &shop, &payment).await["status"], "won");
        assert_eq!(app.post(&shop, "/subscriptions", &body).await.0, StatusCode::CREATED);
    }

    async fn losing_evidence_loses_and_an_unanswered_dispute_expires(app) {
        let shop = app.shop("Books").await;
        let lost = paid_with(&app, &shop, DISPUTED).await;
        let expired = paid_with(&app, &shop, DISPUTED).await;
        network_in(&app, 3).await;
        let id = dispute_of(&app, &shop, &lost).await["id"].as_str().unwrap().to_string();
        let losing = json!({"evidence": {"uncategorized_text": "losing_evidence"}});
        let (status, body) = app.post(&shop, &format!("/disputes/{id}"), &losing).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        network_in(&app, 10).await;
        let dispute = dispute_of(&app, &shop, &lost).await;
        assert_eq!((dispute["status"].clone(), dispute["withdrawn_amount"].clone()), (json!("lost"), json!(990 + 1500)));

        network_in(&app, 60 * 24 * 7 + 10).await;
        let dispute = dispute_of(&app, &shop, &expired).await;
        assert_eq!(dispute["status"], "expired");
        assert_eq!(steps(&dispute), ["opened", "funds_withdrawn", "closed"]);
        let (_, closed) = app.get(&shop, "/disputes?status=expired").await;
        assert_eq!(closed.as_array().unwrap().len(), 1);

        let (status, body) = app.get(&shop, "/disputes?status=open").await;
        assert_invalid(status, &body, "status", &["is not included in the list"]);
        let bad = json!({"evidence": {"receipt": "x", "customer_name": 7}});
        let id = dispute["id"].as_str().unwrap();
        let (status, body) = app.post(&shop, &format!("/disputes/{id}"), &bad).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        let (status, _) = app.post(&shop, "/disputes/dsp_0000000000000000/close", &json!({})).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
    }

    async fn an_unanswered_inquiry_becomes_a_chargeback(app) {
        let shop = app.shop("Books").await;
        let payment = paid_with(&app, &shop, INQUIRED).await;
        network_in(&app, 3).await;
        let inquiry = dispute_of(&app, &shop, &payment).await;
        assert_eq!((inquiry["stage"].clone(), inquiry["status"].clone()), (json!("inquiry"), json!("needs_response")));
        assert_eq!((inquiry["withdrawn_amount"].clone(), inquiry["fee"].clone()), (json!(0), Value::Null));
        let (_, paid) = app.get(&shop, &format!("/payments/{payment}")).await;
        assert_eq!(paid["disputed_amount"], 0, "an inquiry takes no money");

        network_in(&app, 60 * 24 * 7 + 10).await;
        let chargeback = dispute_of(&app, &shop, &payment).await;
        assert_eq!((chargeback["stage"].clone(), chargeback["status"].clone()), (json!("chargeback"), json!("needs_response")));
        assert_eq!(chargeback["withdrawn_amount"], 990 + 1500);
        assert_eq!(steps(&chargeback), ["opened", "escalated", "funds_withdrawn"]);
        assert_eq!(events_of(&app, &shop, "dispute.updated").await.len(), 1);
    }

    async fn an_early_fraud_warning_refunds_once_when_the_shop_chose_so(app) {
        let shop = app.shop("Books").await;
        let (_, settings) = app.get(&shop, "/shop").await;
        assert_eq!((settings["cancel_disputed_subscriptions"].clone(), settings["refund_fraud_warnings"].clone()), (json!(true), json!(false)));
        let kept = paid_with(&app, &shop, WARNED).await;
        network_in(&app, 3).await;
        let (_, warned) = app.get(&shop, &format!("/payments/{kept}")).await;
        assert_eq!(warned["early_fraud_warning"]["fraud_type"], "made_with_stolen_card");
        assert_eq!(warned["status"], "succeeded", "not refunded unless the shop chose so");

        let (status, settings) = app.put(&shop, "/shop", &json!({"refund_fraud_warnings": true})).await;
        assert_eq!(status, StatusCode::OK, "{settings}");
        assert_eq!(settings["refund_fraud_warnings"], true);
        let refunded = paid_with(&app, &shop, WARNED).await;
        join_all((0..5).map(|_| network_in(&app, 3))).await;
        let (_, payment) = app.get(&shop, &format!("/payments/{refunded}")).await;
        assert_eq!((payment["status"].clone(), payment["refunded_amount"].clone()), (json!("refunded"), json!(990)));
        let (_, refunds) = app.get(&shop, &format!("/refunds?payment={refunded}")).await;
        assert_eq!(refunds.as_array().unwrap().len(), 1, "{refunds}");
        assert_eq!(events_of(&app, &shop, "payment.early_fraud_warning").await.len(), 2);
        let (_, kept) = app.get(&shop, &format!("/payments/{kept}")).await;
        assert_eq!(kept["status"], "succeeded", "a warning before the choice is not acted on later");

        let (status, body) = app.put(&shop, "/shop", &json!({"cancel_disputed_subscriptions": "maybe"})).await;
        assert_invalid(status, &body, "cancel_disputed_subscriptions", &["must be true or false"]);
    }
}

db_tests! {
    async fn a_bepaid_chargeback_is_recorded_once_and_answered_in_the_back_office(app) {
        let (shop, gateway) = crate::bepaid_pay::bepaid_shop(&app).await;
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2026-01-01T10:00:00Z").await;
        let sub = subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await;
        let payment = sub["last_transaction"]["id"].as_str().unwrap().to_string();
        let charge = gateway.transactions().last().unwrap().uid.clone();
        let uid = gateway.chargeback(&charge, 990);
        let sent = join_all((0..3).map(|_| gateway.notify(&uid, false))).await;
        assert!(sent.iter().all(|s| *s == 200), "{sent:?}");
        assert_eq!(gateway.notify(&uid, true).await, 401, "a forged chargeback is refused");
        let dispute = dispute_of(&app, &shop, &payment).await;
        assert_eq!((dispute["stage"].clone(), dispute["status"].clone()), (json!("chargeback"), json!("lost")));
        assert_eq!((dispute["amount"].clone(), dispute["withdrawn_amount"].clone()), (json!(990), json!(990)));
        assert_eq!((dispute["reason"].clone(), dispute["fee"].clone()), (json!("fraud"), Value::Null));
        assert_eq!(dispute["responds_here"], false);
        let (_, paid) = app.get(&shop, &format!("/payments/{payment}")).await;
        assert_eq!(paid["disputed_amount"], 990);
        assert_eq!(events_of(&app, &shop, "dispute.created").await.len(), 1);
        assert_eq!(events_of(&app, &shop, "dispute.closed").await.len(), 1, "recorded lost at once: closed too");
        let canceled = get_sub(&app, &shop, sub["id"].as_str().unwrap()).await;
        assert_eq!(canceled["cancel_reason"], "payment disputed");
        let id = dispute["id"].as_str().unwrap();
        let (status, body) = app.post(&shop, &format!("/disputes/{id}/close"), &json!({})).await;
        assert_eq!(status, StatusCode::CONFLICT, "{body}");
        assert!(body["message"].as_str().unwrap().contains("back office"), "{body}");

        // A chargeback of a payment paydesk does not know by the notified uid: the gateway is
        // asked which payment the uid belongs to.
        let product = crate::bepaid_pay::new_product(&app, &shop, json!({})).await;
        let pid = product["id"].as_str().unwrap();
        // The charged-back card (known by the gateway's stamp) is refused; another is taken.
        let refused = app.pay(pid, cards::SUCCESS, &[]).await;
        assert!(refused.html.contains("a payment with it is disputed"), "{}", refused.html);
        app.pay(pid, "5555555555554444", &[]).await;
        let other = crate::bepaid_pay::payment_of(&app, &shop, pid).await["id"].as_str().unwrap().to_string();
        let charge = gateway.transactions().last().unwrap().uid.clone();
        {
            use paydesk::db::entities::payments;
            use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, sea_query::Expr};
            payments::Entity::update_many()
                .col_expr(payments::Column::AcquirerReference, Expr::value(Option::<String>::None))
                .filter(payments::Column::Id.eq(other.as_str()))
                .exec(&app.db)
                .await
                .unwrap();
        }
        let uid = gateway.chargeback(&charge, 400);
        // While the gateway cannot be asked, the notification is not taken: bePaid sends it again.
        let away = json!({"gateway_url": "http://127.0.0.1:9"});
        assert_eq!(app.put(&shop, "/shop/processor", &away).await.0, StatusCode::OK);
        assert_eq!(gateway.notify(&uid, false).await, 503);
        let (_, none) = app.get(&shop, &format!("/disputes?payment={other}")).await;
        assert_eq!(none, json!([]), "nothing guessed");
        let back = json!({"gateway_url": gateway.url});
        assert_eq!(app.put(&shop, "/shop/processor", &back).await.0, StatusCode::OK);
        assert_eq!(gateway.notify(&uid, false).await, 200);
        let partial = dispute_of(&app, &shop, &other).await;
        assert_eq!((partial["amount"].clone(), partial["status"].clone()), (json!(400), json!("lost")));
    }
}

db_tests! {
    async fn dispute_events_reach_webhooks_and_bepaid_style_notifications(app) {
        use crate::webhooks::{Receiver, endpoint, settled};
        let shop = app.shop("Books").await;
        let (hooks, notified) = (Receiver::start().await, Receiver::start().await);
        endpoint(&app, &shop, &hooks.url, json!(["dispute.*"])).await;
        let (status, _) = app.put(&shop, "/shop", &json!({"notification_url": notified.url})).await;
        assert_eq!(status, StatusCode::OK);
        let payment = paid_with(&app, &shop, DISPUTED).await;
        network_in(&app, 3).await;
        let deliveries = settled(&app, &shop).await;
        assert!(deliveries.iter().all(|d| d["status"] == "delivered"), "{deliveries:?}");
        let bodies: Vec<Value> = hooks.received().iter().map(|r| serde_json::from_slice(&r.body).unwrap()).collect();
        let types: Vec<&str> = bodies.iter().map(|b| b["type"].as_str().unwrap()).collect();
        assert_eq!(types, ["dispute.created"], "{bodies:?}");
        assert_eq!(bodies[0]["data"]["object"]["payment_id"], payment.as_str());
        let chargebacks: Vec<Value> = notified
            .received()
            .iter()
            .map(|r| serde_json::from_slice::<Value>(&r.body).unwrap())
            .filter(|b| b["event"] == "created.dispute")
            .collect();
        let [chargeback] = chargebacks.try_into().unwrap();
        let tx = &chargeback["transaction"];
        assert_eq!((tx["type"].clone(), tx["parent_uid"].clone(), tx["status"].clone()), (json!("chargeback"), json!(payment), json!("successful")));
    }
}
