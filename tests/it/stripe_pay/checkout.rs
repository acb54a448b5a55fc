//! Products and plans paid on Checkout: the outcome read from Stripe, webhooks before the
//! return, cards kept for renewals, free trials in setup mode, 3-D Secure.

use super::*;

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
        let id = awaiting_card(&app, &shop, &plan, &clock).await;
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
        let id = awaiting_card(&app, &shop, &plan, &clock).await;
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
}
