//! Disputes and early fraud warnings through a shop's Stripe account, against paydesk's
//! own Stripe double: its signed webhooks sent twice, at once and out of order, a dispute that
//! only the sweep finds, evidence and acceptance sent to Stripe under their keys (a lost
//! answer resent), and a warning refunded once however often it arrives.

use chrono::Utc;
use futures::future::join_all;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::bepaid_pay::{events_of, new_product, payment_of};
use crate::disputes::dispute_of;
use crate::doubles::stripe::{Fault, StripeDouble, WEBHOOK_SECRET};
use crate::helpers::*;
use crate::stripe_pay::stripe_shop;

/// A payment of a new product with 4242: its id and its PaymentIntent's.
pub async fn pay_one(app: &TestApp, shop: &Shop, stripe: &StripeDouble) -> (String, String) {
    let product = new_product(app, shop, json!({})).await;
    let id = product["id"].as_str().unwrap();
    assert_eq!(app.pay(id, "4242424242424242", &[]).await.status, StatusCode::SEE_OTHER);
    let payment = payment_of(app, shop, id).await["id"].as_str().unwrap().to_string();
    let intent = stripe.intents_of(&payment)[0].id.clone();
    (payment, intent)
}

/// Sends the event `kind` about `object` to the shop's endpoint `times` at once.
pub async fn notify(app: &TestApp, shop: &Shop, stripe: &StripeDouble, kind: &str, object: Value, times: usize) {
    let url = format!("{}/notifications/stripe/{}", app.base, shop.id);
    let event = stripe.event(kind, object);
    let now = Utc::now().timestamp();
    let sent = join_all((0..times).map(|_| stripe.send(&url, &event, WEBHOOK_SECRET, now))).await;
    assert!(sent.iter().all(|s| *s == 200 || *s == 503), "{sent:?}");
    // One taken later by its retry, as Stripe sends again after a 503.
    if sent.contains(&503) {
        assert_eq!(stripe.send(&url, &event, WEBHOOK_SECRET, now).await, 200);
    }
}

backend_tests! {
    async fn stripe_disputes_arrive_once_in_any_order_and_are_answered_through_stripe(backend) {
        let (app, shop, stripe) = stripe_shop(backend, "paydesk_page").await;
        let (payment, intent) = pay_one(&app, &shop, &stripe).await;
        let opened = stripe.open_dispute(&intent, false);
        let dp = opened["id"].as_str().unwrap().to_string();
        notify(&app, &shop, &stripe, "charge.dispute.created", opened.clone(), 4).await;
        notify(&app, &shop, &stripe, "charge.dispute.funds_withdrawn", opened.clone(), 2).await;
        let dispute = dispute_of(&app, &shop, &payment).await;
        assert_eq!((dispute["stage"].clone(), dispute["status"].clone()), (json!("chargeback"), json!("needs_response")));
        assert_eq!((dispute["amount"].clone(), dispute["fee"].clone(), dispute["withdrawn_amount"].clone()), (json!(990), json!(1500), json!(2490)));
        assert_eq!(dispute["responds_here"], true);
        assert!(dispute["evidence_due_by"].is_string());
        assert_eq!(events_of(&app, &shop, "dispute.created").await.len(), 1);
        let (_, paid) = app.get(&shop, &format!("/payments/{payment}")).await;
        assert_eq!(paid["disputed_amount"], 990, "taken back once");
        let id = dispute["id"].as_str().unwrap().to_string();

        // The evidence goes to Stripe; its answer lost once, the same evidence sent again.
        stripe.fail_next_on("/v1/disputes", &[Fault::BadGatewayAfter]);
        let evidence = json!({"evidence": {"product_description": "A signed first edition", "customer_name": "Ann Lee"}});
        let (status, lost) = app.post(&shop, &format!("/disputes/{id}"), &evidence).await;
        assert_eq!(status, StatusCode::BAD_GATEWAY, "{lost}");
        assert_eq!(dispute_of(&app, &shop, &payment).await["status"], "needs_response", "nothing changed here");
        let (status, answered) = app.post(&shop, &format!("/disputes/{id}"), &evidence).await;
        assert_eq!(status, StatusCode::OK, "{answered}");
        assert_eq!(answered["status"], "under_review");
        let at_stripe = stripe.disputes().into_iter().find(|d| d.id == dp).unwrap();
        assert_eq!((at_stripe.status.as_str(), at_stripe.submission_count), ("under_review", 1), "submitted once");
        assert_eq!(at_stripe.evidence["customer_name"], "Ann Lee");

        // Won: its events arrive out of order, with a stale one among them.
        let won = stripe.decide_dispute(&dp, "won");
        notify(&app, &shop, &stripe, "charge.dispute.funds_reinstated", won.clone(), 2).await;
        notify(&app, &shop, &stripe, "charge.dispute.closed", won, 3).await;
        notify(&app, &shop, &stripe, "charge.dispute.created", opened, 1).await;
        let dispute = dispute_of(&app, &shop, &payment).await;
        assert_eq!((dispute["status"].clone(), dispute["withdrawn_amount"].clone()), (json!("won"), json!(1500)));
        let (_, paid) = app.get(&shop, &format!("/payments/{payment}")).await;
        assert_eq!((paid["disputed_amount"].clone(), paid["dispute"]["status"].clone()), (json!(0), json!("won")));
        assert_eq!(events_of(&app, &shop, "dispute.closed").await.len(), 1);

        // Accepted: Stripe closes it as lost, and paydesk keeps that the merchant accepted it.
        let (second, second_intent) = pay_one(&app, &shop, &stripe).await;
        let opened = stripe.open_dispute(&second_intent, false);
        notify(&app, &shop, &stripe, "charge.dispute.created", opened.clone(), 1).await;
        let id = dispute_of(&app, &shop, &second).await["id"].as_str().unwrap().to_string();
        let (status, accepted) = app.post(&shop, &format!("/disputes/{id}/close"), &json!({})).await;
        assert_eq!(status, StatusCode::OK, "{accepted}");
        assert_eq!(accepted["status"], "accepted");
        let dp = opened["id"].as_str().unwrap();
        assert_eq!(stripe.disputes().into_iter().find(|d| d.id == dp).unwrap().status, "lost");
        notify(&app, &shop, &stripe, "charge.dispute.closed", stripe.dispute(dp), 1).await;
        assert_eq!(dispute_of(&app, &shop, &second).await["status"], "accepted");
        let (status, again) = app.post(&shop, &format!("/disputes/{id}/close"), &json!({})).await;
        assert_eq!(status, StatusCode::CONFLICT, "{again}");
    }

    async fn a_dispute_whose_webhook_never_came_is_found_by_the_sweep(backend) {
        let (app, shop, stripe) = stripe_shop(backend, "paydesk_page").await;
        let (payment, intent) = pay_one(&app, &shop, &stripe).await;
        let (_, unknown_intent) = pay_one(&app, &shop, &stripe).await;
        stripe.open_dispute(&intent, true);
        let dp = stripe.open_dispute(&unknown_intent, false)["id"].as_str().unwrap().to_string();
        let read = paydesk::services::disputes::sweep(&app.state, Utc::now()).await.unwrap();
        assert_eq!(read, 2);
        let inquiry = dispute_of(&app, &shop, &payment).await;
        assert_eq!((inquiry["stage"].clone(), inquiry["status"].clone()), (json!("inquiry"), json!("needs_response")));
        let (_, all) = app.get(&shop, "/disputes").await;
        assert_eq!(all.as_array().unwrap().len(), 2);
        // Swept again after Stripe decided: it moves once, and sweeping again changes nothing.
        stripe.decide_dispute(&dp, "lost");
        for _ in 0..2 {
            paydesk::services::disputes::sweep(&app.state, Utc::now()).await.unwrap();
        }
        let (_, lost) = app.get(&shop, "/disputes?status=lost").await;
        assert_eq!(lost.as_array().unwrap().len(), 1, "{lost}");
        assert_eq!(events_of(&app, &shop, "dispute.closed").await.len(), 1);
        assert_eq!(events_of(&app, &shop, "dispute.created").await.len(), 2);
    }

    async fn an_actionable_early_fraud_warning_is_refunded_once_however_often_it_arrives(backend) {
        let (app, shop, stripe) = stripe_shop(backend, "paydesk_page").await;
        let (status, _) = app.put(&shop, "/shop", &json!({"refund_fraud_warnings": true})).await;
        assert_eq!(status, StatusCode::OK);
        let (payment, intent) = pay_one(&app, &shop, &stripe).await;
        let warning = stripe.fraud_warning(&intent, true);
        notify(&app, &shop, &stripe, "radar.early_fraud_warning.created", warning.clone(), 5).await;
        notify(&app, &shop, &stripe, "radar.early_fraud_warning.updated", warning, 2).await;
        assert_eq!(stripe.refunds().len(), 1, "refunded once at Stripe");
        let (_, refunded) = app.get(&shop, &format!("/payments/{payment}")).await;
        assert_eq!((refunded["status"].clone(), refunded["refunded_amount"].clone()), (json!("refunded"), json!(990)));
        assert_eq!(refunded["early_fraud_warning"]["fraud_type"], "made_with_stolen_card");
        assert_eq!(events_of(&app, &shop, "payment.early_fraud_warning").await.len(), 1);

        // Not actionable (Stripe says a dispute came first): only recorded.
        let (kept, kept_intent) = pay_one(&app, &shop, &stripe).await;
        notify(&app, &shop, &stripe, "radar.early_fraud_warning.created", stripe.fraud_warning(&kept_intent, false), 1).await;
        let (_, kept) = app.get(&shop, &format!("/payments/{kept}")).await;
        assert_eq!((kept["status"].clone(), kept["early_fraud_warning"].is_object()), (json!("succeeded"), true));
        assert_eq!(stripe.refunds().len(), 1);
    }
}

backend_tests! {
    /// The same card typed twice has two tokens at Stripe and one fingerprint: a dispute of a
    /// payment of one subscription ends the other, and the card is refused for new payments
    /// and subscriptions until the dispute is won (or the shop says otherwise).
    async fn a_disputed_card_is_known_by_its_fingerprint_whatever_its_token(backend) {
        let (app, shop, stripe) = stripe_shop(backend, "paydesk_page").await;
        let plan = crate::subscriptions::plan(&app, &shop, json!({})).await;
        let body = json!({"plan": {"id": plan}, "customer": customer_body(),
                          "card": crate::subscriptions::card_json("4242424242424242")});
        let mut subs = Vec::new();
        for _ in 0..2 {
            let (status, sub) = app.post(&shop, "/subscriptions", &body).await;
            assert_eq!((status, sub["state"].as_str()), (StatusCode::CREATED, Some("active")), "{sub}");
            subs.push(sub["id"].as_str().unwrap().to_string());
        }
        let intent = stripe.intents()[0].id.clone();
        let opened = stripe.open_dispute(&intent, false);
        notify(&app, &shop, &stripe, "charge.dispute.created", opened.clone(), 1).await;
        for id in &subs {
            let (_, sub) = app.get(&shop, &format!("/subscriptions/{id}")).await;
            assert_eq!(sub["state"], "canceled", "{sub}");
        }

        let (status, refused) = app.post(&shop, "/subscriptions", &body).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
        assert_eq!(refused["errors"]["card.number"][0],
                   "cannot be used with this shop: a payment with it is disputed. Please use another card");
        let product = new_product(&app, &shop, json!({})).await;
        let page = app.pay(product["id"].as_str().unwrap(), "4242424242424242", &[]).await;
        assert_eq!(page.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(page.html.contains("a payment with it is disputed"), "{}", page.html);
        let (_, payments) = app.get(&shop, &format!("/payments?product={}", product["id"].as_str().unwrap())).await;
        assert_eq!(payments, json!([]), "nothing was charged");

        // The merchant may take disputed cards.
        let (status, settings) = app.put(&shop, "/shop", &json!({"refuse_disputed_cards": false})).await;
        assert_eq!((status, settings["refuse_disputed_cards"].clone()), (StatusCode::OK, json!(false)));
        let (status, taken) = app.post(&shop, "/subscriptions", &body).await;
        assert_eq!(status, StatusCode::CREATED, "{taken}");
        assert_eq!(app.put(&shop, "/shop", &json!({"refuse_disputed_cards": true})).await.0, StatusCode::OK);
        assert_eq!(app.post(&shop, "/subscriptions", &body).await.0, StatusCode::UNPROCESSABLE_ENTITY);

        // Won: the card is as good as before.
        let dp = opened["id"].as_str().unwrap();
        notify(&app, &shop, &stripe, "charge.dispute.closed", stripe.decide_dispute(dp, "won"), 1).await;
        let (status, sub) = app.post(&shop, "/subscriptions", &body).await;
        assert_eq!(status, StatusCode::CREATED, "{sub}");
    }
}
