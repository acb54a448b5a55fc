//! Answers lost under every fault, captures and refunds replayed under their keys or made in
//! Stripe's dashboard, and webhook signatures.

use super::*;

backend_tests! {
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
}
