//! A merchant's first steps in a real headless Chromium: sign up, create a product with
//! visible fields, open its pay link, pay with a test card, and find the payment in the
//! dashboard. Screenshots of the main pages land in `test-artifacts/dashboard-*.png`.

use std::time::Duration;

use fantoccini::Locator;

use crate::browser::{Browser, backend_name};
use crate::helpers::*;

impl Browser {
    async fn open(&self, url: &str) {
        self.client.goto(url).await.unwrap();
    }

    /// Clicks the submit button of the page's main form and waits for the next page.
    async fn send_main_form(&self) {
        let before = self.client.current_url().await.unwrap();
        let button = self.client.find(Locator::Css("main form:not(.search) button[type=submit]")).await.unwrap();
        button.click().await.unwrap();
        for _ in 0..100 {
            let ready: bool = self
                .client
                .execute("return document.readyState === 'complete'", vec![])
                .await
                .unwrap()
                .as_bool()
                .unwrap_or(false);
            if ready && self.client.current_url().await.unwrap() != before {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn click(&self, css: &str) {
        self.client.find(Locator::Css(css)).await.unwrap().click().await.unwrap();
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
        assert!(b.text_of(".lead").await.starts_with("25.00 EUR"));
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
        assert!(b.text_of("table tbody tr").await.contains("25.00 EUR"));
        assert!(b.text_of("table tbody tr .status").await.contains("succeeded"));
        b.screenshot(&format!("dashboard-payments-{db}")).await;
        b.click("table tbody tr a").await;
        assert!(b.text_of("h1").await.starts_with("25.00 EUR"));
        assert!(b.text_of("#refund-h").await.contains("Refund"));
        b.screenshot(&format!("dashboard-payment-{db}")).await;
        b.open(&format!("{}/dashboard", app.base)).await;
        assert_eq!(b.text_of("[data-testid=today-test]").await, "Test mode: 25.00 EUR");
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
}
