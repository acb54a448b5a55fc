//! Real money end to end in headless Chromium, against the gateway double's own pages: a
//! merchant connects bePaid on the settings page and checks it, a customer pays a product on
//! the processor's page (declined, then paid) and lands on the merchant's site; a card typed
//! on paydesk's page goes through the bank's 3-D Secure check and back to the receipt.

use fantoccini::Locator;
use serde_json::json;

use crate::browser::{Browser, backend_name, merchant_site};
use crate::doubles::bepaid::{self as double};
use crate::helpers::*;

impl Browser {
    /// Replaces what a field holds.
    async fn retype(&self, name: &str, value: &str) {
        let field = self.client.find(Locator::Css(&format!("[name=\"{name}\"]"))).await.unwrap();
        field.clear().await.unwrap();
        field.send_keys(value).await.unwrap();
    }
}

db_tests! {
    async fn a_merchant_connects_bepaid_and_a_customer_pays_on_the_processors_page(app) {
        let m = crate::dashboard::sign_up(&app, "Corner Books", "owner@example.com").await;
        let shop = crate::dashboard::api_shop(&m).await;
        let gateway = double::Gateway::start().await;
        let db = backend_name(&app);
        let b = Browser::start().await;
        b.log_in(&app.base, "owner@example.com").await;
        b.open(&format!("{}/dashboard/settings/processor", app.base)).await;
        b.click("#kind-bepaid").await;
        b.retype("gateway_url", &gateway.url).await;
        b.retype("checkout_url", &gateway.url).await;
        b.fill("test.shop_id", double::SHOP_ID).await;
        b.fill("test.secret_key", double::SECRET).await;
        b.fill("test.public_key", &gateway.public_key).await;
        b.screenshot(&format!("bepaid-settings-{db}")).await;
        b.send("form[action$='/settings/processor'] button[type=submit]").await;
        let notify = b.text_of("[data-testid=notification-url]").await;
        assert_eq!(notify, format!("{}/notifications/bepaid/{}", app.state.config.base_url, shop.id));
        b.send("form[action$='/processor/check'] button[type=submit]").await;
        assert!(b.text_of(".flash").await.contains("The test account: the processor takes it."));
        let (_, processor) = app.get(&shop, "/shop/processor").await;
        assert_eq!((processor["kind"].as_str(), processor["card_entry"].as_str()), (Some("bepaid"), Some("processor_page")));

        let merchant = merchant_site().await;
        let mut body = test_product_body();
        body["visible_fields"] = json!(["email"]);
        body["return_url"] = json!(format!("{merchant}/thanks"));
        let product = app.product(&shop, &body).await;
        let mut found = crate::walk::Findings::default();
        b.open(product["pay_url"].as_str().unwrap()).await;
        assert!(!b.has("input[name=card_number]").await, "no card fields on paydesk's page");
        b.check("bepaid-pay-details", &mut found).await;
        b.fill("email", "ann@example.com").await;
        b.send("form.pay-form button[type=submit]").await;
        assert_eq!(b.text_of("#amount").await, "990 EUR", "on the processor's page");
        let processor_page = b.client.current_url().await.unwrap();
        // Meanwhile its receipt says it is being confirmed, and offers to look again.
        let (_, waiting) = app.get(&shop, "/payments").await;
        b.open(&format!("{}/receipts/{}", app.base, waiting[0]["id"].as_str().unwrap())).await;
        assert_eq!(b.text_of("[data-testid=receipt-status]").await, "Your payment is being confirmed");
        b.check("bepaid-receipt-confirming", &mut found).await;
        assert!(found.0.is_empty(), "{:?}", found.0);
        b.open(processor_page.as_str()).await;
        b.fill("number", "4005550000000019").await;
        b.send("#pay").await;
        assert_eq!(b.text_of("#declined").await, "Declined: try another card.");
        b.fill("number", "4200000000000000").await;
        b.send("#pay").await;
        assert_eq!(b.text_of("#merchant").await, "Thanks from the merchant");
        let landed = b.client.current_url().await.unwrap();
        let q: std::collections::HashMap<String, String> = landed.query_pairs().into_owned().collect();
        assert_eq!(q["status"], "succeeded", "{landed}");
        b.close().await;
        let (_, payments) = app.get(&shop, "/payments").await;
        assert_eq!(payments[0]["status"], "succeeded");
        assert_eq!(payments[0]["card"]["last_4"], "0000");
    }

    async fn a_card_typed_on_paydesks_page_passes_the_banks_check_and_comes_back_to_the_receipt(app) {
        let shop = app.shop("Corner Books").await;
        let gateway = double::Gateway::start().await;
        let account = json!({"shop_id": double::SHOP_ID, "secret_key": double::SECRET, "public_key": gateway.public_key});
        let change = json!({"kind": "bepaid", "card_entry": "paydesk_page", "gateway_url": gateway.url, "test": account});
        assert_eq!(app.put(&shop, "/shop/processor", &change).await.0, reqwest::StatusCode::OK);
        let product = app.product(&shop, &test_product_body()).await;
        let b = Browser::start().await;
        b.open(product["pay_url"].as_str().unwrap()).await;
        assert!(b.text_of("[data-testid=test-banner]").await.contains("4012 0000 0000 1097"), "bePaid's test cards");
        b.fill_card("4012000000001097").await;
        b.send("form.pay-form button[type=submit]").await;
        assert_eq!(b.text_of("h1").await, "3-D Secure", "at the bank's check");
        b.screenshot(&format!("bepaid-3ds-{}", backend_name(&app))).await;
        b.send("#confirm").await;
        assert_eq!(b.text_of("[data-testid=receipt-status]").await, "Payment received");
        b.close().await;
        let (_, payments) = app.get(&shop, "/payments").await;
        assert_eq!(payments[0]["status"], "succeeded");
    }
}
