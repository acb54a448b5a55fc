//! A customer who leaves the processor's card page without paying (its back link): Stripe's
//! page is closed at once, so the unit it held is free for everyone else, and the customer is
//! back on the product's page to pay again; bePaid's page cannot be closed, so the customer
//! is told they have not paid and led back to it while it stays open.

use reqwest::StatusCode;
use serde_json::json;

use crate::bepaid_pay::{new_product, quantity, shop_taking_cards_on, token_of};
use crate::stripe_pay::{session_of, stripe_shop};

backend_tests! {
    async fn leaving_stripes_page_closes_it_and_frees_the_last_unit_at_once(backend) {
        let (app, shop, stripe) = stripe_shop(backend, "processor_page").await;
        let product = new_product(&app, &shop, json!({"quantity": 1, "visible_fields": ["email"]})).await;
        let id = product["id"].as_str().unwrap();
        let path = format!("/products/{id}/pay");
        let form = app.open_form(&path).await;
        let session = session_of(&app.submit(&path, &form, &[("email", "ann@example.com")]).await, &stripe);
        assert_eq!(quantity(&app, &shop, id).await, 0, "held while the customer is on Stripe's page");
        let sent = stripe.session(&session).form;
        let pay_id = sent["client_reference_id"].clone();
        assert_eq!(sent["cancel_url"], format!("{}/payments/{pay_id}/back", app.state.config.base_url));
        assert_ne!(sent["cancel_url"], sent["success_url"]);

        let back = app.page(&format!("/payments/{pay_id}/back")).await;
        assert_eq!(back.status, StatusCode::SEE_OTHER);
        assert_eq!(back.location(), format!("{}/products/{id}/pay", app.state.config.base_url), "back to pay again");
        assert_eq!(stripe.session(&session).status, "expired", "closed at Stripe: nobody can pay there any more");
        assert_eq!(quantity(&app, &shop, id).await, 1, "the unit is free again at once");
        let (_, payment) = app.get(&shop, &format!("/payments/{pay_id}")).await;
        assert_eq!((payment["status"].as_str(), payment["failure_code"].as_str()), (Some("failed"), Some("payment_canceled")), "{payment}");
        // Someone else buys the last unit now; the first customer's back link again changes nothing.
        let page = app.page(&path).await;
        assert!(!page.html.contains("Sold out"), "{}", page.html);
        let form = app.open_form(&path).await;
        let other = session_of(&app.submit(&path, &form, &[("email", "bob@example.com")]).await, &stripe);
        stripe.pay_session(&other, "4242424242424242").unwrap();
        let again = app.page(&format!("/payments/{pay_id}/back")).await;
        assert_eq!(again.location(), format!("{}/products/{id}/pay", app.state.config.base_url));
        assert_eq!(quantity(&app, &shop, id).await, 0);
    }
}

db_tests! {
    async fn leaving_bepaids_page_says_nothing_was_paid_and_leads_back_to_it(app) {
        let (shop, gateway) = shop_taking_cards_on(&app, "processor_page").await;
        let product = new_product(&app, &shop, json!({"visible_fields": ["email"]})).await;
        let id = product["id"].as_str().unwrap();
        let path = format!("/products/{id}/pay");
        let form = app.open_form(&path).await;
        let sent = app.submit(&path, &form, &[("email", "ann@example.com")]).await;
        let token = token_of(&sent, &gateway);
        let order = gateway.checkout_order(&token);
        let pay_id = order["tracking_id"].as_str().unwrap();
        assert_eq!(order["settings"]["cancel_url"], format!("{}/payments/{pay_id}/back", app.state.config.base_url));
        let back = app.page(&format!("/payments/{pay_id}/back")).await;
        assert_eq!(back.status, StatusCode::OK);
        assert!(back.html.contains("You have not paid yet") && back.html.contains("Nothing was charged"), "{}", back.html);
        assert!(!back.html.contains("do not pay again"), "{}", back.html);
        assert!(back.html.contains("data-testid=\"return-to-page\"") && back.html.contains(&token), "back to bePaid's page: {}", back.html);
        // Paid there after all: the back link leads on as a payment does.
        gateway.pay_checkout(&token, "4200000000000000").unwrap();
        let paid = app.page(&format!("/payments/{pay_id}/back")).await;
        assert_eq!(paid.location(), format!("{}/payments/{pay_id}/return", app.state.config.base_url));
        let (_, payment) = app.get(&shop, &format!("/payments/{pay_id}")).await;
        assert_eq!(payment["status"], "succeeded");
    }
}
