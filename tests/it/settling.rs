//! Settling a payment made on the processor's page is one step: its status, the unit a
//! failed payment gives back, the customer a paid one makes and the subscription a plan's
//! page opens are seen together or not at all, however many settlings (the processor's
//! notification, the customer's return, the receipt, the sweep) run at once.

use futures::future::join_all;
use reqwest::StatusCode;
use serde_json::json;

use crate::bepaid_pay::{events_of, new_product, quantity, shop_taking_cards_on, sweep, token_of};
use crate::coupons::coupon;
use crate::doubles::bepaid::Gateway;
use crate::helpers::*;
use crate::subscriptions::plan;

type Settling<'a> = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + 'a>>;

/// The customer pays on the processor's page (answers the charge's uid), or leaves it to
/// run out.
fn pay_or_leave(gateway: &Gateway, token: &str, paid: bool) -> Option<String> {
    if paid {
        return gateway.pay_checkout(token, "4200000000000000");
    }
    gateway.expire_checkout(token);
    None
}

/// The customer's return and the receipt (three times each), the processor's notification of
/// `uid` (three times) and the sweep, all at once.
async fn settle_from_every_side(app: &TestApp, gateway: &Gateway, pay_id: &str, uid: Option<&str>) {
    let (back, receipt) = (format!("/payments/{pay_id}/return"), format!("/receipts/{pay_id}"));
    let mut all: Vec<Settling> = Vec::new();
    for _ in 0..3 {
        all.push(Box::pin(async {
            app.page(&back).await;
        }));
        all.push(Box::pin(async {
            app.page(&receipt).await;
        }));
        if let Some(uid) = uid {
            all.push(Box::pin(async move {
                assert_eq!(gateway.notify(uid, false).await, 200);
            }));
        }
    }
    all.push(Box::pin(async {
        sweep(app, 61).await;
    }));
    join_all(all).await;
}

/// Reads a plan page's payment until it is settled: whoever sees it paid sees its customer
/// and its subscription started; whoever sees it failed sees the coupon's redemption back.
async fn watch_plan(app: &TestApp, shop: &Shop, payment_id: &str, coupon_id: &str, redeemed_if_failed: i64) {
    let patience = Patience::start();
    while !patience.spent() {
        let (_, payment) = app.get(shop, &format!("/payments/{payment_id}")).await;
        match payment["status"].as_str().unwrap() {
            "processing" => tokio::task::yield_now().await,
            "succeeded" => {
                assert!(payment["customer_id"].is_string(), "paid, yet no customer: {payment}");
                let sub_id = payment["subscription_id"].as_str();
                let sub_id = sub_id.unwrap_or_else(|| panic!("paid, yet no subscription: {payment}"));
                let (_, sub) = app.get(shop, &format!("/subscriptions/{sub_id}")).await;
                assert_eq!(sub["state"], "active", "paid, yet the subscription waits: {sub}");
                assert_eq!(sub["last_transaction"]["id"], payment["id"], "{sub}");
                return;
            }
            _ => {
                let (_, coupon) = app.get(shop, &format!("/coupons/{coupon_id}")).await;
                assert_eq!(coupon["times_redeemed"], redeemed_if_failed, "failed, yet redeemed: {payment}");
                return;
            }
        }
    }
    panic!("never settled");
}

/// Reads the payment and its product until the payment is settled, checking at every read
/// that whoever sees it settled sees all of it.
async fn watch(app: &TestApp, shop: &Shop, payment_id: &str, product_id: &str, units_if_failed: i64) {
    let patience = Patience::start();
    while !patience.spent() {
        let (_, payment) = app.get(shop, &format!("/payments/{payment_id}")).await;
        match payment["status"].as_str().unwrap() {
            "processing" => tokio::task::yield_now().await,
            "succeeded" => {
                assert!(payment["customer_id"].is_string(), "paid, yet no customer: {payment}");
                return;
            }
            _ => {
                assert_eq!(
                    quantity(app, shop, product_id).await,
                    units_if_failed,
                    "failed, yet its unit is held: {payment}"
                );
                return;
            }
        }
    }
    panic!("never settled");
}

db_tests! {
    async fn whoever_sees_a_processor_page_payment_settled_sees_its_customer_or_its_unit_back(app) {
        let (shop, gateway) = shop_taking_cards_on(&app, "processor_page").await;
        let product = new_product(&app, &shop, json!({"visible_fields": ["email"], "quantity": 100})).await;
        let id = product["id"].as_str().unwrap();
        let path = format!("/products/{id}/pay");
        for round in 0..6 {
            let form = app.open_form(&path).await;
            let token = token_of(&app.submit(&path, &form, &[("email", "ann@example.com")]).await, &gateway);
            let (_, list) = app.get(&shop, &format!("/payments?product={id}&limit=1")).await;
            let pay_id = list[0]["id"].as_str().unwrap().to_string();
            let paid = round % 2 == 0;
            let units_if_failed = quantity(&app, &shop, id).await + 1;
            let uid = pay_or_leave(&gateway, &token, paid);
            let settlings = settle_from_every_side(&app, &gateway, &pay_id, uid.as_deref());
            tokio::join!(settlings, watch(&app, &shop, &pay_id, id, units_if_failed));
            let (status, payment) = app.get(&shop, &format!("/payments/{pay_id}")).await;
            assert_eq!(status, StatusCode::OK);
            let expected = if paid { "succeeded" } else { "failed" };
            assert_eq!(payment["status"], expected, "{payment}");
        }
        let (_, customers) = app.get(&shop, "/customers").await;
        assert_eq!(customers.as_array().unwrap().len(), 1, "one customer for one e-mail");
        assert_eq!(quantity(&app, &shop, id).await, 97, "three sold, three given back");
    }
}

db_tests! {
    async fn whoever_sees_a_plans_page_paid_sees_its_customer_and_its_subscription_started(app) {
        let (shop, gateway) = shop_taking_cards_on(&app, "processor_page").await;
        let plan = plan(&app, &shop, json!({})).await;
        let made = coupon(&app, &shop, json!({"code": "HALF", "percent_off": 50})).await;
        let coupon_id = made["id"].as_str().unwrap();
        let path = format!("/plans/{plan}/pay");
        let mut redeemed = 0;
        for round in 0..6 {
            let form = app.open_form(&path).await;
            let email = format!("ann{round}@example.com");
            let page = app.submit(&path, &form, &[("email", &email), ("coupon", "HALF")]).await;
            let token = token_of(&page, &gateway);
            let (_, list) = app.get(&shop, &format!("/payments?plan={plan}&limit=1")).await;
            let pay_id = list[0]["id"].as_str().unwrap().to_string();
            let paid = round % 2 == 0;
            let uid = pay_or_leave(&gateway, &token, paid);
            let settlings = settle_from_every_side(&app, &gateway, &pay_id, uid.as_deref());
            tokio::join!(settlings, watch_plan(&app, &shop, &pay_id, coupon_id, redeemed));
            redeemed += i64::from(paid);
            let (_, payment) = app.get(&shop, &format!("/payments/{pay_id}")).await;
            assert_eq!(payment["status"], if paid { "succeeded" } else { "failed" }, "{payment}");
        }
        let (_, subs) = app.get(&shop, "/subscriptions").await;
        assert_eq!(subs.as_array().unwrap().len(), 3, "one subscription per paid page: {subs}");
        let (_, coupon) = app.get(&shop, &format!("/coupons/{coupon_id}")).await;
        assert_eq!(coupon["times_redeemed"], 3, "three pages paid, three given back");
        // The payment's event shows it as it was settled: with its customer and subscription.
        let paid = events_of(&app, &shop, "payment.succeeded").await;
        assert_eq!(paid.len(), 3);
        for event in paid {
            let payment = &event["data"]["object"];
            assert!(payment["customer_id"].is_string() && payment["subscription_id"].is_string(), "{event}");
        }
    }

    async fn whoever_sees_a_subscriptions_card_page_paid_sees_the_subscription_started(app) {
        let (shop, gateway) = shop_taking_cards_on(&app, "processor_page").await;
        let plan = plan(&app, &shop, json!({})).await;
        for _ in 0..3 {
            let body = json!({"plan": {"id": plan}, "customer": customer_body()});
            let (status, waiting) = app.post(&shop, "/subscriptions", &body).await;
            assert_eq!(status, StatusCode::CREATED, "{waiting}");
            let card_page = format!("/subscriptions/{}/pay", waiting["id"].as_str().unwrap());
            let form = app.open_form(&card_page).await;
            let token = token_of(&app.submit(&card_page, &form, &[]).await, &gateway);
            let uid = gateway.pay_checkout(&token, "4200000000000000").unwrap();
            let (_, list) = app.get(&shop, &format!("/payments?subscription={}&limit=1", waiting["id"].as_str().unwrap())).await;
            let pay_id = list[0]["id"].as_str().unwrap().to_string();
            let settlings = settle_from_every_side(&app, &gateway, &pay_id, Some(&uid));
            tokio::join!(settlings, watch_plan(&app, &shop, &pay_id, "", 0));
        }
    }
}
