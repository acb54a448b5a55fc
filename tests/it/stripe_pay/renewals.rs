//! Renewals: the retry table, overdue periods paid on Checkout, and new cards saved there.

use super::*;

backend_tests! {
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
            saved_card_behaves_as(&app, &stripe, &id, number).await;
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
