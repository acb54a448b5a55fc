//! A merchant's first steps in a real headless Chromium: sign up, create a product with
//! visible fields, open its pay link, pay with a test card, and find the payment in the
//! dashboard. Screenshots of the main pages land in `test-artifacts/dashboard-*.png`.

use std::time::Duration;

use fantoccini::Locator;

use serde_json::json;

use crate::browser::{Browser, backend_name};
use crate::helpers::*;

impl Browser {
    pub async fn open(&self, url: &str) {
        self.client.goto(url).await.unwrap();
    }

    /// Clicks the submit button of the page's main form and waits for the next page.
    pub async fn send_main_form(&self) {
        self.send("main form:not(.search) button[type=submit]").await;
    }

    /// Clicks the first `button` (waiting for it to appear) and waits for the next page: a new
    /// document, fully loaded, whether or not its address changed.
    pub async fn send(&self, button: &str) {
        let found = self.client.wait().at_most(PATIENCE).for_element(Locator::Css(button)).await;
        let found = found.unwrap_or_else(|e| panic!("{button} never appeared: {e}"));
        // The page now carries a mark; the next one, a new document, does not.
        self.client.execute("window.paydeskLeft = true", vec![]).await.unwrap();
        found.click().await.unwrap();
        let patience = Patience::start();
        loop {
            let next = self
                .client
                .execute("return document.readyState === 'complete' && window.paydeskLeft !== true", vec![])
                .await;
            match next {
                Ok(serde_json::Value::Bool(true)) => return,
                // Asked while the browser goes from one page to the next.
                Ok(_) | Err(_) if !patience.spent() => {}
                other => panic!("no next page after {button}: {other:?}"),
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub async fn click(&self, css: &str) {
        self.client.find(Locator::Css(css)).await.unwrap().click().await.unwrap();
    }

    /// Logs in through the login page as a user made by `dashboard::sign_up`.
    pub async fn log_in(&self, base: &str, email: &str) {
        self.open(&format!("{base}/dashboard/login")).await;
        self.fill("email", email).await;
        self.fill("password", crate::dashboard::PASSWORD).await;
        self.send_main_form().await;
        assert_eq!(self.text_of("h1").await, "Overview");
    }

    /// What `url` answers to this browser's session (its cookies), as a download would get it.
    async fn download(&self, url: &str) -> reqwest::Response {
        let cookies = self.client.get_all_cookies().await.unwrap();
        let header: Vec<String> = cookies.iter().map(|c| format!("{}={}", c.name(), c.value())).collect();
        reqwest::Client::new().get(url).header("cookie", header.join("; ")).send().await.unwrap()
    }
}

db_tests! {
    async fn a_merchant_signs_up_sells_a_product_and_sees_the_payment(app) {
        let b = Browser::start().await;
        let db = backend_name(&app);
        b.open(&format!("{}/dashboard/signup", app.base)).await;
        b.screenshot(&format!("dashboard-signup-{db}")).await;
        b.fill("shop_name", "Corner Books").await;
        b.fill("email", "ann@example.com").await;
        b.fill("password", "correct horse battery").await;
        b.fill("password_confirmation", "correct horse battery").await;
        b.send_main_form().await;
        assert_eq!(b.text_of("h1").await, "Overview");
        assert!(b.text_of(".flash").await.contains("Your shop is ready"));

        b.click("nav a[href='/dashboard/products']").await;
        b.click("a[href='/dashboard/products/new']").await;
        assert_eq!(b.text_of("h1").await, "New product");
        let quantity_off: bool = b.client.find(Locator::Css("#f-quantity")).await.unwrap()
            .prop("disabled").await.unwrap().as_deref() == Some("true");
        assert!(quantity_off, "an infinite product's quantity is switched off");
        b.fill("name", "Gift card").await;
        b.fill("description", "A gift card for any book").await;
        b.fill("amount", "25").await;
        b.click("#vf-email").await;
        b.click("#vf-phone").await;
        b.click("#f-test").await;
        b.screenshot(&format!("dashboard-product-form-{db}")).await;
        b.send_main_form().await;
        assert_eq!(b.text_of("h1").await, "Gift card test");
        assert!(b.text_of(".lead").await.starts_with("€25.00"));
        b.screenshot(&format!("dashboard-product-{db}")).await;
        let pay_url = b.client.find(Locator::Id("pay-url")).await.unwrap().prop("value").await.unwrap().unwrap();
        assert!(pay_url.starts_with(&app.base), "{pay_url}");

        // A customer pays on the link.
        b.open(&pay_url).await;
        assert!(b.has("[name=email]").await && b.has("[name=phone]").await && !b.has("[name=first_name]").await);
        b.fill("email", "reader@example.com").await;
        b.fill("phone", "+49 30 1234567").await;
        b.fill_card(cards::SUCCESS).await;
        b.submit().await;
        b.text_of(".receipt").await;

        // The merchant sees it.
        b.open(&format!("{}/dashboard/payments", app.base)).await;
        assert!(b.text_of("table tbody tr").await.contains("€25.00"));
        assert!(b.text_of("table tbody tr .status").await.contains("succeeded"));
        b.screenshot(&format!("dashboard-payments-{db}")).await;
        b.click("table tbody tr a").await;
        assert!(b.text_of("h1").await.starts_with("€25.00"));
        assert!(b.text_of("#refund-h").await.contains("Refund"));
        b.screenshot(&format!("dashboard-payment-{db}")).await;
        b.open(&format!("{}/dashboard", app.base)).await;
        assert_eq!(b.text_of("[data-testid=today-test]").await, "Test mode: €25.00");
        b.screenshot(&format!("dashboard-overview-{db}")).await;
        for (page, name) in [("/dashboard/customers", "customers"), ("/dashboard/plans/new", "plan-form"),
                             ("/dashboard/subscriptions", "subscriptions"), ("/dashboard/settings", "settings"),
                             ("/dashboard/webhooks", "webhooks")] {
            b.open(&format!("{}{page}", app.base)).await;
            b.text_of("h1").await;
            b.screenshot(&format!("dashboard-{name}-{db}")).await;
        }
        b.client.set_window_size(390, 844).await.unwrap();
        b.open(&format!("{}/dashboard", app.base)).await;
        b.text_of("h1").await;
        b.screenshot(&format!("dashboard-overview-phone-{db}")).await;
        b.close().await;
    }

    async fn a_refund_and_a_key_rotation_wait_for_a_confirmation_and_a_reload_repeats_neither(app) {
        let m = crate::dashboard::sign_up(&app, "Corner Books", "owner@example.com").await;
        let shop = crate::dashboard::api_shop(&m).await;
        let product = app.product(&shop, &test_product_body()).await;
        app.pay(product["id"].as_str().unwrap(), cards::SUCCESS, &[]).await;
        let (_, paid) = app.get(&shop, "/payments").await;
        let payment = paid[0]["id"].as_str().unwrap().to_string();
        let refunded = || async { app.get(&shop, &format!("/payments/{payment}")).await.1["refunded_amount"].clone() };
        let b = Browser::start().await;
        let db = backend_name(&app);
        b.log_in(&app.base, "owner@example.com").await;

        b.open(&format!("{}/dashboard/payments/{payment}", app.base)).await;
        b.client.find(Locator::Css("[name=amount]")).await.unwrap().clear().await.unwrap();
        b.fill("amount", "2.50").await;
        b.send("form[action$='/refund'] button[type=submit]").await;
        assert_eq!(b.text_of("h1").await, "Refund €2.50?");
        b.screenshot(&format!("dashboard-refund-confirm-{db}")).await;
        assert_eq!(refunded().await, 0, "asked, not yet refunded");
        b.send("main section.danger button[type=submit]").await;
        assert!(b.text_of(".flash").await.contains("Refunded €2.50."));
        b.client.refresh().await.unwrap();
        assert_eq!(refunded().await, 250, "refunded once, the reload repeats nothing");

        b.open(&format!("{}/dashboard/settings", app.base)).await;
        b.click("#f-confirm").await;
        b.send("form[action$='/rotate'] button[type=submit]").await;
        let key = b.client.find(Locator::Css("[data-testid=secret-key]")).await.unwrap().prop("value").await.unwrap().unwrap();
        let rotated = Shop { id: shop.id, secret: key };
        assert_eq!(app.get(&rotated, "/payments").await.0, reqwest::StatusCode::OK, "the new key works");
        assert_eq!(app.get(&shop, "/payments").await.0, reqwest::StatusCode::UNAUTHORIZED, "the old one stopped");
        b.client.refresh().await.unwrap();
        assert!(!b.has("[data-testid=secret-key]").await, "the key is shown once");
        assert_eq!(app.get(&rotated, "/payments").await.0, reqwest::StatusCode::OK, "the reload rotated nothing");
        b.close().await;
    }

    async fn a_merchant_pauses_resumes_and_moves_a_subscription_to_another_plan_by_clicking(app) {
        let m = crate::dashboard::sign_up(&app, "Gym", "owner@example.com").await;
        let shop = crate::dashboard::api_shop(&m).await;
        let gold = crate::subscriptions::plan(&app, &shop, json!({"title": "Gold"})).await;
        crate::subscriptions::plan(&app, &shop, json!({"title": "Platinum", "plan": {"amount": 2990, "interval": 1, "interval_unit": "month"}})).await;
        let clock = crate::subscriptions::clock(&app, &shop, "2026-03-01T00:00:00Z").await;
        let sub = crate::subscriptions::subscribe(&app, &shop, &gold, &clock, cards::SUCCESS).await;
        let id = sub["id"].as_str().unwrap().to_string();
        crate::subscriptions::advance(&app, &shop, &clock, "2026-03-21T12:00:00Z").await;
        let b = Browser::start().await;
        let db = backend_name(&app);
        b.log_in(&app.base, "owner@example.com").await;
        let page = format!("{}/dashboard/subscriptions/{id}", app.base);

        b.open(&page).await;
        b.click("#pause-now").await;
        b.send("[data-testid=pause]").await;
        assert_eq!(b.text_of("h1").await, "Pause the subscription now?");
        b.screenshot(&format!("dashboard-pause-confirm-{db}")).await;
        b.send("main section.danger button[type=submit]").await;
        assert!(b.text_of(".flash").await.contains("The subscription is paused"));
        assert_eq!(app.get(&shop, &format!("/subscriptions/{id}")).await.1["state"], "paused");
        b.send("[data-testid=resume]").await;
        assert_eq!(b.text_of("h1").await, "Resume the subscription with a new period?");
        b.screenshot(&format!("dashboard-resume-confirm-{db}")).await;
        b.send("main section.danger button[type=submit]").await;
        assert!(b.text_of(".flash").await.contains("The subscription resumed."));
        let (_, resumed) = app.get(&shop, &format!("/subscriptions/{id}")).await;
        assert_eq!((resumed["state"].as_str(), resumed["renew_at"].as_str()), (Some("active"), Some("2026-04-21T12:00:00.000Z")));

        b.send("[data-testid=change-plan]").await;
        assert_eq!(b.text_of("h1").await, "Move the subscription to Platinum?");
        b.screenshot(&format!("dashboard-change-confirm-{db}")).await;
        b.send("main section.danger button[type=submit]").await;
        assert!(b.text_of(".flash").await.contains("The plan was changed."));
        let (_, changed) = app.get(&shop, &format!("/subscriptions/{id}")).await;
        assert_eq!(changed["plan"]["title"], "Platinum");
        // A new period began at the resume: nothing of it was used yet, so the whole
        // difference is due.
        assert_eq!(changed["last_transaction"]["amount"], 2000);
        b.client.refresh().await.unwrap();
        let (_, payments) = app.get(&shop, &format!("/payments?subscription={id}")).await;
        assert_eq!(payments.as_array().unwrap().len(), 3, "the first charge, the resume, the change: {payments}");
        b.close().await;
    }

    async fn a_merchant_finds_payments_by_email_and_exports_what_is_found(app) {
        let m = crate::dashboard::sign_up(&app, "Corner Books", "owner@example.com").await;
        let shop = crate::dashboard::api_shop(&m).await;
        let mut body = test_product_body();
        body["visible_fields"] = json!(["email"]);
        let product = app.product(&shop, &body).await;
        for email in ["ann@example.com", "bob@example.com"] {
            app.pay(product["id"].as_str().unwrap(), cards::SUCCESS, &[("email", email)]).await;
        }
        let b = Browser::start().await;
        let db = backend_name(&app);
        b.log_in(&app.base, "owner@example.com").await;
        b.open(&format!("{}/dashboard/payments", app.base)).await;
        assert_eq!(b.client.find_all(Locator::Css("table tbody tr")).await.unwrap().len(), 2);
        b.fill("q", "bob@").await;
        b.send_main_form().await;
        let rows = b.client.find_all(Locator::Css("table tbody tr")).await.unwrap();
        assert_eq!(rows.len(), 1);
        assert!(rows[0].text().await.unwrap().contains("bob@example.com"));
        b.screenshot(&format!("dashboard-payments-search-{db}")).await;
        let export = b.client.find(Locator::Css("[data-testid=export]")).await.unwrap().attr("href").await.unwrap().unwrap();
        assert_eq!(export, "/dashboard/payments/export.csv?q=bob%40");
        let csv = b.download(&format!("{}{export}", app.base)).await;
        assert_eq!(csv.headers()["content-type"], "text/csv; charset=utf-8");
        let csv = csv.text().await.unwrap();
        assert_eq!(csv.lines().count(), 2, "{csv}");
        assert!(csv.lines().nth(1).unwrap().contains(",bob@example.com,"), "{csv}");
        b.client.set_window_size(390, 844).await.unwrap();
        b.screenshot(&format!("dashboard-payments-search-phone-{db}")).await;
        b.close().await;
    }
}
