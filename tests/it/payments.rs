//! Paying on the hosted pages, and the payments API: every card outcome, stock, expiry,
//! capture and void, CSRF, test and live mode.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

async fn payment_of(app: &TestApp, shop: &Shop, product_id: &str) -> Value {
    let (_, list) = app.get(shop, &format!("/payments?product={product_id}")).await;
    assert_eq!(list.as_array().unwrap().len(), 1, "{list}");
    list[0].clone()
}

async fn product_with(app: &TestApp, shop: &Shop, change: Value) -> Value {
    let mut body = test_product_body();
    for (k, v) in change.as_object().unwrap() {
        body[k] = v.clone();
    }
    app.product(shop, &body).await
}

db_tests! {
    async fn a_successful_card_pays_and_returns_the_customer_to_return_url(app) {
        let shop = app.shop("Books").await;
        let product = product_with(&app, &shop, json!({
            "visible_fields": ["email", "first_name"], "return_url": "https://books.example/thanks?order=7"
        })).await;
        let id = product["id"].as_str().unwrap();
        let page = app.pay(id, "4200 0000 0000 0000", &[("email", "ann@example.com"), ("first_name", "Ann")]).await;
        assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.html);
        let payment = payment_of(&app, &shop, id).await;
        let pid = payment["id"].as_str().unwrap();
        // The way back carries the outcome, signed with the shop's secret key as README shows
        // a merchant's site checks it (HMAC-SHA256 over the parameters paydesk added).
        let back = url::Url::parse(page.location()).unwrap();
        let q: std::collections::HashMap<String, String> = back.query_pairs().into_owned().collect();
        assert!(page.location().starts_with(&format!("https://books.example/thanks?order=7&payment_id={pid}&status=succeeded&timestamp=")));
        let timestamp: i64 = q["timestamp"].parse().unwrap();
        assert!((chrono::Utc::now().timestamp() - timestamp).abs() < 60);
        let signed = format!("payment_id={pid}&status=succeeded&timestamp={timestamp}");
        let mut mac = <hmac::Hmac<sha2::Sha256> as hmac::Mac>::new_from_slice(shop.secret.as_bytes()).unwrap();
        hmac::Mac::update(&mut mac, signed.as_bytes());
        let expected: String = hmac::Mac::finalize(mac).into_bytes().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(q["signature"], expected);
        assert!(pid.starts_with("pay_") && pid.len() == 20);
        assert_eq!(payment["status"], "succeeded");
        assert_eq!(payment["amount"], 990);
        assert_eq!(payment["currency"], "EUR");
        assert_eq!(payment["transaction_type"], "payment");
        assert_eq!(payment["test"], true);
        assert_eq!(payment["product_id"], id);
        assert_eq!(payment["card"], json!({"brand": "visa", "last_4": "0000", "exp_month": 12, "exp_year": 2031, "holder": "Ann Lee"}));
        assert_eq!(payment["failure_code"], Value::Null);
        assert!(is_api_time(&payment["captured_at"]));

        let (_, customer) = app.get(&shop, &format!("/customers/{}", payment["customer_id"].as_str().unwrap())).await;
        assert_eq!((customer["email"].clone(), customer["first_name"].clone()), (json!("ann@example.com"), json!("Ann")));
        assert_eq!(customer["ip"], "127.0.0.1");
        let (_, after) = app.get(&shop, &format!("/products/{id}")).await;
        assert_eq!(after["quantity"], 4, "one unit sold");

        // The same customer paying again is matched, not duplicated.
        app.pay(id, cards::SUCCESS, &[("email", "ann@example.com"), ("first_name", "Ann")]).await;
        let (_, customers) = app.get(&shop, "/customers").await;
        assert_eq!(customers.as_array().unwrap().len(), 1);
        let (_, payment) = app.get(&shop, &format!("/payments/{pid}")).await;
        assert_eq!(payment["id"], pid);

        // "Succeeds now, fails later" succeeds while the customer is at the page.
        let page = app.pay(id, cards::SUCCEEDS_THEN_DECLINES, &[("email", "ann@example.com"), ("first_name", "Ann")]).await;
        assert_eq!(page.status, StatusCode::SEE_OTHER);
    }

    async fn failing_cards_show_the_reason_record_the_attempt_and_keep_the_stock(app) {
        let shop = app.shop("Books").await;
        for (number, status, code, reason, page_says) in [
            (cards::DECLINED, "failed", "card_declined", "The card was declined.",
             "Your bank declined the payment. Please try another card, or contact your bank."),
            (cards::INSUFFICIENT_FUNDS, "failed", "insufficient_funds", "The card has insufficient funds.",
             "There is not enough money on this card. Please try another card."),
            (cards::PROCESSING_ERROR, "error", "processing_error", "The payment could not be processed.",
             "The payment could not be processed and nothing was charged. Please try again in a few minutes."),
        ] {
            let product = app.product(&shop, &test_product_body()).await;
            let id = product["id"].as_str().unwrap();
            let page = app.pay(id, number, &[]).await;
            assert_eq!(page.status, StatusCode::PAYMENT_REQUIRED, "{number}");
            assert!(page.html.contains(page_says), "{number}: {}", page.html);
            assert!(page.html.contains("name=\"card_number\""), "the form is shown again to retry");
            assert!(!page.html.contains(number), "the card number is never echoed");
            let payment = payment_of(&app, &shop, id).await;
            assert_eq!((payment["status"].as_str(), payment["failure_code"].as_str()), (Some(status), Some(code)));
            assert!(payment["failure_message"].as_str().unwrap().starts_with(reason));
            let (_, after) = app.get(&shop, &format!("/products/{id}")).await;
            assert_eq!(after["quantity"], 5, "{number}: the unit is given back");
        }
    }

    async fn bad_cards_are_refused_before_any_charge(app) {
        let shop = app.shop("Books").await;
        let product = app.product(&shop, &test_product_body()).await;
        let id = product["id"].as_str().unwrap();
        let path = format!("/products/{id}/pay");
        let form = app.open_form(&path).await;
        for (fields, message) in [
            (vec![("card_number", "4200000000000001")], "This card number is not valid. Check it against the card and enter it again."),
            (vec![("card_exp_month", "01"), ("card_exp_year", "2020")], "This card has expired. Please use another card."),
            (vec![("card_cvc", "1")], "Enter the 3 or 4 digit security code from the back of the card."),
            (vec![("card_number", "4242424242424242")], "This is not a test card. This page is in test mode: use one of the test cards shown above."),
        ] {
            let mut sent = card(cards::SUCCESS);
            for (k, v) in fields {
                sent.retain(|(name, _)| *name != k);
                sent.push((k, v));
            }
            let page = app.submit(&path, &form, &sent).await;
            assert_eq!(page.status, StatusCode::UNPROCESSABLE_ENTITY, "{message}");
            assert!(page.html.contains(message), "{message}: {}", page.html);
            assert!(page.html.contains("aria-invalid=\"true\""));
        }
        let (_, payments) = app.get(&shop, "/payments").await;
        assert_eq!(payments, json!([]), "nothing was charged");
    }

    async fn visible_fields_are_required_and_checked_on_the_page(app) {
        let shop = app.shop("Books").await;
        let product = product_with(&app, &shop, json!({"visible_fields": ["email", "country", "zip"]})).await;
        let id = product["id"].as_str().unwrap();
        let page = app.pay(id, cards::SUCCESS, &[("email", "nope"), ("country", "US"), ("zip", "1234")]).await;
        assert_eq!(page.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(page.html.contains("Enter an e-mail address like name@example.com."), "{}", page.html);
        assert!(page.html.contains("Enter a US ZIP code of 5 digits, or of 5 and 4 digits like 12207-1234."));
        assert!(page.html.contains("value=\"nope\""), "what was typed is kept");
        let page = app.pay(id, cards::SUCCESS, &[("country", "US"), ("zip", "12345")]).await;
        assert!(page.html.contains("Enter your e-mail address."), "{}", page.html);
        let page = app.pay(id, cards::SUCCESS, &[("email", "bo@example.com"), ("country", "US"), ("zip", "12345")]).await;
        assert_eq!(page.status, StatusCode::SEE_OTHER);
    }

    async fn expired_and_sold_out_products_say_so(app) {
        let shop = app.shop("Books").await;
        let expired = product_with(&app, &shop, json!({"expired_at": "2020-01-01T00:00:00+00:00"})).await;
        let path = format!("/products/{}/pay", expired["id"].as_str().unwrap());
        let page = app.page(&path).await;
        assert_eq!(page.status, StatusCode::GONE);
        assert!(page.html.contains("This offer has expired"));
        assert!(!page.html.contains("name=\"card_number\""));

        let last = product_with(&app, &shop, json!({"quantity": "1"})).await;
        let id = last["id"].as_str().unwrap();
        let path = format!("/products/{id}/pay");
        let form = app.open_form(&path).await;
        assert_eq!(app.pay(id, cards::SUCCESS, &[]).await.status, StatusCode::SEE_OTHER);
        let page = app.page(&path).await;
        assert_eq!(page.status, StatusCode::CONFLICT);
        assert!(page.html.contains("Sold out"));
        let late = app.submit(&path, &form, &card(cards::SUCCESS)).await;
        assert_eq!(late.status, StatusCode::CONFLICT, "a form opened before the last unit sold");

        let (_, unknown) = (0, app.page("/products/prd_0000000000000000/pay").await);
        assert_eq!(unknown.status, StatusCode::NOT_FOUND);
    }

    async fn authorizations_are_captured_or_voided_once(app) {
        let shop = app.shop("Books").await;
        let product = product_with(&app, &shop, json!({"transaction_type": "authorization"})).await;
        let id = product["id"].as_str().unwrap();
        let mut held = Vec::new();
        for _ in 0..2 {
            assert_eq!(app.pay(id, cards::SUCCESS, &[]).await.status, StatusCode::SEE_OTHER);
        }
        let (_, list) = app.get(&shop, &format!("/payments?product={id}&status=authorized")).await;
        for p in list.as_array().unwrap() {
            assert_eq!(p["captured_at"], Value::Null);
            held.push(p["id"].as_str().unwrap().to_string());
        }
        assert_eq!(held.len(), 2);
        let (_, stock) = app.get(&shop, &format!("/products/{id}")).await;
        assert_eq!(stock["quantity"], 3);

        let (status, captured) = app.post(&shop, &format!("/payments/{}/capture", held[0]), &json!({})).await;
        assert_eq!(status, StatusCode::OK, "{captured}");
        assert_eq!(captured["status"], "succeeded");
        assert!(is_api_time(&captured["captured_at"]));
        for action in ["capture", "void"] {
            let (status, body) = app.post(&shop, &format!("/payments/{}/{action}", held[0]), &json!({})).await;
            assert_eq!(status, StatusCode::CONFLICT, "{action}");
            assert!(body["message"].as_str().unwrap().contains("this payment is succeeded"), "{body}");
        }

        let (status, voided) = app.post(&shop, &format!("/payments/{}/void", held[1]), &json!({})).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(voided["status"], "voided");
        assert!(is_api_time(&voided["voided_at"]));
        let (_, stock) = app.get(&shop, &format!("/products/{id}")).await;
        assert_eq!(stock["quantity"], 4, "a voided authorization gives its unit back");

        let other = app.shop("Other").await;
        let (status, _) = app.post(&other, &format!("/payments/{}/void", held[1]), &json!({})).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (status, _) = app.post(&shop, "/payments/pay_0000000000000000/capture", &json!({})).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
    }

    async fn payments_list_filters_and_stays_within_the_shop(app) {
        let shop = app.shop("Books").await;
        let a = product_with(&app, &shop, json!({"visible_fields": ["email"]})).await;
        let b = app.product(&shop, &test_product_body()).await;
        let (a, b) = (a["id"].as_str().unwrap(), b["id"].as_str().unwrap());
        app.pay(a, cards::SUCCESS, &[("email", "ann@example.com")]).await;
        app.pay(a, cards::DECLINED, &[("email", "ann@example.com")]).await;
        app.pay(b, cards::SUCCESS, &[]).await;
        let count = |v: &Value| v.as_array().unwrap().len();
        let (_, all) = app.get(&shop, "/payments").await;
        assert_eq!(count(&all), 3);
        assert_eq!(all[0]["product_id"], b, "newest first");
        let (_, of_a) = app.get(&shop, &format!("/payments?product={a}")).await;
        assert_eq!(count(&of_a), 2);
        let (_, failed) = app.get(&shop, &format!("/payments?product_id={a}&status=failed")).await;
        assert_eq!(count(&failed), 1);
        assert_eq!(of_a[0]["customer_id"], Value::Null, "a declined payer becomes no customer");
        let customer = of_a[1]["customer_id"].as_str().unwrap();
        let (_, of_customer) = app.get(&shop, &format!("/payments?customer={customer}")).await;
        assert_eq!(count(&of_customer), 1);
        let (status, body) = app.get(&shop, "/payments?status=paid").await;
        assert_invalid(status, &body, "status", &["is not included in the list"]);

        let other = app.shop("Other").await;
        let (_, none) = app.get(&other, "/payments").await;
        assert_eq!(none, json!([]));
        let (status, _) = app.get(&other, &format!("/payments/{}", all[0]["id"].as_str().unwrap())).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
    }

    async fn forms_need_their_own_csrf_token(app) {
        let shop = app.shop("Books").await;
        let product = app.product(&shop, &test_product_body()).await;
        let path = format!("/products/{}/pay", product["id"].as_str().unwrap());
        let form = app.open_form(&path).await;
        let forged = OpenForm { csrf: "0".repeat(32), ..form.clone() };
        let page = app.submit(&path, &forged, &card(cards::SUCCESS)).await;
        assert_eq!(page.status, StatusCode::FORBIDDEN);
        let no_cookie = OpenForm { cookie: "x=y".into(), ..form.clone() };
        assert_eq!(app.submit(&path, &no_cookie, &card(cards::SUCCESS)).await.status, StatusCode::FORBIDDEN);
        let (_, payments) = app.get(&shop, "/payments").await;
        assert_eq!(payments, json!([]));
    }

    async fn without_return_url_the_shop_url_or_the_receipt_follows(app) {
        let with_url = app.shop_with_url("Books", Some("https://books.example/")).await;
        let product = app.product(&with_url, &test_product_body()).await;
        let page = app.pay(product["id"].as_str().unwrap(), cards::SUCCESS, &[]).await;
        assert!(page.location().starts_with("https://books.example/?payment_id=pay_"), "{}", page.location());

        let bare = app.shop("Bare").await;
        let product = app.product(&bare, &test_product_body()).await;
        let page = app.pay(product["id"].as_str().unwrap(), cards::SUCCESS, &[]).await;
        let receipt = page.location().strip_prefix(&app.base).expect("a receipt of ours").to_string();
        assert!(receipt.starts_with("/receipts/pay_"));
        let page = app.page(&receipt).await;
        assert_eq!(page.status, StatusCode::OK);
        assert!(page.html.contains("Payment received") && page.html.contains("€9.90") && page.html.contains("Visa •••• 0000"));
        assert_eq!(app.page("/receipts/pay_0000000000000000").await.status, StatusCode::NOT_FOUND);
    }

    async fn live_products_need_the_operators_consent_with_the_simulated_acquirer(app) {
        let shop = app.shop("Books").await;
        let product = app.product(&shop, &product_body()).await;
        let path = format!("/products/{}/pay", product["id"].as_str().unwrap());
        let page = app.page(&path).await;
        assert_eq!(page.status, StatusCode::SERVICE_UNAVAILABLE);
        assert!(page.html.contains("cannot take live payments"));
    }

    async fn the_confirm_url_leads_to_the_payment_form(app) {
        let shop = app.shop("Books").await;
        let product = app.product(&shop, &test_product_body()).await;
        let id = product["id"].as_str().unwrap();
        let confirm = product["confirm_url"].as_str().unwrap().replace("https://checkout.paydesk.test", "");
        let page = app.page(&confirm).await;
        assert_eq!(page.status, StatusCode::OK);
        assert!(page.html.contains("Confirm your order") && page.html.contains("Gift card") && page.html.contains("€9.90"));
        assert!(page.html.contains(&format!("href=\"{}/products/{id}/pay\"", app.base)));
        let other = app.shop("Other").await;
        assert_eq!(app.page(&format!("/v2/confirm_order/{id}/{}", other.id)).await.status, StatusCode::NOT_FOUND);
    }

    async fn pages_speak_the_products_language(app) {
        let shop = app.shop("Книги").await;
        let product = product_with(&app, &shop, json!({"language": "ru", "visible_fields": ["first_name"]})).await;
        let page = app.page(&format!("/products/{}/pay", product["id"].as_str().unwrap())).await;
        assert!(page.html.contains("<html lang=\"ru\">"));
        assert!(page.html.contains("Оплатить 9,90\u{a0}€") && page.html.contains("Номер карты") && page.html.contains("Имя"));
        let page = app.pay(product["id"].as_str().unwrap(), cards::DECLINED, &[("first_name", "Анна")]).await;
        assert!(page.html.contains("Банк отклонил платёж. Попробуйте другую карту или обратитесь в свой банк."), "{}", page.html);
        let german = product_with(&app, &shop, json!({"language": "de"})).await;
        let page = app.page(&format!("/products/{}/pay", german["id"].as_str().unwrap())).await;
        assert!(page.html.contains("Card number"), "falls back to English");
    }

    async fn a_plans_page_takes_the_first_payment(app) {
        let shop = app.shop("Gym").await;
        let mut body = plan_body();
        body["test"] = json!(true);
        body["trial"] = json!({"amount": 100, "interval": 7, "interval_unit": "day"});
        let (_, plan) = app.post(&shop, "/plans", &body).await;
        let path = format!("/plans/{}/pay", plan["id"].as_str().unwrap());

        let arrived = app.anon(reqwest::Method::POST, &path).header("content-type", "application/x-www-form-urlencoded").body("email=zoe%40example.com").send().await.unwrap();
        assert_eq!(arrived.status(), StatusCode::OK, "a merchant's site may post the customer in");
        assert!(arrived.text().await.unwrap().contains("value=\"zoe@example.com\""));

        let form = app.open_form(&path).await;
        let mut fields = card(cards::SUCCESS);
        fields.push(("email", "zoe@example.com"));
        let page = app.submit(&path, &form, &fields).await;
        assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.html);
        let (_, payments) = app.get(&shop, &format!("/payments?plan={}", plan["id"].as_str().unwrap())).await;
        assert_eq!(payments[0]["amount"], 100, "the trial amount");
        assert_eq!(payments[0]["status"], "succeeded");
        let (_, customer) = app.get(&shop, &format!("/customers/{}", payments[0]["customer_id"].as_str().unwrap())).await;
        assert_eq!(customer["email"], "zoe@example.com");
    }
}

#[tokio::test]
async fn live_products_can_be_paid_when_the_operator_allows_simulated_live_payments() {
    for backend in [Backend::Sqlite, Backend::Postgres] {
        let args = paydesk::config::ConfigArgs { simulated_live: Some("on".into()), ..Default::default() };
        let app = TestApp::spawn_with(backend, args).await;
        let shop = app.shop("Books").await;
        let product = app.product(&shop, &product_body()).await;
        let page = app.pay(product["id"].as_str().unwrap(), "4242424242424242", &[]).await;
        assert_eq!(page.status, StatusCode::SEE_OTHER, "{backend:?}: {}", page.html);
        let payment = payment_of(&app, &shop, product["id"].as_str().unwrap()).await;
        assert_eq!((payment["status"].clone(), payment["test"].clone()), (json!("succeeded"), json!(false)));
    }
}

/// 40 customers pay at once for the last 5 units: exactly 5 payments go through.
async fn concurrent_payers_never_oversell(backend: Backend) {
    let app = std::sync::Arc::new(TestApp::spawn(backend).await);
    let shop = app.shop("Books").await;
    let product = app.product(&shop, &test_product_body()).await;
    let id = product["id"].as_str().unwrap().to_string();
    let path = format!("/products/{id}/pay");
    let mut forms = Vec::new();
    for _ in 0..40 {
        forms.push(app.open_form(&path).await);
    }
    let mut tasks = tokio::task::JoinSet::new();
    for form in forms {
        let (app, path) = (app.clone(), path.clone());
        tasks.spawn(async move { app.submit(&path, &form, &card(cards::SUCCESS)).await.status });
    }
    let mut statuses = Vec::new();
    while let Some(status) = tasks.join_next().await {
        statuses.push(status.unwrap());
    }
    let paid = statuses.iter().filter(|s| **s == StatusCode::SEE_OTHER).count();
    let sold_out = statuses.iter().filter(|s| **s == StatusCode::CONFLICT).count();
    assert_eq!((paid, sold_out), (5, 35), "{statuses:?}");
    let (_, payments) = app.get(&shop, &format!("/payments?product={id}&status=succeeded")).await;
    assert_eq!(payments.as_array().unwrap().len(), 5);
    let (_, after) = app.get(&shop, &format!("/products/{id}")).await;
    assert_eq!(after["quantity"], 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_payers_never_oversell_on_sqlite() {
    concurrent_payers_never_oversell(Backend::Sqlite).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_payers_never_oversell_on_postgres() {
    concurrent_payers_never_oversell(Backend::Postgres).await
}

/// The simulated acquirer, except that it refuses every capture and void.
struct Refusing(paydesk::external::acquirer::simulated::SimulatedAcquirer);

#[async_trait::async_trait]
impl paydesk::external::acquirer::Acquirer for Refusing {
    fn is_simulated(&self) -> bool {
        true
    }
    async fn tokenize(
        &self,
        card: &paydesk::domain::card::CardInput,
        test: bool,
    ) -> Result<paydesk::external::acquirer::CardRef, paydesk::external::acquirer::CardRefused> {
        self.0.tokenize(card, test).await
    }
    async fn charge(
        &self,
        card: &paydesk::external::acquirer::CardRef,
        request: paydesk::external::acquirer::ChargeRequest<'_>,
    ) -> paydesk::external::acquirer::Outcome {
        self.0.charge(card, request).await
    }
    async fn capture(&self, _: paydesk::external::acquirer::SettleRequest<'_>) -> paydesk::external::acquirer::Outcome {
        paydesk::external::acquirer::Outcome::Error { code: "processing_error", message: "try again later".into() }
    }
    async fn void(
        &self,
        request: paydesk::external::acquirer::SettleRequest<'_>,
    ) -> paydesk::external::acquirer::Outcome {
        self.capture(request).await
    }
    async fn refund(
        &self,
        card: &paydesk::external::acquirer::CardRef,
        request: paydesk::external::acquirer::RefundRequest<'_>,
    ) -> paydesk::external::acquirer::Outcome {
        self.0.refund(card, request).await
    }
}

db_tests! {
    async fn a_refused_capture_or_void_leaves_the_authorization_as_it_was(app) {
        let shop = app.shop("Books").await;
        let mut body = test_product_body();
        body["transaction_type"] = json!("authorization");
        let product = app.product(&shop, &body).await;
        let id = product["id"].as_str().unwrap();
        assert_eq!(app.pay(id, cards::SUCCESS, &[]).await.status, StatusCode::SEE_OTHER);
        let before = payment_of(&app, &shop, id).await;
        let refusing = Refusing(paydesk::external::acquirer::simulated::SimulatedAcquirer::new(false));
        let state = app.state.with_acquirer(std::sync::Arc::new(refusing));
        let payment = before["id"].as_str().unwrap();
        for void in [false, true] {
            let now = chrono::Utc::now();
            let refused = match void {
                false => paydesk::services::captures::capture(&state, shop.id, payment, now).await,
                true => paydesk::services::captures::void(&state, shop.id, payment, now).await,
            };
            assert!(matches!(refused, Err(paydesk::web::error::AppError::Acquirer(_))), "{refused:?}");
            let after = payment_of(&app, &shop, id).await;
            assert_eq!((after["status"].clone(), after["captured_at"].clone(), after["voided_at"].clone()),
                       (json!("authorized"), Value::Null, Value::Null));
        }
    }
}
