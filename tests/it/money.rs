//! Money safety under concurrency: many requests joined at once, repeated a few rounds, on
//! both databases; each asserts the invariant (units sold + left = stock, one charge per
//! form, nothing charged after a cancel) and that no answer is a 5xx.

use futures::future::join_all;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;
use crate::subscriptions::{advance, clock, get_sub, plan, subscribe};

/// Succeeded payments of a product.
async fn sold(app: &TestApp, shop: &Shop, product: &str) -> usize {
    let (_, paid) = app.get(shop, &format!("/payments?product={product}&status=succeeded&limit=1000")).await;
    paid.as_array().unwrap().len()
}

pub fn no_server_error(status: StatusCode, what: &str) {
    assert!(!status.is_server_error(), "{what} answered {status}");
}

db_tests! {
    async fn edits_made_while_customers_buy_never_undo_a_sale(app) {
        let shop = app.shop("Books").await;
        for round in 0..3 {
            let product = app.product(&shop, &test_product_body()).await;
            let id = product["id"].as_str().unwrap().to_string();
            // Every customer has the page open before the sales start (one opened after the
            // last unit sold would see "sold out" instead of a form).
            let path = format!("/products/{id}/pay");
            let forms = join_all((0..40).map(|_| app.open_form(&path))).await;
            let fields = card(cards::SUCCESS);
            let payers = forms.iter().map(|form| app.submit(&path, form, &fields));
            let edits = (0..20).map(|i| {
                let id = id.clone();
                let shop = shop.clone();
                let app = &app;
                async move { app.put(&shop, &format!("/products/{id}"), &json!({"description": format!("edit {i}")})).await.0 }
            });
            let (paid, edited) = tokio::join!(join_all(payers), join_all(edits));
            paid.iter().for_each(|p| no_server_error(p.status, "a payer"));
            edited.iter().for_each(|s| assert_eq!(*s, StatusCode::NO_CONTENT, "round {round}"));
            let left = app.get(&shop, &format!("/products/{id}")).await.1["quantity"].as_i64().unwrap();
            assert_eq!(sold(&app, &shop, &id).await as i64 + left, 5, "round {round}: sold + left = stock");
            assert_eq!(left, 0, "round {round}: every unit sold");
        }
    }

    async fn a_quantity_edit_adds_to_what_is_left(app) {
        let shop = app.shop("Books").await;
        let product = app.product(&shop, &test_product_body()).await;
        let id = product["id"].as_str().unwrap();
        assert_eq!(app.pay(id, cards::SUCCESS, &[]).await.status, StatusCode::SEE_OTHER);
        let (status, _) = app.put(&shop, &format!("/products/{id}"), &json!({"quantity": 10})).await;
        assert_eq!(status, StatusCode::NO_CONTENT);
        assert_eq!(app.get(&shop, &format!("/products/{id}")).await.1["quantity"], 10);
        let (status, _) = app.put(&shop, &format!("/products/{id}"), &json!({"quantity": 0})).await;
        assert_eq!(status, StatusCode::NO_CONTENT, "a merchant may stop selling");
        assert_eq!(app.page(&format!("/products/{id}/pay")).await.status, StatusCode::CONFLICT, "sold out");
    }

    async fn a_dashboard_quantity_edit_keeps_the_sales_made_while_the_form_was_open(app) {
        use crate::dashboard::{api_shop, sign_up};
        let m = sign_up(&app, "Books", "ann@example.com").await;
        let shop = api_shop(&m).await;
        let product = app.product(&shop, &test_product_body()).await;
        let id = product["id"].as_str().unwrap();
        let form = m.get(&format!("/dashboard/products/{id}/edit")).await;
        assert_eq!(hidden(&form.html, "quantity_was").as_deref(), Some("5"), "{}", form.html);
        assert_eq!(app.pay(id, cards::SUCCESS, &[]).await.status, StatusCode::SEE_OTHER, "sold while the form is open");
        let fields = [("name", "Gift card"), ("description", "A card worth 9.90"), ("amount", "9.90"), ("currency", "EUR"),
                      ("quantity", "10"), ("quantity_was", "5"), ("expired_at", "2030-06-30T23:59"), ("test", "true"),
                      ("language", "en"), ("transaction_type", "payment")];
        let saved = m.post(&format!("/dashboard/products/{id}"), &fields).await;
        assert_eq!(saved.status, StatusCode::SEE_OTHER, "{}", saved.html);
        assert_eq!(app.get(&shop, &format!("/products/{id}")).await.1["quantity"], 9, "five more than the form showed");
        let mut removing = fields;
        removing[4] = ("quantity", "0");
        removing[5] = ("quantity_was", "12");
        let refused = m.post(&format!("/dashboard/products/{id}"), &removing).await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(refused.html.contains("only 9 are left"), "{}", refused.html);
        assert_eq!(app.get(&shop, &format!("/products/{id}")).await.1["quantity"], 9, "nothing changed");
    }

    async fn a_cancel_that_answered_is_final_while_a_clock_advance_bills(app) {
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({"plan": {"amount": 100, "interval": 1, "interval_unit": "hour"}})).await;
        for round in 0..3 {
            let clock = clock(&app, &shop, "2026-03-01T00:00:00Z").await;
            let sub = subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await;
            let id = sub["id"].as_str().unwrap().to_string();
            let path = format!("/test_clocks/{clock}/advance");
            let target = json!({"frozen_time": "2026-05-01T00:00:00Z"});
            let advancing = app.post(&shop, &path, &target);
            let cancelling = async {
                tokio::time::sleep(std::time::Duration::from_millis(150 + 100 * round)).await;
                let answer = app.post(&shop, &format!("/subscriptions/{id}/cancel"), &json!({"cancel_reason": "moved"})).await;
                let (_, paid) = app.get(&shop, &format!("/payments?subscription={id}&limit=1000")).await;
                (answer, paid.as_array().unwrap().len())
            };
            let ((advanced, _), ((cancel_status, cancelled), paid_at_cancel)) = tokio::join!(advancing, cancelling);
            assert_eq!(advanced, StatusCode::OK);
            assert_eq!(cancel_status, StatusCode::OK, "{cancelled}");
            assert_eq!(cancelled["state"], "canceled");
            let after = get_sub(&app, &shop, &id).await;
            assert_eq!(after["state"], "canceled", "round {round}: the engine never undoes a cancel");
            assert_eq!(after["renew_at"], Value::Null);
            let (_, paid) = app.get(&shop, &format!("/payments?subscription={id}&limit=1000")).await;
            let paid = paid.as_array().unwrap().len();
            assert!(paid <= paid_at_cancel + 1, "round {round}: {paid} charges, {paid_at_cancel} when the cancel answered");
            assert!(paid < 24 * 60, "round {round}: the advance stopped charging");
        }
    }

    async fn one_card_form_submitted_many_times_at_once_charges_once(app) {
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({})).await;
        let (_, customer) = app.post(&shop, "/customers", &customer_body()).await;
        for round in 0..3 {
            let (_, sub) = app.post(&shop, "/subscriptions", &json!({"plan_id": plan, "customer_id": customer["id"]})).await;
            let id = sub["id"].as_str().unwrap();
            let path = format!("/subscriptions/{id}/pay");
            let form = app.open_form(&path).await;
            let fields = card(cards::SUCCESS);
            let answers = join_all((0..8).map(|_| app.submit(&path, &form, &fields))).await;
            for answer in &answers {
                assert_eq!(answer.status, StatusCode::SEE_OTHER, "round {round}: {}", answer.html);
            }
            let locations: std::collections::HashSet<_> = answers.iter().map(|a| a.location().to_string()).collect();
            assert_eq!(locations.len(), 1, "every submit sees the one payment: {locations:?}");
            let (_, paid) = app.get(&shop, &format!("/payments?subscription={id}")).await;
            assert_eq!(paid.as_array().unwrap().len(), 1, "round {round}: one charge");
            let (_, events) = app.get(&shop, &format!("/subscriptions/{id}/events")).await;
            let charges = events.as_array().unwrap().iter().filter(|e| e["type"] == "charge").count();
            assert_eq!(charges, 1, "round {round}: one charge event");
        }
    }

    async fn separate_card_forms_of_one_subscription_start_it_once(app) {
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({})).await;
        let (_, customer) = app.post(&shop, "/customers", &customer_body()).await;
        let (_, sub) = app.post(&shop, "/subscriptions", &json!({"plan_id": plan, "customer_id": customer["id"]})).await;
        let id = sub["id"].as_str().unwrap();
        let path = format!("/subscriptions/{id}/pay");
        let forms = join_all((0..6).map(|_| app.open_form(&path))).await;
        let fields = card(cards::SUCCESS);
        let answers = join_all(forms.iter().map(|form| app.submit(&path, form, &fields))).await;
        answers.iter().for_each(|a| assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.html));
        let (_, paid) = app.get(&shop, &format!("/payments?subscription={id}")).await;
        assert_eq!(paid.as_array().unwrap().len(), 1);
    }

    async fn a_product_or_plan_form_sent_twice_pays_once(app) {
        let shop = app.shop("Books").await;
        let product = app.product(&shop, &test_product_body()).await;
        let id = product["id"].as_str().unwrap();
        let path = format!("/products/{id}/pay");
        let form = app.open_form(&path).await;
        let fields = card(cards::SUCCESS);
        let answers = join_all((0..6).map(|_| app.submit(&path, &form, &fields))).await;
        answers.iter().for_each(|a| assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.html));
        assert_eq!(sold(&app, &shop, id).await, 1);
        assert_eq!(app.get(&shop, &format!("/products/{id}")).await.1["quantity"], 4);
        // A decline shown again, then a fresh form pays.
        let form = app.open_form(&path).await;
        let declined = card(cards::DECLINED);
        let answers = join_all((0..3).map(|_| app.submit(&path, &form, &declined))).await;
        answers.iter().for_each(|a| assert_eq!(a.status, StatusCode::PAYMENT_REQUIRED, "{}", a.html));
        let fresh = hidden(&answers[0].html, "attempt").unwrap();
        assert_ne!(fresh, form.attempt, "the form shown again is a new attempt");
        let again = app.submit(&path, &OpenForm { attempt: fresh, ..form.clone() }, &fields).await;
        assert_eq!(again.status, StatusCode::SEE_OTHER);
        assert_eq!(sold(&app, &shop, id).await, 2);
        let (_, all) = app.get(&shop, &format!("/payments?product={id}")).await;
        assert_eq!(all.as_array().unwrap().len(), 3, "two sales and one decline");

        let plan = plan(&app, &shop, json!({})).await;
        let path = format!("/plans/{plan}/pay");
        let form = app.open_form(&path).await;
        let mut fields = card(cards::SUCCESS);
        fields.push(("email", "ann@example.com"));
        let answers = join_all((0..6).map(|_| app.submit(&path, &form, &fields))).await;
        answers.iter().for_each(|a| assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.html));
        let (_, subs) = app.get(&shop, &format!("/subscriptions?plan={plan}")).await;
        assert_eq!(subs.as_array().unwrap().len(), 1, "one form, one subscription");
        let (_, paid) = app.get(&shop, &format!("/payments?plan={plan}")).await;
        assert_eq!(paid.as_array().unwrap().len(), 1);
    }

    async fn a_form_without_its_attempt_is_refused(app) {
        let shop = app.shop("Books").await;
        let product = app.product(&shop, &test_product_body()).await;
        let path = format!("/products/{}/pay", product["id"].as_str().unwrap());
        let form = app.open_form(&path).await;
        for attempt in ["", "xyz"] {
            let page = app.submit(&path, &OpenForm { attempt: attempt.into(), ..form.clone() }, &card(cards::SUCCESS)).await;
            assert_eq!(page.status, StatusCode::FORBIDDEN);
        }
        assert_eq!(sold(&app, &shop, product["id"].as_str().unwrap()).await, 0);
    }

    async fn card_testing_is_stopped_after_a_few_declines(app) {
        let shop = app.shop("Books").await;
        let mut body = test_product_body();
        body["visible_fields"] = json!(["email"]);
        body["infinite"] = json!(true);
        body.as_object_mut().unwrap().remove("quantity");
        let product = app.product(&shop, &body).await;
        let id = product["id"].as_str().unwrap();
        for _ in 0..5 {
            let page = app.pay(id, cards::DECLINED, &[("email", "tester@example.com")]).await;
            assert_eq!(page.status, StatusCode::PAYMENT_REQUIRED);
        }
        let blocked = app.pay(id, cards::SUCCESS, &[("email", "tester@example.com")]).await;
        assert_eq!(blocked.status, StatusCode::TOO_MANY_REQUESTS, "{}", blocked.html);
        let wait: u64 = blocked.headers["retry-after"].to_str().unwrap().parse().unwrap();
        assert!((1..=600).contains(&wait), "{wait}");
        let (_, payments) = app.get(&shop, &format!("/payments?product={id}")).await;
        assert_eq!(payments.as_array().unwrap().len(), 5, "the blocked attempt never reached the acquirer");
        let (_, customers) = app.get(&shop, "/customers").await;
        assert_eq!(customers, json!([]), "declines create no customer");
        // Another pay link is another count.
        let other = app.product(&shop, &body).await;
        assert_eq!(app.pay(other["id"].as_str().unwrap(), cards::SUCCESS, &[("email", "a@example.com")]).await.status, StatusCode::SEE_OTHER);
    }

    async fn a_declined_card_on_a_plans_page_makes_no_customer_and_no_subscription(app) {
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({})).await;
        let path = format!("/plans/{plan}/pay");
        let mut fields = card(cards::DECLINED);
        fields.push(("email", "ann@example.com"));
        let form = app.open_form(&path).await;
        assert_eq!(app.submit(&path, &form, &fields).await.status, StatusCode::PAYMENT_REQUIRED);
        assert_eq!(app.get(&shop, "/customers").await.1, json!([]));
        assert_eq!(app.get(&shop, "/subscriptions").await.1, json!([]));
        let (_, declined) = app.get(&shop, &format!("/payments?plan={plan}")).await;
        assert_eq!(declined[0]["status"], "failed", "the attempt is still a payment");
        fields[0] = ("card_number", cards::SUCCESS);
        let form = app.open_form(&path).await;
        assert_eq!(app.submit(&path, &form, &fields).await.status, StatusCode::SEE_OTHER);
        let (_, subs) = app.get(&shop, "/subscriptions").await;
        assert_eq!(subs.as_array().unwrap().len(), 1);
        assert_eq!(subs[0]["state"], "active");
        assert_eq!(subs[0]["paid_billing_cycles"], 1);
        let id = subs[0]["id"].as_str().unwrap();
        let (_, paid) = app.get(&shop, &format!("/payments?subscription={id}")).await;
        assert_eq!(paid.as_array().unwrap().len(), 1, "the first charge is the subscription's, made once");
        assert_eq!(paid[0]["customer_id"], subs[0]["customer"]["id"]);
        assert_eq!(subs[0]["last_transaction"]["id"], paid[0]["id"]);
    }

    async fn text_the_database_cannot_store_is_refused_at_the_door(app) {
        let shop = app.shop("Books").await;
        let mut body = test_product_body();
        body["name"] = json!("Gift\u{0}card");
        let (status, errors) = app.post(&shop, "/products", &body).await;
        assert_invalid(status, &errors, "name", &["is invalid"]);
        let mut nested = plan_body();
        nested["plan"]["interval_unit"] = json!("mo\u{0}nth");
        let (status, errors) = app.post(&shop, "/plans", &nested).await;
        assert_invalid(status, &errors, "plan.interval_unit", &["is invalid"]);
        let (status, body) = app.get(&shop, "/products/prd_%00").await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
        let (status, body) = app.get(&shop, "/products/prd_\u{e9}t\u{e9}").await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
        let (status, errors) = app.get(&shop, "/payments?customer=cst_%00").await;
        assert_invalid(status, &errors, "customer", &["is invalid"]);
        let (status, errors) = app.get(&shop, "/products?starting_after=%00").await;
        assert_invalid(status, &errors, "starting_after", &["is invalid"]);

        let plan = plan(&app, &shop, json!({})).await;
        let mut card = crate::subscriptions::card_json(cards::SUCCESS);
        card["holder"] = json!("Ann\u{0}Lee");
        let request = json!({"plan_id": plan, "customer": customer_body(), "card": card});
        let (status, errors) = app.post(&shop, "/subscriptions", &request).await;
        assert_invalid(status, &errors, "card.holder", &["is invalid"]);
        assert_eq!(app.get(&shop, "/customers").await.1, json!([]), "nothing left behind");
        assert_eq!(app.get(&shop, "/subscriptions").await.1, json!([]));

        let product = app.product(&shop, &test_product_body()).await;
        let path = format!("/products/{}/pay", product["id"].as_str().unwrap());
        let form = app.open_form(&path).await;
        let mut fields = crate::helpers::card(cards::SUCCESS);
        fields.push(("card_holder", "Ann\0Lee"));
        let page = app.submit(&path, &form, &fields).await;
        assert_eq!(page.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(page.html.contains("<html"), "a page, not JSON");
        assert_eq!(app.page("/products/%00/pay").await.status, StatusCode::NOT_FOUND);
    }

    async fn a_clock_at_the_end_of_time_answers_instead_of_panicking(app) {
        let shop = app.shop("Gym").await;
        let trial = json!({"trial": {"amount": 0, "interval": 1, "interval_unit": "hour"}});
        let plan = plan(&app, &shop, trial).await;
        let clock = clock(&app, &shop, "9999-12-31T20:00:00Z").await;
        subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await;
        advance(&app, &shop, &clock, "9999-12-31T23:59:59Z").await;
        let (status, errors) =
            app.post(&shop, &format!("/test_clocks/{clock}/advance"), &json!({"frozen_time": "+10000-01-01T00:00:00Z"})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{errors}");
        let (status, errors) = app.post(&shop, "/test_clocks", &json!({"frozen_time": 253402300800_i64})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{errors}");
    }

    async fn a_clock_advance_finishes_when_its_client_hangs_up(app) {
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({"plan": {"amount": 100, "interval": 1, "interval_unit": "hour"}})).await;
        let clock = clock(&app, &shop, "2026-03-01T00:00:00Z").await;
        let sub = subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await;
        let hasty = reqwest::Client::builder().timeout(std::time::Duration::from_millis(100)).build().unwrap();
        let gone = hasty
            .post(format!("{}/test_clocks/{clock}/advance", app.base))
            .basic_auth(shop.id, Some(&shop.secret))
            .json(&json!({"frozen_time": "2026-04-01T00:00:00Z"}))
            .send()
            .await;
        assert!(gone.is_err(), "the client gave up before the advance was done");
        // A month of hourly renewals: it takes most of a minute on a busy machine's PostgreSQL.
        let mut ready = Value::Null;
        let patience = Patience::times(2);
        while !patience.spent() {
            ready = app.get(&shop, &format!("/test_clocks/{clock}")).await.1;
            if ready["status"] == "ready" {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        assert_eq!(ready["status"], "ready");
        assert_eq!(ready["frozen_time"], "2026-04-01T00:00:00.000Z");
        let (_, paid) = app.get(&shop, &format!("/payments?subscription={}&status=processing", sub["id"].as_str().unwrap())).await;
        assert_eq!(paid, json!([]), "nothing left processing");
        advance(&app, &shop, &clock, "2026-04-02T00:00:00Z").await;
    }

    async fn wrong_api_credentials_from_one_address_are_throttled_and_the_right_key_always_gets_in(app) {
        let shop = app.shop("Books").await;
        let wrong = Shop { id: shop.id, secret: "sk_wrong".into() };
        for _ in 0..30 {
            assert_eq!(app.get(&wrong, "/products").await.0, StatusCode::UNAUTHORIZED);
        }
        let response = app.req(&wrong, reqwest::Method::GET, "/products").send().await.unwrap();
        assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
        let wait: u64 = response.headers()["retry-after"].to_str().unwrap().parse().unwrap();
        assert!((1..=600).contains(&wait));
        let nobody = app.client.get(format!("{}/products", app.base)).send().await.unwrap();
        assert_eq!(nobody.status(), StatusCode::TOO_MANY_REQUESTS, "no credentials wait too");
        // The right key, of this shop or another, is never kept out by others' wrong ones.
        let other = app.shop("Records").await;
        for who in [&shop, &other] {
            let (status, _) = app.get(who, "/products").await;
            assert_eq!(status, StatusCode::OK);
        }
    }

    async fn behind_a_trusted_load_balancer_each_client_is_throttled_apart(app) {
        let args = paydesk::config::ConfigArgs { trusted_proxies: Some("127.0.0.0/8".into()), ..Default::default() };
        let app = TestApp::spawn_with(app.backend, args).await;
        let shop = app.shop("Books").await;
        let wrong = Shop { id: shop.id, secret: "sk_wrong".into() };
        let from = |client: &'static str, who: &Shop| {
            app.req(who, reqwest::Method::GET, "/products").header("x-forwarded-for", client).send()
        };
        for _ in 0..30 {
            assert_eq!(from("203.0.113.7", &wrong).await.unwrap().status(), StatusCode::UNAUTHORIZED);
        }
        assert_eq!(from("203.0.113.7", &wrong).await.unwrap().status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(from("203.0.113.7", &shop).await.unwrap().status(), StatusCode::OK, "the right key gets in");
        // Another client behind the same balancer, and one that forges the header's start.
        assert_eq!(from("198.51.100.4", &shop).await.unwrap().status(), StatusCode::OK);
        assert_eq!(from("203.0.113.7, 198.51.100.4", &shop).await.unwrap().status(), StatusCode::OK);
    }

    async fn answers_are_never_cached_and_https_is_strict(app) {
        let shop = app.shop("Books").await;
        let product = app.product(&shop, &test_product_body()).await;
        let id = product["id"].as_str().unwrap();
        for path in [format!("/products/{id}"), "/products/prd_0000000000000000".to_string()] {
            let response = app.req(&shop, reqwest::Method::GET, &path).send().await.unwrap();
            assert_eq!(response.headers()["cache-control"], "no-store", "{path}");
            assert!(response.headers().get("strict-transport-security").is_none(), "plain http");
        }
        for path in [format!("/products/{id}/pay"), "/products/prd_0000000000000000/pay".to_string()] {
            assert_eq!(app.page(&path).await.headers["cache-control"], "no-store", "{path}");
        }
    }
}

#[tokio::test]
async fn an_https_deployment_sends_strict_transport_security() {
    let args = paydesk::config::ConfigArgs { base_url: Some("https://pay.example".into()), ..Default::default() };
    let app = TestApp::spawn_with(Backend::Sqlite, args).await;
    let response = app.anon(reqwest::Method::GET, "/healthz").send().await.unwrap();
    assert_eq!(response.headers()["strict-transport-security"], "max-age=31536000; includeSubDomains");
}
