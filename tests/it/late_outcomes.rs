//! Outcomes that come late: a refund Stripe accepted and then could not make, a refund whose
//! answer was lost past the window a resend is safe in (looked up, never sent again), and a
//! bank check finished after paydesk ended its payment at the hour.

use chrono::{Duration, Utc};
use reqwest::StatusCode;
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde_json::json;

use crate::bepaid_pay::events_of;
use crate::doubles::stripe::Fault;
use crate::helpers::*;
use crate::stripe_disputes::{notify, pay_one};
use crate::stripe_pay::stripe_shop;

/// Makes the refund `id` two days old, last looked at then.
async fn age_refund(app: &TestApp, id: &str) {
    use paydesk::db::entities::refunds;
    let long_ago = paydesk::db::now_millis(Utc::now() - Duration::days(2));
    refunds::Entity::update_many()
        .col_expr(refunds::Column::CreatedAt, Expr::value(long_ago))
        .col_expr(refunds::Column::UpdatedAt, Expr::value(long_ago))
        .filter(refunds::Column::Id.eq(id))
        .exec(&app.db)
        .await
        .unwrap();
}

backend_tests! {
    async fn a_refund_that_fails_after_stripe_accepted_it_gives_the_amount_back_to_refund(backend) {
        let (app, shop, stripe) = stripe_shop(backend, "paydesk_page").await;
        let (payment, _) = pay_one(&app, &shop, &stripe).await;
        let (status, refund) = app.post(&shop, &format!("/payments/{payment}/refund"), &json!({"amount": 400})).await;
        assert_eq!((status, refund["status"].clone()), (StatusCode::CREATED, json!("succeeded")), "{refund}");
        let at_stripe = stripe.refunds().last().unwrap().id.clone();
        let failed = stripe.fail_refund(&at_stripe);
        notify(&app, &shop, &stripe, "refund.updated", failed.clone(), 3).await;
        notify(&app, &shop, &stripe, "charge.refund.updated", failed, 1).await;
        let (_, refund) = app.get(&shop, &format!("/refunds/{}", refund["id"].as_str().unwrap())).await;
        assert_eq!((refund["status"].clone(), refund["failure_code"].clone()), (json!("failed"), json!("refund_failed")));
        assert!(refund["failure_message"].as_str().unwrap().contains("expired or canceled card"), "{refund}");
        let (_, paid) = app.get(&shop, &format!("/payments/{payment}")).await;
        assert_eq!((paid["status"].clone(), paid["refunded_amount"].clone()), (json!("succeeded"), json!(0)));
        assert_eq!(events_of(&app, &shop, "refund.failed").await.len(), 1);
        // The whole amount can be refunded again.
        let (status, again) = app.post(&shop, &format!("/payments/{payment}/refund"), &json!({})).await;
        assert_eq!((status, again["amount"].clone()), (StatusCode::CREATED, json!(990)), "{again}");
    }

    async fn a_stripe_refund_whose_answer_was_lost_is_looked_up_past_the_replay_window(backend) {
        let (app, shop, stripe) = stripe_shop(backend, "paydesk_page").await;
        let (payment, _) = pay_one(&app, &shop, &stripe).await;
        // Made at Stripe, its answer dropped, and every lookup within the window fails too.
        stripe.fail_next_on("/v1/refunds", &[Fault::DropAfter]);
        let (status, pending) = app.post(&shop, &format!("/payments/{payment}/refund"), &json!({"amount": 300})).await;
        assert_eq!((status, pending["status"].clone()), (StatusCode::CREATED, json!("pending")), "{pending}");
        let id = pending["id"].as_str().unwrap().to_string();
        age_refund(&app, &id).await;
        paydesk::services::refunds::resume_interrupted(&app.state, Utc::now()).await.unwrap();
        let (_, refund) = app.get(&shop, &format!("/refunds/{id}")).await;
        assert_eq!(refund["status"], "succeeded", "{refund}");
        assert_eq!(stripe.refunds().len(), 1, "looked up, never sent again");
        let (_, paid) = app.get(&shop, &format!("/payments/{payment}")).await;
        assert_eq!(paid["refunded_amount"], 300);
    }
}

db_tests! {
    async fn a_refund_the_processor_never_received_fails_past_the_replay_window(app) {
        let shop = app.shop("Books").await;
        let product = app.product(&shop, &test_product_body()).await;
        let pid = product["id"].as_str().unwrap();
        app.pay(pid, cards::SUCCESS, &[]).await;
        let (_, payments) = app.get(&shop, &format!("/payments?product={pid}")).await;
        let payment_id = payments[0]["id"].as_str().unwrap().to_string();
        // A refund whose request stopped before it reached the processor, two days ago.
        use paydesk::db::entities::payments;
        let payment = paydesk::db::find_public::<payments::Entity>(&app.db, &payment_id).await.unwrap().unwrap();
        let ask = paydesk::domain::refund::RefundAsk { amount: Some(500), ..Default::default() };
        let refund = paydesk::db::refunds::begin(&app.db, &payment, &ask, 500, Utc::now()).await.unwrap().unwrap();
        age_refund(&app, &refund.id).await;
        for _ in 0..2 {
            paydesk::services::refunds::resume_interrupted(&app.state, Utc::now()).await.unwrap();
        }
        let (_, failed) = app.get(&shop, &format!("/refunds/{}", refund.id)).await;
        assert_eq!((failed["status"].clone(), failed["failure_code"].clone()), (json!("failed"), json!("refund_failed")));
        let (_, paid) = app.get(&shop, &format!("/payments/{payment_id}")).await;
        assert_eq!((paid["status"].clone(), paid["refunded_amount"].clone()), (json!("succeeded"), json!(0)));
        assert_eq!(events_of(&app, &shop, "refund.failed").await.len(), 1);
        let (status, again) = app.post(&shop, &format!("/payments/{payment_id}/refund"), &json!({})).await;
        assert_eq!((status, again["amount"].clone()), (StatusCode::CREATED, json!(990)), "the hold was released");
    }
}

db_tests! {
    async fn a_bank_check_finished_after_the_hour_is_recorded_paid_or_else_refunded(app) {
        use crate::bepaid_pay::{bepaid_shop, new_product, payment_of, quantity, sweep};
        let (shop, gateway) = bepaid_shop(&app).await;
        // Kept: the product still has units, and one is taken again.
        let product = new_product(&app, &shop, json!({})).await;
        let id = product["id"].as_str().unwrap();
        app.pay(id, "4012000000001097", &[]).await;
        let charge = gateway.transactions().last().unwrap().uid.clone();
        sweep(&app, 61).await;
        assert_eq!(payment_of(&app, &shop, id).await["failure_code"], "payment_expired");
        assert_eq!(quantity(&app, &shop, id).await, 5);
        gateway.finish_3ds(&charge, true);
        let sent = futures::future::join_all((0..3).map(|_| gateway.notify(&charge, false))).await;
        assert!(sent.iter().all(|s| *s == 200), "{sent:?}");
        let paid = payment_of(&app, &shop, id).await;
        assert_eq!((paid["status"].clone(), paid["failure_code"].clone()), (json!("succeeded"), json!(null)), "{paid}");
        assert_eq!(quantity(&app, &shop, id).await, 4, "its unit taken again, once");
        assert_eq!(events_of(&app, &shop, "payment.succeeded").await.len(), 1);

        // Too late: the last unit was sold meanwhile, so the money goes back at once.
        let last = new_product(&app, &shop, json!({"quantity": 1})).await;
        let last_id = last["id"].as_str().unwrap();
        app.pay(last_id, "4012000000001097", &[]).await;
        let late = gateway.transactions().last().unwrap().uid.clone();
        sweep(&app, 61).await;
        app.pay(last_id, "4200000000000000", &[]).await;
        assert_eq!(quantity(&app, &shop, last_id).await, 0);
        gateway.finish_3ds(&late, true);
        for _ in 0..2 {
            assert_eq!(gateway.notify(&late, false).await, 200);
        }
        let (_, payments) = app.get(&shop, &format!("/payments?product={last_id}")).await;
        let refunded: Vec<_> = payments.as_array().unwrap().iter().filter(|p| p["status"] == "refunded").collect();
        assert_eq!(refunded.len(), 1, "{payments}");
        let refunds = gateway.transactions().into_iter().filter(|t| t.kind == "refund" && t.parent_uid.as_deref() == Some(late.as_str())).count();
        assert_eq!(refunds, 1, "refunded once at the processor");
        assert_eq!(quantity(&app, &shop, last_id).await, 0, "the unit stays with its buyer");
    }
}

db_tests! {
    async fn a_late_bank_check_that_no_notification_tells_is_found_by_the_look_hours_later(app) {
        use crate::bepaid_pay::{bepaid_shop, new_product, payment_of, quantity, sweep};
        let (shop, gateway) = bepaid_shop(&app).await;
        let product = new_product(&app, &shop, json!({})).await;
        let id = product["id"].as_str().unwrap();
        app.pay(id, "4012000000001097", &[]).await;
        let charge = gateway.transactions().last().unwrap().uid.clone();
        sweep(&app, 61).await;
        assert_eq!(payment_of(&app, &shop, id).await["failure_code"], "payment_expired");
        gateway.finish_3ds(&charge, true);
        // Not yet: the look comes hours after the payment ended.
        let soon = paydesk::services::notifications::recheck_ended(&app.state, Utc::now() + Duration::hours(2)).await.unwrap();
        assert_eq!(soon, 0);
        let later = Utc::now() + Duration::hours(8);
        let looked = futures::future::join_all((0..3).map(|_| paydesk::services::notifications::recheck_ended(&app.state, later))).await;
        assert_eq!(looked.into_iter().map(Result::unwrap).sum::<usize>(), 1, "looked up once");
        assert_eq!(payment_of(&app, &shop, id).await["status"], "succeeded");
        assert_eq!(quantity(&app, &shop, id).await, 4);
        assert_eq!(paydesk::services::notifications::recheck_ended(&app.state, later).await.unwrap(), 0);
    }
}

backend_tests! {
    async fn the_owners_are_mailed_once_of_a_refund_that_failed_after_it_was_accepted(backend) {
        use crate::doubles::smtp::Smtp;
        use crate::doubles::stripe::{SECRET, StripeDouble, WEBHOOK_SECRET};
        use crate::mails::{address, flush};
        let server = Smtp::shared().await;
        let stripe = StripeDouble::start().await;
        let args = paydesk::config::ConfigArgs {
            stripe_api_url: Some(stripe.url.clone()),
            processor_timeout_seconds: Some("2".into()),
            smtp_url: Some(server.url()),
            ..Default::default()
        };
        let app = TestApp::spawn_with(backend, args).await;
        let ann = address("ann");
        let owner = crate::dashboard::sign_up(&app, "Books", &ann).await;
        let shop = crate::dashboard::api_shop(&owner).await;
        let body = json!({"kind": "stripe", "card_entry": "paydesk_page", "test": {"secret_key": SECRET, "webhook_secret": WEBHOOK_SECRET}});
        assert_eq!(app.put(&shop, "/shop/processor", &body).await.0, StatusCode::OK);
        let (payment, _) = pay_one(&app, &shop, &stripe).await;
        let (_, refund) = app.post(&shop, &format!("/payments/{payment}/refund"), &json!({"amount": 400})).await;
        assert_eq!(refund["status"], "succeeded", "{refund}");
        let failed = stripe.fail_refund(&stripe.refunds().last().unwrap().id.clone());
        notify(&app, &shop, &stripe, "refund.updated", failed, 3).await;
        flush(&app).await;
        server.wait_for(&ann, 3).await;
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        flush(&app).await;
        let mails: Vec<_> = server.received(&ann).into_iter().filter(|m| m.subject.contains("refund of")).collect();
        assert_eq!(mails.len(), 1, "{:?}", server.received(&ann).iter().map(|m| m.subject.clone()).collect::<Vec<_>>());
        assert!(mails[0].subject.contains("€4.00") && mails[0].text.contains(&format!("/dashboard/payments/{payment}")), "{}", mails[0].text);
    }
}
