//! Real money through a shop's bePaid account against the local gateway double. Cards typed
//! on paydesk's page: payments and declines, 3-D Secure that completes or expires, answers
//! lost under every fault (one charge, settled by lookup), renewals marked as the
//! merchant's, captures, voids and refunds with paydesk's own checks first. Cards typed on
//! the processor's page (Checkout): products, plans and a subscription's card page, paid,
//! declined and retried there, abandoned.

use chrono::{Duration, Utc};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::doubles::bepaid::{self as double, Fault};
use crate::helpers::*;
use crate::subscriptions::{advance, card_json, clock, plan};

/// A shop whose test payments go through the double, cards typed on paydesk's page.
pub async fn bepaid_shop(app: &TestApp) -> (Shop, double::Gateway) {
    shop_taking_cards_on(app, "paydesk_page").await
}

/// A shop whose test payments go through the double, cards typed on `entry`.
pub async fn shop_taking_cards_on(app: &TestApp, entry: &str) -> (Shop, double::Gateway) {
    let shop = app.shop("Corner Books").await;
    let gateway = double::Gateway::start().await;
    let key = gateway.public_key.clone();
    let body = json!({"kind": "bepaid", "card_entry": entry, "gateway_url": gateway.url, "checkout_url": gateway.url,
                      "test": {"shop_id": double::SHOP_ID, "secret_key": double::SECRET, "public_key": key}});
    let (status, processor) = app.put(&shop, "/shop/processor", &body).await;
    assert_eq!(status, StatusCode::OK, "{processor}");
    (shop, gateway)
}

/// A finite test product of 990.
pub async fn new_product(app: &TestApp, shop: &Shop, change: Value) -> Value {
    let mut body = test_product_body();
    body["quantity"] = json!(5);
    body["infinite"] = json!(false);
    for (k, v) in change.as_object().unwrap() {
        body[k] = v.clone();
    }
    app.product(shop, &body).await
}

/// The product's one payment, as the API shows it.
pub async fn payment_of(app: &TestApp, shop: &Shop, product: &str) -> Value {
    let (_, list) = app.get(shop, &format!("/payments?product={product}")).await;
    let list = list.as_array().unwrap();
    assert_eq!(list.len(), 1, "{list:?}");
    list[0].clone()
}

pub async fn quantity(app: &TestApp, shop: &Shop, product: &str) -> i64 {
    app.get(shop, &format!("/products/{product}")).await.1["quantity"].as_i64().unwrap()
}

/// The stored payment.
pub async fn stored(app: &TestApp, id: &str) -> paydesk::db::entities::payments::Model {
    paydesk::db::find_public::<paydesk::db::entities::payments::Entity>(&app.db, id).await.unwrap().unwrap()
}

/// A held authorization of a new product: its payment's id.
async fn authorized(app: &TestApp, shop: &Shop) -> String {
    let product = new_product(app, shop, json!({"transaction_type": "authorization"})).await;
    let id = product["id"].as_str().unwrap();
    assert_eq!(app.pay(id, "4200000000000000", &[]).await.status, StatusCode::SEE_OTHER);
    payment_of(app, shop, id).await["id"].as_str().unwrap().to_string()
}

/// The settling sweep run as the scheduler runs it, `minutes` from now.
pub async fn sweep(app: &TestApp, minutes: i64) -> usize {
    paydesk::services::billing::settle_interrupted(&app.state, Utc::now() + Duration::minutes(minutes)).await.unwrap()
}

db_tests! {
    async fn a_card_typed_on_paydesks_page_is_charged_once_through_the_shops_bepaid_account(app) {
        let (shop, gateway) = bepaid_shop(&app).await;
        let product = new_product(&app, &shop, json!({})).await;
        let id = product["id"].as_str().unwrap();
        let paid = app.pay(id, "4200000000000000", &[]).await;
        assert_eq!(paid.status, StatusCode::SEE_OTHER, "{}", paid.html);
        let payment = payment_of(&app, &shop, id).await;
        assert_eq!(payment["status"], "succeeded");
        let [charge] = gateway.transactions().try_into().unwrap();
        assert_eq!((charge.kind.as_str(), charge.amount, charge.currency.as_str()), ("payment", 990, "EUR"));
        assert_eq!(charge.tracking_id, payment["id"].as_str().unwrap(), "paydesk's own reference");
        assert_eq!(charge.initiator.as_deref(), Some("customer"));
        let stored = paydesk::db::find_public::<paydesk::db::entities::payments::Entity>(&app.db, payment["id"].as_str().unwrap())
            .await.unwrap().unwrap();
        assert_eq!(stored.acquirer_reference.as_deref(), Some(charge.uid.as_str()));
        assert_eq!(gateway.number_of(&stored.card_token).as_deref(), Some("4200000000000000"), "the vault's token");
        assert!(!stored.card_token.contains("4200000000000000"), "never the number");
        assert_eq!(quantity(&app, &shop, id).await, 4);

        // A decline shows the form again with the reason, and the unit goes back.
        let other = new_product(&app, &shop, json!({})).await;
        let declined = app.pay(other["id"].as_str().unwrap(), "4005550000000019", &[]).await;
        assert_eq!(declined.status, StatusCode::PAYMENT_REQUIRED);
        let payment = payment_of(&app, &shop, other["id"].as_str().unwrap()).await;
        assert_eq!((payment["status"].as_str(), payment["failure_code"].as_str()), (Some("failed"), Some("card_declined")));
        assert_eq!(quantity(&app, &shop, other["id"].as_str().unwrap()).await, 5);
    }

    async fn a_lost_answer_is_looked_up_and_never_charged_twice(app) {
        let (shop, gateway) = bepaid_shop(&app).await;
        for fault in [Fault::ServerError, Fault::BadGatewayAfter, Fault::DropAfter, Fault::TooMany] {
            let product = new_product(&app, &shop, json!({})).await;
            let id = product["id"].as_str().unwrap();
            gateway.fail_next(&[fault]);
            let answered = app.pay(id, "4200000000000000", &[]).await;
            let payment = payment_of(&app, &shop, id).await;
            let receipt = format!("{}/receipts/{}", app.state.config.base_url, payment["id"].as_str().unwrap());
            assert_eq!((answered.status, answered.location()), (StatusCode::SEE_OTHER, receipt.as_str()), "{fault:?}");
            assert_eq!(payment["status"], "processing", "{fault:?}: not guessed");
            assert_eq!(quantity(&app, &shop, id).await, 4, "{fault:?}: the unit stays taken meanwhile");

            assert_eq!(sweep(&app, 0).await, 0, "{fault:?}: not before its lookup is due");
            assert!(sweep(&app, 3).await >= 1, "{fault:?}");
            let payment = payment_of(&app, &shop, id).await;
            assert_eq!(payment["status"], "succeeded", "{fault:?}");
            let tracking = payment["id"].as_str().unwrap();
            let made = gateway.transactions().into_iter().filter(|t| t.tracking_id == tracking).count();
            assert_eq!(made, 1, "{fault:?}: one charge");
            assert_eq!(sweep(&app, 10).await, 0, "{fault:?}: settled for good");
        }
    }

    async fn three_d_secure_sends_the_customer_to_the_bank_and_the_receipt_asks_how_it_ended(app) {
        let (shop, gateway) = bepaid_shop(&app).await;
        let product = new_product(&app, &shop, json!({})).await;
        let id = product["id"].as_str().unwrap();
        let answered = app.pay(id, "4012000000003010", &[]).await;
        let [charge] = gateway.transactions().try_into().unwrap();
        assert_eq!(answered.status, StatusCode::SEE_OTHER);
        assert_eq!(answered.location(), format!("{}/process/{}", gateway.url, charge.uid), "to the bank's challenge");
        let payment = payment_of(&app, &shop, id).await;
        assert_eq!(payment["status"], "processing");
        let receipt = format!("/receipts/{}", payment["id"].as_str().unwrap());
        let waiting = app.page(&receipt).await;
        assert!(waiting.html.contains("Your payment is being confirmed"), "{}", waiting.html);

        gateway.finish_3ds(&charge.uid, true);
        let back = app.page(&receipt).await;
        assert!(back.html.contains("Payment received"), "{}", back.html);
        assert_eq!(payment_of(&app, &shop, id).await["status"], "succeeded");
        assert_eq!(gateway.transactions().len(), 1);
        assert_eq!(quantity(&app, &shop, id).await, 4);

        // Abandoned: within the hour it waits; after it, it expires and the unit goes back.
        let other = new_product(&app, &shop, json!({})).await;
        let other_id = other["id"].as_str().unwrap();
        app.pay(other_id, "4012000000001097", &[]).await;
        assert_eq!(quantity(&app, &shop, other_id).await, 4);
        sweep(&app, 30).await;
        assert_eq!(payment_of(&app, &shop, other_id).await["status"], "processing");
        sweep(&app, 61).await;
        let expired = payment_of(&app, &shop, other_id).await;
        assert_eq!((expired["status"].as_str(), expired["failure_code"].as_str()), (Some("failed"), Some("payment_expired")));
        assert_eq!(quantity(&app, &shop, other_id).await, 5);
    }

    async fn captures_voids_and_refunds_go_to_the_processor_after_paydesks_own_checks(app) {
        let (shop, gateway) = bepaid_shop(&app).await;
        let captured = authorized(&app, &shop).await;
        let (status, payment) = app.post(&shop, &format!("/payments/{captured}/capture"), &json!({})).await;
        assert_eq!((status, payment["status"].as_str()), (StatusCode::OK, Some("succeeded")), "{payment}");
        let voided = authorized(&app, &shop).await;
        let (status, payment) = app.post(&shop, &format!("/payments/{voided}/void"), &json!({})).await;
        assert_eq!((status, payment["status"].as_str()), (StatusCode::OK, Some("voided")), "{payment}");
        let kinds: Vec<String> = gateway.transactions().iter().map(|t| t.kind.clone()).collect();
        assert_eq!(kinds, ["authorization", "capture", "authorization", "void"]);

        let refunds = format!("/payments/{captured}/refund");
        let (status, refund) = app.post(&shop, &refunds, &json!({"amount": 300})).await;
        assert_eq!((status, refund["status"].as_str()), (StatusCode::CREATED, Some("succeeded")), "{refund}");
        let (status, _) = app.post(&shop, &refunds, &json!({"amount": 691})).await;
        assert!(status.is_client_error(), "paydesk refuses more than is left before asking");
        let (status, refund) = app.post(&shop, &refunds, &json!({"amount": 690, "reason": "damaged"})).await;
        assert_eq!((status, refund["status"].as_str()), (StatusCode::CREATED, Some("succeeded")), "{refund}");
        let given: Vec<(i64, Option<String>)> =
            gateway.transactions().iter().filter(|t| t.kind == "refund").map(|t| (t.amount, t.reason.clone())).collect();
        assert_eq!(given, [(300, Some("Refund requested by the merchant".into())), (690, Some("damaged".into()))]);
        // bePaid gives back a capture's money, never an authorization's: the refunds name it.
        let capture_uid = gateway.transactions().iter().find(|t| t.kind == "capture").unwrap().uid.clone();
        let parents: Vec<_> =
            gateway.transactions().iter().filter(|t| t.kind == "refund").map(|t| t.parent_uid.clone()).collect();
        assert_eq!(parents, [Some(capture_uid.clone()), Some(capture_uid)]);
    }

    async fn renewals_are_charged_to_the_stored_token_as_the_merchants_and_once_each(app) {
        let (shop, gateway) = bepaid_shop(&app).await;
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2026-01-01T10:00:00Z").await;
        let body = json!({"plan": {"id": plan}, "customer": customer_body(), "card": card_json("4200000000000000"),
                          "test_clock": clock});
        let (status, sub) = app.post(&shop, "/subscriptions", &body).await;
        assert_eq!(status, StatusCode::CREATED, "{sub}");
        let id = sub["id"].as_str().unwrap();
        // A renewal's answer is lost once: the next run looks it up instead of charging again.
        advance(&app, &shop, &clock, "2026-01-08T11:00:00Z").await;
        gateway.fail_next(&[Fault::BadGatewayAfter]);
        advance(&app, &shop, &clock, "2026-04-01T00:00:00Z").await;
        let (_, list) = app.get(&shop, &format!("/payments?subscription={id}&limit=100")).await;
        let statuses: Vec<&str> = list.as_array().unwrap().iter().map(|p| p["status"].as_str().unwrap()).collect();
        assert!(statuses.iter().all(|s| *s == "succeeded"), "{statuses:?}");
        let charges: Vec<_> = gateway.transactions().into_iter().filter(|t| t.kind == "payment").collect();
        assert_eq!(charges.len(), statuses.len(), "one gateway charge per payment");
        let tracking: std::collections::HashSet<&str> = charges.iter().map(|t| t.tracking_id.as_str()).collect();
        assert_eq!(tracking.len(), charges.len());
        assert!(charges[1..].iter().all(|t| t.initiator.as_deref() == Some("merchant")), "renewals are the merchant's");
    }
}

/// The Checkout token of the processor's page an answer sends the customer to.
pub fn token_of(page: &Page, gateway: &double::Gateway) -> String {
    assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.html);
    let prefix = format!("{}/checkout?token=", gateway.url);
    page.location()
        .strip_prefix(&prefix)
        .unwrap_or_else(|| panic!("to the processor's page: {}", page.location()))
        .to_string()
}

db_tests! {
    async fn a_product_is_paid_on_the_processors_page_and_the_customer_comes_back_to_the_merchant(app) {
        let (shop, gateway) = shop_taking_cards_on(&app, "processor_page").await;
        let mut change = json!({"return_url": "https://books.example/thanks"});
        change["visible_fields"] = json!(["email"]);
        let product = new_product(&app, &shop, change).await;
        let id = product["id"].as_str().unwrap();
        let path = format!("/products/{id}/pay");
        let page = app.page(&path).await;
        assert!(!page.html.contains("card_number"), "no card fields on paydesk's page");
        assert!(page.html.contains("data-testid=\"card-elsewhere\""));
        assert!(page.html.contains("4012 0000 0000 1097"), "the processor's test cards");
        let form = app.open_form(&path).await;
        let sent = app.submit(&path, &form, &[("email", "ann@example.com")]).await;
        let token = token_of(&sent, &gateway);
        let order = gateway.checkout_order(&token);
        let payment = payment_of(&app, &shop, id).await;
        let pay_id = payment["id"].as_str().unwrap();
        assert_eq!((order["amount"].as_i64(), order["tracking_id"].as_str()), (Some(990), Some(pay_id)));
        let back = format!("{}/payments/{pay_id}/return", app.state.config.base_url);
        assert_eq!(order["settings"]["success_url"], back.as_str());
        assert_eq!(payment["status"], "processing");
        assert_eq!(payment["card"], Value::Null, "no card before paying");
        assert_eq!(payment["customer_id"], Value::Null, "not a customer before paying");
        // The same form sent again goes to the same page, not a second payment.
        let again = app.submit(&path, &form, &[("email", "ann@example.com")]).await;
        assert_eq!(token_of(&again, &gateway), token);

        // Declined on the processor's page, then paid with another card.
        gateway.pay_checkout(&token, "4005550000000019").unwrap();
        let early = app.page(&format!("/payments/{pay_id}/return")).await;
        assert_eq!(early.location(), format!("{}/receipts/{pay_id}", app.state.config.base_url), "still open");
        gateway.pay_checkout(&token, "4200000000000000").unwrap();
        let returned = app.page(&format!("/payments/{pay_id}/return")).await;
        assert_eq!(returned.status, StatusCode::SEE_OTHER);
        assert!(returned.location().starts_with("https://books.example/thanks?payment_id="), "{}", returned.location());
        assert!(returned.location().contains("status=succeeded") && returned.location().contains("signature="));
        let payment = payment_of(&app, &shop, id).await;
        assert_eq!(payment["status"], "succeeded");
        let (_, customer) = app.get(&shop, &format!("/customers/{}", payment["customer_id"].as_str().unwrap())).await;
        assert_eq!(customer["email"], "ann@example.com");
        assert_eq!(payment["card"]["last_4"], "0000", "{payment}");
        assert_eq!(quantity(&app, &shop, id).await, 4);
        let paid: Vec<_> = gateway.transactions().into_iter().filter(|t| t.tracking_id == pay_id).collect();
        assert_eq!(paid.iter().filter(|t| t.status == "successful").count(), 1);
    }

    async fn an_abandoned_processor_page_expires_and_gives_the_unit_back(app) {
        let (shop, gateway) = shop_taking_cards_on(&app, "processor_page").await;
        let mut change = json!({});
        change["visible_fields"] = json!(["email"]);
        let product = new_product(&app, &shop, change).await;
        let id = product["id"].as_str().unwrap();
        let path = format!("/products/{id}/pay");
        let form = app.open_form(&path).await;
        let token = token_of(&app.submit(&path, &form, &[("email", "ann@example.com")]).await, &gateway);
        assert_eq!(quantity(&app, &shop, id).await, 4);
        sweep(&app, 30).await;
        assert_eq!(payment_of(&app, &shop, id).await["status"], "processing", "the page is still open");
        gateway.expire_checkout(&token);
        sweep(&app, 61).await;
        let expired = payment_of(&app, &shop, id).await;
        assert_eq!((expired["status"].as_str(), expired["failure_code"].as_str()), (Some("failed"), Some("payment_expired")));
        assert_eq!(quantity(&app, &shop, id).await, 5);
        let (_, customers) = app.get(&shop, "/customers").await;
        assert_eq!(customers.as_array().map(Vec::len), Some(0), "no customer for an unpaid page");
    }

    async fn a_plan_and_a_subscriptions_card_page_store_the_card_the_processors_page_took(app) {
        let (shop, gateway) = shop_taking_cards_on(&app, "processor_page").await;
        let plan = plan(&app, &shop, json!({})).await;
        let path = format!("/plans/{plan}/pay");
        let form = app.open_form(&path).await;
        let token = token_of(&app.submit(&path, &form, &[("email", "ann@example.com")]).await, &gateway);
        assert_eq!(gateway.checkout_order(&token)["additional_data"]["contract"], json!(["recurring"]));
        gateway.pay_checkout(&token, "4200000000000000").unwrap();
        let (_, payments) = app.get(&shop, &format!("/payments?plan={plan}")).await;
        let pay_id = payments[0]["id"].as_str().unwrap().to_string();
        app.page(&format!("/payments/{pay_id}/return")).await;
        let (_, subs) = app.get(&shop, "/subscriptions").await;
        let [sub] = subs.as_array().unwrap().clone().try_into().unwrap();
        assert_eq!(sub["state"], "active", "{sub}");
        assert_eq!(sub["customer"]["email"], "ann@example.com");
        let stored = paydesk::db::find_public::<paydesk::db::entities::subscriptions::Entity>(&app.db, sub["id"].as_str().unwrap())
            .await.unwrap().unwrap();
        assert_eq!(gateway.number_of(stored.card_token.as_deref().unwrap()).as_deref(), Some("4200000000000000"));

        // A subscription made through the API without a card takes it on the processor's page.
        let body = json!({"plan": {"id": plan}, "customer": customer_body()});
        let (status, waiting) = app.post(&shop, "/subscriptions", &body).await;
        assert_eq!(status, StatusCode::CREATED, "{waiting}");
        let card_page = format!("/subscriptions/{}/pay", waiting["id"].as_str().unwrap());
        let form = app.open_form(&card_page).await;
        let token = token_of(&app.submit(&card_page, &form, &[]).await, &gateway);
        gateway.pay_checkout(&token, "4200000000000000").unwrap();
        sweep(&app, 3).await;
        let (_, started) = app.get(&shop, &format!("/subscriptions/{}", waiting["id"].as_str().unwrap())).await;
        assert_eq!(started["state"], "active", "{started}");
        assert_eq!(started["card"]["last_4"], "0000");
    }

    async fn a_subscriber_saves_a_new_card_on_bepaids_page_by_tokenization(app) {
        let (shop, gateway) = shop_taking_cards_on(&app, "processor_page").await;
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2026-01-01T10:00:00Z").await;
        let body = json!({"plan": {"id": plan}, "customer": customer_body(), "test_clock": clock});
        let (_, sub) = app.post(&shop, "/subscriptions", &body).await;
        let id = sub["id"].as_str().unwrap().to_string();
        let card_page = format!("/subscriptions/{id}/pay");
        let form = app.open_form(&card_page).await;
        let token = token_of(&app.submit(&card_page, &form, &[]).await, &gateway);
        gateway.pay_checkout(&token, "4200000000000000").unwrap();
        sweep(&app, 3).await;
        let real = stored_sub(&app, &id).await.card_token.unwrap();
        // The card on file stops working (a token the gateway does not know).
        set_card(&app, &id, "0123456789abcdef0123456789abcdef").await;

        let mut ann = crate::portal::Visitor::default();
        let link = crate::portal::minted(&app, &shop, sub["customer"]["id"].as_str().unwrap()).await;
        crate::portal::open(&app, &mut ann, &link).await;
        let card_path = format!("/portal/subscriptions/{id}/card");
        ann.get(&app, &card_path).await;
        let token = token_of(&ann.post(&app, &card_path, &[]).await, &gateway);
        let order = gateway.checkout_order(&token);
        assert_eq!(order["amount"], 0, "nothing is charged: {order}");
        gateway.pay_checkout(&token, "4200000000000000").unwrap();
        let back = ann.get(&app, &format!("/payments/{}/return", order["tracking_id"].as_str().unwrap())).await;
        assert_eq!(back.location(), "/portal/home?done=card");
        let second = stored_sub(&app, &id).await.card_token.unwrap();
        assert_eq!(second, real, "the page's card is the subscription's");
        assert_eq!(events_of(&app, &shop, "subscription.card_updated").await.len(), 1);
        advance(&app, &shop, &clock, "2026-02-01T11:00:00Z").await;
        let (_, renewed) = app.get(&shop, &format!("/subscriptions/{id}")).await;
        assert_eq!(renewed["state"], "active", "{renewed}");
        let renewal = stored(&app, renewed["last_transaction"]["id"].as_str().unwrap()).await;
        assert_eq!((renewal.status.as_str(), renewal.card_token.as_str()), ("succeeded", second.as_str()), "the new card pays");
    }
}

/// The events of a type the shop's log holds.
pub async fn events_of(app: &TestApp, shop: &Shop, kind: &str) -> Vec<Value> {
    let (_, events) = app.get(shop, &format!("/events?type={kind}&limit=100")).await;
    events.as_array().cloned().unwrap_or_default()
}

db_tests! {
    async fn the_processors_signed_notifications_settle_payments_once_and_forged_ones_are_refused(app) {
        let (shop, gateway) = bepaid_shop(&app).await;
        let product = new_product(&app, &shop, json!({})).await;
        let id = product["id"].as_str().unwrap();
        app.pay(id, "4012000000003010", &[]).await;
        let [charge] = gateway.transactions().try_into().unwrap();
        let notify_url = charge.notification_url.clone().unwrap();
        assert_eq!(notify_url, format!("{}/notifications/bepaid/{}", app.state.config.base_url, shop.id));
        gateway.finish_3ds(&charge.uid, true);
        assert_eq!(gateway.notify(&charge.uid, true).await, 401, "another key's signature");
        assert_eq!(payment_of(&app, &shop, id).await["status"], "processing");
        assert_eq!(gateway.notify(&charge.uid, false).await, 200);
        assert_eq!(payment_of(&app, &shop, id).await["status"], "succeeded", "without the customer coming back");
        // Sent again, and an older word arriving late: nothing moves back, nothing twice.
        assert_eq!(gateway.notify(&charge.uid, false).await, 200);
        let stale = json!({"transaction": {"uid": charge.uid, "status": "failed", "type": "payment", "test": true,
                                           "tracking_id": charge.tracking_id, "amount": 990}});
        assert_eq!(gateway.send_notification(&notify_url, stale.to_string(), false).await, 200);
        assert_eq!(payment_of(&app, &shop, id).await["status"], "succeeded");
        assert_eq!(events_of(&app, &shop, "payment.succeeded").await.len(), 1);
        // Not a notification at all, or unsigned.
        let raw = app.anon(reqwest::Method::POST, &format!("/notifications/bepaid/{}", shop.id)).body("{}").send().await.unwrap();
        assert_eq!(raw.status(), StatusCode::BAD_REQUEST);
        let unsigned = app.anon(reqwest::Method::POST, &format!("/notifications/bepaid/{}", shop.id))
            .body(json!({"transaction": {"uid": "1", "status": "successful", "test": true}}).to_string()).send().await.unwrap();
        assert_eq!(unsigned.status(), StatusCode::UNAUTHORIZED);
    }

    async fn refunds_and_captures_made_in_the_processors_back_office_show_up_once(app) {
        let (shop, gateway) = bepaid_shop(&app).await;
        let product = new_product(&app, &shop, json!({})).await;
        let id = product["id"].as_str().unwrap();
        app.pay(id, "4200000000000000", &[]).await;
        let payment = payment_of(&app, &shop, id).await;
        let [charge] = gateway.transactions().try_into().unwrap();
        let refund_uid = gateway.back_office("refund", &charge.uid, 300);
        for _ in 0..2 {
            assert_eq!(gateway.notify(&refund_uid, false).await, 200);
        }
        let (_, refunds) = app.get(&shop, &format!("/refunds?payment={}", payment["id"].as_str().unwrap())).await;
        let refunds = refunds.as_array().unwrap();
        assert_eq!(refunds.len(), 1, "{refunds:?}");
        assert_eq!((refunds[0]["amount"].as_i64(), refunds[0]["status"].as_str()), (Some(300), Some("succeeded")));
        let after = payment_of(&app, &shop, id).await;
        assert_eq!((after["status"].as_str(), after["refunded_amount"].as_i64()), (Some("partially_refunded"), Some(300)));
        // paydesk's own refund after it counts what the back office gave back.
        let (status, _) = app.post(&shop, &format!("/payments/{}/refund", after["id"].as_str().unwrap()), &json!({"amount": 691})).await;
        assert!(status.is_client_error());

        let held = authorized(&app, &shop).await;
        let auth_uid = gateway.transactions().last().unwrap().uid.clone();
        let capture_uid = gateway.back_office("capture", &auth_uid, 990);
        assert_eq!(gateway.notify(&capture_uid, false).await, 200);
        let (_, captured) = app.get(&shop, &format!("/payments/{held}")).await;
        assert_eq!(captured["status"], "succeeded");
        assert_eq!(events_of(&app, &shop, "payment.captured").await.len(), 1);
        // Captured in the back office, refunded here and there: both name the capture.
        let (status, refund) = app.post(&shop, &format!("/payments/{held}/refund"), &json!({"amount": 400})).await;
        assert_eq!((status, refund["status"].as_str()), (StatusCode::CREATED, Some("succeeded")), "{refund}");
        let refund_uid = gateway.back_office("refund", &capture_uid, 100);
        assert_eq!(gateway.notify(&refund_uid, false).await, 200);
        let (_, after) = app.get(&shop, &format!("/payments/{held}")).await;
        assert_eq!(after["refunded_amount"].as_i64(), Some(500), "{after}");
        // The audit trail names who moved the money: the processor's notification, the key.
        let (_, trail) = app.get(&shop, &format!("/audit_events?object_id={held}&limit=100")).await;
        let actors: Vec<(String, String)> = trail.as_array().unwrap().iter().rev()
            .map(|r| (r["action"].as_str().unwrap().to_string(), r["actor"]["name"].as_str().unwrap_or("").to_string()))
            .collect();
        assert!(actors.contains(&("payment.captured".into(), "bepaid".into())), "{actors:?}");
        let by_key = |(action, name): &(String, String)| action == "payment.refunded" && name.starts_with("Secret key (sk_");
        assert!(actors.iter().any(by_key), "{actors:?}");
        assert!(actors.contains(&("payment.refunded".into(), "bepaid".into())), "{actors:?}");
    }
}

db_tests! {
    async fn a_renewal_the_bank_asks_the_customer_for_waits_for_them_at_its_card_link(app) {
        let (shop, gateway) = bepaid_shop(&app).await;
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2026-01-01T10:00:00Z").await;
        // Paid once with a card that goes through, then its bank starts asking.
        let body = json!({"plan": {"id": plan}, "customer": customer_body(), "card": card_json("4200000000000000"),
                          "test_clock": clock});
        let (_, paid) = app.post(&shop, "/subscriptions", &body).await;
        let paid_id = paid["id"].as_str().unwrap().to_string();
        assert_eq!(paid["state"], "active");
        let stored = paydesk::db::find_public::<paydesk::db::entities::subscriptions::Entity>(&app.db, &paid_id)
            .await.unwrap().unwrap();
        assert!(stored.card().is_some());
        set_card(&app, &paid_id, &gateway.token_of("4012000000003010")).await;

        let before = gateway.transactions().len();
        advance(&app, &shop, &clock, "2026-03-01T00:00:00Z").await;
        let (_, waiting) = app.get(&shop, &format!("/subscriptions/{paid_id}")).await;
        assert_eq!(waiting["state"], "redirecting", "{waiting}");
        assert_eq!(waiting["redirect_url"], format!("{}/subscriptions/{paid_id}/pay", app.state.config.base_url));
        assert_eq!(waiting["renew_at"], Value::Null, "no blind retries");
        assert_eq!(waiting["last_transaction"]["failure_code"], "authentication_required");
        assert_eq!(gateway.transactions().len(), before + 1, "asked once, not retried");
        assert_eq!(events_of(&app, &shop, "subscription.action_required").await.len(), 1);

        // The customer comes back with a card that goes through: the period is paid.
        let path = format!("/subscriptions/{paid_id}/pay");
        let form = app.open_form(&path).await;
        let paid_now = app.submit(&path, &form, &card("4200000000000000")).await;
        assert_eq!(paid_now.status, StatusCode::SEE_OTHER, "{}", paid_now.html);
        let (_, back) = app.get(&shop, &format!("/subscriptions/{paid_id}")).await;
        assert_eq!(back["state"], "active", "{back}");
        assert_eq!(back["paid_billing_cycles"], 2);
        assert!(back["renew_at"].is_string());
    }
}

/// Gives a subscription another stored card (a vault token), as if its customer had changed it.
pub async fn set_card(app: &TestApp, id: &str, token: &str) {
    use paydesk::db::entities::subscriptions::{Column, Entity};
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, sea_query::Expr};
    Entity::update_many()
        .col_expr(Column::CardToken, Expr::value(Some(token.to_string())))
        .filter(Column::Id.eq(id))
        .exec(&app.db)
        .await
        .unwrap();
}

db_tests! {
    async fn a_card_link_charge_waiting_for_3_d_secure_is_not_taken_for_a_renewal_the_bank_refused(app) {
        let (shop, gateway) = bepaid_shop(&app).await;
        let plan = plan(&app, &shop, json!({})).await;
        let (_, sub) = app.post(&shop, "/subscriptions", &json!({"plan": {"id": plan}, "customer": customer_body()})).await;
        let id = sub["id"].as_str().unwrap().to_string();
        let path = format!("/subscriptions/{id}/pay");
        let form = app.open_form(&path).await;
        let sent = app.submit(&path, &form, &card("4012000000003010")).await;
        let [charge] = gateway.transactions().try_into().unwrap();
        assert_eq!(sent.location(), format!("{}/process/{}", gateway.url, charge.uid), "to the bank");
        // The engine looks it up while the customer is still at their bank: it keeps waiting.
        paydesk::services::billing::run_due(&app.state, chrono::Utc::now() + Duration::minutes(3)).await.unwrap();
        let (_, waiting) = app.get(&shop, &format!("/subscriptions/{id}")).await;
        assert_eq!(waiting["last_transaction"]["status"], "processing", "{waiting}");
        gateway.finish_3ds(&charge.uid, true);
        assert_eq!(gateway.notify(&charge.uid, false).await, 200);
        paydesk::services::billing::run_due(&app.state, chrono::Utc::now() + Duration::minutes(3)).await.unwrap();
        let (_, started) = app.get(&shop, &format!("/subscriptions/{id}")).await;
        assert_eq!((started["state"].as_str(), started["last_transaction"]["status"].as_str()), (Some("active"), Some("succeeded")), "{started}");
        assert_eq!(gateway.transactions().len(), 1, "charged once");
    }

    async fn the_receipt_only_looks_up_and_a_renewal_unknown_when_its_subscription_ended_is_still_settled(app) {
        let (shop, gateway) = bepaid_shop(&app).await;
        let product = new_product(&app, &shop, json!({})).await;
        let id = product["id"].as_str().unwrap();
        gateway.fail_next(&[Fault::ServerError]);
        app.pay(id, "4200000000000000", &[]).await;
        let payment = payment_of(&app, &shop, id).await;
        let received = gateway.received();
        let receipt = app.page(&format!("/receipts/{}", payment["id"].as_str().unwrap())).await;
        assert!(receipt.html.contains("Your payment is being confirmed"));
        assert_eq!(gateway.received(), received, "the receipt never sends the charge again");
        sweep(&app, 3).await;
        assert_eq!(payment_of(&app, &shop, id).await["status"], "succeeded", "the sweep does, once");

        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2026-01-01T10:00:00Z").await;
        let body = json!({"plan": {"id": plan}, "customer": customer_body(), "card": card_json("4200000000000000"),
                          "test_clock": clock});
        let (_, sub) = app.post(&shop, "/subscriptions", &body).await;
        let sub_id = sub["id"].as_str().unwrap();
        gateway.fail_next(&[Fault::BadGatewayAfter]);
        advance(&app, &shop, &clock, "2026-02-01T10:00:30Z").await;
        let (status, _) = app.post(&shop, &format!("/subscriptions/{sub_id}/cancel"), &json!({})).await;
        assert_eq!(status, StatusCode::OK);
        let (_, list) = app.get(&shop, &format!("/payments?subscription={sub_id}")).await;
        assert!(list.as_array().unwrap().iter().any(|p| p["status"] == "processing"), "{list}");
        sweep(&app, 3).await;
        let (_, list) = app.get(&shop, &format!("/payments?subscription={sub_id}")).await;
        assert!(list.as_array().unwrap().iter().all(|p| p["status"] == "succeeded"), "what the bank took is recorded: {list}");
    }
}

db_tests! {
    async fn an_answer_held_past_paydesks_timeout_after_the_charge_was_made_is_looked_up(app) {
        let args = paydesk::config::ConfigArgs { processor_timeout_seconds: Some("1".into()), ..Default::default() };
        let app = TestApp::spawn_with(app.backend, args).await;
        let (shop, gateway) = bepaid_shop(&app).await;
        let product = new_product(&app, &shop, json!({})).await;
        let id = product["id"].as_str().unwrap();
        gateway.fail_next(&[Fault::HoldAfter(std::time::Duration::from_secs(3))]);
        let answered = app.pay(id, "4200000000000000", &[]).await;
        assert_eq!(answered.status, StatusCode::SEE_OTHER);
        let payment = payment_of(&app, &shop, id).await;
        assert_eq!(payment["status"], "processing", "unknown after a second: not guessed");
        assert_eq!(gateway.transactions().len(), 1, "the gateway made it");
        sweep(&app, 3).await;
        assert_eq!(payment_of(&app, &shop, id).await["status"], "succeeded");
        assert_eq!(gateway.transactions().len(), 1, "looked up, not charged again");
    }
}

db_tests! {
    async fn a_page_paid_on_the_processor_and_settled_from_every_side_at_once_opens_one_subscription(app) {
        let (shop, gateway) = shop_taking_cards_on(&app, "processor_page").await;
        let plan = plan(&app, &shop, json!({})).await;
        let path = format!("/plans/{plan}/pay");
        let form = app.open_form(&path).await;
        let token = token_of(&app.submit(&path, &form, &[("email", "ann@example.com")]).await, &gateway);
        let uid = gateway.pay_checkout(&token, "4200000000000000").unwrap();
        let (_, payments) = app.get(&shop, &format!("/payments?plan={plan}")).await;
        let pay_id = payments[0]["id"].as_str().unwrap().to_string();
        // The customer's return (twice), the notification (three times) and the sweep, at once.
        let returns = (0..2).map(|_| async { app.page(&format!("/payments/{pay_id}/return")).await.status.as_u16() });
        let notes = (0..3).map(|_| gateway.notify(&uid, false));
        let (returned, notified, _) = tokio::join!(
            futures::future::join_all(returns),
            futures::future::join_all(notes),
            sweep(&app, 3)
        );
        assert!(returned.iter().all(|s| *s == 303), "{returned:?}");
        assert!(notified.iter().all(|s| *s == 200), "{notified:?}");
        let (_, subs) = app.get(&shop, "/subscriptions").await;
        assert_eq!(subs.as_array().unwrap().len(), 1, "one subscription: {subs}");
        assert_eq!(subs[0]["state"], "active");
        let (_, customers) = app.get(&shop, "/customers").await;
        assert_eq!(customers.as_array().unwrap().len(), 1);
        assert_eq!(events_of(&app, &shop, "payment.succeeded").await.len(), 1);
        assert_eq!(events_of(&app, &shop, "subscription.created").await.len(), 1);
    }

    async fn a_back_office_refund_notified_many_times_at_once_is_recorded_once(app) {
        let (shop, gateway) = bepaid_shop(&app).await;
        let product = new_product(&app, &shop, json!({})).await;
        let id = product["id"].as_str().unwrap();
        app.pay(id, "4200000000000000", &[]).await;
        let [charge] = gateway.transactions().try_into().unwrap();
        let refund_uid = gateway.back_office("refund", &charge.uid, 400);
        let sent = futures::future::join_all((0..6).map(|_| gateway.notify(&refund_uid, false))).await;
        assert!(sent.iter().all(|s| *s == 200 || *s == 503), "{sent:?}");
        // Whatever answered 503 is sent again by the processor later: once more now.
        gateway.notify(&refund_uid, false).await;
        let payment = payment_of(&app, &shop, id).await;
        let (_, refunds) = app.get(&shop, &format!("/refunds?payment={}", payment["id"].as_str().unwrap())).await;
        assert_eq!(refunds.as_array().unwrap().len(), 1, "{refunds}");
        assert_eq!((payment["refunded_amount"].as_i64(), payment["status"].as_str()), (Some(400), Some("partially_refunded")));
    }

    async fn captures_and_refunds_whose_answers_are_lost_are_made_once(app) {
        let (shop, gateway) = bepaid_shop(&app).await;
        let held = authorized(&app, &shop).await;
        // The capture's answer is lost twice; its resends under the same key meet the first.
        gateway.fail_next(&[Fault::DropAfter, Fault::BadGatewayAfter]);
        let (status, payment) = app.post(&shop, &format!("/payments/{held}/capture"), &json!({})).await;
        assert_eq!((status, payment["status"].as_str()), (StatusCode::OK, Some("succeeded")), "{payment}");
        let captures = gateway.transactions().iter().filter(|t| t.kind == "capture").count();
        assert_eq!(captures, 1);

        // A refund's answer is lost: it stays pending, and the sweep finishes it once.
        gateway.fail_next(&[Fault::BadGatewayAfter]);
        let (status, refund) = app.post(&shop, &format!("/payments/{held}/refund"), &json!({"amount": 300})).await;
        assert_eq!((status, refund["status"].as_str()), (StatusCode::CREATED, Some("pending")), "{refund}");
        let later = chrono::Utc::now() + Duration::minutes(2);
        assert_eq!(paydesk::services::refunds::resume_interrupted(&app.state, later).await.unwrap(), 1);
        let (_, refund) = app.get(&shop, &format!("/refunds/{}", refund["id"].as_str().unwrap())).await;
        assert_eq!(refund["status"], "succeeded");
        let refunds: Vec<i64> = gateway.transactions().iter().filter(|t| t.kind == "refund").map(|t| t.amount).collect();
        assert_eq!(refunds, [300], "refunded once");
        let (_, payment) = app.get(&shop, &format!("/payments/{held}")).await;
        assert_eq!(payment["refunded_amount"], 300);
    }
}

async fn stored_sub(app: &TestApp, id: &str) -> paydesk::db::entities::subscriptions::Model {
    paydesk::db::find_public::<paydesk::db::entities::subscriptions::Entity>(&app.db, id).await.unwrap().unwrap()
}
