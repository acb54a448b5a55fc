//! The hosted pages in a real headless Chromium (Debian's `chromium` and `chromedriver`):
//! fill the forms, click, and check what a customer sees. Screenshots of each page land in
//! `test-artifacts/`. These tests fail, never skip, when the browser cannot start.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;

use crate::helpers::*;

/// How many browsers run at once, whatever the number of test threads: each is a few
/// processes that want a core, and the other tests mostly wait on the network.
static AT_ONCE: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(2);

/// How long WebDriver lets a script run (axe-core's run, with `execute_async`, takes well over
/// WebDriver's default 30 s on a busy machine) and a page load: generous, so that only a script
/// or a page that never finishes fails a test.
const SCRIPT_TIMEOUT: Duration = Duration::from_secs(600);
const PAGE_LOAD_TIMEOUT: Duration = Duration::from_secs(300);

/// A headless Chromium driven over WebDriver; the driver process ends with it.
pub struct Browser {
    pub client: Client,
    driver: Child,
    _profile: tempfile::TempDir,
    _turn: tokio::sync::SemaphorePermit<'static>,
}

impl Browser {
    pub async fn start() -> Browser {
        let turn = AT_ONCE.acquire().await.unwrap();
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
        // A driver that could not take its port (another process took it between the probe
        // and the start) is started again on another; on a busy machine one may take a while
        // to listen.
        for _ in 0..3 {
            let patience = Patience::start();
            let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            let mut driver = Command::new("chromedriver")
                .arg(format!("--port={port}"))
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("chromedriver is needed for the browser tests: apt-get install chromium chromium-driver");
            loop {
                // chromedriver speaks plain HTTP on loopback: no TLS stack needed.
                let connected = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
                    .capabilities(capabilities.clone())
                    .connect(&format!("http://127.0.0.1:{port}"))
                    .await;
                match connected {
                    Ok(client) => {
                        // Explicit limits, not WebDriver's defaults (implicit waits stay off).
                        let timeouts = fantoccini::wd::TimeoutConfiguration::new(
                            Some(SCRIPT_TIMEOUT),
                            Some(PAGE_LOAD_TIMEOUT),
                            None,
                        );
                        client.update_timeouts(timeouts).await.expect("WebDriver takes the timeouts");
                        return Browser { client, driver, _profile: profile, _turn: turn };
                    }
                    Err(e) => last_error = e.to_string(),
                }
                if driver.try_wait().ok().flatten().is_some() || patience.spent() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            let _ = driver.kill();
            let _ = driver.wait();
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
        let element = self.client.wait().at_most(PATIENCE).for_element(Locator::Css(css)).await;
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
pub async fn merchant_site() -> String {
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
        assert_eq!(browser.text_of("[data-testid=price]").await, "€9.90");
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
        let q: std::collections::HashMap<String, String> = landed.query_pairs().into_owned().collect();
        assert_eq!(q["status"], "succeeded");
        assert!(q.contains_key("timestamp") && q["signature"].len() == 64, "signed: {landed}");
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
        assert_eq!(
            browser.text_of("[data-testid=failure-reason]").await,
            "Your bank declined the payment. Please try another card, or contact your bank."
        );
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
        assert_eq!(browser.text_of("[data-testid=price]").await.replace('\u{a0}', " "), "9,90 € каждый месяц");
        browser.fill("email", "zoe@example.com").await;
        browser.fill_card(cards::SUCCESS).await;
        browser.screenshot(&format!("plan-pay-ru-{}", backend_name(&app))).await;
        browser.submit().await;
        assert_eq!(browser.text_of("[data-testid=receipt-status]").await, "Платёж получен");
        assert_eq!(browser.text_of("[data-testid=receipt-amount]").await.replace('\u{a0}', " "), "1,00 €");
        assert!(browser.text_of("[data-testid=next-charge]").await.replace('\u{a0}', " ").starts_with("9,90 €, "));
        browser.close().await;
    }

    async fn a_free_trial_reads_free_and_a_used_card_link_says_the_card_is_saved(app) {
        let shop = app.shop("City Gym").await;
        let mut plan = plan_body();
        plan["test"] = json!(true);
        plan["trial"] = json!({"amount": 0, "interval": 14, "interval_unit": "day"});
        let (_, plan) = app.post(&shop, "/plans", &plan).await;
        let (_, customer) = app.post(&shop, "/customers", &json!({"email": "zoe@example.com", "ip": "203.0.113.9"})).await;
        let (_, sub) = app.post(&shop, "/subscriptions", &json!({"plan_id": plan["id"], "customer_id": customer["id"]})).await;
        let link = sub["redirect_url"].as_str().unwrap();
        let browser = Browser::start().await;
        browser.client.goto(link).await.unwrap();
        let terms = browser.text_of("[data-testid=terms]").await;
        let next = (chrono::Utc::now() + chrono::Duration::days(14)).format("%-d %B %Y").to_string();
        assert!(terms.contains("Today: nothing to pay, the first 14 days are free."), "{terms}");
        assert!(terms.contains(&format!("Then €9.90 every month from {next}, until you cancel.")), "{terms}");
        assert!(!browser.client.source().await.unwrap().contains("0.00"), "no zero charge is shown");
        browser.fill_card(cards::SUCCESS).await;
        browser.screenshot(&format!("subscription-card-free-trial-{}", backend_name(&app))).await;
        browser.submit().await;
        assert_eq!(browser.text_of("[data-testid=receipt-status]").await, "Your card is saved");
        assert_eq!(browser.text_of("[data-testid=next-charge]").await, format!("€9.90 on {next}"));
        assert!(browser.client.source().await.unwrap().contains("Gold"), "the receipt names the plan");
        browser.screenshot(&format!("receipt-free-trial-{}", backend_name(&app))).await;

        browser.client.goto(link).await.unwrap();
        assert_eq!(browser.text_of("[data-testid=notice] h2").await, "Your card is already saved");
        assert!(!browser.client.source().await.unwrap().contains("409"));
        browser.close().await;
    }

    async fn a_customer_from_japan_pays_a_product_that_asks_for_state_and_country(app) {
        let shop = app.shop("Corner Books").await;
        let mut body = test_product_body();
        body["visible_fields"] = json!(["email", "country", "state", "zip"]);
        let product = app.product(&shop, &body).await;
        let browser = Browser::start().await;
        browser.client.goto(product["pay_url"].as_str().unwrap()).await.unwrap();
        let state = browser.client.find(Locator::Css("input[name=state]")).await.unwrap();
        assert!(!state.is_displayed().await.unwrap(), "no state is asked before a country is chosen");
        let country = browser.client.find(Locator::Css("select[name=country]")).await.unwrap();
        country.select_by_label("Japan").await.unwrap();
        assert!(!state.is_displayed().await.unwrap(), "Japan has no states to ask for");
        browser.fill("email", "haruki@example.jp").await;
        browser.fill("zip", "100-0001").await;
        browser.fill_card(cards::SUCCESS).await;
        browser.screenshot(&format!("product-pay-japan-{}", backend_name(&app))).await;
        browser.submit().await;
        assert_eq!(browser.text_of("[data-testid=receipt-status]").await, "Payment received");
        let (_, payments) = app.get(&shop, "/payments").await;
        assert_eq!(payments[0]["status"], "succeeded");
        let (_, customer) = app.get(&shop, &format!("/customers/{}", payments[0]["customer_id"].as_str().unwrap())).await;
        assert_eq!(customer["country"], "JP", "{customer}");
        assert_eq!(customer["zip"], "100-0001");
        assert_eq!(customer["state"], serde_json::Value::Null);

        // A customer from the US is asked for the state, and for a US ZIP code.
        browser.client.goto(product["pay_url"].as_str().unwrap()).await.unwrap();
        let country = browser.client.find(Locator::Css("select[name=country]")).await.unwrap();
        country.select_by_value("US").await.unwrap();
        let state = browser.client.find(Locator::Css("input[name=state]")).await.unwrap();
        assert!(state.is_displayed().await.unwrap(), "the US asks for a state");
        browser.fill("email", "ann@example.com").await;
        browser.fill("zip", "100-0001").await;
        browser.fill_card(cards::SUCCESS).await;
        browser.submit().await;
        assert_eq!(browser.text_of("#e-state").await, "Enter the two-letter code of your state or province, for example NY or QC.");
        assert_eq!(browser.text_of("#e-zip").await, "Enter a US ZIP code of 5 digits, or of 5 and 4 digits like 12207-1234.");
        let described = browser.client.find(Locator::Css("input[name=zip]")).await.unwrap().attr("aria-describedby").await.unwrap();
        assert_eq!(described.as_deref(), Some("e-zip"), "the message is announced with the field");
        browser.screenshot(&format!("product-pay-us-refused-{}", backend_name(&app))).await;
        browser.close().await;
    }

    async fn a_test_page_shows_the_test_cards_and_a_live_page_does_not(app) {
        let shop = app.shop("Corner Books").await;
        let test = app.product(&shop, &test_product_body()).await;
        let browser = Browser::start().await;
        browser.client.goto(test["pay_url"].as_str().unwrap()).await.unwrap();
        let banner = browser.text_of("[data-testid=test-banner]").await;
        assert!(banner.starts_with("Test page: no real money moves."), "{banner}");
        for card in ["4200 0000 0000 0000: the payment succeeds", "4005 5500 0000 0019: the bank declines it", "4000 0000 0000 9995: not enough funds"] {
            assert!(banner.contains(card), "{banner}");
        }
        assert!(!browser.client.source().await.unwrap().contains("README"), "customers never read about the README");
        browser.fill_card("4242424242424242").await;
        browser.submit().await;
        assert_eq!(
            browser.text_of("#e-card_number").await,
            "This is not a test card. This page is in test mode: use one of the test cards shown above."
        );
        assert!(!browser.client.source().await.unwrap().contains("README"));
        browser.close().await;

        let (_, plan) = app.post(&shop, "/plans", &plan_body()).await;
        let page = app.page(plan["pay_url"].as_str().unwrap().strip_prefix(&app.base).unwrap()).await;
        assert!(!page.html.contains("test-banner"), "a live page has no test banner");
    }
}
