//! The hosted pages in a real headless Chromium (Debian's `chromium` and `chromedriver`):
//! fill the forms, click, and check what a customer sees. Screenshots of each page land in
//! `test-artifacts/`. These tests fail, never skip, when the browser cannot start.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;

use crate::helpers::*;

/// A headless Chromium driven over WebDriver; the driver process ends with it.
pub struct Browser {
    pub client: Client,
    driver: Child,
    _profile: tempfile::TempDir,
}

impl Browser {
    pub async fn start() -> Browser {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let driver = Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver is needed for the browser tests: apt-get install chromium chromium-driver");
        let profile = tempfile::tempdir().unwrap();
        let args = [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--window-size=1280,1100",
        ];
        let mut args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        args.push(format!("--user-data-dir={}", profile.path().display()));
        let capabilities = json!({"goog:chromeOptions": {"binary": "/usr/bin/chromium", "args": args}});
        let capabilities = capabilities.as_object().unwrap().clone();
        let mut last_error = String::new();
        for _ in 0..100 {
            // chromedriver speaks plain HTTP on loopback: no TLS stack needed.
            let connected = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
                .capabilities(capabilities.clone())
                .connect(&format!("http://127.0.0.1:{port}"))
                .await;
            match connected {
                Ok(client) => return Browser { client, driver, _profile: profile },
                Err(e) => last_error = e.to_string(),
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("headless Chromium did not start: {last_error}");
    }

    pub async fn fill(&self, name: &str, value: &str) {
        let input = self.client.find(Locator::Css(&format!("[name=\"{name}\"]"))).await.unwrap();
        input.send_keys(value).await.unwrap();
    }

    pub async fn fill_card(&self, number: &str) {
        for (name, value) in card(number) {
            self.fill(name, value).await;
        }
    }

    pub async fn submit(&self) {
        self.client.find(Locator::Css("form.pay-form button[type=submit]")).await.unwrap().click().await.unwrap();
    }

    pub async fn has(&self, css: &str) -> bool {
        !self.client.find_all(Locator::Css(css)).await.unwrap().is_empty()
    }

    /// Waits until `css` matches, and returns its text.
    pub async fn text_of(&self, css: &str) -> String {
        let element = self.client.wait().at_most(Duration::from_secs(10)).for_element(Locator::Css(css)).await;
        element.unwrap_or_else(|e| panic!("{css} never appeared: {e}")).text().await.unwrap()
    }

    /// Saves a screenshot as `test-artifacts/<name>.png`.
    pub async fn screenshot(&self, name: &str) {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("test-artifacts");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{name}.png")), self.client.screenshot().await.unwrap()).unwrap();
    }

    pub async fn close(mut self) {
        self.client.clone().close().await.ok();
        self.driver.kill().ok();
        self.driver.wait().ok();
    }
}

/// A merchant's site on another origin: the page customers return to.
async fn merchant_site() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = axum::Router::new().route(
        "/thanks",
        axum::routing::get(|| async { axum::response::Html("<h1 id=\"merchant\">Thanks from the merchant</h1>") }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    base
}

pub fn backend_name(app: &TestApp) -> &'static str {
    if app.database_url.starts_with("sqlite") { "sqlite" } else { "postgres" }
}

db_tests! {
    async fn a_customer_pays_a_product_in_the_browser_and_lands_on_return_url(app) {
        let merchant = merchant_site().await;
        let shop = app.shop("Corner Books").await;
        let mut body = test_product_body();
        body["visible_fields"] = json!(["first_name", "email"]);
        body["return_url"] = json!(format!("{merchant}/thanks"));
        let product = app.product(&shop, &body).await;

        let browser = Browser::start().await;
        browser.client.goto(product["pay_url"].as_str().unwrap()).await.unwrap();
        assert_eq!(browser.text_of("[data-testid=price]").await, "9.90 EUR");
        assert!(browser.has("input[name=first_name]").await && browser.has("input[name=email]").await);
        for hidden in ["last_name", "country", "state", "city", "address", "zip", "phone", "birth_date", "taxpayer_id"] {
            assert!(!browser.has(&format!("input[name={hidden}]")).await, "{hidden} is not asked for");
        }
        browser.fill("first_name", "Ann").await;
        browser.fill("email", "ann@example.com").await;
        browser.fill_card(cards::SUCCESS).await;
        browser.screenshot(&format!("product-pay-filled-{}", backend_name(&app))).await;
        browser.submit().await;

        assert_eq!(browser.text_of("#merchant").await, "Thanks from the merchant");
        let landed = browser.client.current_url().await.unwrap();
        assert!(landed.as_str().starts_with(&format!("{merchant}/thanks?payment_id=pay_")), "{landed}");
        assert!(landed.as_str().ends_with("&status=succeeded"));
        browser.close().await;

        let (_, payments) = app.get(&shop, "/payments").await;
        assert_eq!(payments[0]["status"], "succeeded");
    }

    async fn a_declined_card_shows_the_reason_in_the_browser(app) {
        let shop = app.shop("Corner Books").await;
        let product = app.product(&shop, &test_product_body()).await;
        let browser = Browser::start().await;
        browser.client.goto(product["pay_url"].as_str().unwrap()).await.unwrap();
        assert!(!browser.has("input[name=email]").await, "no visible fields, no customer inputs");
        browser.fill_card(cards::DECLINED).await;
        browser.submit().await;
        assert_eq!(browser.text_of("[data-testid=failure-reason]").await, "The card was declined.");
        assert!(browser.text_of("[data-testid=failure]").await.contains("Payment declined"));
        browser.screenshot(&format!("product-pay-declined-{}", backend_name(&app))).await;

        // Trying again with a good card works from the same page.
        browser.fill_card(cards::SUCCESS).await;
        browser.submit().await;
        assert_eq!(browser.text_of("[data-testid=receipt-status]").await, "Payment received");
        browser.screenshot(&format!("receipt-{}", backend_name(&app))).await;
        browser.close().await;
    }

    async fn the_browser_refuses_an_incomplete_form_before_sending_it(app) {
        let shop = app.shop("Corner Books").await;
        let mut body = test_product_body();
        body["visible_fields"] = json!(["email"]);
        let product = app.product(&shop, &body).await;
        let browser = Browser::start().await;
        browser.client.goto(product["pay_url"].as_str().unwrap()).await.unwrap();
        browser.fill_card(cards::SUCCESS).await;
        browser.submit().await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let still = browser.client.current_url().await.unwrap();
        assert!(still.as_str().ends_with("/pay"), "{still}");
        let message = browser.client.find(Locator::Css("input[name=email]")).await.unwrap().prop("validationMessage").await;
        assert!(message.unwrap().is_some_and(|m| !m.is_empty()), "the browser explains the missing e-mail");
        browser.close().await;
        let (_, payments) = app.get(&shop, "/payments").await;
        assert_eq!(payments, json!([]), "nothing was sent");
    }

    async fn a_customer_subscribes_on_a_plans_page_in_the_browser(app) {
        let shop = app.shop("City Gym").await;
        let mut body = plan_body();
        body["test"] = json!(true);
        body["language"] = json!("ru");
        body["trial"] = json!({"amount": 100, "interval": 7, "interval_unit": "day"});
        let (_, plan) = app.post(&shop, "/plans", &body).await;
        let browser = Browser::start().await;
        browser.client.goto(plan["pay_url"].as_str().unwrap()).await.unwrap();
        assert!(browser.text_of("[data-testid=price]").await.contains("9,90 EUR каждый месяц"));
        browser.fill("email", "zoe@example.com").await;
        browser.fill_card(cards::SUCCESS).await;
        browser.screenshot(&format!("plan-pay-ru-{}", backend_name(&app))).await;
        browser.submit().await;
        assert_eq!(browser.text_of("[data-testid=receipt-status]").await, "Платёж получен");
        assert_eq!(browser.text_of("[data-testid=receipt-amount]").await, "1,00 EUR");
        browser.close().await;
    }
}
