//! The subscriber page in headless Chromium: a subscriber follows the link of the
//! failed-renewal mail, pays the overdue period with another card (once), cancels at the end
//! of the period and undoes it; the request page answers alike for every address; a link used
//! twice explains itself. Every page is axe-clean at desktop and phone width.

use serde_json::json;

use crate::browser::{Browser, backend_name};
use crate::doubles::smtp::Smtp;
use crate::helpers::*;
use crate::mails::{address, flush, mailing_app, subscribe_as};
use crate::subscriptions::{advance, clock, get_sub, make_card, plan};

backend_tests! {
    async fn a_subscriber_pays_what_is_overdue_cancels_and_keeps_the_subscription_in_a_browser(backend) {
        let server = Smtp::shared().await;
        let app = mailing_app(backend, server.url()).await;
        let db = backend_name(&app);
        let shop = app.shop_with_url("Magazine", Some("https://magazine.example/")).await;
        let plan = plan(&app, &shop, json!({"title": "Monthly issue"})).await;
        let clock = clock(&app, &shop, "2027-01-01T10:00:00Z").await;
        let to = address("reader");
        let sub = subscribe_as(&app, &shop, &plan, &clock, &to, cards::SUCCESS).await;
        let id = sub["id"].as_str().unwrap().to_string();
        make_card(&app, &shop, &id, "insufficient_funds").await;
        advance(&app, &shop, &clock, "2027-02-01T11:00:00Z").await;
        flush(&app).await;
        let got = server.wait_for(&to, 2).await;
        let failed = got.iter().find(|m| m.subject.contains("did not go through")).expect("the failed renewal mail");
        let link = failed.text.lines().find_map(|l| l.strip_prefix("Update your card: ")).unwrap().to_string();

        let b = Browser::start().await;
        let mut found = crate::walk::Findings::default();
        b.open(&link).await;
        assert_eq!(b.text_of("[data-testid=title]").await, "Your subscriptions and payments");
        b.check(&format!("portal-continue-{db}"), &mut found).await;
        b.send("button[data-testid=submit]").await;
        assert!(b.text_of("[data-testid=state]").await.contains("Payment failed"));
        b.check(&format!("portal-home-{db}"), &mut found).await;
        b.click("[data-testid=pay-now]").await;
        b.fill_card(cards::SUCCESS).await;
        b.send("form.pay-form button[type=submit]").await;
        assert_eq!(get_sub(&app, &shop, &id).await["state"], "active");
        // Back on the page: cancel at the end of the period, confirm, then keep it.
        b.open(&format!("{}/portal/home", app.base)).await;
        assert!(b.text_of("[data-testid=state]").await.contains("Active"));
        b.send("button[data-testid=cancel]").await;
        b.check(&format!("portal-confirm-{db}"), &mut found).await;
        b.send("button[data-testid=submit]").await;
        assert!(b.text_of("[data-testid=flash]").await.contains("will end at the end of the paid period"));
        assert_eq!(get_sub(&app, &shop, &id).await["cancel_at_period_end"], true);
        b.send("button[data-testid=keep]").await;
        assert!(b.text_of("[data-testid=flash]").await.contains("goes on"));
        assert_eq!(get_sub(&app, &shop, &id).await["cancel_at_period_end"], false);
        let (_, payments) = app.get(&shop, &format!("/payments?subscription={id}")).await;
        let succeeded = payments.as_array().unwrap().iter().filter(|p| p["status"] == "succeeded").count();
        assert_eq!(succeeded, 2, "{payments}");
        // A new card for the next payments: nothing is charged now.
        b.click("[data-testid=update-card]").await;
        b.check(&format!("portal-card-{db}"), &mut found).await;
        b.fill_card(cards::SUCCEEDS_THEN_DECLINES).await;
        b.send("form.pay-form button[type=submit]").await;
        assert!(b.text_of("[data-testid=flash]").await.contains("new card is saved"));
        assert_eq!(get_sub(&app, &shop, &id).await["card"]["last_4"], "0341");
        let (_, payments) = app.get(&shop, &format!("/payments?subscription={id}")).await;
        assert_eq!(payments.as_array().unwrap().len(), 3, "the first period, the failed renewal, the overdue one");

        // The link again: used, and it says so.
        b.open(&link).await;
        assert_eq!(b.text_of("[data-testid=title]").await, "This link was already used");
        assert!(b.has("[data-testid=link]").await, "this browser's session is still open");
        b.check(&format!("portal-used-{db}"), &mut found).await;

        // The request page, in Russian: the same answer for a known and an unknown address.
        let mut answers = Vec::new();
        for email in [to.as_str(), "nobody@example.com"] {
            b.open(&format!("{}/portal/{}?lang=ru", app.base, shop.id)).await;
            b.fill("email", email).await;
            b.send("button[data-testid=submit]").await;
            answers.push(b.text_of("main").await);
        }
        assert_eq!(answers[0], answers[1]);
        assert!(answers[0].contains("Проверьте почту"), "{}", answers[0]);
        b.check(&format!("portal-asked-{db}"), &mut found).await;
        b.open(&format!("{}/portal/{}", app.base, shop.id)).await;
        b.check(&format!("portal-ask-{db}"), &mut found).await;
        b.close().await;
        assert!(found.0.is_empty(), "{:?}", found.0);
    }
}
