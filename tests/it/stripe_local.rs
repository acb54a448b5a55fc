//! Real money through a shop's Stripe account, against localstripe (a stateful imitation of
//! Stripe's API from PyPI): cards typed on paydesk's page become PaymentMethods attached to a
//! Customer, charges are PaymentIntents (held for authorizations, then captured or canceled),
//! renewals are charged off-session through a test clock, refunds are partial and full with
//! paydesk's own checks first (localstripe itself takes over-refunds and captures after a
//! cancel), and Stripe-signed webhooks are taken once. What localstripe lacks (Checkout,
//! idempotency, error types, faults) is in `stripe_pay.rs`, against paydesk's own double.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::bepaid_pay::{new_product, payment_of, quantity, set_card, stored};
use crate::doubles::localstripe::{self, SECRET};
use crate::helpers::*;
use crate::subscriptions::{advance, card_json, clock, plan};

/// The webhook signing secret the tests' shops keep.
const WEBHOOK_SECRET: &str = "whsec_paydesk_localstripe";

/// The app, with Stripe's API at localstripe.
async fn stripe_app(backend: Backend) -> TestApp {
    let url = localstripe::url().await;
    let args = paydesk::config::ConfigArgs { stripe_api_url: Some(url), ..Default::default() };
    TestApp::spawn_with(backend, args).await
}

/// A shop whose test payments go through its Stripe account, cards typed on paydesk's page.
async fn stripe_shop(app: &TestApp) -> Shop {
    let shop = app.shop("Corner Books").await;
    let body = json!({"kind": "stripe", "card_entry": "paydesk_page",
                      "test": {"secret_key": SECRET, "webhook_secret": WEBHOOK_SECRET}});
    let (status, processor) = app.put(&shop, "/shop/processor", &body).await;
    assert_eq!(status, StatusCode::OK, "{processor}");
    shop
}

/// A held authorization of a new product: its payment's id.
async fn authorized(app: &TestApp, shop: &Shop) -> String {
    let product = new_product(app, shop, json!({"transaction_type": "authorization"})).await;
    let id = product["id"].as_str().unwrap();
    let paid = app.pay(id, "4242424242424242", &[]).await;
    assert_eq!(paid.status, StatusCode::SEE_OTHER, "{}", paid.html);
    let payment = payment_of(app, shop, id).await;
    assert_eq!(payment["status"], "authorized", "{payment}");
    payment["id"].as_str().unwrap().to_string()
}

/// The one PaymentIntent localstripe has under paydesk's `reference`.
async fn intent_of(reference: &str) -> Value {
    let found = localstripe::intents_of(reference).await;
    assert_eq!(found.len(), 1, "one PaymentIntent for {reference}: {found:?}");
    found[0].clone()
}

backend_tests! {
    async fn a_merchant_connects_a_stripe_account_whose_secrets_are_never_shown(backend) {
        let app = stripe_app(backend).await;
        let shop = app.shop("Corner Books").await;
        // A live key in the test account would move real money for test products.
        let wrong = json!({"kind": "stripe", "test": {"secret_key": "sk_live_51H8abcdef", "webhook_secret": "pk_x"},
                           "live": {"secret_key": "sk_test_51H8abcdef"}});
        let (status, refused) = app.put(&shop, "/shop/processor", &wrong).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
        for field in ["test.secret_key", "test.webhook_secret", "live.secret_key"] {
            assert!(refused["errors"][field].is_array(), "{field}: {refused}");
        }
        assert_eq!(app.get(&shop, "/shop/processor").await.1["kind"], "simulated", "nothing stored");

        let body = json!({"kind": "stripe", "test": {"secret_key": SECRET, "webhook_secret": WEBHOOK_SECRET}});
        let (status, processor) = app.put(&shop, "/shop/processor", &body).await;
        assert_eq!(status, StatusCode::OK, "{processor}");
        assert_eq!(processor["kind"], "stripe");
        assert_eq!(processor["card_entry"], "processor_page", "Stripe's page unless told otherwise");
        assert_eq!(processor["test"]["secret_key_last4"], &SECRET[SECRET.len() - 4..]);
        assert_eq!(processor["test"]["webhook_secret_last4"], &WEBHOOK_SECRET[WEBHOOK_SECRET.len() - 4..]);
        assert_eq!(processor["live"], Value::Null);
        let shown = app.get(&shop, "/shop/processor").await.1.to_string();
        assert!(!shown.contains(SECRET) && !shown.contains(WEBHOOK_SECRET), "{shown}");

        let (status, checked) = app.post(&shop, "/shop/processor/check", &json!({})).await;
        assert_eq!(status, StatusCode::OK, "{checked}");
        assert_eq!(checked["test"], json!({"works": true, "message": null}));
        assert_eq!(checked["live"], Value::Null);

        // A Stripe account needs its secret key; switching to bePaid forgets Stripe's keys.
        let (status, _) = app.put(&shop, "/shop/processor", &json!({"test": {"secret_key": null}})).await;
        assert_eq!(status, StatusCode::OK, "a null reads as not sent");
        let (status, refused) = app.put(&shop, "/shop/processor", &json!({"kind": "bepaid"})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{refused}");
        assert_eq!(app.get(&shop, "/shop/processor").await.1["kind"], "stripe", "nothing changed");
    }

    async fn a_card_typed_on_paydesks_page_is_charged_as_a_payment_intent_of_the_shops_account(backend) {
        let app = stripe_app(backend).await;
        let shop = stripe_shop(&app).await;
        let product = new_product(&app, &shop, json!({})).await;
        let id = product["id"].as_str().unwrap();
        let paid = app.pay(id, "4242424242424242", &[]).await;
        assert_eq!(paid.status, StatusCode::SEE_OTHER, "{}", paid.html);
        let payment = payment_of(&app, &shop, id).await;
        assert_eq!(payment["status"], "succeeded", "{payment}");
        let pay_id = payment["id"].as_str().unwrap();
        let pi = intent_of(pay_id).await;
        assert_eq!((pi["status"].as_str(), pi["amount"].as_i64(), pi["currency"].as_str()), (Some("succeeded"), Some(990), Some("eur")));
        let kept = stored(&app, pay_id).await;
        assert_eq!(kept.acquirer_reference.as_deref(), pi["id"].as_str());
        let (customer, method) = kept.card_token.split_once('/').expect("the Customer and the PaymentMethod");
        assert_eq!((pi["customer"].as_str(), pi["payment_method"].as_str()), (Some(customer), Some(method)));
        let pm = localstripe::get(&format!("/v1/payment_methods/{method}")).await;
        assert_eq!(pm["customer"], customer, "attached to its Customer");
        assert_eq!(pm["card"]["last4"], "4242");
        assert!(!kept.card_token.contains("4242424242424242"));
        assert_eq!(payment["card"]["last_4"], "4242");
        assert_eq!(quantity(&app, &shop, id).await, 4);

        // Declined when charged: the form again with the reason, the unit back.
        let other = new_product(&app, &shop, json!({})).await;
        let other_id = other["id"].as_str().unwrap();
        let declined = app.pay(other_id, "4000000000000341", &[]).await;
        assert_eq!(declined.status, StatusCode::PAYMENT_REQUIRED, "{}", declined.html);
        let payment = payment_of(&app, &shop, other_id).await;
        assert_eq!((payment["status"].as_str(), payment["failure_code"].as_str()), (Some("failed"), Some("card_declined")));
        assert_eq!(quantity(&app, &shop, other_id).await, 5);

        // 3-D Secure, and localstripe gives no page for it (it refuses a return URL): the
        // PaymentIntent is canceled at Stripe and the payment declined.
        let bank = new_product(&app, &shop, json!({})).await;
        let bank_id = bank["id"].as_str().unwrap();
        let asked = app.pay(bank_id, "4000002760003184", &[]).await;
        assert_eq!(asked.status, StatusCode::PAYMENT_REQUIRED, "{}", asked.html);
        let payment = payment_of(&app, &shop, bank_id).await;
        assert_eq!(payment["failure_code"], "authentication_required", "{payment}");
        assert_eq!(intent_of(payment["id"].as_str().unwrap()).await["status"], "canceled");
        assert_eq!(quantity(&app, &shop, bank_id).await, 5);

        // Declined when attached (Stripe checks the card): nothing is charged.
        let third = new_product(&app, &shop, json!({})).await;
        let third_id = third["id"].as_str().unwrap();
        let refused = app.pay(third_id, "4000000000000002", &[]).await;
        assert!(refused.status.is_client_error(), "{}", refused.status);
        assert!(refused.html.contains("declined"), "the reason is shown: {}", refused.html);
        assert_eq!(quantity(&app, &shop, third_id).await, 5);
    }

    async fn an_authorization_is_captured_or_canceled_and_paydesk_refuses_what_stripe_would_wrongly_take(backend) {
        let app = stripe_app(backend).await;
        let shop = stripe_shop(&app).await;
        let captured = authorized(&app, &shop).await;
        assert_eq!(intent_of(&captured).await["status"], "requires_capture");
        let (status, payment) = app.post(&shop, &format!("/payments/{captured}/capture"), &json!({})).await;
        assert_eq!((status, payment["status"].as_str()), (StatusCode::OK, Some("succeeded")), "{payment}");
        assert_eq!(intent_of(&captured).await["status"], "succeeded");

        let voided = authorized(&app, &shop).await;
        let (status, payment) = app.post(&shop, &format!("/payments/{voided}/void"), &json!({})).await;
        assert_eq!((status, payment["status"].as_str()), (StatusCode::OK, Some("voided")), "{payment}");
        assert_eq!(intent_of(&voided).await["status"], "canceled");
        // localstripe would capture a canceled PaymentIntent, and refund it: paydesk asks nothing.
        let (status, _) = app.post(&shop, &format!("/payments/{voided}/capture"), &json!({})).await;
        assert_eq!(status, StatusCode::CONFLICT);
        let (status, _) = app.post(&shop, &format!("/payments/{voided}/refund"), &json!({})).await;
        assert!(status.is_client_error());
        assert_eq!(intent_of(&voided).await["latest_charge"]["captured"], false);
    }

    async fn refunds_partial_and_full_go_to_stripe_after_paydesks_checks(backend) {
        let app = stripe_app(backend).await;
        let shop = stripe_shop(&app).await;
        let product = new_product(&app, &shop, json!({})).await;
        let id = product["id"].as_str().unwrap();
        assert_eq!(app.pay(id, "4242424242424242", &[]).await.status, StatusCode::SEE_OTHER);
        let payment = payment_of(&app, &shop, id).await["id"].as_str().unwrap().to_string();
        let refunds = format!("/payments/{payment}/refund");
        let (status, refund) = app.post(&shop, &refunds, &json!({"amount": 300, "reason": "damaged"})).await;
        assert_eq!((status, refund["status"].as_str()), (StatusCode::CREATED, Some("succeeded")), "{refund}");
        // localstripe takes an over-refund; paydesk does not ask.
        let (status, _) = app.post(&shop, &refunds, &json!({"amount": 691})).await;
        assert!(status.is_client_error());
        let (status, refund) = app.post(&shop, &refunds, &json!({})).await;
        assert_eq!((status, refund["status"].as_str(), refund["amount"].as_i64()), (StatusCode::CREATED, Some("succeeded"), Some(690)), "{refund}");
        let (status, _) = app.post(&shop, &refunds, &json!({"amount": 1})).await;
        assert!(status.is_client_error(), "nothing is left");
        let pi = intent_of(&payment).await;
        let charge = localstripe::get(&format!("/v1/charges/{}", pi["latest_charge"]["id"].as_str().unwrap())).await;
        assert_eq!(charge["amount_refunded"], 990, "exactly what was paid, once");
        let (_, shown) = app.get(&shop, &format!("/payments/{payment}")).await;
        assert_eq!(shown["refunded_amount"], 990, "{shown}");
    }

    async fn renewals_are_charged_off_session_to_the_saved_card_through_a_test_clock(backend) {
        let app = stripe_app(backend).await;
        let shop = stripe_shop(&app).await;
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2026-01-01T10:00:00Z").await;
        let body = json!({"plan": {"id": plan}, "customer": customer_body(), "card": card_json("4242424242424242"),
                          "test_clock": clock});
        let (status, sub) = app.post(&shop, "/subscriptions", &body).await;
        assert_eq!(status, StatusCode::CREATED, "{sub}");
        let id = sub["id"].as_str().unwrap().to_string();
        advance(&app, &shop, &clock, "2026-04-01T00:00:00Z").await;
        let (_, list) = app.get(&shop, &format!("/payments?subscription={id}&limit=100")).await;
        let list = list.as_array().unwrap();
        assert!(list.len() >= 3, "{list:?}");
        let first_card = stored(&app, list.last().unwrap()["id"].as_str().unwrap()).await.card_token;
        for payment in list {
            assert_eq!(payment["status"], "succeeded", "{payment}");
            let kept = stored(&app, payment["id"].as_str().unwrap()).await;
            let pi = localstripe::get(&format!("/v1/payment_intents/{}", kept.acquirer_reference.unwrap())).await;
            assert_eq!(pi["status"], "succeeded");
            assert_eq!(pi["customer"].as_str(), first_card.split_once('/').map(|(c, _)| c), "the same Customer");
            let reference = kept.billing_key.unwrap_or(kept.id);
            assert_eq!(pi["metadata"]["paydesk_reference"], reference);
            assert_eq!(localstripe::intents_of(&reference).await.len(), 1, "one charge per period");
        }

        // A card whose bank wants the customer for every charge: the renewal waits for them.
        let customer = first_card.split_once('/').unwrap().0;
        let fields = [("type", "card"), ("card[number]", "4000002760003184"), ("card[exp_month]", "12"),
                      ("card[exp_year]", "2040"), ("card[cvc]", "123")];
        let pm = localstripe::post("/v1/payment_methods", &fields).await;
        let pm = pm["id"].as_str().unwrap();
        localstripe::post(&format!("/v1/payment_methods/{pm}/attach"), &[("customer", customer)]).await;
        set_card(&app, &id, &format!("{customer}/{pm}")).await;
        advance(&app, &shop, &clock, "2026-05-01T12:00:00Z").await;
        let (_, waiting) = app.get(&shop, &format!("/subscriptions/{id}")).await;
        assert_eq!(waiting["state"], "redirecting", "{waiting}");
        assert_eq!(waiting["last_transaction"]["failure_code"], "authentication_required");
        assert_eq!(waiting["renew_at"], Value::Null, "not retried without the customer");
    }

    async fn stripe_signed_webhooks_are_taken_once_and_forgeries_refused(backend) {
        let app = stripe_app(backend).await;
        let shop = stripe_shop(&app).await;
        let hook = format!("{}/notifications/stripe/{}", app.base, shop.id);
        localstripe::register_webhook(&paydesk::domain::ids::new_id("paydesk_"), &hook, WEBHOOK_SECRET).await;
        let product = new_product(&app, &shop, json!({})).await;
        let id = product["id"].as_str().unwrap();
        assert_eq!(app.pay(id, "4242424242424242", &[]).await.status, StatusCode::SEE_OTHER);
        // localstripe sends payment_intent.succeeded, signed, a moment later (and the events of
        // every other test's payments too: each is checked and found to be about nothing here).
        let pay_id = payment_of(&app, &shop, id).await["id"].as_str().unwrap().to_string();
        let ours = localstripe::events_about(&pay_id).await;
        let [event] = ours.as_slice() else { panic!("one event about the payment: {ours:?}") };
        let event_id = event["id"].as_str().unwrap().to_string();
        let patience = Patience::start();
        while !patience.spent() {
            if events_taken(&app, shop.id).await.contains(&event_id) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        assert!(events_taken(&app, shop.id).await.contains(&event_id), "localstripe's webhook was taken");

        // The same event sent again is taken (200) and changes nothing; a forged one is refused.
        let event = json!({"id": event_id, "object": "event", "type": "payment_intent.succeeded", "livemode": false,
                           "data": {"object": {"id": "pi_x", "object": "payment_intent", "status": "succeeded"}}});
        let body = event.to_string();
        let now = chrono::Utc::now().timestamp();
        let send = |signature: String| {
            app.anon(reqwest::Method::POST, &format!("/notifications/stripe/{}", shop.id))
                .header("stripe-signature", signature).body(body.clone()).send()
        };
        use paydesk::external::acquirer::stripe::signature::sign;
        assert_eq!(send(sign(body.as_bytes(), WEBHOOK_SECRET, now)).await.unwrap().status(), StatusCode::OK);
        assert_eq!(send(sign(body.as_bytes(), "whsec_someone_else", now)).await.unwrap().status(), StatusCode::UNAUTHORIZED);
        assert_eq!(send(sign(body.as_bytes(), WEBHOOK_SECRET, now - 3600)).await.unwrap().status(), StatusCode::UNAUTHORIZED, "a replay");
        assert_eq!(send(String::new()).await.unwrap().status(), StatusCode::UNAUTHORIZED);
        let forged = json!({"id": "evt_forged", "object": "event", "type": "charge.refunded", "livemode": false,
                            "data": {"object": {"id": "ch_x", "object": "charge"}}}).to_string();
        let refused = app.anon(reqwest::Method::POST, &format!("/notifications/stripe/{}", shop.id))
            .header("stripe-signature", sign(forged.as_bytes(), "whsec_someone_else", now)).body(forged).send().await.unwrap();
        assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
        assert!(!events_taken(&app, shop.id).await.contains(&"evt_forged".to_string()), "a forgery is not even recorded");
        assert_eq!(payment_of(&app, &shop, id).await["status"], "succeeded");
    }
}

/// The Stripe events the shop's webhooks were acted on for.
async fn events_taken(app: &TestApp, shop_id: i64) -> Vec<String> {
    use paydesk::db::entities::processor_events::{Column, Entity};
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
    Entity::find()
        .filter(Column::ShopId.eq(shop_id))
        .filter(Column::DoneAt.is_not_null())
        .all(&app.db)
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.event_id)
        .collect()
}
