//! Every page, hosted and dashboard, in headless Chromium at desktop (1280 px) and phone
//! (390 px) width: axe-core (npm, `.ci/axe`) must find no violation, nothing may be wider than
//! the window, and a screenshot of each lands in `test-artifacts/walk-*.png` to look at.

use std::sync::OnceLock;

use fantoccini::Locator;
use serde_json::json;

use crate::browser::{Browser, backend_name};
use crate::dashboard::{PASSWORD, api_shop, sign_up};
use crate::helpers::*;

/// axe-core's script, installed by npm into `.ci/axe` (`.ci/run` does it; so does this test
/// when it is missing, from the committed lock file).
fn axe_source() -> &'static str {
    static SOURCE: OnceLock<String> = OnceLock::new();
    SOURCE.get_or_init(|| {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/axe");
        let script = dir.join("node_modules/axe-core/axe.min.js");
        if !script.exists() {
            let status = std::process::Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund", "--prefix"])
                .arg(&dir)
                .status()
                .expect("npm is needed to install axe-core for the browser tests");
            assert!(status.success(), "npm ci in .ci/axe failed");
        }
        std::fs::read_to_string(&script).expect("axe-core's axe.min.js")
    })
}

const AXE_RUN: &str = r#"
const done = arguments[arguments.length - 1];
axe.run(document, {resultTypes: ['violations']})
  .then(r => done(r.violations.map(v => v.id + ' (' + v.impact + '): ' + v.help + ' at '
      + v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(', '))))
  .catch(e => done(['axe failed: ' + e]));
"#;

const OVERFLOW: &str = r#"
const wide = [];
const limit = document.documentElement.clientWidth;
for (const el of document.querySelectorAll('body *')) {
  const box = el.getBoundingClientRect();
  if (box.width > 0 && box.right > limit + 1 && getComputedStyle(el).position !== 'fixed') {
    let inScroller = false;
    for (let p = el.parentElement; p; p = p.parentElement) {
      const o = getComputedStyle(p).overflowX;
      if ((o === 'auto' || o === 'scroll' || o === 'hidden') && p.clientWidth <= limit) { inScroller = true; break; }
    }
    if (!inScroller) wide.push(el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.className ? '.' + String(el.className).split(' ').join('.') : '') + ' ' + Math.round(box.right) + 'px');
  }
}
return wide.slice(0, 5);
"#;

/// Words of the dashboard's English that a Russian page must not show (the data on it, such as
/// product names and e-mail addresses, may be in any language; text marked with another
/// `lang`, such as an HTTP client's own error, is left out).
const ENGLISH_LEFT: &str = r#"
const words = /(?<![.\w-])(the|your|you|yet|Create|Save|Cancel|Search|Edit|Delete|Archive|Restore|Next page|Settings|Payments|Products|Plans|Customers|Subscriptions|Overview|Log out|Status|Amount|Created|Price|Refund|Capture|Void|Test mode|Live|succeeded|authorized|failed|refunded|active|trial|canceled|pending|can't|must|invalid)(?![\w.])/g;
const quoted = [...document.querySelectorAll('body [lang]:not([lang=ru])')];
quoted.forEach(el => el.dataset.walkDisplay = el.style.display || ' ');
quoted.forEach(el => el.style.display = 'none');
const text = document.body.innerText;
quoted.forEach(el => el.style.display = el.dataset.walkDisplay.trim());
return [...new Set(text.match(words) || [])];
"#;

/// What the walk found wrong, page by page.
#[derive(Default)]
pub struct Findings(pub Vec<String>);

impl Browser {
    /// Checks the page open now at both widths and saves its screenshots as `walk-<name>-*`.
    pub async fn check(&self, name: &str, found: &mut Findings) {
        for (width, height, label) in [(1280u32, 1000u32, "desktop"), (390, 844, "phone")] {
            self.client.set_window_size(width, height).await.unwrap();
            // axe-core is put into each page once (a new size keeps the page).
            let loaded = self.client.execute("return typeof axe !== 'undefined'", vec![]).await.unwrap();
            if loaded != serde_json::Value::Bool(true) {
                self.client.execute(axe_source(), vec![]).await.unwrap();
            }
            let violations = self.client.execute_async(AXE_RUN, vec![]).await.unwrap();
            for v in violations.as_array().unwrap() {
                found.0.push(format!("{name} ({label}): {}", v.as_str().unwrap()));
            }
            let wide = self.client.execute(OVERFLOW, vec![]).await.unwrap();
            for w in wide.as_array().unwrap() {
                found.0.push(format!("{name} ({label}): wider than the window: {}", w.as_str().unwrap()));
            }
            // The whole page in one picture: the window as tall as the page.
            let tall = self.client.execute("return document.documentElement.scrollHeight", vec![]).await.unwrap();
            let tall = tall.as_u64().unwrap_or(height as u64).clamp(height as u64, 6000) as u32;
            self.client.set_window_size(width, tall + 140).await.unwrap();
            self.screenshot(&format!("walk-{name}-{label}")).await;
        }
        self.client.set_window_size(1280, 1000).await.unwrap();
    }

    async fn visit(&self, url: &str, name: &str, found: &mut Findings) {
        self.client.goto(url).await.unwrap();
        self.text_of("h1, h2").await;
        self.check(name, found).await;
    }

    /// Records the English words of the interface left on a page meant to be in Russian.
    async fn no_english(&self, name: &str, found: &mut Findings) {
        let lang = self.client.execute("return document.documentElement.lang", vec![]).await.unwrap();
        if lang != "ru" {
            found.0.push(format!("{name}: <html lang={lang}>, not ru"));
        }
        let left = self.client.execute(ENGLISH_LEFT, vec![]).await.unwrap();
        for word in left.as_array().unwrap() {
            found.0.push(format!("{name}: English left: {}", word.as_str().unwrap()));
        }
    }

    async fn press(&self, css: &str) {
        // A slow machine may still be drawing the page: its button is waited for, and so is
        // the page the button leads to.
        self.send(css).await;
        self.text_of("h1, h2").await;
    }
}

db_tests! {
    async fn every_page_passes_axe_and_fits_a_phone(app) {
        let base = app.base.clone();
        let mut found = Findings::default();
        let m = sign_up(&app, "Corner Books", "owner@example.com").await;
        let shop = api_shop(&m).await;
        crate::invoices::set_seller(&app, &shop).await;
        let mut product = test_product_body();
        product["visible_fields"] = json!(["first_name", "last_name", "email", "phone", "country", "state", "city", "address", "zip", "birth_date", "taxpayer_id", "company", "vat_id"]);
        let product = app.product(&shop, &product).await;
        let live = app.product(&shop, &product_body()).await;
        let mut plan = plan_body();
        plan["test"] = json!(true);
        plan["trial"] = json!({"amount": 0, "interval": 14, "interval_unit": "day"});
        let (_, plan) = app.post(&shop, "/plans", &plan).await;
        let (_, customer) = app.post(&shop, "/customers", &json!({"email": "ann@example.com", "first_name": "Ann", "last_name": "Lee", "ip": "203.0.113.9"})).await;
        let (_, waiting) = app.post(&shop, "/subscriptions", &json!({"plan_id": plan["id"], "customer_id": customer["id"]})).await;
        assert!(waiting["redirect_url"].is_string(), "{plan} {customer} {waiting}");
        let mut platinum = plan_body();
        (platinum["test"], platinum["title"], platinum["plan"]["amount"]) = (json!(true), json!("Platinum"), json!(2990));
        app.post(&shop, "/plans", &platinum).await;
        let card = crate::subscriptions::card_json(cards::SUCCESS);
        let with_card = json!({"plan_id": plan["id"], "customer_id": customer["id"], "card": card});
        let (_, running) = app.post(&shop, "/subscriptions", &with_card).await;
        let (_, paused) = app.post(&shop, "/subscriptions", &with_card).await;
        app.post(&shop, "/coupons", &json!({"code": "LOYAL", "percent_off": 15, "duration": "forever", "test": true})).await;
        let (status, _) = app.post(&shop, &format!("/subscriptions/{}/discount", running["id"].as_str().unwrap()), &json!({"coupon": "LOYAL"})).await;
        assert_eq!(status, reqwest::StatusCode::OK);
        let paused_path = format!("/subscriptions/{}/pause", paused["id"].as_str().unwrap());
        let (status, paused) = app.post(&shop, &paused_path, &json!({"resume_at": "2030-01-01T00:00:00Z"})).await;
        assert_eq!(status, reqwest::StatusCode::OK, "{paused}");
        app.pay(product["id"].as_str().unwrap(), cards::SUCCESS, &[
            ("first_name", "Ann"), ("last_name", "Lee"), ("email", "ann@example.com"), ("phone", "+1 518 555 0100"),
            ("country", "US"), ("state", "NY"), ("city", "Albany"), ("address", "1 Main St"), ("zip", "12207"),
            ("birth_date", "1990-05-01"), ("taxpayer_id", "123"),
        ]).await;
        let mut held = test_product_body();
        held["transaction_type"] = json!("authorization");
        let held = app.product(&shop, &held).await;
        app.pay(held["id"].as_str().unwrap(), cards::SUCCESS, &[]).await;
        let (_, payments) = app.get(&shop, "/payments").await;
        let with = |status: &str| payments.as_array().unwrap().iter().find(|p| p["status"] == status).cloned().unwrap();
        let (payment, authorized) = (&with("succeeded"), &with("authorized"));
        let (_, hook) = app.post(&shop, "/webhook_endpoints", &json!({"url": "https://merchant.example/hooks", "enabled_events": ["*"]})).await;
        let (_, reporting) = app.post(&shop, "/api_keys", &json!({"name": "Reporting", "permissions": {"payments": "read", "refunds": "write"}, "networks": ["127.0.0.1"]})).await;
        let reporting_key = Shop { id: shop.id, secret: reporting["secret"].as_str().unwrap().to_string() };
        assert_eq!(app.get(&reporting_key, "/payments").await.0, reqwest::StatusCode::OK, "a use to show");
        // A payment the card network disputes a few minutes later.
        let disputed = app.product(&shop, &test_product_body()).await;
        app.pay(disputed["id"].as_str().unwrap(), "4000000000000259", &[]).await;
        let later = chrono::Utc::now() + chrono::Duration::minutes(3);
        paydesk::services::network::run(&app.state, None, later).await.unwrap();
        let (_, disputes) = app.get(&shop, "/disputes").await;
        let dispute = format!("/dashboard/disputes/{}", disputes[0]["id"].as_str().unwrap());

        let b = Browser::start().await;
        // Hosted pages.
        b.visit(product["pay_url"].as_str().unwrap(), "product-pay", &mut found).await;
        b.fill("email", "not-an-email").await;
        b.fill_card(cards::SUCCESS).await;
        b.client.execute("document.querySelectorAll('form').forEach(f => f.noValidate = true)", vec![]).await.unwrap();
        b.submit().await;
        b.text_of("[data-testid=errors]").await;
        b.check("product-pay-refused", &mut found).await;
        b.visit(live["pay_url"].as_str().unwrap(), "product-pay-live", &mut found).await;
        b.visit(plan["pay_url"].as_str().unwrap(), "plan-pay", &mut found).await;
        // With a coupon to redeem, the plan's page has its code field: refused, then applied.
        app.post(&shop, "/coupons", &json!({"code": "WALK10", "percent_off": 10, "test": true})).await;
        b.visit(plan["pay_url"].as_str().unwrap(), "plan-pay-coupon", &mut found).await;
        b.fill("coupon", "NOPE").await;
        b.press("[data-testid=apply-coupon]").await;
        b.check("plan-pay-coupon-refused", &mut found).await;
        b.client.execute("document.getElementById('f-coupon').value = 'walk10'", vec![]).await.unwrap();
        b.press("[data-testid=apply-coupon]").await;
        assert!(b.has("[data-testid=coupon-note]").await);
        b.check("plan-pay-coupon-applied", &mut found).await;
        b.visit(waiting["redirect_url"].as_str().unwrap(), "subscription-card", &mut found).await;
        b.visit(&format!("{base}/receipts/{}", payment["id"].as_str().unwrap()), "receipt", &mut found).await;
        let (_, invoices) = app.get(&shop, "/invoices").await;
        b.visit(invoices[0]["hosted_url"].as_str().unwrap(), "invoice", &mut found).await;
        // A Russian page's invoice is in Russian.
        let mut russian = test_product_body();
        (russian["language"], russian["name"]) = (json!("ru"), json!("Подарочная карта"));
        let russian = app.product(&shop, &russian).await;
        app.pay(russian["id"].as_str().unwrap(), cards::SUCCESS, &[]).await;
        let (_, latest) = app.get(&shop, &format!("/invoices?limit=1&payment={}", app.get(&shop, "/payments?limit=1").await.1[0]["id"].as_str().unwrap())).await;
        b.visit(latest[0]["hosted_url"].as_str().unwrap(), "invoice-ru", &mut found).await;
        b.visit(&format!("{base}/products/prd_nothing/pay"), "pay-not-found", &mut found).await;

        // The dashboard, logged out and in.
        b.visit(&format!("{base}/dashboard/signup"), "signup", &mut found).await;
        b.visit(&format!("{base}/dashboard/login"), "login", &mut found).await;
        b.fill("email", "owner@example.com").await;
        b.fill("password", PASSWORD).await;
        b.press("main form button[type=submit]").await;
        let pages = [
            ("/dashboard", "overview".to_string()),
            ("/dashboard/products", "products".into()),
            ("/dashboard/products/new", "product-new".into()),
            ("/dashboard/plans", "plans".into()),
            ("/dashboard/plans/new", "plan-new".into()),
            ("/dashboard/customers", "customers".into()),
            ("/dashboard/customers/new", "customer-new".into()),
            ("/dashboard/payments", "payments".into()),
            ("/dashboard/disputes", "disputes".into()),
            ("/dashboard/subscriptions", "subscriptions".into()),
            ("/dashboard/coupons", "coupons".into()),
            ("/dashboard/webhooks", "webhooks".into()),
            ("/dashboard/api_keys", "api-keys".into()),
            ("/dashboard/settings", "settings".into()),
            ("/dashboard/settings/users", "team".into()),
            ("/dashboard/two-step", "two-step".into()),
            ("/dashboard/sessions", "sessions".into()),
            ("/dashboard/settings/audit", "audit".into()),
            ("/dashboard/settings/invoicing", "invoicing".into()),
            ("/dashboard/invoices", "invoices".into()),
            ("/dashboard/credit_notes", "credit-notes".into()),
            ("/dashboard/revenue?currency=EUR&test=true", "revenue".into()),
            ("/dashboard/revenue/movements?currency=EUR&test=true", "revenue-movements".into()),
            ("/dashboard/settings/processor", "processor".into()),
            ("/dashboard/settings/mails", "mails".into()),
            ("/dashboard/settings/mails/preview/renewal_failed?language=en", "mail-preview".into()),
            ("/dashboard/password", "password".into()),
            ("/docs", "docs".into()),
        ];
        for (path, name) in pages {
            b.visit(&format!("{base}{path}"), &name, &mut found).await;
        }
        let objects = [
            (format!("/dashboard/products/{}", product["id"].as_str().unwrap()), "product"),
            (format!("/dashboard/products/{}/edit", product["id"].as_str().unwrap()), "product-edit"),
            (format!("/dashboard/products/{}/preview", live["id"].as_str().unwrap()), "product-preview"),
            (format!("/dashboard/plans/{}", plan["id"].as_str().unwrap()), "plan"),
            (format!("/dashboard/plans/{}/edit", plan["id"].as_str().unwrap()), "plan-edit"),
            (format!("/dashboard/customers/{}/edit", customer["id"].as_str().unwrap()), "customer-edit"),
            ("/dashboard/products?archived=yes".to_string(), "products-archived"),
            (format!("/dashboard/customers/{}", customer["id"].as_str().unwrap()), "customer"),
            (format!("/dashboard/payments/{}", payment["id"].as_str().unwrap()), "payment"),
            (format!("/dashboard/subscriptions/{}", waiting["id"].as_str().unwrap()), "subscription"),
            (format!("/dashboard/subscriptions/{}", running["id"].as_str().unwrap()), "subscription-trial"),
            (format!("/dashboard/subscriptions/{}", paused["id"].as_str().unwrap()), "subscription-paused"),
            (format!("/dashboard/webhooks/{}", hook["id"].as_str().unwrap()), "webhook"),
            (format!("/dashboard/api_keys/{}", reporting["id"].as_str().unwrap()), "api-key"),
            (dispute.clone(), "dispute"),
            (format!("/dashboard/invoices/{}", invoices[0]["id"].as_str().unwrap()), "invoice-dashboard"),
            ("/dashboard/nothing-here".to_string(), "dashboard-not-found"),
        ];
        for (path, name) in objects {
            b.visit(&format!("{base}{path}"), name, &mut found).await;
        }
        // A confirmation step.
        b.client.goto(&format!("{base}/dashboard/subscriptions/{}", waiting["id"].as_str().unwrap())).await.unwrap();
        b.press("form[action$='/cancel'] button[type=submit]").await;
        assert!(b.has("[data-testid=confirm]").await);
        b.check("subscription-cancel-confirm", &mut found).await;
        b.client.goto(&format!("{base}/dashboard/subscriptions/{}", paused["id"].as_str().unwrap())).await.unwrap();
        b.press("form[action$='/resume'] button[type=submit]").await;
        assert!(b.has("[data-testid=confirm]").await);
        b.check("subscription-resume-confirm", &mut found).await;
        b.client.goto(&format!("{base}/dashboard/subscriptions/{}", running["id"].as_str().unwrap())).await.unwrap();
        b.press("form[action$='/change_plan'] button[type=submit]").await;
        assert!(b.has("[data-testid=confirm]").await);
        b.check("subscription-change-confirm", &mut found).await;
        // Money that moves only after a confirmation: a refund, a void.
        b.client.goto(&format!("{base}/dashboard/payments/{}", payment["id"].as_str().unwrap())).await.unwrap();
        b.press("form[action$='/refund'] button[type=submit]").await;
        b.check("refund-confirm", &mut found).await;
        b.client.goto(&format!("{base}/dashboard/payments/{}", authorized["id"].as_str().unwrap())).await.unwrap();
        b.check("payment-authorized", &mut found).await;
        b.press("form[action$='/void'] button[type=submit]").await;
        assert!(b.has("[data-testid=confirm]").await);
        b.check("void-confirm", &mut found).await;
        // Accepting a dispute asks first.
        b.client.goto(&format!("{base}{dispute}")).await.unwrap();
        b.press("form[action$='/accept'] button[type=submit]").await;
        assert!(b.has("[data-testid=confirm]").await);
        b.check("dispute-accept-confirm", &mut found).await;
        // A webhook endpoint's secret: rotating asks first, then shows the new one once.
        b.client.goto(&format!("{base}/dashboard/webhooks/{}", hook["id"].as_str().unwrap())).await.unwrap();
        b.press("form[action$='/rotate'] button[type=submit]").await;
        b.check("webhook-rotate-confirm", &mut found).await;
        b.press("form[action$='/rotate'] input[name=confirm] ~ button[type=submit]").await;
        assert!(b.has("[data-testid=webhook-secret]").await);
        b.check("webhook-secret", &mut found).await;
        // An API key: made in the form, its secret shown once; revoking asks first.
        b.client.goto(&format!("{base}/dashboard/api_keys")).await.unwrap();
        b.fill("name", "ERP").await;
        b.press("form[action='/dashboard/api_keys'] button[type=submit]").await;
        assert!(b.has("[data-testid=api-key-secret]").await);
        b.check("api-key-secret", &mut found).await;
        b.client.goto(&format!("{base}/dashboard/api_keys/{}", reporting["id"].as_str().unwrap())).await.unwrap();
        b.press("form[action$='/revoke'] button[type=submit]").await;
        b.check("api-key-revoke-confirm", &mut found).await;
        // The payments list found by a search, and a customer's search.
        b.visit(&format!("{base}/dashboard/payments?q=ann%40example.com&mode=test"), "payments-found", &mut found).await;
        b.visit(&format!("{base}/dashboard/payments?q=nothing-like-this"), "payments-none", &mut found).await;
        b.visit(&format!("{base}/dashboard/customers?q=ann"), "customers-found", &mut found).await;
        // An invitation, 11 minutes after the login: the password is asked again first (the
        // form held), then the link is shown once; and the invited user's page.
        app.state.clock.advance(chrono::Duration::minutes(11));
        b.visit(&format!("{base}/dashboard/settings/users"), "team", &mut Findings::default()).await;
        b.fill("email", "newcomer@example.com").await;
        b.press("form[action='/dashboard/settings/users'] button[type=submit]").await;
        assert!(b.has("[data-testid=reauth]").await);
        b.check("reauth", &mut found).await;
        b.fill("reauth_password", PASSWORD).await;
        b.press("[data-testid=reauth] button[type=submit]").await;
        let link = b.client.find(Locator::Css("[data-testid=invitation-link]")).await.unwrap().prop("value").await.unwrap().unwrap();
        b.check("invitation", &mut found).await;
        // A refused dashboard form.
        b.visit(&format!("{base}/dashboard/products/new"), "product-new", &mut Findings::default()).await;
        b.client.execute("document.querySelectorAll('form').forEach(f => f.noValidate = true)", vec![]).await.unwrap();
        b.press("main form:not(.search) button[type=submit]").await;
        b.check("product-new-refused", &mut found).await;
        // The same dashboard in Russian, the user's choice in Settings: every page checked again,
        // and none may still show the English of the interface.
        b.client.goto(&format!("{base}/dashboard/settings")).await.unwrap();
        b.client.execute("document.getElementById('f-language').value = 'ru'", vec![]).await.unwrap();
        b.press("form[action='/dashboard/settings/language'] button[type=submit]").await;
        let ru = [
            ("/dashboard".to_string(), "overview"),
            ("/dashboard/products".into(), "products"),
            ("/dashboard/products?archived=yes".into(), "products-archived"),
            ("/dashboard/products/new".into(), "product-new"),
            (format!("/dashboard/products/{}", product["id"].as_str().unwrap()), "product"),
            (format!("/dashboard/products/{}/edit", product["id"].as_str().unwrap()), "product-edit"),
            ("/dashboard/plans".into(), "plans"),
            ("/dashboard/plans/new".into(), "plan-new"),
            (format!("/dashboard/plans/{}", plan["id"].as_str().unwrap()), "plan"),
            (format!("/dashboard/plans/{}/edit", plan["id"].as_str().unwrap()), "plan-edit"),
            ("/dashboard/customers".into(), "customers"),
            ("/dashboard/customers/new".into(), "customer-new"),
            (format!("/dashboard/customers/{}", customer["id"].as_str().unwrap()), "customer"),
            ("/dashboard/payments".into(), "payments"),
            ("/dashboard/disputes".into(), "disputes"),
            (dispute.clone(), "dispute"),
            ("/dashboard/payments?q=nothing-like-this".into(), "payments-none"),
            (format!("/dashboard/payments/{}", payment["id"].as_str().unwrap()), "payment"),
            (format!("/dashboard/payments/{}", authorized["id"].as_str().unwrap()), "payment-authorized"),
            ("/dashboard/subscriptions".into(), "subscriptions"),
            ("/dashboard/coupons".into(), "coupons"),
            (format!("/dashboard/subscriptions/{}", waiting["id"].as_str().unwrap()), "subscription"),
            (format!("/dashboard/subscriptions/{}", running["id"].as_str().unwrap()), "subscription-trial"),
            (format!("/dashboard/subscriptions/{}", paused["id"].as_str().unwrap()), "subscription-paused"),
            ("/dashboard/webhooks".into(), "webhooks"),
            (format!("/dashboard/webhooks/{}", hook["id"].as_str().unwrap()), "webhook"),
            ("/dashboard/api_keys".into(), "api-keys"),
            (format!("/dashboard/api_keys/{}", reporting["id"].as_str().unwrap()), "api-key"),
            ("/dashboard/settings".into(), "settings"),
            ("/dashboard/settings/users".into(), "team"),
            ("/dashboard/two-step".into(), "two-step"),
            ("/dashboard/sessions".into(), "sessions"),
            ("/dashboard/settings/audit".into(), "audit"),
            ("/dashboard/revenue?currency=EUR&test=true".into(), "revenue"),
            ("/dashboard/revenue/movements?currency=EUR&test=true".into(), "revenue-movements"),
            ("/dashboard/settings/processor".into(), "processor"),
            ("/dashboard/settings/mails".into(), "mails"),
            ("/dashboard/settings/mails/preview/trial_ending?language=ru".into(), "mail-preview"),
            ("/dashboard/password".into(), "password"),
            ("/dashboard/nothing-here".into(), "dashboard-not-found"),
        ];
        for (path, name) in ru {
            let name = format!("ru-{name}");
            b.visit(&format!("{base}{path}"), &name, &mut found).await;
            b.no_english(&name, &mut found).await;
        }
        b.client.goto(&format!("{base}/dashboard/products/new")).await.unwrap();
        b.client.execute("document.querySelectorAll('form').forEach(f => f.noValidate = true)", vec![]).await.unwrap();
        b.press("main form:not(.search) button[type=submit]").await;
        b.check("ru-product-new-refused", &mut found).await;
        b.no_english("ru-product-new-refused", &mut found).await;
        b.client.goto(&format!("{base}/dashboard/payments/{}", payment["id"].as_str().unwrap())).await.unwrap();
        b.press("form[action$='/refund'] button[type=submit]").await;
        b.check("ru-refund-confirm", &mut found).await;
        b.no_english("ru-refund-confirm", &mut found).await;
        b.client.goto(&format!("{base}/dashboard/subscriptions/{}", paused["id"].as_str().unwrap())).await.unwrap();
        b.press("form[action$='/resume'] button[type=submit]").await;
        b.check("ru-subscription-resume-confirm", &mut found).await;
        b.no_english("ru-subscription-resume-confirm", &mut found).await;
        b.client.goto(&format!("{base}/dashboard/subscriptions/{}", running["id"].as_str().unwrap())).await.unwrap();
        b.press("form[action$='/change_plan'] button[type=submit]").await;
        b.check("ru-subscription-change-confirm", &mut found).await;
        b.no_english("ru-subscription-change-confirm", &mut found).await;
        app.state.clock.advance(chrono::Duration::minutes(11));
        b.client.goto(&format!("{base}/dashboard/settings")).await.unwrap();
        b.press("form[action='/dashboard/settings/notifications'] button[type=submit]").await;
        assert!(b.has("[data-testid=reauth]").await);
        b.check("ru-reauth", &mut found).await;
        b.no_english("ru-reauth", &mut found).await;
        // The invited user's page, logged out.
        b.client.delete_all_cookies().await.unwrap();
        b.visit(&link, "invite", &mut found).await;
        // A locked account: its login, and the page of the link that opens it.
        let owner = paydesk::db::users::by_email(&app.db, "owner@example.com").await.unwrap().unwrap();
        let now = chrono::Utc::now();
        let lock = (now + chrono::Duration::minutes(30), paydesk::domain::ids::hash_token("walk-unlock"));
        let entry = paydesk::domain::audit::Entry::new(owner.shop_id, paydesk::domain::audit::Actor::system(), Default::default(), "user.locked");
        assert!(paydesk::db::users::lock(&app.db, &owner.id, lock, None, &entry, now).await.unwrap());
        b.visit(&format!("{base}/dashboard/login"), "login-again", &mut found).await;
        b.fill("email", "owner@example.com").await;
        b.fill("password", PASSWORD).await;
        b.press("main form button[type=submit]").await;
        assert!(b.has("[role=alert]").await);
        b.check("login-locked", &mut found).await;
        b.visit(&format!("{base}/dashboard/unlock/walk-unlock"), "unlock", &mut found).await;
        b.press("main form button[type=submit]").await;
        b.check("login-unlocked", &mut found).await;
        b.visit(&format!("{base}/dashboard/unlock/walk-unlock"), "unlock-spent", &mut found).await;
        b.close().await;

        let db = backend_name(&app);
        assert!(found.0.is_empty(), "on {db}, {} problems:\n{}", found.0.len(), found.0.join("\n"));
    }
}
