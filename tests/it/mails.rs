//! Subscriber mails through a real SMTP server (aiosmtpd): each kind sent once at its
//! moment, in the page's language, with working links; kinds turned off send nothing; an
//! SMTP server that is down, slow or refusing loses nothing and sends nothing twice but the
//! one mail whose answer was lost, under the same Message-ID.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::doubles::smtp::{self, Smtp};
use crate::helpers::*;
use crate::subscriptions::{advance, clock, make_card, plan};
use paydesk::config::ConfigArgs;

/// An app that sends mail through `server`.
pub async fn mailing_app(backend: Backend, smtp_url: String) -> TestApp {
    TestApp::spawn_with(backend, ConfigArgs { smtp_url: Some(smtp_url), ..Default::default() }).await
}

/// A recipient of this test's own: `who-RANDOM+tag@…` from `who+tag` (the tag picks the
/// server's faults).
pub fn address(who: &str) -> String {
    let (name, tag) = who.split_once('+').map_or((who, String::new()), |(n, t)| (n, format!("+{t}")));
    format!("{name}-{}{tag}@example.com", paydesk::domain::ids::random_hex(4))
}

/// Sends what is due now (the worker runs too; this makes it happen at once).
pub async fn flush(app: &TestApp) {
    paydesk::services::mail::send_due(&app.state, chrono::Utc::now()).await.unwrap();
}

/// Subscribes `email` to `plan` on `clock` with a card.
pub async fn subscribe_as(app: &TestApp, shop: &Shop, plan: &str, clock: &str, email: &str, number: &str) -> Value {
    let body = json!({"plan": {"id": plan}, "customer": {"email": email, "ip": "203.0.113.9"},
                      "card": crate::subscriptions::card_json(number), "test_clock": clock});
    let (status, sub) = app.post(shop, "/subscriptions", &body).await;
    assert_eq!(status, StatusCode::CREATED, "{sub}");
    sub
}

/// The shop's mails as the database holds them: (kind, status, to).
async fn outbox(app: &TestApp) -> Vec<(String, String, Option<String>)> {
    use sea_orm::{EntityTrait, QueryOrder};
    paydesk::db::entities::mails::Entity::find()
        .order_by_asc(paydesk::db::entities::mails::Column::Seq)
        .all(&app.db)
        .await
        .unwrap()
        .into_iter()
        .map(|m| (m.kind.to_string(), m.status.to_string(), m.to_address))
        .collect()
}

backend_tests! {
    async fn a_product_payment_and_its_refund_each_send_one_receipt(backend) {
        let server = Smtp::shared().await;
        let app = mailing_app(backend, server.url()).await;
        let shop = app.shop("Corner Books").await;
        crate::invoices::set_seller(&app, &shop).await;
        let mut body = product_body();
        body["visible_fields"] = json!(["email"]);
        body["test"] = json!(true);
        // A page in a language the mails are not written in: the mail is English, its date too.
        body["language"] = json!("de");
        let (status, product) = app.post(&shop, "/products", &body).await;
        assert_eq!(status, StatusCode::CREATED, "{product}");
        let to = address("ann");
        let paid = app.pay(product["id"].as_str().unwrap(), cards::SUCCESS, &[("email", to.as_str())]).await;
        assert_eq!(paid.status, StatusCode::SEE_OTHER, "{}", paid.html);
        flush(&app).await;
        let got = server.wait_for(&to, 1).await;
        let receipt = &got[0];
        assert_eq!(receipt.subject, "[TEST] Your receipt from Corner Books");
        assert!(receipt.from.contains("Corner Books") && receipt.from.contains("no-reply@"), "{}", receipt.from);
        assert_eq!(receipt.to, to);
        assert!(receipt.text.contains("Corner Books received your payment of €9.90 for Gift card."), "{}", receipt.text);
        assert!(receipt.text.contains("This is a test mail"), "{}", receipt.text);
        let month = chrono::Utc::now().format("%B").to_string();
        assert!(receipt.text.contains(&month), "the date in English: {}", receipt.text);
        assert!(receipt.html.contains("€9.90") && receipt.html.contains("<h1"), "{}", receipt.html);
        assert_eq!(receipt.headers.get("auto-submitted").map(String::as_str), Some("auto-generated"));
        assert!(receipt.message_id.starts_with("<mail_") && receipt.message_id.ends_with(">"), "{}", receipt.message_id);
        // Its link opens the payment's receipt page.
        let link = receipt.text.lines().find_map(|l| l.strip_prefix("View the receipt: ")).unwrap();
        let page = app.client.get(link).send().await.unwrap();
        assert_eq!(page.status(), StatusCode::OK);
        assert!(page.text().await.unwrap().contains("€9.90"));
        // It names the invoice and links its PDF.
        assert!(receipt.text.contains("Invoice: TEST-INV-000001"), "{}", receipt.text);
        let pdf = receipt.text.lines().find_map(|l| l.strip_prefix("TEST-INV-000001 as a PDF: ")).unwrap();
        assert!(receipt.html.contains(&format!("<a href=\"{pdf}\"")), "{}", receipt.html);
        let pdf = app.client.get(pdf).send().await.unwrap();
        assert_eq!(pdf.headers()["content-type"], "application/pdf");
        assert!(pdf.bytes().await.unwrap().starts_with(b"%PDF-"));

        let (_, list) = app.get(&shop, &format!("/payments?product={}", product["id"].as_str().unwrap())).await;
        let payment = list[0]["id"].as_str().unwrap().to_string();
        let (status, refund) = app.post(&shop, &format!("/payments/{payment}/refund"), &json!({"amount": 300})).await;
        assert_eq!(status, StatusCode::CREATED, "{refund}");
        flush(&app).await;
        let got = server.wait_for(&to, 2).await;
        assert_eq!(got[1].subject, "[TEST] Your refund from Corner Books");
        assert!(got[1].text.contains("Corner Books refunded €3.00 of your payment for Gift card."), "{}", got[1].text);
        assert!(got[1].text.contains("Credit note: TEST-CN-000001") && got[1].text.contains("TEST-CN-000001 as a PDF: http"), "{}", got[1].text);
        // Nothing more comes, however often the worker runs.
        flush(&app).await;
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        assert_eq!(server.received(&to).len(), 2);
        let kinds: Vec<_> = outbox(&app).await.into_iter().map(|(k, s, _)| (k, s)).collect();
        assert_eq!(kinds, [("receipt".into(), "sent".into()), ("refund_receipt".into(), "sent".into())]);
    }

    async fn a_russian_plan_walks_a_decline_ladder_in_russian(backend) {
        let server = Smtp::shared().await;
        let app = mailing_app(backend, server.url()).await;
        let shop = app.shop("Книжная лавка").await;
        let plan = plan(&app, &shop, json!({"language": "ru", "title": "Журнал", "number_payment_attempts": 2})).await;
        let clock = clock(&app, &shop, "2026-03-01T10:00:00Z").await;
        let to = address("olga");
        let sub = subscribe_as(&app, &shop, &plan, &clock, &to, cards::SUCCESS).await;
        let id = sub["id"].as_str().unwrap().to_string();
        flush(&app).await;
        let got = server.wait_for(&to, 1).await;
        assert_eq!(got[0].subject, "[ТЕСТ] Ваш чек от «Книжная лавка»");
        assert!(got[0].text.contains("Следующий платёж: 9,90"), "{}", got[0].text);

        make_card(&app, &shop, &id, "insufficient_funds").await;
        advance(&app, &shop, &clock, "2026-04-01T11:00:00Z").await;
        flush(&app).await;
        let got = server.wait_for(&to, 2).await;
        assert_eq!(got[1].subject, "[ТЕСТ] Платёж за «Журнал» не прошёл");
        assert!(got[1].text.contains("Не удалось списать 9,90"), "{}", got[1].text);
        assert!(got[1].text.contains("Обновить карту: http"), "{}", got[1].text);

        advance(&app, &shop, &clock, "2026-04-20T11:00:00Z").await;
        flush(&app).await;
        let got = server.wait_for(&to, 3).await;
        assert_eq!(got[2].subject, "[ТЕСТ] Подписка на «Журнал» завершена", "{:?}", got.iter().map(|m| &m.subject).collect::<Vec<_>>());
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        assert_eq!(server.received(&to).len(), 3);
    }

    async fn a_kind_turned_off_sends_nothing(backend) {
        let server = Smtp::shared().await;
        let app = mailing_app(backend, server.url()).await;
        let shop = app.shop("Quiet Shop").await;
        let settings = paydesk::domain::mail::MailSettings {
            off: vec![paydesk::domain::mail::MailKind::Receipt],
            ..Default::default()
        };
        use paydesk::domain::audit::{Actor, Entry, Origin};
        let audit = Entry::new(shop.id, Actor::operator(), Origin::default(), "shop.updated");
        paydesk::db::shops::set_mails(&app.db, shop.id, &settings, None, &audit, chrono::Utc::now()).await.unwrap();
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2026-03-01T10:00:00Z").await;
        let to = address("sam");
        let sub = subscribe_as(&app, &shop, &plan, &clock, &to, cards::SUCCESS).await;
        let (status, _) = app.post(&shop, &format!("/subscriptions/{}/cancel", sub["id"].as_str().unwrap()), &json!({})).await;
        assert_eq!(status, StatusCode::OK);
        flush(&app).await;
        let got = server.wait_for(&to, 1).await;
        assert_eq!(got[0].subject, "[TEST] Your subscription to Gold is canceled");
        assert_eq!(outbox(&app).await.len(), 1, "no receipt was queued");
    }

    async fn without_smtp_nothing_is_queued(backend) {
        let app = TestApp::spawn(backend).await;
        let shop = app.shop("Offline").await;
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2026-03-01T10:00:00Z").await;
        subscribe_as(&app, &shop, &plan, &clock, "x@example.com", cards::SUCCESS).await;
        assert!(outbox(&app).await.is_empty());
    }

    async fn an_smtp_server_down_for_a_while_loses_nothing(backend) {
        let port = smtp::free_port();
        let app = mailing_app(backend, smtp::url_of(port)).await;
        let shop = app.shop("Patient Shop").await;
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2026-03-01T10:00:00Z").await;
        let to = address("kim");
        subscribe_as(&app, &shop, &plan, &clock, &to, cards::SUCCESS).await;
        flush(&app).await;
        let waiting = outbox(&app).await;
        assert_eq!(waiting, [("receipt".into(), "queued".into(), Some(to.clone()))]);
        // The server comes up; the retry (due later) goes through.
        let server = Smtp::start_on(port).await;
        paydesk::services::mail::send_due(&app.state, chrono::Utc::now() + chrono::TimeDelta::minutes(1)).await.unwrap();
        let got = server.wait_for(&to, 1).await;
        assert_eq!(got.len(), 1);
        assert_eq!(outbox(&app).await[0].1, "sent");
    }

    async fn refusals_are_final_and_temporary_failures_are_retried(backend) {
        let server = Smtp::shared().await;
        let app = mailing_app(backend, server.url()).await;
        let shop = app.shop("Retry Shop").await;
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2026-03-01T10:00:00Z").await;
        let busy = address("busy+temp2");
        let gone = address("gone+reject");
        subscribe_as(&app, &shop, &plan, &clock, &busy, cards::SUCCESS).await;
        subscribe_as(&app, &shop, &plan, &clock, &gone, cards::SUCCESS).await;
        flush(&app).await;
        for minutes in [1, 5] {
            paydesk::services::mail::send_due(&app.state, chrono::Utc::now() + chrono::TimeDelta::minutes(minutes)).await.unwrap();
        }
        assert_eq!(server.wait_for(&busy, 1).await.len(), 1);
        let statuses: std::collections::HashMap<_, _> =
            outbox(&app).await.into_iter().map(|(_, status, to)| (to.unwrap(), status)).collect();
        assert_eq!(statuses[&busy], "sent");
        assert_eq!(statuses[&gone], "failed");
        assert!(server.received(&gone).is_empty());
        use sea_orm::EntityTrait;
        let attempts = paydesk::db::entities::mail_attempts::Entity::find().all(&app.db).await.unwrap();
        let codes: Vec<Option<i32>> = attempts.iter().map(|a| a.code).collect();
        assert_eq!(codes.iter().filter(|c| **c == Some(451)).count(), 2, "{codes:?}");
        assert_eq!(codes.iter().filter(|c| **c == Some(550)).count(), 1, "{codes:?}");
    }

    async fn an_answer_lost_after_the_server_took_the_mail_sends_it_again_with_the_same_message_id(backend) {
        let server = Smtp::shared().await;
        // A short timeout: the server's answer, held 4 s, comes too late.
        let app = mailing_app(backend, smtp::url_with_timeout(server.port, 2)).await;
        let shop = app.shop("Slow Shop").await;
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2026-03-01T10:00:00Z").await;
        let slow = address("slow+slow4");
        let dropped = address("cut+drop");
        subscribe_as(&app, &shop, &plan, &clock, &slow, cards::SUCCESS).await;
        subscribe_as(&app, &shop, &plan, &clock, &dropped, cards::SUCCESS).await;
        // The background worker may hold the first attempt: retries are sent early until both
        // second copies arrive.
        let patience = Patience::start();
        while !patience.spent() {
            if [&slow, &dropped].iter().all(|to| server.received(to).len() >= 2) {
                break;
            }
            paydesk::services::mail::send_due(&app.state, chrono::Utc::now() + chrono::TimeDelta::minutes(1)).await.unwrap();
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
        for to in [&slow, &dropped] {
            let got = server.wait_for(to, 2).await;
            assert_eq!(got.len(), 2, "{to}");
            assert_eq!(got[0].message_id, got[1].message_id, "{to}");
            assert_eq!(got[0].subject, got[1].subject);
        }
        assert!(outbox(&app).await.iter().all(|(_, status, _)| status == "sent"));
    }
}

backend_tests! {
    async fn a_test_clock_walks_a_trial_reminder_a_yearly_renewal_reminder_and_an_expiring_card(backend) {
        let server = Smtp::shared().await;
        let app = mailing_app(backend, server.url()).await;
        let shop = app.shop("Reminder Shop").await;
        // A 14-day free trial: its start, a reminder 7 days before it ends, then the charge.
        let trial = plan(&app, &shop, json!({"title": "Club", "trial": {"amount": 0, "interval": 14, "interval_unit": "day"}})).await;
        let clock_a = clock(&app, &shop, "2027-01-01T10:00:00Z").await;
        let ann = address("ann");
        subscribe_as(&app, &shop, &trial, &clock_a, &ann, cards::SUCCESS).await;
        flush(&app).await;
        let got = server.wait_for(&ann, 1).await;
        assert_eq!(got[0].subject, "[TEST] Your free trial of Club has started");
        assert!(got[0].text.contains("runs until 15 January 2027"), "{}", got[0].text);
        advance(&app, &shop, &clock_a, "2027-01-07T10:00:00Z").await;
        flush(&app).await;
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        assert_eq!(server.received(&ann).len(), 1, "nothing before the reminder is due");
        advance(&app, &shop, &clock_a, "2027-01-20T10:00:00Z").await;
        flush(&app).await;
        let got = server.wait_for(&ann, 3).await;
        let ending = got.iter().find(|m| m.subject == "[TEST] Your trial of Club ends on 15 January 2027").expect("the trial's reminder");
        assert!(ending.text.contains("Then €9.90 will be charged to your card Visa •••• 0000 every month"), "{}", ending.text);
        assert!(got.iter().any(|m| m.subject == "[TEST] Your receipt from Reminder Shop"));
        // A second advance over the same moments sends nothing again.
        advance(&app, &shop, &clock_a, "2027-01-21T10:00:00Z").await;
        flush(&app).await;
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        assert_eq!(server.received(&ann).len(), 3);

        // A yearly plan: its renewal is announced 7 days ahead; a card that expires before the
        // next charge is announced 14 days ahead.
        let yearly = plan(&app, &shop, json!({"title": "Annual", "plan": {"amount": 9900, "interval": 12, "interval_unit": "month"}})).await;
        let clock_b = clock(&app, &shop, "2027-01-10T10:00:00Z").await;
        let bob = address("bob");
        let body = json!({"plan": {"id": yearly}, "customer": {"email": bob, "ip": "203.0.113.9"},
                          "card": {"number": cards::SUCCESS, "exp_month": 12, "exp_year": 2027, "cvc": "123", "holder": "Bob"},
                          "test_clock": clock_b});
        let (status, sub) = app.post(&shop, "/subscriptions", &body).await;
        assert_eq!(status, StatusCode::CREATED, "{sub}");
        flush(&app).await;
        server.wait_for(&bob, 1).await;
        advance(&app, &shop, &clock_b, "2028-01-08T10:00:00Z").await;
        flush(&app).await;
        let got = server.wait_for(&bob, 3).await;
        let card = got.iter().find(|m| m.subject == "[TEST] Your card for Annual expires soon").expect("the card's reminder");
        assert!(card.text.contains("expires at the end of 12/2027, before your next payment of €99.00 on 10 January 2028"), "{}", card.text);
        assert!(got.iter().any(|m| m.subject == "[TEST] Your subscription to Annual renews on 10 January 2028"));
        let keys: Vec<String> = {
            use sea_orm::EntityTrait;
            paydesk::db::entities::mails::Entity::find().all(&app.db).await.unwrap().into_iter().map(|m| m.dedupe_key).collect()
        };
        assert_eq!(keys.iter().filter(|k| k.starts_with("renewal_reminder:")).count(), 1, "{keys:?}");
    }

    async fn a_cancel_at_period_end_is_confirmed_once_and_its_withdrawal_is_heard(backend) {
        let server = Smtp::shared().await;
        let app = mailing_app(backend, server.url()).await;
        let shop = app.shop("Ending Shop").await;
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2027-01-01T10:00:00Z").await;
        let to = address("eve");
        let sub = subscribe_as(&app, &shop, &plan, &clock, &to, cards::SUCCESS).await;
        let id = sub["id"].as_str().unwrap();
        let model = paydesk::db::find_public::<paydesk::db::entities::subscriptions::Entity>(&app.db, id).await.unwrap().unwrap();
        for _ in 0..2 {
            paydesk::services::subscriptions::cancel_at_period_end(&app.state, &model, Some("too expensive".into())).await.unwrap();
        }
        flush(&app).await;
        let got = server.wait_for(&to, 2).await;
        let subjects: Vec<&str> = got.iter().map(|m| m.subject.as_str()).collect();
        assert!(subjects.contains(&"[TEST] Your subscription to Gold ends on 1 February 2027"), "{subjects:?}");
        paydesk::services::subscriptions::keep(&app.state, &model).await.unwrap();
        paydesk::services::subscriptions::keep(&app.state, &model).await.unwrap();
        let requested = crate::bepaid_pay::events_of(&app, &shop, "subscription.cancellation_requested").await;
        let withdrawn = crate::bepaid_pay::events_of(&app, &shop, "subscription.cancellation_withdrawn").await;
        assert_eq!((requested.len(), withdrawn.len()), (1, 1));
        assert_eq!(withdrawn[0]["data"]["object"]["cancel_at_period_end"], false);
        // At the end of the period it renews as before.
        advance(&app, &shop, &clock, "2027-02-01T11:00:00Z").await;
        assert_eq!(crate::subscriptions::get_sub(&app, &shop, id).await["state"], "active");
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        flush(&app).await;
        let got = server.wait_for(&to, 3).await;
        assert_eq!(got[2].subject, "[TEST] Your receipt from Ending Shop");
    }

    async fn a_subscription_that_ends_with_its_period_as_asked_is_not_confirmed_again(backend) {
        let server = Smtp::shared().await;
        let app = mailing_app(backend, server.url()).await;
        let shop = app.shop("Ending Shop").await;
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2027-01-01T10:00:00Z").await;
        let to = address("fay");
        let sub = subscribe_as(&app, &shop, &plan, &clock, &to, cards::SUCCESS).await;
        let id = sub["id"].as_str().unwrap();
        let (status, asked) = app.post(&shop, &format!("/subscriptions/{id}"), &json!({"cancel_at_period_end": true})).await;
        assert_eq!(status, StatusCode::OK, "{asked}");
        advance(&app, &shop, &clock, "2027-02-01T11:00:00Z").await;
        let ended = crate::subscriptions::get_sub(&app, &shop, id).await;
        assert_eq!((ended["state"].as_str(), ended["cancel_at_period_end"].as_bool()), (Some("canceled"), Some(true)), "{ended}");
        let confirmed = outbox(&app).await.into_iter().filter(|(kind, ..)| kind == "cancellation_confirmed").count();
        assert_eq!(confirmed, 1, "confirmed when asked, not again when it ended");
    }

    async fn a_plan_billed_every_six_months_gets_its_renewal_reminder(backend) {
        let server = Smtp::shared().await;
        let app = mailing_app(backend, server.url()).await;
        let shop = app.shop("Half-year Shop").await;
        let body = json!({"title": "Half", "plan": {"amount": 4900, "interval": 6, "interval_unit": "month"}});
        let half = plan(&app, &shop, body).await;
        let clock = clock(&app, &shop, "2027-01-10T10:00:00Z").await;
        let to = address("gus");
        subscribe_as(&app, &shop, &half, &clock, &to, cards::SUCCESS).await;
        advance(&app, &shop, &clock, "2027-07-04T10:00:00Z").await;
        flush(&app).await;
        let got = server.wait_for(&to, 2).await;
        assert!(got.iter().any(|m| m.subject == "[TEST] Your subscription to Half renews on 10 July 2027"), "{:?}",
            got.iter().map(|m| &m.subject).collect::<Vec<_>>());
    }
}

/// A `paydesk serve` child over the app's database that sends mail through `smtp_url`, with
/// 2-second leases.
async fn mailing_child(app: &TestApp, smtp_url: &str) -> std::process::Child {
    let port = crate::cli::free_port();
    let child = crate::cli::paydesk(&app.database_url)
        .env("PAYDESK_LISTEN", format!("127.0.0.1:{port}"))
        .env("PAYDESK_LEASE_SECONDS", "2")
        .env("PAYDESK_SCHEDULER", "off")
        .env("PAYDESK_SMTP_URL", smtp_url)
        .arg("serve")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let patience = Patience::start();
    while !patience.spent() {
        if app.client.get(format!("http://127.0.0.1:{port}/healthz")).send().await.is_ok() {
            return child;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    crate::crash::kill(child);
    panic!("paydesk serve did not start");
}

backend_tests! {
    async fn an_instance_killed_while_sending_loses_nothing_and_repeats_only_the_mails_in_flight(backend) {
        let server = Smtp::shared().await;
        // This instance sends no mail; the children do.
        let app = TestApp::spawn_with(backend, ConfigArgs { scheduler: Some("off".into()), ..Default::default() }).await;
        let shop = app.shop("Crash Shop").await;
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2027-01-01T10:00:00Z").await;
        // Three mails the server holds 6 s before answering (in flight when the instance
        // dies), three it takes at once.
        let mut slow = Vec::new();
        let mut quick = Vec::new();
        let mut queued = Vec::new();
        for i in 0..6 {
            let to = if i < 3 { address("held+slow6") } else { address("quick") };
            let sub = subscribe_as(&app, &shop, &plan, &clock, &to, cards::SUCCESS).await;
            let (_, list) = app.get(&shop, &format!("/payments?subscription={}", sub["id"].as_str().unwrap())).await;
            let payment = list[0]["id"].as_str().unwrap_or_else(|| panic!("{list}")).to_string();
            queued.push(paydesk::db::mails::NewMail {
                shop_id: shop.id,
                customer_id: None,
                kind: paydesk::domain::mail::MailKind::Receipt,
                object_id: payment.clone(),
                event_id: None,
                dedupe_key: format!("crash:{payment}"),
                test: true,
                to_address: None,
                sender: "shop@example.com".into(),
                rendered: None,
            });
            if i < 3 { slow.push(to) } else { quick.push(to) }
        }
        paydesk::db::mails::enqueue(&app.db, queued, chrono::Utc::now()).await.unwrap();
        let url = format!("smtp://127.0.0.1:{}?tls=none&timeout=10", server.port);
        let first = mailing_child(&app, &url).await;
        for to in slow.iter().chain(&quick) {
            server.wait_for(to, 1).await;
        }
        // The quick ones' answers are recorded; the slow ones are still held by the server.
        let patience = Patience::start();
        while !patience.spent() {
            let sent = outbox(&app).await.iter().filter(|(_, status, _)| status == "sent").count();
            if sent >= quick.len() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        crate::crash::kill(first);
        // Another instance takes the mails over once the dead one's claims run out.
        let second = mailing_child(&app, &url).await;
        for to in &slow {
            let got = server.wait_for(to, 2).await;
            assert_eq!(got[0].message_id, got[1].message_id, "the one duplicate is recognisable");
        }
        let patience = Patience::start();
        while !patience.spent() {
            if outbox(&app).await.iter().all(|(_, status, _)| status == "sent") {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
        crate::crash::kill(second);
        assert!(outbox(&app).await.iter().all(|(_, status, _)| status == "sent"), "{:?}", outbox(&app).await);
        for to in &quick {
            assert_eq!(server.received(to).len(), 1, "{to}: a mail whose answer was recorded is not sent again");
        }
        for to in &slow {
            assert_eq!(server.received(to).len(), 2, "{to}");
        }
    }
}

backend_tests! {
    async fn workers_racing_for_the_same_mails_send_each_once(backend) {
        let server = Smtp::shared().await;
        let app = mailing_app(backend, server.url()).await;
        let shop = app.shop("Busy Shop").await;
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2027-01-01T10:00:00Z").await;
        let mut to = Vec::new();
        for _ in 0..12 {
            let address = address("many");
            subscribe_as(&app, &shop, &plan, &clock, &address, cards::SUCCESS).await;
            to.push(address);
        }
        let send = || paydesk::services::mail::send_due(&app.state, chrono::Utc::now());
        let (a, b, c) = tokio::join!(send(), send(), send());
        let _ = (a.unwrap(), b.unwrap(), c.unwrap());
        for address in &to {
            server.wait_for(address, 1).await;
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        for address in &to {
            assert_eq!(server.received(address).len(), 1, "{address}");
        }
    }
}

backend_tests! {
    async fn the_merchant_chooses_the_mails_on_the_dashboard_and_sees_those_sent(backend) {
        let server = Smtp::shared().await;
        let app = mailing_app(backend, server.url()).await;
        let m = crate::dashboard::sign_up(&app, "Corner Books", "owner@example.com").await;
        let shop = crate::dashboard::api_shop(&m).await;
        let page = m.get("/dashboard/settings/mails").await;
        assert_eq!(page.status, StatusCode::OK);
        assert!(!page.html.contains("data-testid=\"mail-off\""), "this instance sends mail");
        assert!(page.html.contains(&format!("/portal/{}", shop.id)), "the subscriber page's address");
        // Receipts off, a 10-day lead for every plan, and a sender of the shop's.
        let mut fields: Vec<(&str, &str)> = paydesk::domain::mail::MailKind::CHOSEN
            .iter()
            .filter(|k| **k != paydesk::domain::mail::MailKind::Receipt)
            .map(|k| (k.as_str(), "true"))
            .collect();
        let names: Vec<String> = fields.iter().map(|(k, _)| format!("send.{k}")).collect();
        fields = names.iter().map(|n| (n.as_str(), "true")).collect();
        let bad = [fields.clone(), vec![("reminder_days", "0"), ("mail_from", "not an address")]].concat();
        let refused = m.post("/dashboard/settings/mails", &bad).await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
        let good = [fields.clone(), vec![("reminder_days", "10"), ("reminder_all_periods", "true"), ("mail_from", "hello@books.example")]].concat();
        let saved = m.post("/dashboard/settings/mails", &good).await;
        assert_eq!(saved.status, StatusCode::SEE_OTHER, "{}", saved.html);
        let page = m.get("/dashboard/settings/mails").await;
        assert!(page.html.contains("value=\"hello@books.example\"") && page.html.contains("value=\"10\""), "{}", page.html);
        // The change is in the audit trail, the sender with it; saving the same again adds nothing.
        let trail = || async {
            let (_, records) = app.get(&shop, "/audit_events?limit=100").await;
            records.as_array().unwrap().iter().filter(|r| r["action"] == "shop.updated").cloned().collect::<Vec<_>>()
        };
        let records = trail().await;
        assert_eq!(records.len(), 1, "{records:?}");
        let changed: Vec<(&str, &Value)> =
            records[0]["changes"].as_array().unwrap().iter().map(|c| (c["field"].as_str().unwrap(), &c["after"])).collect();
        assert!(changed.contains(&("mail_from", &json!("hello@books.example"))), "{changed:?}");
        assert!(changed.contains(&("mails_off", &json!("receipt"))), "{changed:?}");
        assert!(changed.contains(&("reminder_days", &json!(10))), "{changed:?}");
        assert_eq!(m.post("/dashboard/settings/mails", &good).await.status, StatusCode::SEE_OTHER);
        assert_eq!(trail().await.len(), 1, "nothing changed the second time");
        // A preview of each kind, in both languages.
        for kind in paydesk::domain::mail::MailKind::CHOSEN {
            for language in ["en", "ru"] {
                let preview = m.get(&format!("/dashboard/settings/mails/preview/{kind}?language={language}")).await;
                assert_eq!(preview.status, StatusCode::OK, "{kind} {language}");
                assert!(preview.html.contains("Corner Books"));
            }
        }
        assert_eq!(m.get("/dashboard/settings/mails/preview/nonsense").await.status, StatusCode::NOT_FOUND);
        // A subscription: no receipt; its cancel is confirmed from the shop's sender.
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2027-01-01T10:00:00Z").await;
        let to = address("ann");
        let sub = subscribe_as(&app, &shop, &plan, &clock, &to, cards::SUCCESS).await;
        app.post(&shop, &format!("/subscriptions/{}/cancel", sub["id"].as_str().unwrap()), &json!({})).await;
        flush(&app).await;
        let got = server.wait_for(&to, 1).await;
        assert_eq!(got[0].subject, "[TEST] Your subscription to Gold is canceled");
        assert!(got[0].from.contains("hello@books.example"), "{}", got[0].from);
        assert!(got[0].message_id.ends_with("@books.example>"), "{}", got[0].message_id);
        // The customer's page lists it.
        let customer = m.get(&format!("/dashboard/customers/{}", sub["customer"]["id"].as_str().unwrap())).await;
        assert!(customer.html.contains("Your subscription to Gold is canceled") && customer.html.contains("sent"), "{}", customer.html);
    }
}
