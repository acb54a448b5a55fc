//! Real money through a shop's Stripe account, against paydesk's own Stripe double, for what
//! localstripe lacks: Checkout Sessions (products, plans that save the card, free trials in
//! setup mode, abandoned pages), the outcome read from Stripe and never from the return URL,
//! answers lost under every fault (one PaymentIntent, found again by its metadata or replayed
//! under its key), `authentication_required` on a renewal, declines and processing errors
//! following the retry table by their kind, and webhooks: repeated, forged, stale, rolled
//! secrets, and refunds and captures made in Stripe's dashboard.

use chrono::{Duration, Utc};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::bepaid_pay::{events_of, new_product, payment_of, quantity, set_card, stored, sweep};
use crate::doubles::stripe::{self as double, Fault, HOLD, StripeDouble, WEBHOOK_SECRET};
use crate::helpers::*;
use crate::portal::{Visitor, minted, open};
use crate::subscriptions::{advance, card_json, clock, plan};

/// The app with Stripe's API at a new double (answers waited for 2 seconds), and a shop of
/// it whose test payments go through the double, cards typed on `entry`.
pub async fn stripe_shop(backend: Backend, entry: &str) -> (TestApp, Shop, StripeDouble) {
    let stripe = StripeDouble::start().await;
    let args = paydesk::config::ConfigArgs {
        stripe_api_url: Some(stripe.url.clone()),
        processor_timeout_seconds: Some("2".into()),
        ..Default::default()
    };
    let app = TestApp::spawn_with(backend, args).await;
    let shop = app.shop("Corner Books").await;
    let body = json!({"kind": "stripe", "card_entry": entry,
                      "test": {"secret_key": double::SECRET, "webhook_secret": WEBHOOK_SECRET}});
    let (status, processor) = app.put(&shop, "/shop/processor", &body).await;
    assert_eq!(status, StatusCode::OK, "{processor}");
    (app, shop, stripe)
}

/// The Checkout Session an answer sends the customer to.
pub fn session_of(page: &Page, stripe: &StripeDouble) -> String {
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.html);
    let prefix = format!("{}/pay/", stripe.url);
    page.location().strip_prefix(&prefix).unwrap_or_else(|| panic!("to Stripe's page: {}", page.location())).to_string()
}

/// A subscription on a test clock started on Checkout with 4242 (its customer's id, the
/// Stripe Customer its card belongs to), whose saved card then behaves as `number`.
async fn started_on_checkout(
    app: &TestApp,
    shop: &Shop,
    stripe: &StripeDouble,
    plan: &str,
    clock: &str,
    number: &str,
) -> (String, String, String) {
    let body = json!({"plan": {"id": plan}, "customer": customer_body(), "test_clock": clock});
    let (status, sub) = app.post(shop, "/subscriptions", &body).await;
    assert_eq!(status, StatusCode::CREATED, "{sub}");
    let id = sub["id"].as_str().unwrap().to_string();
    let card_page = format!("/subscriptions/{id}/pay");
    let form = app.open_form(&card_page).await;
    let session = session_of(&app.submit(&card_page, &form, &[]).await, stripe);
    stripe.pay_session(&session, "4242424242424242").unwrap();
    app.page(&format!("/payments/{}/return", stripe.session(&session).form["client_reference_id"])).await;
    let kept =
        paydesk::db::find_public::<paydesk::db::entities::subscriptions::Entity>(&app.db, &id).await.unwrap().unwrap();
    assert_eq!(kept.state.as_str(), "active");
    let stripe_customer = kept.card_token.unwrap().split_once('/').unwrap().0.to_string();
    set_card(app, &id, &format!("{stripe_customer}/{}", stripe.attach_card(&stripe_customer, number))).await;
    (id, kept.customer_id, stripe_customer)
}

/// Where the shop's Stripe webhooks go.
fn hook(app: &TestApp, shop: &Shop) -> String {
    format!("{}/notifications/stripe/{}", app.base, shop.id)
}

backend_tests! {
    async fn a_product_is_paid_on_stripes_checkout_and_the_outcome_is_read_from_stripe(backend) {
        let (app, shop, stripe) = stripe_shop(backend, "processor_page").await;
        let mut change = json!({"return_url": "https://books.example/thanks"});
        change["visible_fields"] = json!(["email"]);
        let product = new_product(&app, &shop, change).await;
        let id = product["id"].as_str().unwrap();
        let path = format!("/products/{id}/pay");
        let page = app.page(&path).await;
        assert!(!page.html.contains("card_number"), "no card fields on paydesk's page");
        assert!(page.html.contains("4242 4242 4242 4242"), "Stripe's test cards");
        let form = app.open_form(&path).await;
        let session = session_of(&app.submit(&path, &form, &[("email", "ann@example.com")]).await, &stripe);
        let payment = payment_of(&app, &shop, id).await;
        let pay_id = payment["id"].as_str().unwrap().to_string();
        let sent = stripe.session(&session).form;
        let back = format!("{}/payments/{pay_id}/return", app.state.config.base_url);
        for (key, value) in [("mode", "payment"), ("line_items[0][price_data][unit_amount]", "990"),
                             ("line_items[0][price_data][currency]", "eur"), ("metadata[paydesk_reference]", &pay_id),
                             ("payment_intent_data[metadata][paydesk_reference]", &pay_id),
                             ("payment_intent_data[capture_method]", "automatic"), ("success_url", &back),
                             ("customer_email", "ann@example.com"), ("client_reference_id", &pay_id)] {
            assert_eq!(sent.get(key).map(String::as_str), Some(value), "{key}");
        }
        assert!(!sent.contains_key("payment_intent_data[setup_future_usage]"), "a one-off payment keeps no card");
        assert_eq!(payment["status"], "processing");

        // The return URL's words mean nothing: only Stripe's do.
        let forged = app.page(&format!("/payments/{pay_id}/return?session_id={session}&redirect_status=succeeded")).await;
        assert_eq!(forged.location(), format!("{}/receipts/{pay_id}", app.state.config.base_url));
        assert_eq!(payment_of(&app, &shop, id).await["status"], "processing");

        // Declined on Stripe's page, then paid with another card.
        assert!(stripe.pay_session(&session, "4000000000000341").is_err());
        sweep(&app, 3).await;
        assert_eq!(payment_of(&app, &shop, id).await["status"], "processing", "still open");
        assert_eq!(stripe.pay_session(&session, "4242424242424242").unwrap(), back);
        let returned = app.page(&format!("/payments/{pay_id}/return")).await;
        assert!(returned.location().starts_with("https://books.example/thanks?payment_id="), "{}", returned.location());
        assert!(returned.location().contains("status=succeeded") && returned.location().contains("signature="));
        let payment = payment_of(&app, &shop, id).await;
        assert_eq!(payment["status"], "succeeded");
        assert_eq!(payment["card"]["last_4"], "4242", "{payment}");
        let [pi] = stripe.intents_of(&pay_id).try_into().unwrap();
        assert_eq!(stored(&app, &pay_id).await.acquirer_reference.as_deref(), Some(pi.id.as_str()));
        let (_, customer) = app.get(&shop, &format!("/customers/{}", payment["customer_id"].as_str().unwrap())).await;
        assert_eq!(customer["email"], "ann@example.com");
        assert_eq!(quantity(&app, &shop, id).await, 4);

        // Stripe's webhook for it, delivered three times at once: taken, nothing twice.
        let event = stripe.event("checkout.session.completed", stripe.object(&session));
        let now = Utc::now().timestamp();
        let url = hook(&app, &shop);
        let sent = futures::future::join_all((0..3).map(|_| stripe.send(&url, &event, WEBHOOK_SECRET, now))).await;
        assert!(sent.iter().all(|s| *s == 200 || *s == 503), "{sent:?}");
        assert_eq!(stripe.send(&hook(&app, &shop), &event, WEBHOOK_SECRET, now).await, 200);
        assert_eq!(events_of(&app, &shop, "payment.succeeded").await.len(), 1);
    }

    async fn a_webhook_settles_a_payment_before_the_customer_comes_back_and_an_abandoned_page_expires(backend) {
        let (app, shop, stripe) = stripe_shop(backend, "processor_page").await;
        let mut change = json!({"transaction_type": "authorization"});
        change["visible_fields"] = json!(["email"]);
        let product = new_product(&app, &shop, change).await;
        let id = product["id"].as_str().unwrap();
        let path = format!("/products/{id}/pay");
        let form = app.open_form(&path).await;
        let session = session_of(&app.submit(&path, &form, &[("email", "ann@example.com")]).await, &stripe);
        assert_eq!(stripe.session(&session).form["payment_intent_data[capture_method]"], "manual");
        stripe.pay_session(&session, "4242424242424242").unwrap();
        let event = stripe.event("checkout.session.completed", stripe.object(&session));
        assert_eq!(stripe.send(&hook(&app, &shop), &event, WEBHOOK_SECRET, Utc::now().timestamp()).await, 200);
        let payment = payment_of(&app, &shop, id).await;
        assert_eq!(payment["status"], "authorized", "without the customer coming back: {payment}");
        let pay_id = payment["id"].as_str().unwrap();
        let (status, captured) = app.post(&shop, &format!("/payments/{pay_id}/capture"), &json!({})).await;
        assert_eq!((status, captured["status"].as_str()), (StatusCode::OK, Some("succeeded")), "{captured}");
        assert_eq!(stripe.intents_of(pay_id)[0].status, "succeeded");

        // Another customer leaves Stripe's page: the session expires, the unit comes back.
        let other = new_product(&app, &shop, json!({"visible_fields": ["email"]})).await;
        let other_id = other["id"].as_str().unwrap();
        let path = format!("/products/{other_id}/pay");
        let form = app.open_form(&path).await;
        let session = session_of(&app.submit(&path, &form, &[("email", "bob@example.com")]).await, &stripe);
        assert_eq!(quantity(&app, &shop, other_id).await, 4);
        stripe.expire_session(&session);
        let expired = stripe.event("checkout.session.expired", stripe.object(&session));
        assert_eq!(stripe.send(&hook(&app, &shop), &expired, WEBHOOK_SECRET, Utc::now().timestamp()).await, 200);
        let payment = payment_of(&app, &shop, other_id).await;
        assert_eq!((payment["status"].as_str(), payment["failure_code"].as_str()), (Some("failed"), Some("payment_expired")));
        assert_eq!(quantity(&app, &shop, other_id).await, 5);
        assert!(stripe.intents_of(payment["id"].as_str().unwrap()).is_empty(), "nothing charged");
    }

    async fn a_plan_paid_on_checkout_keeps_the_card_for_off_session_renewals(backend) {
        let (app, shop, stripe) = stripe_shop(backend, "processor_page").await;
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2026-01-01T10:00:00Z").await;
        let body = json!({"plan": {"id": plan}, "customer": customer_body(), "test_clock": clock});
        let (status, sub) = app.post(&shop, "/subscriptions", &body).await;
        assert_eq!(status, StatusCode::CREATED, "{sub}");
        let id = sub["id"].as_str().unwrap().to_string();
        let card_page = format!("/subscriptions/{id}/pay");
        let form = app.open_form(&card_page).await;
        let session = session_of(&app.submit(&card_page, &form, &[]).await, &stripe);
        let sent = stripe.session(&session).form;
        assert_eq!(sent["payment_intent_data[setup_future_usage]"], "off_session", "the card is saved for renewals");
        assert_eq!(sent["customer_creation"], "always");
        stripe.pay_session(&session, "4242424242424242").unwrap();
        sweep(&app, 3).await;
        let (_, started) = app.get(&shop, &format!("/subscriptions/{id}")).await;
        assert_eq!(started["state"], "active", "{started}");
        assert_eq!(started["card"]["last_4"], "4242");
        // Its first payment lives in the clock's time, all of its times.
        let (_, first) = app.get(&shop, &format!("/payments?subscription={id}")).await;
        let first = &first[0];
        assert!(first["created_at"].as_str().unwrap().starts_with("2026-01-01T10:00"), "{first}");
        assert_eq!((&first["updated_at"], &first["captured_at"]), (&first["created_at"], &first["created_at"]), "{first}");
        let kept = paydesk::db::find_public::<paydesk::db::entities::subscriptions::Entity>(&app.db, &id).await.unwrap().unwrap();
        let token = kept.card_token.clone().unwrap();
        let (customer, method) = token.split_once('/').unwrap();
        assert_eq!(stripe.method(method).unwrap().1.as_deref(), Some(customer), "the card is its Customer's");

        // Renewals: off-session, the saved card, once each (one answer lost on the way).
        advance(&app, &shop, &clock, "2026-02-01T11:00:00Z").await;
        stripe.fail_next_on("payment_intents", &[Fault::BadGatewayAfter]);
        advance(&app, &shop, &clock, "2026-04-01T12:00:00Z").await;
        let renewals: Vec<_> = stripe.intents().into_iter().filter(|i| i.off_session).collect();
        let (_, listed) = app.get(&shop, &format!("/payments?subscription={id}&limit=100")).await;
        assert!(renewals.len() >= 3, "{renewals:?} {listed}");
        for pi in &renewals {
            assert_eq!((pi.status.as_str(), pi.customer.as_deref(), pi.payment_method.as_deref()), ("succeeded", Some(customer), Some(method)));
            let reference = &pi.metadata["paydesk_reference"];
            assert_eq!(stripe.intents_of(reference).len(), 1, "one PaymentIntent per period");
        }
        let (_, list) = app.get(&shop, &format!("/payments?subscription={id}&limit=100")).await;
        assert_eq!(list.as_array().unwrap().len(), renewals.len() + 1);

        // The bank starts asking for the customer: the renewal waits for them at the card link.
        let bank = stripe.attach_card(customer, "4000002760003184");
        set_card(&app, &id, &format!("{customer}/{bank}")).await;
        advance(&app, &shop, &clock, "2026-05-01T12:00:00Z").await;
        let (_, waiting) = app.get(&shop, &format!("/subscriptions/{id}")).await;
        assert_eq!(waiting["state"], "redirecting", "{waiting}");
        assert_eq!(waiting["last_transaction"]["failure_code"], "authentication_required");
        assert_eq!(waiting["renew_at"], Value::Null, "not retried without the customer");
        let asked = stripe.intents().len();
        advance(&app, &shop, &clock, "2026-05-03T12:00:00Z").await;
        assert_eq!(stripe.intents().len(), asked, "no blind retries");
        let form = app.open_form(&card_page).await;
        let session = session_of(&app.submit(&card_page, &form, &[]).await, &stripe);
        stripe.pay_session(&session, "4242424242424242").unwrap();
        app.page(&format!("/payments/{}/return", stripe.session(&session).form["client_reference_id"])).await;
        let (_, back) = app.get(&shop, &format!("/subscriptions/{id}")).await;
        assert_eq!(back["state"], "active", "{back}");
        assert!(back["renew_at"].is_string());
    }

    async fn a_plan_paid_on_checkout_and_settled_from_every_side_at_once_opens_one_subscription(backend) {
        let (app, shop, stripe) = stripe_shop(backend, "processor_page").await;
        let plan = plan(&app, &shop, json!({})).await;
        let path = format!("/plans/{plan}/pay");
        let form = app.open_form(&path).await;
        let session = session_of(&app.submit(&path, &form, &[("email", "ann@example.com")]).await, &stripe);
        // The form sent again (a double click) goes to the same page.
        assert_eq!(session_of(&app.submit(&path, &form, &[("email", "ann@example.com")]).await, &stripe), session);
        stripe.pay_session(&session, "4242424242424242").unwrap();
        let pay_id = stripe.session(&session).form["client_reference_id"].clone();
        let pi = stripe.intents_of(&pay_id)[0].id.clone();
        // The customer's return (twice), three webhooks (two of them the same event) and two
        // sweeps, at once.
        let url = hook(&app, &shop);
        let now = Utc::now().timestamp();
        let completed = stripe.event("checkout.session.completed", stripe.object(&session));
        let succeeded = stripe.event("payment_intent.succeeded", stripe.object(&pi));
        let returns = (0..2).map(|_| async { app.page(&format!("/payments/{pay_id}/return")).await.status.as_u16() });
        let hooks = [&completed, &completed, &succeeded].map(|event| stripe.send(&url, event, WEBHOOK_SECRET, now));
        let (returned, hooked, _) = tokio::join!(
            futures::future::join_all(returns),
            futures::future::join_all(hooks),
            futures::future::join(sweep(&app, 3), sweep(&app, 3))
        );
        assert!(returned.iter().all(|s| *s == 303), "{returned:?}");
        assert!(hooked.iter().all(|s| *s == 200 || *s == 503), "{hooked:?}");
        let (_, subs) = app.get(&shop, "/subscriptions").await;
        assert_eq!(subs.as_array().unwrap().len(), 1, "one subscription: {subs}");
        assert_eq!(subs[0]["state"], "active");
        let (_, customers) = app.get(&shop, "/customers").await;
        assert_eq!(customers.as_array().unwrap().len(), 1);
        assert_eq!(events_of(&app, &shop, "payment.succeeded").await.len(), 1);
        assert_eq!(events_of(&app, &shop, "subscription.created").await.len(), 1);
        assert_eq!(stripe.intents_of(&pay_id).len(), 1);
    }

    async fn a_free_trial_saves_the_card_in_setup_mode_and_charges_after_the_trial(backend) {
        let (app, shop, stripe) = stripe_shop(backend, "processor_page").await;
        let plan = plan(&app, &shop, json!({"trial": {"amount": 0, "interval": 7, "interval_unit": "day"}})).await;
        let clock = clock(&app, &shop, "2026-01-01T10:00:00Z").await;
        let body = json!({"plan": {"id": plan}, "customer": customer_body(), "test_clock": clock});
        let (_, sub) = app.post(&shop, "/subscriptions", &body).await;
        let id = sub["id"].as_str().unwrap().to_string();
        let card_page = format!("/subscriptions/{id}/pay");
        let form = app.open_form(&card_page).await;
        let session = session_of(&app.submit(&card_page, &form, &[]).await, &stripe);
        let opened = stripe.session(&session);
        assert_eq!(opened.form["mode"], "setup", "nothing to pay now");
        let customer = opened.customer.clone().expect("a Customer for the saved card");
        stripe.pay_session(&session, "4242424242424242").unwrap();
        sweep(&app, 3).await;
        let (_, trialing) = app.get(&shop, &format!("/subscriptions/{id}")).await;
        assert_eq!(trialing["state"], "trial", "{trialing}");
        assert!(stripe.intents().is_empty(), "no money moved");
        advance(&app, &shop, &clock, "2026-01-09T10:00:00Z").await;
        let (_, paid) = app.get(&shop, &format!("/subscriptions/{id}")).await;
        assert_eq!(paid["state"], "active", "{paid}");
        let [first] = stripe.intents().try_into().unwrap();
        assert_eq!((first.status.as_str(), first.off_session, first.customer.as_deref()), ("succeeded", true, Some(customer.as_str())));
    }

    async fn every_fault_after_a_charge_was_made_leaves_one_payment_intent(backend) {
        let (app, shop, stripe) = stripe_shop(backend, "paydesk_page").await;
        for fault in [Fault::ServerError, Fault::BadGatewayAfter, Fault::DropAfter, Fault::TooMany, Fault::HoldAfter(HOLD)] {
            let product = new_product(&app, &shop, json!({})).await;
            let id = product["id"].as_str().unwrap();
            stripe.fail_next_on("payment_intents", &[fault]);
            let answered = app.pay(id, "4242424242424242", &[]).await;
            let payment = payment_of(&app, &shop, id).await;
            let pay_id = payment["id"].as_str().unwrap();
            assert_eq!(answered.status, StatusCode::SEE_OTHER, "{fault:?}: {}", answered.html);
            assert_eq!(payment["status"], "processing", "{fault:?}: not guessed");
            assert!(sweep(&app, 3).await >= 1, "{fault:?}");
            assert_eq!(payment_of(&app, &shop, id).await["status"], "succeeded", "{fault:?}");
            assert_eq!(stripe.intents_of(pay_id).len(), 1, "{fault:?}: one PaymentIntent");
            assert_eq!(sweep(&app, 10).await, 0, "{fault:?}: settled for good");
        }
        // Declines by their kind.
        let product = new_product(&app, &shop, json!({})).await;
        let declined = app.pay(product["id"].as_str().unwrap(), "4000000000009995", &[]).await;
        assert_eq!(declined.status, StatusCode::PAYMENT_REQUIRED);
        let payment = payment_of(&app, &shop, product["id"].as_str().unwrap()).await;
        assert_eq!(payment["failure_code"], "insufficient_funds");
    }

    async fn three_d_secure_on_paydesks_page_goes_through_stripes_page_and_back(backend) {
        let (app, shop, stripe) = stripe_shop(backend, "paydesk_page").await;
        let product = new_product(&app, &shop, json!({})).await;
        let id = product["id"].as_str().unwrap();
        let sent = app.pay(id, "4000002760003184", &[]).await;
        let payment = payment_of(&app, &shop, id).await;
        let pay_id = payment["id"].as_str().unwrap();
        let [pi] = stripe.intents_of(pay_id).try_into().unwrap();
        // Confirmed again with paydesk's return address, Stripe gives its page for the bank.
        assert_eq!(pi.return_url.as_deref(), Some(format!("{}/payments/{pay_id}/return", app.state.config.base_url).as_str()));
        assert_eq!((sent.status, sent.location()), (StatusCode::SEE_OTHER, format!("{}/3ds/{}", stripe.url, pi.id).as_str()));
        assert_eq!(payment["status"], "processing");
        stripe.finish_3ds(&pi.id, true);
        let back = app.page(&format!("/payments/{pay_id}/return")).await;
        assert_eq!(back.location(), format!("{}/receipts/{pay_id}", app.state.config.base_url));
        assert_eq!(payment_of(&app, &shop, id).await["status"], "succeeded");
        assert_eq!(stripe.intents_of(pay_id).len(), 1);

        // Failed at the bank: declined, the unit back.
        let other = new_product(&app, &shop, json!({})).await;
        let other_id = other["id"].as_str().unwrap();
        app.pay(other_id, "4000002760003184", &[]).await;
        let pay_id = payment_of(&app, &shop, other_id).await["id"].as_str().unwrap().to_string();
        stripe.finish_3ds(&stripe.intents_of(&pay_id)[0].id, false);
        app.page(&format!("/payments/{pay_id}/return")).await;
        let failed = payment_of(&app, &shop, other_id).await;
        assert_eq!(failed["status"], "failed", "{failed}");
        assert_eq!(quantity(&app, &shop, other_id).await, 5);

        // Left at the bank: after the hour the PaymentIntent is canceled at Stripe (it would
        // not lapse there), and only then does the payment fail.
        let third = new_product(&app, &shop, json!({})).await;
        let third_id = third["id"].as_str().unwrap();
        app.pay(third_id, "4000002760003184", &[]).await;
        let pay_id = payment_of(&app, &shop, third_id).await["id"].as_str().unwrap().to_string();
        sweep(&app, 30).await;
        assert_eq!(payment_of(&app, &shop, third_id).await["status"], "processing", "the customer may still finish");
        sweep(&app, 61).await;
        let expired = payment_of(&app, &shop, third_id).await;
        assert_eq!((expired["status"].as_str(), expired["failure_code"].as_str()), (Some("failed"), Some("payment_expired")));
        assert_eq!(stripe.intents_of(&pay_id)[0].status, "canceled");
        assert_eq!(quantity(&app, &shop, third_id).await, 5);
    }

    async fn calls_that_move_no_money_failing_or_lost_leave_nothing_charged_and_can_be_tried_again(backend) {
        // Stripe's page could not be opened (the session was made, its answer lost): the
        // payment fails, the unit comes back, and the customer starts again.
        let (app, shop, stripe) = stripe_shop(backend, "processor_page").await;
        let product = new_product(&app, &shop, json!({"visible_fields": ["email"]})).await;
        let id = product["id"].as_str().unwrap();
        let path = format!("/products/{id}/pay");
        stripe.fail_next_on("checkout/sessions", &[Fault::DropAfter]);
        let form = app.open_form(&path).await;
        let refused = app.submit(&path, &form, &[("email", "ann@example.com")]).await;
        assert!(refused.status.is_client_error() || refused.status.is_server_error(), "{}", refused.status);
        assert!(!refused.location().contains("/pay/cs_"), "not sent to a page nobody knows of");
        assert!(refused.html.contains("The payment page could not be opened"), "not a failed payment: {}", refused.html);
        assert!(refused.html.contains("nothing was charged"), "{}", refused.html);
        assert_eq!(quantity(&app, &shop, id).await, 5);
        assert!(stripe.intents().is_empty());
        // Stripe reached, answering 500: said as it was.
        stripe.fail_next_on("checkout/sessions", &[Fault::ServerError]);
        let form = app.open_form(&path).await;
        app.submit(&path, &form, &[("email", "ann@example.com")]).await;
        let (_, list) = app.get(&shop, &format!("/payments?product={id}")).await;
        let failed = &list[0];
        assert_eq!(failed["failure_code"], "page_unavailable", "the newest: {list}");
        let message = failed["failure_message"].as_str().unwrap();
        assert!(message.contains("answered with an error") && message.contains("No card was tried"), "{message}");
        assert_eq!(quantity(&app, &shop, id).await, 5);
        let form = app.open_form(&path).await;
        let session = session_of(&app.submit(&path, &form, &[("email", "ann@example.com")]).await, &stripe);
        stripe.pay_session(&session, "4242424242424242").unwrap();
        sweep(&app, 3).await;
        let (_, list) = app.get(&shop, &format!("/payments?product={id}")).await;
        let statuses: Vec<&str> = list.as_array().unwrap().iter().map(|p| p["status"].as_str().unwrap()).collect();
        assert_eq!(statuses.iter().filter(|s| **s == "succeeded").count(), 1, "{statuses:?}");
        assert_eq!(stripe.intents().len(), 1);

        // On paydesk's page: saving the card fails (500) or its attachment is lost; the form
        // says so, nothing is charged, and the next try goes through once.
        let (app, shop, stripe) = stripe_shop(backend, "paydesk_page").await;
        for (part, fault) in [("payment_methods", Fault::ServerError), ("attach", Fault::DropAfter), ("customers", Fault::TooMany)] {
            let product = new_product(&app, &shop, json!({})).await;
            let id = product["id"].as_str().unwrap();
            stripe.fail_next_on(part, &[fault]);
            let refused = app.pay(id, "4242424242424242", &[]).await;
            assert!(refused.status.is_client_error(), "{part}: {}", refused.status);
            assert!(refused.html.contains("could not check this card"), "{part}: the reason is shown");
            assert_eq!(quantity(&app, &shop, id).await, 5, "{part}");
            let paid = app.pay(id, "4242424242424242", &[]).await;
            assert_eq!(paid.status, StatusCode::SEE_OTHER, "{part}: {}", paid.html);
            let payment = payment_of(&app, &shop, id).await;
            assert_eq!(payment["status"], "succeeded", "{part}");
            assert_eq!(stripe.intents_of(payment["id"].as_str().unwrap()).len(), 1, "{part}");
        }
    }

    async fn without_lookups_a_lost_charge_is_replayed_under_its_key_while_stripe_keeps_it(backend) {
        let (app, shop, stripe) = stripe_shop(backend, "paydesk_page").await;
        stripe.without_lookups();
        // Within the key's day: sent again under its key, Stripe answers the first answer.
        let product = new_product(&app, &shop, json!({})).await;
        let id = product["id"].as_str().unwrap();
        stripe.fail_next_on("payment_intents", &[Fault::BadGatewayAfter]);
        app.pay(id, "4242424242424242", &[]).await;
        assert_eq!(payment_of(&app, &shop, id).await["status"], "processing");
        sweep(&app, 3).await;
        let payment = payment_of(&app, &shop, id).await;
        assert_eq!(payment["status"], "succeeded");
        assert_eq!(stripe.intents_of(payment["id"].as_str().unwrap()).len(), 1, "replayed, not made again");
        // Past it, with nothing able to say whether it arrived: unknown, never sent as new.
        let later = new_product(&app, &shop, json!({})).await;
        let later_id = later["id"].as_str().unwrap();
        stripe.fail_next_on("payment_intents", &[Fault::BadGatewayAfter]);
        app.pay(later_id, "4242424242424242", &[]).await;
        let posts = stripe.posts_to("payment_intents");
        sweep(&app, 25 * 60).await;
        assert_eq!(payment_of(&app, &shop, later_id).await["status"], "processing", "not guessed");
        assert_eq!(stripe.posts_to("payment_intents"), posts, "not sent again");
    }

    async fn captures_and_refunds_whose_answers_are_lost_are_replayed_under_their_keys(backend) {
        let (app, shop, stripe) = stripe_shop(backend, "paydesk_page").await;
        let product = new_product(&app, &shop, json!({"transaction_type": "authorization"})).await;
        let id = product["id"].as_str().unwrap();
        assert_eq!(app.pay(id, "4242424242424242", &[]).await.status, StatusCode::SEE_OTHER);
        let held = payment_of(&app, &shop, id).await["id"].as_str().unwrap().to_string();
        stripe.fail_next_on("capture", &[Fault::DropAfter, Fault::BadGatewayAfter]);
        let (status, payment) = app.post(&shop, &format!("/payments/{held}/capture"), &json!({})).await;
        assert_eq!((status, payment["status"].as_str()), (StatusCode::OK, Some("succeeded")), "{payment}");
        assert_eq!(stripe.posts_to("capture"), 3, "sent again under its key, answered the first answer");
        assert_eq!(stripe.intents_of(&held)[0].amount_received, 990);

        stripe.fail_next_on("refunds", &[Fault::BadGatewayAfter]);
        let (status, refund) = app.post(&shop, &format!("/payments/{held}/refund"), &json!({"amount": 300})).await;
        assert_eq!((status, refund["status"].as_str()), (StatusCode::CREATED, Some("pending")), "{refund}");
        let later = Utc::now() + Duration::minutes(2);
        assert_eq!(paydesk::services::refunds::resume_interrupted(&app.state, later).await.unwrap(), 1);
        let (_, refund) = app.get(&shop, &format!("/refunds/{}", refund["id"].as_str().unwrap())).await;
        assert_eq!(refund["status"], "succeeded");
        let given: Vec<i64> = stripe.refunds().iter().map(|r| r.amount).collect();
        assert_eq!(given, [300], "refunded once");
        // Another answer lost: Stripe's refund event (it carries paydesk's reference) settles it.
        stripe.fail_next_on("refunds", &[Fault::DropAfter]);
        let (_, refund) = app.post(&shop, &format!("/payments/{held}/refund"), &json!({"amount": 200})).await;
        assert_eq!(refund["status"], "pending", "{refund}");
        let made = stripe.refunds().last().unwrap().clone();
        let object = json!({"id": made.id, "object": "refund", "amount": 200, "status": "succeeded",
                            "payment_intent": made.payment_intent, "metadata": made.metadata});
        let event = stripe.event("refund.updated", object);
        assert_eq!(stripe.send(&hook(&app, &shop), &event, WEBHOOK_SECRET, Utc::now().timestamp()).await, 200);
        let (_, refund) = app.get(&shop, &format!("/refunds/{}", refund["id"].as_str().unwrap())).await;
        assert_eq!(refund["status"], "succeeded", "{refund}");
        assert_eq!(stripe.refunds().len(), 2, "looked up, not made again");
        // Stripe's own check agrees with paydesk's: no more than is left.
        let (status, _) = app.post(&shop, &format!("/payments/{held}/refund"), &json!({"amount": 491})).await;
        assert!(status.is_client_error());

        // Captured in Stripe's dashboard before paydesk's capture arrives: Stripe refuses the
        // second capture, and the PaymentIntent says it is captured.
        let product = new_product(&app, &shop, json!({"transaction_type": "authorization"})).await;
        let id = product["id"].as_str().unwrap();
        assert_eq!(app.pay(id, "4242424242424242", &[]).await.status, StatusCode::SEE_OTHER);
        let held = payment_of(&app, &shop, id).await["id"].as_str().unwrap().to_string();
        stripe.dashboard_capture(&stripe.intents_of(&held)[0].id);
        let (status, payment) = app.post(&shop, &format!("/payments/{held}/capture"), &json!({})).await;
        assert_eq!((status, payment["status"].as_str()), (StatusCode::OK, Some("succeeded")), "{payment}");
    }

    async fn refunds_and_captures_made_in_stripes_dashboard_show_up_once(backend) {
        let (app, shop, stripe) = stripe_shop(backend, "paydesk_page").await;
        let product = new_product(&app, &shop, json!({})).await;
        let id = product["id"].as_str().unwrap();
        assert_eq!(app.pay(id, "4242424242424242", &[]).await.status, StatusCode::SEE_OTHER);
        let paid = payment_of(&app, &shop, id).await["id"].as_str().unwrap().to_string();
        let pi = stripe.intents_of(&paid)[0].id.clone();
        // Refunded in Stripe's dashboard; the charge.refunded event, sent five times at once.
        stripe.dashboard_refund(&pi, 400);
        let event = stripe.event("charge.refunded", stripe.object(&format!("ch_{pi}")));
        let now = Utc::now().timestamp();
        let url = hook(&app, &shop);
        let sent = futures::future::join_all((0..5).map(|_| stripe.send(&url, &event, WEBHOOK_SECRET, now))).await;
        assert!(sent.iter().all(|s| *s == 200 || *s == 503), "{sent:?}");
        let (_, payment) = app.get(&shop, &format!("/payments/{paid}")).await;
        assert_eq!(payment["refunded_amount"], 400, "{payment}");
        assert_eq!(events_of(&app, &shop, "refund.succeeded").await.len(), 1);
        // A refund paydesk made itself is recorded from Stripe's answer, not from its event.
        let (_, own) = app.post(&shop, &format!("/payments/{paid}/refund"), &json!({"amount": 100})).await;
        let refund = stripe.refunds().last().unwrap().clone();
        assert_eq!(refund.metadata["paydesk_reference"], own["id"].as_str().unwrap());
        let created = json!({"id": refund.id, "object": "refund", "amount": 100, "status": "succeeded",
                             "payment_intent": pi, "metadata": refund.metadata});
        let event = stripe.event("refund.created", created);
        assert_eq!(stripe.send(&hook(&app, &shop), &event, WEBHOOK_SECRET, now).await, 200);
        let (_, payment) = app.get(&shop, &format!("/payments/{paid}")).await;
        assert_eq!(payment["refunded_amount"], 500);

        // Captured in Stripe's dashboard: the authorization moves, once.
        let product = new_product(&app, &shop, json!({"transaction_type": "authorization"})).await;
        let held_product = product["id"].as_str().unwrap();
        assert_eq!(app.pay(held_product, "4242424242424242", &[]).await.status, StatusCode::SEE_OTHER);
        let held = payment_of(&app, &shop, held_product).await["id"].as_str().unwrap().to_string();
        let held_pi = stripe.intents_of(&held)[0].id.clone();
        stripe.dashboard_capture(&held_pi);
        let event = stripe.event("payment_intent.succeeded", stripe.object(&held_pi));
        assert_eq!(stripe.send(&hook(&app, &shop), &event, WEBHOOK_SECRET, now).await, 200);
        assert_eq!(stripe.send(&hook(&app, &shop), &event, WEBHOOK_SECRET, now).await, 200);
        assert_eq!(payment_of(&app, &shop, held_product).await["status"], "succeeded");
        assert_eq!(events_of(&app, &shop, "payment.captured").await.len(), 1);
    }

    async fn a_refund_that_fails_after_its_credit_note_is_billed_again(backend) {
        let (app, shop, stripe) = stripe_shop(backend, "paydesk_page").await;
        crate::invoices::set_seller(&app, &shop).await;
        let product = new_product(&app, &shop, json!({})).await;
        let id = product["id"].as_str().unwrap();
        assert_eq!(app.pay(id, "4242424242424242", &[]).await.status, StatusCode::SEE_OTHER);
        let paid = payment_of(&app, &shop, id).await["id"].as_str().unwrap().to_string();
        let (_, own) = app.post(&shop, &format!("/payments/{paid}/refund"), &json!({"amount": 300})).await;
        assert_eq!(own["status"], "succeeded", "{own}");
        let refund = stripe.refunds().last().unwrap().clone();
        let failed = json!({"id": refund.id, "object": "refund", "amount": 300, "status": "failed",
                            "failure_reason": "expired_or_canceled_card", "payment_intent": refund.payment_intent,
                            "metadata": refund.metadata});
        let event = stripe.event("refund.updated", failed);
        for _ in 0..2 {
            assert_eq!(stripe.send(&hook(&app, &shop), &event, WEBHOOK_SECRET, Utc::now().timestamp()).await, 200);
        }
        let documents = crate::invoices::invoices(&app, &shop, &format!("payment={paid}")).await;
        let [corrective, invoice] = documents.try_into().unwrap();
        assert_eq!((&corrective["invoice_id"], &corrective["total"]), (&invoice["id"], &json!(300)), "{corrective}");
        assert_eq!(corrective["invoice_number"], invoice["number"]);
        // The money is refundable again (the double's charge still counts the failed refund),
        // and what is given back is credited again.
        let (_, again) = app.post(&shop, &format!("/payments/{paid}/refund"), &json!({"amount": 690})).await;
        assert_eq!(again["status"], "succeeded", "{again}");
        let (_, notes) = app.get(&shop, &format!("/credit_notes?invoice={}", invoice["id"].as_str().unwrap())).await;
        let totals: Vec<&Value> = notes.as_array().unwrap().iter().map(|n| &n["total"]).collect();
        assert_eq!(totals, [&json!(690), &json!(300)], "the failed refund's credit taken back, the new one credited");
    }

    async fn webhook_signatures_are_checked_by_time_secret_and_rotation(backend) {
        let (app, shop, stripe) = stripe_shop(backend, "paydesk_page").await;
        let product = new_product(&app, &shop, json!({})).await;
        assert_eq!(app.pay(product["id"].as_str().unwrap(), "4242424242424242", &[]).await.status, StatusCode::SEE_OTHER);
        let pay_id = payment_of(&app, &shop, product["id"].as_str().unwrap()).await["id"].as_str().unwrap().to_string();
        let pi = stripe.intents_of(&pay_id)[0].id.clone();
        let now = Utc::now().timestamp();
        let event = || stripe.event("payment_intent.succeeded", stripe.object(&pi));
        assert_eq!(stripe.send(&hook(&app, &shop), &event(), "whsec_someone_else", now).await, 401);
        assert_eq!(stripe.send(&hook(&app, &shop), &event(), WEBHOOK_SECRET, now - 600).await, 401, "too old");
        assert_eq!(stripe.send(&hook(&app, &shop), &event(), WEBHOOK_SECRET, now + 600).await, 401, "from the future");
        let live = json!({"id": "evt_live", "object": "event", "type": "payment_intent.succeeded", "livemode": true,
                          "data": {"object": stripe.object(&pi)}});
        assert_eq!(stripe.send(&hook(&app, &shop), &live, WEBHOOK_SECRET, now).await, 401, "no live secret: not the test one");
        let unknown = format!("/notifications/stripe/{}", shop.id + 1000);
        let status = app.anon(reqwest::Method::POST, &unknown).body(event().to_string()).send().await.unwrap().status();
        assert_eq!(status, StatusCode::UNAUTHORIZED);

        // The merchant rolls the secret: the old one is still taken for a day, both are shown
        // only by their last characters.
        let rolled = json!({"test": {"webhook_secret": "whsec_rolled_new_secret"}});
        let (status, processor) = app.put(&shop, "/shop/processor", &rolled).await;
        assert_eq!((status, processor["test"]["webhook_secret_last4"].as_str()), (StatusCode::OK, Some("cret")));
        assert_eq!(stripe.send(&hook(&app, &shop), &event(), "whsec_rolled_new_secret", now).await, 200);
        assert_eq!(stripe.send(&hook(&app, &shop), &event(), WEBHOOK_SECRET, now).await, 200, "the rolled secret, within the day");
        assert_eq!(stripe.send(&hook(&app, &shop), &event(), "whsec_someone_else", now).await, 401);
        // Saved again as it is (the settings form sent twice): the rolled secret stays good.
        assert_eq!(app.put(&shop, "/shop/processor", &rolled).await.0, StatusCode::OK);
        assert_eq!(stripe.send(&hook(&app, &shop), &event(), WEBHOOK_SECRET, now).await, 200);
        let tomorrow = Utc::now() + Duration::hours(25);
        let row = paydesk::db::processors::find(&app.db, shop.id).await.unwrap().unwrap();
        let secrets = paydesk::services::processors::webhook_secrets(&app.state, &row, paydesk::domain::processor::Mode::Test, tomorrow);
        assert_eq!(secrets, ["whsec_rolled_new_secret"], "the old secret lapses");
    }

    async fn declines_and_processing_errors_of_renewals_follow_the_retry_table(backend) {
        let (app, shop, stripe) = stripe_shop(backend, "paydesk_page").await;
        let plan = plan(&app, &shop, json!({"number_payment_attempts": 5})).await;
        let clock = clock(&app, &shop, "2026-01-01T10:00:00Z").await;
        let mut subs = Vec::new();
        for number in ["4000000000009995", "4000000000000119"] {
            let body = json!({"plan": {"id": plan}, "customer": customer_body(), "card": card_json("4242424242424242"),
                              "test_clock": clock});
            let (status, sub) = app.post(&shop, "/subscriptions", &body).await;
            assert_eq!(status, StatusCode::CREATED, "{sub}");
            let id = sub["id"].as_str().unwrap().to_string();
            let kept = paydesk::db::find_public::<paydesk::db::entities::subscriptions::Entity>(&app.db, &id).await.unwrap().unwrap();
            let customer = kept.card_token.unwrap().split_once('/').unwrap().0.to_string();
            set_card(&app, &id, &format!("{customer}/{}", stripe.attach_card(&customer, number))).await;
            subs.push(id);
        }
        advance(&app, &shop, &clock, "2026-02-01T12:30:00Z").await;
        let (_, declined) = app.get(&shop, &format!("/subscriptions/{}", subs[0])).await;
        let (_, errored) = app.get(&shop, &format!("/subscriptions/{}", subs[1])).await;
        assert_eq!(declined["last_transaction"]["failure_code"], "insufficient_funds", "{declined}");
        assert_eq!(errored["last_transaction"]["failure_code"], "processing_error", "{errored}");
        let at = |s: &Value| chrono::DateTime::parse_from_rfc3339(s["renew_at"].as_str().unwrap()).unwrap();
        let now = chrono::DateTime::parse_from_rfc3339("2026-02-01T12:30:00Z").unwrap();
        assert!(at(&errored) - now <= Duration::hours(1), "an error is tried again within the hour: {errored}");
        assert!(at(&declined) - now > Duration::hours(1), "a decline waits for the next day: {declined}");
    }

    async fn a_subscriber_in_the_retries_pays_the_overdue_period_on_checkout_once_and_the_engine_waits_for_the_page(backend) {
        let (app, shop, stripe) = stripe_shop(backend, "processor_page").await;
        let plan = plan(&app, &shop, json!({"number_payment_attempts": 5})).await;
        let clock = clock(&app, &shop, "2026-01-01T10:00:00Z").await;
        let (id, customer, _) = started_on_checkout(&app, &shop, &stripe, &plan, &clock, "4000000000009995").await;
        advance(&app, &shop, &clock, "2026-02-01T11:00:00Z").await;
        let (_, failing) = app.get(&shop, &format!("/subscriptions/{id}")).await;
        assert_eq!(failing["state"], "failed_attempt", "{failing}");
        let declined = stripe.intents().len();

        // From the subscriber's page to the pay page, which now leads to Stripe's.
        let mut ann = Visitor::default();
        let home = open(&app, &mut ann, &minted(&app, &shop, &customer).await).await;
        let pay_path = format!("/subscriptions/{id}/pay");
        assert!(home.html.contains(&pay_path), "{}", home.html);
        let page = app.page(&pay_path).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.html);
        assert!(!page.html.contains("card_number"), "the card is typed on Stripe's page");
        let form = app.open_form(&pay_path).await;
        let session = session_of(&app.submit(&pay_path, &form, &[]).await, &stripe);
        let sent = stripe.session(&session).form;
        assert_eq!((sent["mode"].as_str(), sent["line_items[0][price_data][unit_amount]"].as_str()), ("payment", "990"));
        assert_eq!(sent["payment_intent_data[setup_future_usage]"], "off_session", "the new card pays the next periods");
        // Another tab goes to the same page.
        let again = app.open_form(&pay_path).await;
        assert_eq!(session_of(&app.submit(&pay_path, &again, &[]).await, &stripe), session);

        // The next retry falls due while the page is open: the saved card is not charged.
        advance(&app, &shop, &clock, "2026-02-06T12:00:00Z").await;
        assert_eq!(stripe.intents().len(), declined, "no retry while the subscriber is on Stripe's page");
        let (_, waiting) = app.get(&shop, &format!("/subscriptions/{id}")).await;
        assert_eq!(waiting["state"], "failed_attempt", "{waiting}");

        // Paid; the return, a webhook, a sweep and the engine's next run all at once: one charge.
        stripe.pay_session(&session, "5555555555554444").unwrap();
        let pay_id = stripe.session(&session).form["client_reference_id"].clone();
        let event = stripe.event("checkout.session.completed", stripe.object(&session));
        let (return_path, url) = (format!("/payments/{pay_id}/return"), hook(&app, &shop));
        let (returned, hooked, _, _) = tokio::join!(
            app.page(&return_path),
            stripe.send(&url, &event, WEBHOOK_SECRET, Utc::now().timestamp()),
            sweep(&app, 3),
            advance(&app, &shop, &clock, "2026-02-07T12:00:00Z")
        );
        assert_eq!(returned.status, StatusCode::SEE_OTHER);
        assert!(hooked == 200 || hooked == 503, "{hooked}");
        let (_, paid) = app.get(&shop, &format!("/subscriptions/{id}")).await;
        assert_eq!(paid["state"], "active", "{paid}");
        assert_eq!(paid["card"]["last_4"], "4444");
        assert_eq!(paid["last_transaction"]["id"], pay_id.as_str());
        assert_eq!(stripe.intents().len(), declined + 1, "one charge for the period");
        assert_eq!(events_of(&app, &shop, "subscription.card_updated").await.len(), 1);
        let (_, payments) = app.get(&shop, &format!("/payments?subscription={id}&limit=100")).await;
        let succeeded = payments.as_array().unwrap().iter().filter(|p| p["status"] == "succeeded").count();
        assert_eq!(succeeded, 2, "the first period and the overdue one: {payments}");

        // The next period is charged off-session to the new card.
        advance(&app, &shop, &clock, "2026-03-02T12:00:00Z").await;
        let renewal = stripe.intents().into_iter().last().unwrap();
        assert!(renewal.off_session && renewal.status == "succeeded", "{renewal:?}");
        assert_eq!(stripe.method(renewal.payment_method.as_deref().unwrap()).unwrap().0, "5555555555554444");
    }

    async fn an_overdue_page_left_unpaid_lets_the_retries_go_on_with_the_saved_card(backend) {
        let (app, shop, stripe) = stripe_shop(backend, "processor_page").await;
        let plan = plan(&app, &shop, json!({"number_payment_attempts": 5})).await;
        let clock = clock(&app, &shop, "2026-01-01T10:00:00Z").await;
        let (id, _, stripe_customer) = started_on_checkout(&app, &shop, &stripe, &plan, &clock, "4000000000009995").await;
        advance(&app, &shop, &clock, "2026-02-01T11:00:00Z").await;
        let pay_path = format!("/subscriptions/{id}/pay");
        let form = app.open_form(&pay_path).await;
        let session = session_of(&app.submit(&pay_path, &form, &[]).await, &stripe);
        // Declined on the page, then abandoned: the page expires at Stripe.
        assert!(stripe.pay_session(&session, "4000000000000341").is_err());
        stripe.expire_session(&session);
        // The bank now takes the saved card: the next retry charges it.
        set_card(&app, &id, &format!("{stripe_customer}/{}", stripe.attach_card(&stripe_customer, "4242424242424242"))).await;
        advance(&app, &shop, &clock, "2026-02-06T12:00:00Z").await;
        let (_, paid) = app.get(&shop, &format!("/subscriptions/{id}")).await;
        assert_eq!(paid["state"], "active", "{paid}");
        let pay_id = stripe.session(&session).form["client_reference_id"].clone();
        let (_, page_payment) = app.get(&shop, &format!("/payments/{pay_id}")).await;
        assert_eq!(page_payment["status"], "failed", "{page_payment}");
        assert!(events_of(&app, &shop, "subscription.card_updated").await.is_empty());
    }

    async fn a_subscriber_saves_a_new_card_on_checkout_in_setup_mode_and_the_next_renewal_uses_it(backend) {
        let (app, shop, stripe) = stripe_shop(backend, "processor_page").await;
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2026-01-01T10:00:00Z").await;
        let (id, customer, _) = started_on_checkout(&app, &shop, &stripe, &plan, &clock, "4242424242424242").await;
        let mut ann = Visitor::default();
        let home = open(&app, &mut ann, &minted(&app, &shop, &customer).await).await;
        let card_path = format!("/portal/subscriptions/{id}/card");
        assert!(home.html.contains(&card_path), "{}", home.html);
        let page = ann.get(&app, &card_path).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.html);
        assert!(page.html.contains("secure page") && !page.html.contains("card_number"), "{}", page.html);
        let to_stripe = ann.post(&app, &card_path, &[]).await;
        let session = session_of(&to_stripe, &stripe);
        let opened = stripe.session(&session);
        assert_eq!(opened.form["mode"], "setup", "nothing is charged");
        // Pressed twice: the same page.
        assert_eq!(session_of(&ann.post(&app, &card_path, &[]).await, &stripe), session);
        let intents = stripe.intents().len();
        stripe.pay_session(&session, "5555555555554444").unwrap();
        let pay_id = opened.form["client_reference_id"].clone();
        let return_path = format!("/payments/{pay_id}/return");
        let (back, _, _) = tokio::join!(ann.get(&app, &return_path), sweep(&app, 3), sweep(&app, 3));
        assert_eq!(back.location(), "/portal/home?done=card");
        let home = ann.get(&app, "/portal/home?done=card").await;
        assert!(home.html.contains("Your new card is saved") && home.html.contains("4444"), "{}", home.html);
        assert_eq!(stripe.intents().len(), intents, "no money moved");
        let (_, saved) = app.get(&shop, &format!("/subscriptions/{id}")).await;
        assert_eq!((saved["state"].as_str(), saved["card"]["last_4"].as_str()), (Some("active"), Some("4444")), "{saved}");
        assert_eq!(events_of(&app, &shop, "subscription.card_updated").await.len(), 1);
        // Coming back again changes nothing.
        ann.get(&app, &format!("/payments/{pay_id}/return")).await;
        sweep(&app, 10).await;
        assert_eq!(events_of(&app, &shop, "subscription.card_updated").await.len(), 1);
        advance(&app, &shop, &clock, "2026-02-01T12:00:00Z").await;
        let renewal = stripe.intents().into_iter().last().unwrap();
        assert!(renewal.off_session && renewal.status == "succeeded", "{renewal:?}");
        assert_eq!(stripe.method(renewal.payment_method.as_deref().unwrap()).unwrap().0, "5555555555554444");

        // Stripe down when the page is asked for: the subscriber is told, nothing changes.
        stripe.fail_next_on("checkout/sessions", &[Fault::ServerError]);
        let down = ann.post(&app, &card_path, &[]).await;
        assert_eq!(down.location(), "/portal/home?done=card_failed");
        let home = ann.get(&app, "/portal/home?done=card_failed").await;
        assert!(home.html.contains("The new card was not saved"), "{}", home.html);

        // A card the page does not take leaves the current one.
        let to_stripe = ann.post(&app, &card_path, &[]).await;
        let session = session_of(&to_stripe, &stripe);
        stripe.expire_session(&session);
        let back = ann.get(&app, &format!("/payments/{}/return", stripe.session(&session).form["client_reference_id"])).await;
        assert_eq!(back.location(), "/portal/home?done=card_failed");
        let (_, kept) = app.get(&shop, &format!("/subscriptions/{id}")).await;
        assert_eq!(kept["card"]["last_4"], "4444");
    }

    async fn an_overdue_page_paid_without_coming_back_is_found_by_the_next_retry_and_none_opens_while_the_engine_bills(backend) {
        let (app, shop, stripe) = stripe_shop(backend, "processor_page").await;
        let plan = plan(&app, &shop, json!({"number_payment_attempts": 5})).await;
        let clock = clock(&app, &shop, "2026-01-01T10:00:00Z").await;
        let (id, _, _) = started_on_checkout(&app, &shop, &stripe, &plan, &clock, "4000000000009995").await;
        advance(&app, &shop, &clock, "2026-02-01T11:00:00Z").await;
        let declined = stripe.intents().len();
        let pay_path = format!("/subscriptions/{id}/pay");

        // An engine holds the subscription: no page opens, and the attempt is closed.
        use paydesk::db::entities::subscriptions::{Column, Entity};
        use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, sea_query::Expr};
        let hold = |until: Option<chrono::DateTime<Utc>>| {
            Entity::update_many()
                .col_expr(Column::ClaimToken, Expr::value(until.map(|_| "engine")))
                .col_expr(Column::ClaimedUntil, Expr::value(until))
                .filter(Column::Id.eq(id.as_str()))
        };
        hold(Some(Utc::now() + Duration::minutes(5))).exec(&app.db).await.unwrap();
        let form = app.open_form(&pay_path).await;
        let busy = app.submit(&pay_path, &form, &[]).await;
        assert_eq!(busy.status, StatusCode::CONFLICT, "{}", busy.html);
        let (_, payments) = app.get(&shop, &format!("/payments?subscription={id}&limit=100")).await;
        let closed = &payments[0];
        assert_eq!((closed["status"].as_str(), closed["failure_code"].as_str()), (Some("error"), Some("processing_error")), "{closed}");
        hold(None).exec(&app.db).await.unwrap();
        // Stripe made the page but its answer was lost: nobody was sent there; the next form opens another.
        stripe.fail_next_on("checkout/sessions", &[Fault::BadGatewayAfter]);
        let form = app.open_form(&pay_path).await;
        let lost = app.submit(&pay_path, &form, &[]).await;
        assert_eq!(lost.status, StatusCode::PAYMENT_REQUIRED, "{}", lost.html);

        // Paid on Stripe's page; the customer never comes back and no webhook arrives.
        let form = app.open_form(&pay_path).await;
        let session = session_of(&app.submit(&pay_path, &form, &[]).await, &stripe);
        stripe.pay_session(&session, "5555555555554444").unwrap();
        advance(&app, &shop, &clock, "2026-02-06T12:00:00Z").await;
        let (_, paid) = app.get(&shop, &format!("/subscriptions/{id}")).await;
        assert_eq!((paid["state"].as_str(), paid["card"]["last_4"].as_str()), (Some("active"), Some("4444")), "{paid}");
        assert_eq!(stripe.intents().len(), declined + 1, "the page's charge only");
        assert_eq!(events_of(&app, &shop, "subscription.card_updated").await.len(), 1);
    }

    async fn two_pages_paid_for_one_overdue_period_charge_it_once_and_the_second_is_set_aside(backend) {
        let (app, shop, stripe) = stripe_shop(backend, "processor_page").await;
        let plan = plan(&app, &shop, json!({"number_payment_attempts": 5})).await;
        let clock = clock(&app, &shop, "2026-01-01T10:00:00Z").await;
        let (id, _, _) = started_on_checkout(&app, &shop, &stripe, &plan, &clock, "4000000000009995").await;
        advance(&app, &shop, &clock, "2026-02-01T11:00:00Z").await;
        let pay_path = format!("/subscriptions/{id}/pay");
        let first = session_of(&app.submit(&pay_path, &app.open_form(&pay_path).await, &[]).await, &stripe);
        // A second page for the same period, as two tabs opening at once can make.
        use paydesk::db::entities::payments::{Column, Entity};
        use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, sea_query::Expr};
        let first_id = stripe.session(&first).form["client_reference_id"].clone();
        let hide = |token: Option<String>| {
            Entity::update_many().col_expr(Column::CheckoutToken, Expr::value(token)).filter(Column::Id.eq(first_id.as_str()))
        };
        hide(None).exec(&app.db).await.unwrap();
        let second = session_of(&app.submit(&pay_path, &app.open_form(&pay_path).await, &[]).await, &stripe);
        assert_ne!(first, second);
        hide(Some(first.clone())).exec(&app.db).await.unwrap();
        stripe.pay_session(&first, "4242424242424242").unwrap();
        stripe.pay_session(&second, "5555555555554444").unwrap();
        let second_id = stripe.session(&second).form["client_reference_id"].clone();
        let (first_return, second_return) = (format!("/payments/{first_id}/return"), format!("/payments/{second_id}/return"));
        let (a, b, _, _) = tokio::join!(
            app.page(&first_return),
            app.page(&second_return),
            sweep(&app, 3),
            advance(&app, &shop, &clock, "2026-02-03T12:00:00Z")
        );
        assert!(a.status == StatusCode::SEE_OTHER && b.status == StatusCode::SEE_OTHER, "{} {}", a.status, b.status);
        sweep(&app, 10).await;
        let (_, paid) = app.get(&shop, &format!("/subscriptions/{id}")).await;
        assert_eq!(paid["state"], "active", "{paid}");
        let mut keys = Vec::new();
        for p in [&first_id, &second_id] {
            keys.push(stored(&app, p).await.billing_key);
        }
        let charged = keys.iter().filter(|k| k.as_deref().is_some_and(|k| !k.contains(":stray:"))).count();
        let set_aside = keys.iter().filter(|k| k.as_deref().is_some_and(|k| k.contains(":stray:"))).count();
        assert_eq!((charged, set_aside), (1, 1), "{keys:?}");
        // The next period is charged once, and no sweep takes the stray again.
        advance(&app, &shop, &clock, "2026-03-04T12:00:00Z").await;
        let (_, payments) = app.get(&shop, &format!("/payments?subscription={id}&limit=100")).await;
        let succeeded = payments.as_array().unwrap().iter().filter(|p| p["status"] == "succeeded").count();
        assert_eq!(succeeded, 4, "the first period, both pages (one to refund), the third period: {payments}");
    }
}
