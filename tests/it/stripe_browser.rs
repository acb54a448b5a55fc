//! Stripe end to end in headless Chromium, against the Stripe double's own pages: a merchant
//! connects Stripe on the settings page and checks it; a customer pays a product on Stripe's
//! Checkout page (declined, then paid) and lands on the merchant's site; a subscriber pays a
//! plan there and the subscription starts with the card Stripe saved; from their subscriber
//! page they save a new card on Stripe's page.

use serde_json::json;

use crate::browser::{Browser, backend_name, merchant_site};
use crate::doubles::stripe::{self as double, StripeDouble};
use crate::helpers::*;

/// The app with Stripe's API at a new double.
async fn app_on(backend: Backend) -> (TestApp, StripeDouble) {
    let stripe = StripeDouble::start().await;
    let args = paydesk::config::ConfigArgs { stripe_api_url: Some(stripe.url.clone()), ..Default::default() };
    (TestApp::spawn_with(backend, args).await, stripe)
}

backend_tests! {
    async fn a_merchant_connects_stripe_and_customers_pay_a_product_and_a_plan_on_its_checkout(backend) {
        let (app, stripe) = app_on(backend).await;
        let m = crate::dashboard::sign_up(&app, "Corner Books", "owner@example.com").await;
        let shop = crate::dashboard::api_shop(&m).await;
        let db = backend_name(&app);
        let b = Browser::start().await;
        let mut found = crate::walk::Findings::default();
        b.log_in(&app.base, "owner@example.com").await;
        b.open(&format!("{}/dashboard/settings/processor", app.base)).await;
        b.click("#kind-stripe").await;
        b.fill("test.secret_key", double::SECRET).await;
        b.fill("test.webhook_secret", double::WEBHOOK_SECRET).await;
        b.send("form[action$='/settings/processor'] button[type=submit]").await;
        let hook = b.text_of("[data-testid=notification-url]").await;
        assert_eq!(hook, format!("{}/notifications/stripe/{}", app.state.config.base_url, shop.id));
        assert!(b.text_of("[data-testid=stripe-events]").await.contains("checkout.session.completed"));
        b.send("form[action$='/processor/check'] button[type=submit]").await;
        assert!(b.text_of(".flash").await.contains("The test account: the processor takes it."));
        b.check(&format!("stripe-settings-{db}"), &mut found).await;
        let page = b.client.source().await.unwrap();
        assert!(!page.contains(double::SECRET) && !page.contains(double::WEBHOOK_SECRET), "secrets never shown");
        let (_, processor) = app.get(&shop, "/shop/processor").await;
        assert_eq!((processor["kind"].as_str(), processor["card_entry"].as_str()), (Some("stripe"), Some("processor_page")));

        // A product: declined on Stripe's page, then paid; back on the merchant's site.
        let merchant = merchant_site().await;
        let mut body = test_product_body();
        body["visible_fields"] = json!(["email"]);
        body["return_url"] = json!(format!("{merchant}/thanks"));
        let product = app.product(&shop, &body).await;
        b.open(product["pay_url"].as_str().unwrap()).await;
        assert!(b.text_of("[data-testid=test-banner]").await.contains("4242 4242 4242 4242"), "Stripe's test cards");
        b.check(&format!("stripe-pay-details-{db}"), &mut found).await;
        b.fill("email", "ann@example.com").await;
        b.send("form.pay-form button[type=submit]").await;
        assert_eq!(b.text_of("#amount").await, "990 eur", "on Stripe's page");
        b.fill("number", "4000000000000341").await;
        b.send("#pay").await;
        assert!(b.text_of("#declined").await.contains("declined"));
        b.fill("number", "4242424242424242").await;
        b.send("#pay").await;
        assert_eq!(b.text_of("#merchant").await, "Thanks from the merchant");
        let landed = b.client.current_url().await.unwrap();
        let q: std::collections::HashMap<String, String> = landed.query_pairs().into_owned().collect();
        assert_eq!(q["status"], "succeeded", "{landed}");
        let (_, payments) = app.get(&shop, "/payments").await;
        assert_eq!(payments[0]["status"], "succeeded");
        assert_eq!(payments[0]["card"]["last_4"], "4242");

        // A plan: paid on Stripe's page, the card kept for the renewals.
        let (_, plan) = app.post(&shop, "/plans", &{
            let mut plan = plan_body();
            plan["test"] = json!(true);
            plan
        }).await;
        b.open(plan["pay_url"].as_str().unwrap()).await;
        b.check(&format!("stripe-plan-{db}"), &mut found).await;
        b.fill("email", "bob@example.com").await;
        b.send("form.pay-form button[type=submit]").await;
        b.fill("number", "4242424242424242").await;
        b.send("#pay").await;
        assert_eq!(b.text_of("[data-testid=receipt-status]").await, "Payment received");
        b.check(&format!("stripe-plan-receipt-{db}"), &mut found).await;

        // Bob saves a new card on Stripe's page from his subscriber page; nothing is charged.
        let (_, subs) = app.get(&shop, "/subscriptions").await;
        let (sub_id, bob) = (subs[0]["id"].as_str().unwrap(), subs[0]["customer"]["id"].as_str().unwrap());
        b.open(&crate::portal::minted(&app, &shop, bob).await).await;
        b.send("button[data-testid=submit]").await;
        b.click("[data-testid=update-card]").await;
        b.check(&format!("stripe-portal-card-{db}"), &mut found).await;
        b.send("form.pay-form button[type=submit]").await;
        assert!(b.text_of("#amount").await.starts_with('0'), "nothing to pay on Stripe's page");
        b.fill("number", "5555555555554444").await;
        b.send("#pay").await;
        assert!(b.text_of("[data-testid=flash]").await.contains("new card is saved"));
        b.check(&format!("stripe-portal-card-saved-{db}"), &mut found).await;
        let (_, saved) = app.get(&shop, &format!("/subscriptions/{sub_id}")).await;
        assert_eq!(saved["card"]["last_4"], "4444", "{saved}");
        b.close().await;
        assert!(found.0.is_empty(), "{:?}", found.0);
        let (_, subs) = app.get(&shop, "/subscriptions").await;
        let [sub] = subs.as_array().unwrap().clone().try_into().unwrap();
        assert_eq!((sub["state"].as_str(), sub["customer"]["email"].as_str()), (Some("active"), Some("bob@example.com")), "{sub}");
        let saved = stripe.intents().into_iter().filter(|i| i.setup_future_usage.as_deref() == Some("off_session")).count();
        assert_eq!(saved, 1, "the plan's card is saved for renewals");
    }
}
