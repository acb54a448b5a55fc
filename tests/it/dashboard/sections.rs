//! The shop's pages: products, plans, customers, payments, subscriptions, the overview, and
//! isolation between shops.

use paydesk::config::ConfigArgs;
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::*;
use crate::helpers::*;

db_tests! {
    async fn customers_are_found_by_email_and_name_and_exported(app) {
        let m = sign_up(&app, "Books", "owner@books.test").await;
        let shop = api_shop(&m).await;
        for (email, first, last) in [("ann@example.com", "Ann", "Lee"), ("bob@example.org", "Bob", "Annan"), ("zoe@example.com", "Zoë", "=cmd"), ("ivan@example.ru", "Иван", "Ёлкин")] {
            app.post(&shop, "/customers", &json!({"email": email, "first_name": first, "last_name": last, "ip": "203.0.113.9", "country": "JP"})).await;
        }
        let emails = |html: &str| -> Vec<String> {
            html.split("\">").filter_map(|s| s.split('<').next()).filter(|s| s.contains("@example.")).map(str::to_string).collect()
        };
        let page = m.get("/dashboard/customers").await;
        assert_eq!(emails(&page.html), ["ivan@example.ru", "zoe@example.com", "bob@example.org", "ann@example.com"]);
        assert!(page.html.contains(">Japan</td>"), "countries by name");
        // Each word typed starts a word of the e-mail (all of it one word) or a name.
        for (q, expected) in [("ann", vec!["bob@example.org", "ann@example.com"]), ("ann+lee", vec!["ann@example.com"]),
                              ("BOB%40EXAMPLE.O", vec!["bob@example.org"]), ("zo%C3%AB", vec!["zoe@example.com"]), ("nobody", vec![]),
                              ("иван", vec!["ivan@example.ru"]), ("ЁЛКИН", vec!["ivan@example.ru"]), ("елкин", vec!["ivan@example.ru"]),
                              ("ёл", vec!["ivan@example.ru"]), ("a", vec!["bob@example.org", "ann@example.com"]),
                              ("ann+l", vec!["ann@example.com"]), ("(Lee)", vec!["ann@example.com"]), ("cmd", vec!["zoe@example.com"]),
                              // Not the middle of a word.
                              ("example.org", vec![]), ("nan", vec![]), ("%22ann%22*", vec!["bob@example.org", "ann@example.com"])] {
            let page = m.get(&format!("/dashboard/customers?q={q}")).await;
            assert_eq!(emails(&page.html), expected, "{q}");
        }
        let csv = m.client.get(format!("{}/dashboard/customers/export.csv?q=ann", app.base)).send().await.unwrap();
        assert_eq!(csv.headers()["content-type"], "text/csv; charset=utf-8");
        let text = csv.text().await.unwrap();
        assert_eq!(text.lines().count(), 3, "{text}");
        assert!(text.lines().nth(2).unwrap().contains(",ann@example.com,Ann,Lee,,JP,"), "{text}");
        let all = m.client.get(format!("{}/dashboard/customers/export.csv", app.base)).send().await.unwrap().text().await.unwrap();
        assert!(all.contains(",zoe@example.com,Zoë,'=cmd,"), "a formula is kept as text: {all}");

        // Every customer, page after page of the export's thousand.
        copy_customer(&app, &shop, "ann@example.com", 2_100).await;
        let all = m.client.get(format!("{}/dashboard/customers/export.csv", app.base)).send().await.unwrap().text().await.unwrap();
        let ids: std::collections::HashSet<&str> = all.lines().skip(1).map(|r| r.split(',').next().unwrap()).collect();
        assert_eq!((all.lines().count(), ids.len()), (1 + 2_104, 2_104), "each customer once");
        let found = m.client.get(format!("{}/dashboard/customers/export.csv?q=ann%40example", app.base)).send().await.unwrap();
        assert_eq!(found.text().await.unwrap().lines().count(), 1 + 2_101, "the copies are found by their e-mail");
        // As a browser asks for it, compressed: whole (the end of the rows is the end of the body).
        let gzip = m.client.get(format!("{}/dashboard/customers/export.csv", app.base)).header("accept-encoding", "gzip");
        let gzip = gzip.send().await.unwrap();
        assert_eq!(gzip.headers()["content-encoding"], "gzip");
        assert!(gzip.bytes().await.is_ok(), "the compressed download ends as it should");
    }

    async fn payments_are_found_by_email_card_amount_id_and_filters_and_exported(app) {
        let m = sign_up(&app, "Books", "owner@example.com").await;
        let shop = api_shop(&m).await;
        let product = |name: &str, amount: i64| {
            let mut body = test_product_body();
            body["name"] = json!(name);
            body["amount"] = json!(amount);
            body["visible_fields"] = json!(["email"]);
            body
        };
        let mug = app.product(&shop, &product("Mug", 990)).await;
        let poster = app.product(&shop, &product("Poster, large", 2500)).await;
        let pay = |id: &Value, card: &'static str, email: &'static str| {
            let id = id["id"].as_str().unwrap().to_string();
            let app = &app;
            async move { app.pay(&id, card, &[("email", email)]).await }
        };
        pay(&mug, cards::SUCCESS, "ann@example.com").await;
        pay(&poster, "5555555555554444", "bob@example.com").await;
        pay(&mug, cards::DECLINED, "carl@example.com").await;
        let (_, all) = app.get(&shop, "/payments").await;
        let id_of = |email: &str| {
            let found = all.as_array().unwrap().iter().find(|p| p["amount"] == if email == "bob" { 2500 } else { 990 } && (email != "carl" || p["status"] == "failed") && (email != "ann" || p["status"] == "succeeded"));
            found.unwrap()["id"].as_str().unwrap().to_string()
        };
        let (ann, bob, carl) = (id_of("ann"), id_of("bob"), id_of("carl"));

        let listed = |html: &str| -> Vec<String> {
            html.split("href=\"/dashboard/payments/pay_").skip(1).map(|s| format!("pay_{}", s.split('"').next().unwrap())).collect()
        };
        let page = m.get("/dashboard/payments").await;
        assert_eq!(listed(&page.html), [carl.clone(), bob.clone(), ann.clone()], "newest first");
        assert!(page.html.contains(&format!("href=\"/dashboard/products/{}\">Mug</a>", mug["id"].as_str().unwrap())), "what was paid for");
        assert!(page.html.contains(">ann@example.com</a>"), "who paid");
        let today = chrono::Utc::now().format("%Y-%m-%d").to_string();
        let tomorrow = (chrono::Utc::now() + chrono::Duration::days(1)).format("%Y-%m-%d").to_string();
        for (query, expected) in [
            ("q=ANN%40example", vec![ann.clone()]),
            ("q=4444", vec![bob.clone()]),
            ("q=25.00", vec![bob.clone()]),
            ("q=25%2C00+%E2%82%AC", vec![bob.clone()]),
            ("q=%E2%82%AC9.90", vec![carl.clone(), ann.clone()]),
            (&format!("q={ann}") as &str, vec![ann.clone()]),
            ("q=Ann+Lee", vec![carl.clone(), bob.clone(), ann.clone()]),
            ("status=failed", vec![carl.clone()]),
            (&format!("product={}", poster["id"].as_str().unwrap()), vec![bob.clone()]),
            ("mode=test&status=succeeded", vec![bob.clone(), ann.clone()]),
            ("mode=live", vec![]),
            (&format!("from={today}&to={today}"), vec![carl.clone(), bob.clone(), ann.clone()]),
            (&format!("from={tomorrow}"), vec![]),
            ("q=nobody%40example.com", vec![]),
        ] {
            let page = m.get(&format!("/dashboard/payments?{query}")).await;
            assert_eq!(page.status, StatusCode::OK, "{query}");
            assert_eq!(listed(&page.html), expected, "{query}");
            if expected.is_empty() {
                assert!(page.html.contains("No payment matches this search."), "{query}");
            }
        }
        let bad = m.get("/dashboard/payments?from=yesterday&mode=both").await;
        assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(bad.html.contains("id=\"e-from\">must be a date (YYYY-MM-DD)</p>"), "{}", bad.html);

        let csv = m.client.get(format!("{}/dashboard/payments/export.csv?q=9.90", app.base)).send().await.unwrap();
        assert_eq!(csv.status(), StatusCode::OK);
        assert_eq!(csv.headers()["content-type"], "text/csv; charset=utf-8");
        assert!(csv.headers()["content-disposition"].to_str().unwrap().starts_with("attachment; filename=\"payments-"));
        let text = csv.text().await.unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(lines[0].starts_with("id,created_at,amount,currency,status,test,paid_for,customer_email"));
        assert!(lines[1].starts_with(&format!("{carl},")) && lines[1].contains(",9.90,EUR,failed,true,Mug,,,visa,0019,Ann Lee,0.00,0.00,card_declined,"), "a declined card made no customer: {text}");
        let all = m.client.get(format!("{}/dashboard/payments/export.csv", app.base)).send().await.unwrap().text().await.unwrap();
        assert!(all.contains(",\"Poster, large\",bob@example.com,"), "a comma is quoted: {all}");
        let other = sign_up(&app, "Other", "other@books.test").await;
        let theirs = other.client.get(format!("{}/dashboard/payments/export.csv", app.base)).send().await.unwrap().text().await.unwrap();
        assert_eq!(theirs.lines().count(), 1, "another shop exports only its own");

        let detail = m.get(&format!("/dashboard/payments/{bob}")).await;
        assert!(detail.html.contains(&format!("<a href=\"/dashboard/products/{}\">Poster, large</a>", poster["id"].as_str().unwrap())));
        assert!(detail.html.contains(">bob@example.com</a>"));
    }

    async fn the_payments_export_sends_every_payment_page_after_page_newest_first(app) {
        let m = sign_up(&app, "Books", "ann@example.com").await;
        let shop = api_shop(&m).await;
        let product = app.product(&shop, &test_product_body()).await;
        app.pay(product["id"].as_str().unwrap(), cards::SUCCESS, &[]).await;
        let (_, payments) = app.get(&shop, "/payments").await;
        let first = payments[0]["id"].as_str().unwrap().to_string();
        // Two and a half pages of the export's thousand.
        copy_payment(&app, &first, 2_500).await;
        let csv = m.client.get(format!("{}/dashboard/payments/export.csv", app.base)).send().await.unwrap();
        assert_eq!(csv.status(), StatusCode::OK);
        let text = csv.text().await.unwrap();
        let rows: Vec<&str> = text.lines().skip(1).collect();
        assert_eq!(rows.len(), 2_501, "every payment");
        let ids: std::collections::HashSet<&str> = rows.iter().map(|r| r.split(',').next().unwrap()).collect();
        assert_eq!(ids.len(), 2_501, "each once");
        let times: Vec<&str> = rows.iter().map(|r| r.split(',').nth(1).unwrap()).collect();
        assert!(times.windows(2).all(|w| w[0] >= w[1]), "newest first");
        assert_eq!(rows[0].split(',').next(), Some(first.as_str()), "the real payment is the newest");
        let failed = m.client.get(format!("{}/dashboard/payments/export.csv?status=failed", app.base)).send().await;
        assert_eq!(failed.unwrap().text().await.unwrap().lines().count(), 1 + 250, "a filter holds across pages");
    }

    async fn new_products_and_plans_start_live_and_the_forms_work_without_script(app) {
        let m = sign_up(&app, "Books", "ann@example.com").await;
        for path in ["/dashboard/products/new", "/dashboard/plans/new"] {
            let form = m.get(path).await;
            assert!(form.html.contains("name=\"test\""), "{path}: the merchant may choose test");
            assert!(!form.html.contains("name=\"test\" type=\"checkbox\" value=\"true\" checked"), "{path}: live by default");
        }
        // "Unlimited" and "never expires" ticked with a quantity and a date still typed (no
        // script switched them off): the boxes win.
        let created = m.post("/dashboard/products", &[("name", "Mug"), ("description", "A mug"), ("amount", "9.90"), ("currency", "EUR"),
            ("infinite", "true"), ("quantity", "5"), ("immortal", "true"), ("expired_at", "2030-06-01T12:00")]).await;
        let id = Merchant::created(&created, "prd_");
        let page = m.get(&format!("/dashboard/products/{id}")).await;
        assert!(page.html.contains("data-testid=\"live-off\""), "a live link on an instance without live payments says so");
        let shop = api_shop(&m).await;
        let (_, product) = app.get(&shop, &format!("/products/{id}")).await;
        assert_eq!((product["infinite"].clone(), product["quantity"].clone(), product["test"].clone()), (json!(true), Value::Null, json!(false)));
        assert_eq!((product["immortal"].clone(), product["expired_at"].clone()), (json!(true), Value::Null));
        let plan = m.post("/dashboard/plans", &[("title", "Gold"), ("currency", "EUR"), ("plan.amount", "9.90"),
            ("plan.interval", "1"), ("plan.interval_unit", "month"), ("infinite", "true"), ("billing_cycles", "4")]).await;
        Merchant::created(&plan, "pln_");

        // `1,000` is a thousand to some and one to others: refused, saying so.
        let refused = m.post("/dashboard/products", &[("name", "Mug"), ("description", "A mug"), ("amount", "1,000"), ("currency", "EUR"),
            ("infinite", "true"), ("immortal", "true")]).await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(refused.html.contains("is ambiguous: type 1000 for a thousand, or 1.00 for one</p>"), "{}", refused.html);
        let refused = m.post("/dashboard/plans", &[("title", ""), ("currency", "EUR"), ("plan.amount", "1,000"),
            ("plan.interval", "1"), ("plan.interval_unit", "month"), ("infinite", "true")]).await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(refused.html.contains("is ambiguous") && refused.html.contains("id=\"e-title\""), "{}", refused.html);
    }

    async fn products_are_created_edited_and_found_with_the_apis_rules(app) {
        let m = sign_up(&app, "Books", "ann@example.com").await;
        let form = m.get("/dashboard/products/new").await;
        assert_eq!(form.status, StatusCode::OK);
        for field in ["name=\"visible_fields\" value=\"email\"", "name=\"infinite\"", "name=\"immortal\"", "name=\"expired_at\"",
                      "name=\"transaction_type\"", "name=\"language\"", "name=\"return_url\"", "name=\"test\""] {
            assert!(form.html.contains(field), "{field}");
        }

        let bad = m.post("/dashboard/products", &[("name", ""), ("description", "A mug"), ("amount", "9.90"),
            ("currency", "EURO"), ("visible_fields", "email"), ("visible_fields", "shoe_size")]).await;
        assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
        for (field, message) in [("name", "can&#39;t be blank"), ("currency", "is not in alpha-3 format, is an unknown code"),
                                 ("quantity", "can&#39;t be blank"), ("expired_at", "can&#39;t be blank"),
                                 ("visible_fields", "is not included in the list")] {
            let shown = format!("id=\"e-{field}\">{message}</p>");
            let shown_alt = shown.replace("&#39;", "&#x27;");
            assert!(bad.html.contains(&shown) || bad.html.contains(&shown_alt), "{field}: {}", bad.html);
        }
        assert!(bad.html.contains(">A mug</textarea>"), "what was sent is kept");

        let created = m.post("/dashboard/products", &[("name", "Mug <b>"), ("description", "A mug"), ("amount", "9.90"),
            ("currency", "EUR"), ("quantity", "5"), ("expired_at", "2030-06-01T12:00"), ("visible_fields", "email"),
            ("visible_fields", "phone"), ("transaction_type", "authorization"), ("language", "ru"), ("test", "true")]).await;
        let id = Merchant::created(&created, "prd_");
        assert!(m.get(&format!("/dashboard/products/{id}")).await.html.contains("Product created."));
        let shop = api_shop(&m).await;
        let (status, product) = app.get(&shop, &format!("/products/{id}")).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(product["amount"], 990);
        assert_eq!(product["quantity"], 5);
        assert_eq!(product["infinite"], false);
        assert_eq!(product["immortal"], false);
        assert_eq!(product["expired_at"], "2030-06-01T12:00:00.000Z", "local time of the shop's zone (UTC here)");
        assert_eq!(product["visible_fields"], json!(["email", "phone"]));
        assert_eq!((product["transaction_type"].clone(), product["language"].clone()), (json!("authorization"), json!("ru")));

        let page = m.get(&format!("/dashboard/products/{id}")).await;
        assert!(page.html.contains("Mug &#60;b&#62;") || page.html.contains("Mug &lt;b&gt;"));
        assert!(page.html.contains(&format!("value=\"{}/products/{id}/pay\"", app.base)), "the pay link");
        assert!(page.html.contains("data-copy=\"pay-url\""));
        let qr = m.client.get(format!("{}/dashboard/products/{id}/qr.svg", app.base)).send().await.unwrap();
        assert_eq!(qr.headers()["content-type"], "image/svg+xml");
        assert!(qr.text().await.unwrap().contains("<svg"));
        let preview = m.get(&format!("/dashboard/products/{id}/preview")).await;
        assert_eq!(preview.status, StatusCode::OK);
        assert!(preview.html.contains("Предпросмотр") && preview.html.contains("name=\"email\"") && preview.html.contains("name=\"phone\""));

        let edit = m.get(&format!("/dashboard/products/{id}/edit")).await;
        assert!(edit.html.contains("value=\"9.90\"") && edit.html.contains("value=\"2030-06-01T12:00\""));
        let saved = m.post(&format!("/dashboard/products/{id}"), &[("name", "Big mug"), ("description", "A mug"),
            ("amount", "12"), ("currency", "EUR"), ("infinite", "true"), ("immortal", "true"), ("language", "en"),
            ("transaction_type", "payment"), ("return_url", "https://books.example/thanks")]).await;
        assert_eq!(saved.status, StatusCode::SEE_OTHER, "{}", saved.html);
        let (_, product) = app.get(&shop, &format!("/products/{id}")).await;
        assert_eq!((product["amount"].clone(), product["infinite"].clone(), product["quantity"].clone()), (json!(1200), json!(true), Value::Null));
        assert_eq!((product["immortal"].clone(), product["visible_fields"].clone(), product["test"].clone()), (json!(true), json!([]), json!(false)));
        let cleared = m.post(&format!("/dashboard/products/{id}"), &[("name", "Big mug"), ("description", "A mug"),
            ("amount", "12"), ("currency", "EUR"), ("infinite", "true"), ("immortal", "true"), ("return_url", "")]).await;
        assert_eq!(cleared.status, StatusCode::SEE_OTHER);
        let (_, product) = app.get(&shop, &format!("/products/{id}")).await;
        assert_eq!(product["return_url"], Value::Null, "a blanked field is cleared: {}", cleared.location);
        let blank = m.post(&format!("/dashboard/products/{id}"), &[("name", ""), ("description", "A mug"), ("amount", "1,000"),
            ("currency", "EUR"), ("infinite", "true"), ("immortal", "true")]).await;
        assert_eq!(blank.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(blank.html.contains("id=\"e-amount\">“1,000” is ambiguous: type 1000 for a thousand, or 1.00 for one</p>"), "1,000 is not guessed: {}", blank.html);
        assert!(blank.html.contains("id=\"e-name\">can&#39;t be blank</p>") || blank.html.contains("id=\"e-name\">can&#x27;t be blank</p>"));
        let refused = m.post(&format!("/dashboard/products/{id}"), &[("name", "Big mug"), ("amount", "0")]).await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(refused.html.contains("must be greater than or equal to 1"));
        for (typed, said) in [("1.000", "“1.000” is ambiguous: type 1000 for a thousand, or 1.00 for one"),
                              ("0,001", "EUR has at most 2 digits after the decimal mark"), ("0", "must be at least €0.01")] {
            let refused = m.post(&format!("/dashboard/products/{id}"), &[("name", "Big mug"), ("amount", typed), ("currency", "EUR")]).await;
            assert!(refused.html.contains(&format!("id=\"e-amount\">{said}</p>")), "{typed}: {}", refused.html);
        }

        app.product(&shop, &json!({"name": "Poster", "description": "A poster", "currency": "EUR", "amount": "500",
                                   "infinite": true, "immortal": true})).await;
        let found = m.get("/dashboard/products?q=MUG").await;
        assert!(found.html.contains("Big mug") && !found.html.contains("Poster"));
        let all = m.get("/dashboard/products").await;
        assert!(all.html.contains("Big mug") && all.html.contains("Poster") && all.html.contains("€12.00"));
        let none = m.get("/dashboard/products?q=100%25").await;
        assert!(none.html.contains("No product matches"));
    }

    async fn plans_and_customers_are_created_with_the_apis_rules(app) {
        let m = sign_up(&app, "Gym", "ann@example.com").await;
        let bad = m.post("/dashboard/plans", &[("title", ""), ("currency", "EUR"), ("plan.amount", "9.90"),
            ("plan.interval", "0"), ("plan.interval_unit", "month"), ("trial.amount", "1.00"), ("number_payment_attempts", "0"),
            ("billing_cycles", "")]).await;
        assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
        for (field, message) in [("title", "can&#39;t be blank"), ("plan.interval", "must be greater than or equal to 1"),
                                 ("trial.interval", "can&#39;t be blank"),
                                 ("number_payment_attempts", "must be greater than or equal to 1"),
                                 ("billing_cycles", "can&#39;t be blank")] {
            let shown = format!("id=\"e-{field}\">{message}</p>");
            assert!(bad.html.contains(&shown) || bad.html.contains(&shown.replace("&#39;", "&#x27;")), "{field}: {}", bad.html);
        }
        let created = m.post("/dashboard/plans", &[("title", "Gold"), ("currency", "EUR"), ("language", "en"),
            ("plan.amount", "9.90"), ("plan.interval", "1"), ("plan.interval_unit", "month"), ("trial.amount", "1"),
            ("trial.interval", "7"), ("trial.interval_unit", "day"), ("infinite", "true"), ("number_payment_attempts", "3"),
            ("prevent_payments_at_night", "true"), ("test", "true")]).await;
        let plan = Merchant::created(&created, "pln_");
        let page = m.get(&format!("/dashboard/plans/{plan}")).await;
        assert!(page.html.contains("€9.90 every month after a 7-day trial for €1.00, until cancelled."), "{}", page.html);
        assert!(page.html.contains("No charges between 20:00 and 08:00"));
        assert!(page.html.contains(&format!("{}/plans/{plan}/pay", app.base)));
        let shop = api_shop(&m).await;
        let (_, api_plan) = app.get(&shop, &format!("/plans/{plan}")).await;
        assert_eq!(api_plan["plan"], json!({"amount": 990, "interval": 1, "interval_unit": "month"}));
        assert_eq!(api_plan["trial"]["amount"], 100);
        assert_eq!(api_plan["prevent_payments_at_night"], true);
        assert!(m.get("/dashboard/plans").await.html.contains("Gold"));

        let bad = m.post("/dashboard/customers", &[("email", "nope"), ("ip", "300.1.1.1"), ("country", "DE"), ("state", "NY")]).await;
        assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(bad.html.contains("id=\"e-email\">is invalid</p>") && bad.html.contains("id=\"e-ip\">is invalid</p>"));
        assert!(bad.html.contains("id=\"e-state\">may be sent only when country is US or CA</p>"));
        let created = m.post("/dashboard/customers", &[("email", "zoe@example.com"), ("ip", "203.0.113.9"),
            ("first_name", "Zoe"), ("country", "US"), ("state", "NY"), ("zip", "10001")]).await;
        let customer = Merchant::created(&created, "cst_");
        let page = m.get(&format!("/dashboard/customers/{customer}")).await;
        assert!(page.html.contains("zoe@example.com") && page.html.contains("203.0.113.9"));
        let (_, api_customer) = app.get(&shop, &format!("/customers/{customer}")).await;
        assert_eq!(api_customer["zip"], "10001");
        assert!(m.get("/dashboard/customers?q=ZOE").await.html.contains("zoe@example.com"));
        assert!(m.get("/dashboard/customers?q=nobody").await.html.contains("No customer matches"));
    }

    async fn authorizations_are_captured_and_voided_from_the_dashboard(app) {
        let m = sign_up(&app, "Books", "ann@example.com").await;
        let shop = api_shop(&m).await;
        let mut body = test_product_body();
        body["transaction_type"] = json!("authorization");
        body["visible_fields"] = json!(["email"]);
        let product = app.product(&shop, &body).await;
        let id = product["id"].as_str().unwrap();
        for _ in 0..2 {
            let paid = app.pay(id, cards::SUCCESS, &[("email", "payer@example.com")]).await;
            assert_eq!(paid.status, StatusCode::SEE_OTHER, "{}", paid.html);
        }
        app.pay(id, cards::DECLINED, &[("email", "payer@example.com")]).await;
        let (_, payments) = app.get(&shop, "/payments?status=authorized").await;
        let (first, second) = (payments[0]["id"].as_str().unwrap(), payments[1]["id"].as_str().unwrap());

        let held = m.get(&format!("/dashboard/payments/{first}")).await;
        assert!(held.html.contains("Authorized: the funds are held") && held.html.contains("Capture €9.90"), "{}", held.html);
        let captured = m.post(&format!("/dashboard/payments/{first}/capture"), &[]).await;
        assert_eq!(captured.status, StatusCode::SEE_OTHER);
        let page = m.get(&format!("/dashboard/payments/{first}")).await;
        assert!(page.html.contains("Captured €9.90.") && !page.html.contains("funds are held"));
        let (_, api) = app.get(&shop, &format!("/payments/{first}")).await;
        assert_eq!(api["status"], "succeeded");
        let again = m.post(&format!("/dashboard/payments/{first}/capture"), &[]).await;
        assert_eq!(again.status, StatusCode::SEE_OTHER, "a second click is said on the payment's page");
        let page = m.get(&format!("/dashboard/payments/{first}")).await;
        assert!(page.html.contains("This payment was already captured."), "{}", page.html);
        let ask = m.post(&format!("/dashboard/payments/{second}/void"), &[]).await;
        assert!(ask.html.contains("Void the authorization of €9.90?") && ask.html.contains("name=\"confirm\" value=\"yes\""));
        assert_eq!(app.get(&shop, &format!("/payments/{second}")).await.1["status"], "authorized", "asked first");
        assert_eq!(m.post(&format!("/dashboard/payments/{second}/void"), &[("confirm", "yes")]).await.status, StatusCode::SEE_OTHER);
        let (_, api) = app.get(&shop, &format!("/payments/{second}")).await;
        assert_eq!(api["status"], "voided");
        assert_eq!(m.post(&format!("/dashboard/payments/{second}/void"), &[("confirm", "yes")]).await.status, StatusCode::SEE_OTHER);
        assert!(m.get(&format!("/dashboard/payments/{second}")).await.html.contains("This authorization was already voided"));
        let late = m.post(&format!("/dashboard/payments/{first}/void"), &[]).await;
        assert_eq!(late.status, StatusCode::SEE_OTHER, "no confirmation to void what is not held");

        let failed = m.get("/dashboard/payments?status=failed").await;
        assert!(failed.html.contains("status-failed") && !failed.html.contains("status-voided"));
        let all = m.get(&format!("/dashboard/payments?product={id}")).await;
        assert!(all.html.contains("status-voided") && all.html.contains("status-succeeded"));
        assert!(all.html.contains("\">payer@example.com</a></td>"), "the paying customer");
        assert_eq!(m.get("/dashboard/payments?status=lost").await.status, StatusCode::UNPROCESSABLE_ENTITY);
        // Captured money counts on the day of the capture, even for an older authorization.
        use sea_orm::{ActiveModelTrait, ActiveValue::Set, IntoActiveModel};
        let row = paydesk::db::find_public::<paydesk::db::entities::payments::Entity>(&app.db, first).await.unwrap().unwrap();
        let mut row = row.into_active_model();
        row.created_at = Set(chrono::Utc::now() - chrono::Duration::days(40));
        row.update(&app.db).await.unwrap();
        let home = m.get("/dashboard").await;
        assert!(home.html.contains("data-testid=\"today-test\">Test mode: €9.90"), "{}", home.html);
        assert!(!home.html.contains("data-testid=\"today\""), "test payments are not the shop's revenue");
        assert!(home.html.contains("data-testid=\"chart-EUR\"") && home.html.contains("(test mode: no live payments yet)"));
        let customer = app.get(&shop, "/customers").await.1[0]["id"].as_str().unwrap().to_string();
        let page = m.get(&format!("/dashboard/customers/{customer}")).await;
        assert_eq!(page.html.matches("/dashboard/payments/pay_").count(), 2, "the customer's payments (a decline makes no customer)");
    }

    async fn subscriptions_show_their_timeline_and_can_be_cancelled(app) {
        let m = sign_up(&app, "Gym", "ann@example.com").await;
        let shop = api_shop(&m).await;
        let mut plan = plan_body();
        plan["test"] = json!(true);
        let (_, plan) = app.post(&shop, "/plans", &plan).await;
        let (_, clock) = app.post(&shop, "/test_clocks", &json!({"frozen_time": "2026-03-10T12:00:00Z"})).await;
        let card = json!({"number": cards::SUCCESS, "exp_month": 12, "exp_year": 2040, "cvc": "123", "holder": "Ann Lee"});
        let (status, sub) = app.post(&shop, "/subscriptions", &json!({"plan": {"id": plan["id"]}, "customer": customer_body(),
            "card": card, "test_clock": clock["id"]})).await;
        assert_eq!(status, StatusCode::CREATED, "{sub}");
        let id = sub["id"].as_str().unwrap();
        app.post(&shop, &format!("/test_clocks/{}/advance", clock["id"].as_str().unwrap()), &json!({"frozen_time": "2026-04-10T13:00:00Z"})).await;

        let list = m.get("/dashboard/subscriptions?state=active").await;
        assert!(list.html.contains(&format!("/dashboard/subscriptions/{id}")));
        assert!(!m.get("/dashboard/subscriptions?state=canceled").await.html.contains(id));
        let page = m.get(&format!("/dashboard/subscriptions/{id}")).await;
        assert!(page.html.contains("data-testid=\"next-charge\">€9.90 on 2026-05-10 12:00"), "{}", page.html);
        assert_eq!(page.html.matches("Charge attempt → active").count(), 1);
        assert!(page.html.contains("Created with its first charge → active"), "{}", page.html);
        let ask = m.post(&format!("/dashboard/subscriptions/{id}/cancel"), &[("when", "now"), ("cancel_reason", "moved away")]).await;
        assert_eq!(ask.status, StatusCode::OK, "a confirmation first");
        assert!(ask.html.contains("Cancel the subscription now?") && ask.html.contains("name=\"cancel_reason\" value=\"moved away\""));
        assert_eq!(app.get(&shop, &format!("/subscriptions/{id}")).await.1["state"], "active", "nothing changed yet");
        let cancelled = m.post(&format!("/dashboard/subscriptions/{id}/cancel"),
            &[("when", "now"), ("cancel_reason", "moved away"), ("confirm", "yes")]).await;
        assert_eq!(cancelled.status, StatusCode::SEE_OTHER);
        let (_, api) = app.get(&shop, &format!("/subscriptions/{id}")).await;
        assert_eq!((api["state"].clone(), api["cancel_reason"].clone()), (json!("canceled"), json!("moved away")));
        let page = m.get(&format!("/dashboard/subscriptions/{id}")).await;
        assert!(page.html.contains("active → canceled: moved away") && !page.html.contains("Cancel subscription"));
        assert_eq!(m.post(&format!("/dashboard/subscriptions/{id}/cancel"), &[("confirm", "yes")]).await.status, StatusCode::SEE_OTHER);
        assert!(m.get(&format!("/dashboard/subscriptions/{id}")).await.html.contains("canceled"), "a second cancel says it is cancelled");
        let home = m.get("/dashboard").await;
        assert!(home.html.contains("canceled</a>: 1"));
    }

    async fn a_subscription_cancelled_at_the_end_of_its_paid_period_ends_then_uncharged(app) {
        let m = sign_up(&app, "Gym", "ann@example.com").await;
        let shop = api_shop(&m).await;
        let mut plan = plan_body();
        plan["test"] = json!(true);
        let (_, plan) = app.post(&shop, "/plans", &plan).await;
        let (_, clock) = app.post(&shop, "/test_clocks", &json!({"frozen_time": "2026-03-10T12:00:00Z"})).await;
        let clock = clock["id"].as_str().unwrap().to_string();
        let card = json!({"number": cards::SUCCESS, "exp_month": 12, "exp_year": 2040, "cvc": "123", "holder": "Ann Lee"});
        let (_, sub) = app.post(&shop, "/subscriptions", &json!({"plan": {"id": plan["id"]}, "customer": customer_body(),
            "card": card, "test_clock": clock})).await;
        let id = sub["id"].as_str().unwrap();
        let page = m.get(&format!("/dashboard/subscriptions/{id}")).await;
        assert!(page.html.contains("At the end of the paid period (2026-04-10 12:00 UTC)"), "{}", page.html);
        let ask = m.post(&format!("/dashboard/subscriptions/{id}/cancel"), &[("when", "period_end")]).await;
        assert!(ask.html.contains("Cancel at the end of the paid period?") && ask.html.contains("2026-04-10 12:00 UTC"));
        let done = m.post(&format!("/dashboard/subscriptions/{id}/cancel"), &[("when", "period_end"), ("cancel_reason", "too dear"), ("confirm", "yes")]).await;
        assert_eq!(done.status, StatusCode::SEE_OTHER);
        let (_, api) = app.get(&shop, &format!("/subscriptions/{id}")).await;
        assert_eq!((api["state"].clone(), api["cancel_at_period_end"].clone()), (json!("active"), json!(true)));
        let ending = m.get(&format!("/dashboard/subscriptions/{id}")).await.html;
        assert!(ending.contains("data-testid=\"ends-at-period-end\""));
        assert!(ending.contains("data-testid=\"next-charge\">none</dd>"), "no next charge is shown: {ending}");
        let again = m.post(&format!("/dashboard/subscriptions/{id}/cancel"), &[("when", "period_end"), ("confirm", "yes")]).await;
        assert_eq!(again.status, StatusCode::SEE_OTHER, "a repeated confirmation changes nothing");
        assert_eq!(app.get(&shop, &format!("/subscriptions/{id}")).await.1["state"], "active");

        app.post(&shop, &format!("/test_clocks/{clock}/advance"), &json!({"frozen_time": "2026-06-10T13:00:00Z"})).await;
        let (_, api) = app.get(&shop, &format!("/subscriptions/{id}")).await;
        assert_eq!(api["state"], "canceled", "{api}");
        assert_eq!(api["cancel_reason"], "too dear", "the merchant's reason is kept for the end");
        assert_eq!(api["cancelled_at"], "2026-04-10T12:00:00.000Z", "when the paid period ended");
        let (_, payments) = app.get(&shop, &format!("/payments?subscription={id}")).await;
        assert_eq!(payments.as_array().unwrap().len(), 1, "never charged again: {payments}");
    }

    async fn a_subscription_is_paused_and_resumed_from_the_dashboard(app) {
        let m = sign_up(&app, "Gym", "ann@example.com").await;
        let shop = api_shop(&m).await;
        let mut plan = plan_body();
        plan["test"] = json!(true);
        let (_, plan) = app.post(&shop, "/plans", &plan).await;
        let (_, clock) = app.post(&shop, "/test_clocks", &json!({"frozen_time": "2026-03-10T12:00:00Z"})).await;
        let clock = clock["id"].as_str().unwrap().to_string();
        let card = json!({"number": cards::SUCCESS, "exp_month": 12, "exp_year": 2040, "cvc": "123", "holder": "Ann Lee"});
        let (_, sub) = app.post(&shop, "/subscriptions", &json!({"plan": {"id": plan["id"]}, "customer": customer_body(),
            "card": card, "test_clock": clock})).await;
        let id = sub["id"].as_str().unwrap();
        let path = format!("/dashboard/subscriptions/{id}");
        let page = m.get(&path).await.html;
        assert!(page.contains("data-testid=\"pause\""), "{page}");

        // From the end of the period, resuming on a day: then withdrawn, then asked again.
        let bad = m.post(&format!("{path}/pause"), &[("when", "period_end"), ("resume_on", "someday")]).await;
        assert_eq!(bad.status, StatusCode::SEE_OTHER);
        assert!(m.get(&path).await.html.contains("The resume date must be a date such as 2026-12-31."));
        let past = m.post(&format!("{path}/pause"), &[("when", "now"), ("resume_on", "2026-03-01")]).await;
        assert_eq!(past.status, StatusCode::SEE_OTHER);
        assert!(m.get(&path).await.html.contains("The resume date must be after today."));
        assert_eq!(app.get(&shop, &format!("/subscriptions/{id}")).await.1["state"], "active", "nothing changed");
        m.post(&format!("{path}/pause"), &[("when", "period_end"), ("resume_on", "2026-06-01"), ("billing", "continue")]).await;
        let marked = m.get(&path).await.html;
        assert!(marked.contains("The subscription pauses at the end of its paid period."), "{marked}");
        assert!(marked.contains("It pauses at the end of its paid period, 2026-04-10 12:00 UTC, uncharged."), "{marked}");
        assert!(marked.contains("It resumes by itself on 2026-06-01 00:00 UTC."), "{marked}");
        m.post(&format!("{path}/resume"), &[]).await;
        assert!(m.get(&path).await.html.contains("The pause was withdrawn: the subscription goes on."));
        let (_, api) = app.get(&shop, &format!("/subscriptions/{id}")).await;
        assert_eq!((api["pause_at_period_end"].clone(), api["resume_at"].clone()), (json!(false), Value::Null));

        // Now, after a confirmation; resumed with a new period after one that names the charge.
        let ask = m.post(&format!("{path}/pause"), &[("when", "now")]).await;
        assert_eq!(ask.status, StatusCode::OK);
        assert!(ask.html.contains("Pause the subscription now?") && ask.html.contains("It stays paused until it is resumed."), "{}", ask.html);
        assert_eq!(app.get(&shop, &format!("/subscriptions/{id}")).await.1["state"], "active", "not before it is confirmed");
        m.post(&format!("{path}/pause"), &[("when", "now"), ("billing", "new_period"), ("confirm", "yes")]).await;
        let paused = m.get(&path).await.html;
        assert!(paused.contains("The subscription is paused: nothing is charged until it resumes."), "{paused}");
        assert!(paused.contains("Paused since 2026-03-10 12:00 UTC: nothing is charged or retried."), "{paused}");
        assert!(paused.contains("status-paused"), "{paused}");
        app.post(&shop, &format!("/test_clocks/{clock}/advance"), &json!({"frozen_time": "2026-05-01T09:00:00Z"})).await;
        let ask = m.post(&format!("{path}/resume"), &[("billing", "new_period")]).await;
        assert!(ask.html.contains("Resume the subscription with a new period?"), "{}", ask.html);
        assert!(ask.html.contains("€9.90 is charged to the saved card now"), "{}", ask.html);
        let (_, payments) = app.get(&shop, &format!("/payments?subscription={id}")).await;
        assert_eq!(payments.as_array().unwrap().len(), 1, "asking charges nothing");
        let done = m.post(&format!("{path}/resume"), &[("billing", "new_period"), ("confirm", "yes")]).await;
        assert_eq!(done.status, StatusCode::SEE_OTHER);
        let resumed = m.get(&path).await.html;
        assert!(resumed.contains("The subscription resumed."), "{resumed}");
        assert!(resumed.contains("paused by the merchant") && resumed.contains("resumed with a new period"), "{resumed}");
        // The same confirmation again (a reload) charges nothing more.
        let again = m.post(&format!("{path}/resume"), &[("billing", "new_period"), ("confirm", "yes")]).await;
        assert_eq!(again.status, StatusCode::SEE_OTHER);
        assert!(m.get(&path).await.html.contains("The subscription is not paused"));
        let (_, payments) = app.get(&shop, &format!("/payments?subscription={id}")).await;
        assert_eq!(payments.as_array().unwrap().len(), 2, "one charge for the resume: {payments}");
        let (_, api) = app.get(&shop, &format!("/subscriptions/{id}")).await;
        assert_eq!((api["state"].clone(), api["renew_at"].clone()), (json!("active"), json!("2026-06-01T09:00:00.000Z")));
    }

    async fn a_subscription_changes_plan_from_the_dashboard_after_seeing_what_it_costs(app) {
        let m = sign_up(&app, "Gym", "ann@example.com").await;
        let shop = api_shop(&m).await;
        let mut gold = plan_body();
        gold["test"] = json!(true);
        let (_, gold) = app.post(&shop, "/plans", &gold).await;
        let mut platinum = plan_body();
        (platinum["test"], platinum["title"], platinum["plan"]["amount"]) = (json!(true), json!("Platinum"), json!(2990));
        let (_, platinum) = app.post(&shop, "/plans", &platinum).await;
        let mut dollars = plan_body();
        (dollars["test"], dollars["title"], dollars["currency"]) = (json!(true), json!("Dollars"), json!("USD"));
        app.post(&shop, "/plans", &dollars).await;
        let (_, clock) = app.post(&shop, "/test_clocks", &json!({"frozen_time": "2026-03-01T00:00:00Z"})).await;
        let clock = clock["id"].as_str().unwrap().to_string();
        let card = json!({"number": cards::SUCCESS, "exp_month": 12, "exp_year": 2040, "cvc": "123", "holder": "Ann Lee"});
        let (_, sub) = app.post(&shop, "/subscriptions", &json!({"plan": {"id": gold["id"]}, "customer": customer_body(),
            "card": card, "test_clock": clock})).await;
        let id = sub["id"].as_str().unwrap();
        let path = format!("/dashboard/subscriptions/{id}");
        app.post(&shop, &format!("/test_clocks/{clock}/advance"), &json!({"frozen_time": "2026-03-21T12:00:00Z"})).await;
        let page = m.get(&path).await.html;
        assert!(page.contains("Platinum (€29.90 every month)"), "{page}");
        assert!(!page.contains("Dollars"), "another currency is not offered");
        let platinum_id = platinum["id"].as_str().unwrap();

        let ask = m.post(&format!("{path}/change_plan"), &[("plan_id", platinum_id), ("when", "now")]).await;
        assert!(ask.html.contains("Move the subscription to Platinum?"), "{}", ask.html);
        for line in ["Credit for the unused part of the paid period: €3.35.", "Platinum at the new price: €10.13.",
                     "Charged now to the saved card: €6.78.", "Next charge: €29.90 on 2026-04-01 00:00 UTC."] {
            assert!(ask.html.contains(line), "{line}: {}", ask.html);
        }
        assert_eq!(app.get(&shop, &format!("/subscriptions/{id}")).await.1["plan"]["id"], gold["id"], "asking changes nothing");
        let done = m.post(&format!("{path}/change_plan"), &[("plan_id", platinum_id), ("when", "now"),
            ("proration_date", "2026-03-21T12:00:00+00:00"), ("confirm", "yes")]).await;
        assert_eq!(done.status, StatusCode::SEE_OTHER);
        let changed = m.get(&path).await.html;
        assert!(changed.contains("The plan was changed."), "{changed}");
        let (_, api) = app.get(&shop, &format!("/subscriptions/{id}")).await;
        assert_eq!((api["plan"]["id"].as_str(), api["last_transaction"]["amount"].as_i64()), (Some(platinum_id), Some(678)));
        // A reload of the confirmation charges nothing more.
        m.post(&format!("{path}/change_plan"), &[("plan_id", platinum_id), ("when", "now"), ("confirm", "yes")]).await;
        let told = m.get(&path).await.html;
        assert!(told.contains("The plan cannot change so: is the subscription&#39;s plan already"), "{told}");
        let (_, payments) = app.get(&shop, &format!("/payments?subscription={id}")).await;
        assert_eq!(payments.as_array().unwrap().len(), 2, "{payments}");

        // Back to Gold at the end of the period, then not.
        let gold_id = gold["id"].as_str().unwrap();
        let ask = m.post(&format!("{path}/change_plan"), &[("plan_id", gold_id), ("when", "period_end")]).await;
        assert!(ask.html.contains("It moves to Gold at the end of its paid period, 2026-04-01 00:00 UTC."), "{}", ask.html);
        m.post(&format!("{path}/change_plan"), &[("plan_id", gold_id), ("when", "period_end"), ("confirm", "yes")]).await;
        let pending = m.get(&path).await.html;
        assert!(pending.contains("The plan changes at the end of the paid period."), "{pending}");
        assert!(pending.contains("data-testid=\"changes-to\""), "{pending}");
        m.post(&format!("{path}/change_plan"), &[("plan_id", platinum_id), ("when", "period_end"), ("confirm", "yes")]).await;
        let kept = m.get(&path).await.html;
        assert!(kept.contains("The change of plan was withdrawn."), "{kept}");
        assert_eq!(app.get(&shop, &format!("/subscriptions/{id}")).await.1["pending_plan_change"], Value::Null);
    }

    async fn coupons_are_made_archived_and_given_to_a_subscription_from_the_dashboard(app) {
        let m = sign_up(&app, "Gym", "ann@example.com").await;
        let shop = api_shop(&m).await;
        let page = m.get("/dashboard/coupons").await;
        assert_eq!(page.status, StatusCode::OK);
        assert!(page.html.contains("No coupons yet."));
        let bad = m.post("/dashboard/coupons", &[("code", "two words"), ("kind", "percent"), ("percent_off", "250"), ("duration", "once")]).await;
        assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(bad.html.contains("may hold only letters, digits, - and _"), "{}", bad.html);
        assert!(bad.html.contains("must be less than or equal to 100"), "{}", bad.html);
        let made = m.post("/dashboard/coupons", &[("code", "spring"), ("kind", "percent"), ("percent_off", "25"),
            ("duration", "repeating"), ("duration_in_periods", "3"), ("max_redemptions", "10"), ("test", "true")]).await;
        assert_eq!(made.status, StatusCode::SEE_OTHER, "{}", made.html);
        let five = m.post("/dashboard/coupons", &[("code", "FIVE"), ("kind", "amount"), ("amount_off", "5.00"), ("currency", "EUR"),
            ("duration", "forever"), ("percent_off", "ignored"), ("test", "true")]).await;
        assert_eq!(five.status, StatusCode::SEE_OTHER, "{}", five.html);
        let list = m.get("/dashboard/coupons").await.html;
        assert!(list.contains("Coupon FIVE made."), "{list}");
        assert!(list.contains("<code>SPRING</code>") && list.contains("25%") && list.contains("3 payments") && list.contains("0 / 10"), "{list}");
        assert!(list.contains("€5.00") && list.contains("forever"), "{list}");
        let (_, coupons) = app.get(&shop, "/coupons").await;
        assert_eq!(coupons.as_array().unwrap().len(), 2);
        let five_id = coupons.as_array().unwrap().iter().find(|c| c["code"] == "FIVE").unwrap()["id"].as_str().unwrap().to_string();
        assert_eq!(coupons.as_array().unwrap().iter().find(|c| c["code"] == "FIVE").unwrap()["amount_off"], 500);

        let mut plan = plan_body();
        plan["test"] = json!(true);
        let (_, plan) = app.post(&shop, "/plans", &plan).await;
        let card = json!({"number": cards::SUCCESS, "exp_month": 12, "exp_year": 2040, "cvc": "123", "holder": "Ann Lee"});
        let (_, sub) = app.post(&shop, "/subscriptions", &json!({"plan": {"id": plan["id"]}, "customer": customer_body(), "card": card})).await;
        let path = format!("/dashboard/subscriptions/{}", sub["id"].as_str().unwrap());
        m.post(&format!("{path}/discount"), &[("coupon", "nope")]).await;
        assert!(m.get(&path).await.html.contains("The coupon was not applied: is not a valid code"));
        m.post(&format!("{path}/discount"), &[("coupon", "spring")]).await;
        let discounted = m.get(&path).await.html;
        assert!(discounted.contains("Coupon SPRING applied"), "{discounted}");
        assert!(discounted.contains("Coupon SPRING: 25% off the next 3 plan payments."), "{discounted}");
        assert!(discounted.contains("data-testid=\"next-charge\">€7.4"), "the discounted amount: {discounted}");
        m.post(&format!("{path}/discount/remove"), &[]).await;
        assert!(m.get(&path).await.html.contains("The discount was removed"));
        assert_eq!(app.get(&shop, &format!("/subscriptions/{}", sub["id"].as_str().unwrap())).await.1["discount"], Value::Null);

        m.post(&format!("/dashboard/coupons/{five_id}/archive"), &[]).await;
        assert!(m.get("/dashboard/coupons").await.html.contains("Coupon FIVE archived"));
        assert!(app.get(&shop, &format!("/coupons/{five_id}")).await.1["archived_at"].is_string());
    }

    async fn a_customer_is_subscribed_from_the_dashboard_and_sent_the_card_link(app) {
        let m = sign_up(&app, "Gym", "ann@example.com").await;
        let shop = api_shop(&m).await;
        let (_, customer) = app.post(&shop, "/customers", &customer_body()).await;
        let cst = customer["id"].as_str().unwrap();
        let page = m.get(&format!("/dashboard/customers/{cst}")).await;
        assert!(page.html.contains("first <a href=\"/dashboard/plans/new\">create a plan</a>"));
        let mut body = plan_body();
        body["test"] = json!(true);
        let (_, plan) = app.post(&shop, "/plans", &body).await;
        let page = m.get(&format!("/dashboard/customers/{cst}")).await;
        assert!(page.html.contains("Gold (€9.90 every month, test)"), "{}", page.html);
        let bad = m.post(&format!("/dashboard/customers/{cst}/subscriptions"), &[("plan_id", "pln_0000000000000000")]).await;
        assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(bad.html.contains("id=\"e-plan_id\">is not a plan of this shop</p>"), "{}", bad.html);
        let started = m.post(&format!("/dashboard/customers/{cst}/subscriptions"), &[("plan_id", plan["id"].as_str().unwrap())]).await;
        let sub = Merchant::created(&started, "sbs_");
        let page = m.get(&format!("/dashboard/subscriptions/{sub}")).await;
        let link = format!("{}/subscriptions/{sub}/pay", app.base);
        assert!(page.html.contains(&format!("value=\"{link}\" readonly data-testid=\"card-link\"")), "{}", page.html);
        assert!(page.html.contains("Subscription started. Send the customer its card link"));
        let form = app.open_form(&format!("/subscriptions/{sub}/pay")).await;
        let paid = app.submit(&format!("/subscriptions/{sub}/pay"), &form, &card(cards::SUCCESS)).await;
        assert_eq!(paid.status, StatusCode::SEE_OTHER);
        assert!(!m.get(&format!("/dashboard/subscriptions/{sub}")).await.html.contains("data-testid=\"card-link\""), "the card is in");
        let page = m.get(&format!("/dashboard/customers/{cst}")).await.html;
        let once = page.split("name=\"once\" value=\"").nth(1).unwrap().split('"').next().unwrap().to_string();
        let plan_id = plan["id"].as_str().unwrap();
        let form = [("plan_id", plan_id), ("once", once.as_str())];
        let path = format!("/dashboard/customers/{cst}/subscriptions");
        let twice = futures::future::join_all((0..4).map(|_| m.post(&path, &form))).await;
        let started: std::collections::BTreeSet<String> = twice.iter().map(|r| Merchant::created(r, "sbs_")).collect();
        assert_eq!(started.len(), 1, "one form, one subscription, however often it is sent: {started:?}");
        let (_, listed) = app.get(&shop, "/subscriptions").await;
        let theirs = listed.as_array().unwrap().iter().filter(|s| s["customer"]["id"] == cst || s["customer_id"] == cst).count();
        assert_eq!(theirs, 2, "the first one and this form's: {listed}");
        let theirs = m.get(&format!("/dashboard/payments?customer={cst}&subscription={sub}")).await.html;
        let email = customer["email"].as_str().unwrap();
        assert!(theirs.contains(&format!("<a href=\"/dashboard/customers/{cst}\">{email}</a>")), "the filter names the customer: {theirs}");
        assert!(theirs.contains(&format!("<a href=\"/dashboard/subscriptions/{sub}\">Gold · {sub}</a>")), "and the subscription's plan");
    }

    async fn products_and_plans_are_archived_and_restored_and_their_links_say_so(app) {
        let m = sign_up(&app, "Books", "ann@example.com").await;
        let shop = api_shop(&m).await;
        let product = app.product(&shop, &test_product_body()).await;
        let prd = product["id"].as_str().unwrap();
        let mut body = plan_body();
        body["test"] = json!(true);
        let (_, plan) = app.post(&shop, "/plans", &body).await;
        let pln = plan["id"].as_str().unwrap();
        let (_, customer) = app.post(&shop, "/customers", &customer_body()).await;
        let (_, running) = app.post(&shop, "/subscriptions", &json!({"plan_id": pln, "customer_id": customer["id"]})).await;

        for (kind, id) in [("products", prd), ("plans", pln)] {
            let done = m.post(&format!("/dashboard/{kind}/{id}/archive"), &[("archive", "yes")]).await;
            assert_eq!(done.status, StatusCode::SEE_OTHER);
            let page = m.get(&format!("/dashboard/{kind}/{id}")).await;
            assert!(page.html.contains("<span class=\"tag\">archived</span>") && page.html.contains("data-testid=\"archived\""));
            assert!(!m.get(&format!("/dashboard/{kind}")).await.html.contains(id), "{kind}: left out of the list");
            assert!(m.get(&format!("/dashboard/{kind}?archived=yes")).await.html.contains(id), "{kind}: listed with the archived");
        }
        let archived = m.get("/dashboard/products?archived=yes").await.html;
        assert!(archived.contains(">Archived<") && !archived.contains("On sale"), "an archived product is not on sale: {archived}");
        let offered = m.get(&format!("/dashboard/customers/{}", customer["id"].as_str().unwrap())).await.html;
        assert!(!offered.contains(&format!("value=\"{pln}\"")), "an archived plan is not offered: {offered}");
        let page = app.page(&format!("/products/{prd}/pay")).await;
        assert_eq!(page.status, StatusCode::GONE);
        assert!(page.html.contains("This is no longer available") && !page.html.contains("name=\"card_number\""));
        let plan_page = app.page(&format!("/plans/{pln}/pay")).await;
        assert_eq!(plan_page.status, StatusCode::GONE);
        let (status, refused) = app.post(&shop, "/subscriptions", &json!({"plan_id": pln, "customer_id": customer["id"]})).await;
        assert_invalid(status, &refused, "plan.id", &["is archived: it takes no new subscriptions"]);
        let link = running["redirect_url"].as_str().unwrap().strip_prefix(&app.base).unwrap().to_string();
        assert_eq!(app.page(&link).await.status, StatusCode::OK, "a subscription already started still takes its card");

        let restored = m.post(&format!("/dashboard/products/{prd}/archive"), &[]).await;
        assert_eq!(restored.status, StatusCode::SEE_OTHER);
        assert_eq!(app.pay(prd, cards::SUCCESS, &[]).await.status, StatusCode::SEE_OTHER, "on sale again");
    }

    async fn plans_and_customers_are_edited_where_it_harms_nothing(app) {
        let m = sign_up(&app, "Gym", "ann@example.com").await;
        let shop = api_shop(&m).await;
        let (_, plan) = app.post(&shop, "/plans", &plan_body()).await;
        let pln = plan["id"].as_str().unwrap();
        let form = m.get(&format!("/dashboard/plans/{pln}/edit")).await;
        assert!(form.html.contains("value=\"Gold\"") && form.html.contains("Only the title, the page, and the tax rate can change"), "{}", form.html);
        let bad = m.post(&format!("/dashboard/plans/{pln}"), &[("title", ""), ("language", "xx")]).await;
        assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(bad.html.contains("id=\"e-language\">is not included in the list</p>"));
        let saved = m.post(&format!("/dashboard/plans/{pln}"), &[("title", "Gold yearly"), ("language", "ru"),
            ("plan.amount", "1")]).await;
        assert_eq!(saved.status, StatusCode::SEE_OTHER);
        let (_, plan) = app.get(&shop, &format!("/plans/{pln}")).await;
        assert_eq!((plan["title"].clone(), plan["language"].clone()), (json!("Gold yearly"), json!("ru")));
        assert_eq!(plan["plan"]["amount"], 990, "the price is what subscribers agreed to");

        let (_, customer) = app.post(&shop, "/customers", &customer_body()).await;
        let cst = customer["id"].as_str().unwrap();
        let form = m.get(&format!("/dashboard/customers/{cst}/edit")).await;
        assert!(form.html.contains("value=\"ann@example.com\"") && form.html.contains("value=\"203.0.113.9\""));
        let bad = m.post(&format!("/dashboard/customers/{cst}"), &[("email", "nope"), ("ip", "203.0.113.9"), ("country", "DE"), ("state", "BY")]).await;
        assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(bad.html.contains("id=\"e-email\">") && bad.html.contains("id=\"e-state\">"), "{}", bad.html);
        let saved = m.post(&format!("/dashboard/customers/{cst}"), &[("email", "ann.lee@example.com"), ("ip", "203.0.113.9"),
            ("first_name", "Ann"), ("country", "JP")]).await;
        assert_eq!(saved.status, StatusCode::SEE_OTHER);
        let (_, customer) = app.get(&shop, &format!("/customers/{cst}")).await;
        assert_eq!((customer["email"].clone(), customer["first_name"].clone(), customer["country"].clone()),
                   (json!("ann.lee@example.com"), json!("Ann"), json!("JP")));
        assert!(m.get(&format!("/dashboard/customers/{cst}")).await.html.contains("<dd>Japan</dd>"));
        // Searches find what the objects say now, not what they said.
        assert!(m.get("/dashboard/customers?q=ann.lee").await.html.contains(cst), "the new e-mail");
        assert!(!m.get("/dashboard/customers?q=ann%40example").await.html.contains(cst), "not the old one");
        assert!(m.get("/dashboard/plans?q=yearly").await.html.contains(pln), "the new title");
        let theirs = sign_up(&app, "Other", "bob@example.com").await;
        assert_eq!(theirs.post(&format!("/dashboard/customers/{cst}"), &[("email", "x@example.com"), ("ip", "203.0.113.9")]).await.status,
                   StatusCode::NOT_FOUND, "another shop's customer");
    }

    async fn a_shops_users_never_open_another_shops_objects(app) {
        let mine = sign_up(&app, "Books", "ann@example.com").await;
        let theirs = sign_up(&app, "Games", "bob@example.com").await;
        let shop = api_shop(&theirs).await;
        let mut body = test_product_body();
        body["transaction_type"] = json!("authorization");
        let product = app.product(&shop, &body).await;
        let product = product["id"].as_str().unwrap();
        app.pay(product, cards::SUCCESS, &[]).await;
        let (_, plan) = app.post(&shop, "/plans", &plan_body()).await;
        let (_, customer) = app.post(&shop, "/customers", &customer_body()).await;
        let (_, payments) = app.get(&shop, "/payments").await;
        let payment = payments[0]["id"].as_str().unwrap();
        let (_, sub) = app.post(&shop, "/subscriptions", &json!({"plan_id": plan["id"], "customer_id": customer["id"]})).await;
        for path in [format!("/dashboard/products/{product}"), format!("/dashboard/products/{product}/edit"),
                     format!("/dashboard/products/{product}/qr.svg"), format!("/dashboard/products/{product}/preview"),
                     format!("/dashboard/plans/{}", plan["id"].as_str().unwrap()),
                     format!("/dashboard/customers/{}", customer["id"].as_str().unwrap()),
                     format!("/dashboard/payments/{payment}"), format!("/dashboard/subscriptions/{}", sub["id"].as_str().unwrap())] {
            assert_eq!(mine.get(&path).await.status, StatusCode::NOT_FOUND, "{path}");
            assert_eq!(theirs.get(&path).await.status, StatusCode::OK, "{path}");
        }
        for path in [format!("/dashboard/payments/{payment}/capture"), format!("/dashboard/payments/{payment}/void"),
                     format!("/dashboard/subscriptions/{}/cancel", sub["id"].as_str().unwrap()), format!("/dashboard/products/{product}")] {
            assert_eq!(mine.post(&path, &[("name", "Stolen")]).await.status, StatusCode::NOT_FOUND, "{path}");
        }
        assert!(!mine.get("/dashboard/payments").await.html.contains(payment));
        assert!(!mine.get("/dashboard/products").await.html.contains(product));
        assert_eq!(app.get(&shop, &format!("/payments/{payment}")).await.1["status"], "authorized", "untouched");
    }

    async fn long_lists_come_in_pages(app) {
        let m = sign_up(&app, "Books", "ann@example.com").await;
        let shop = api_shop(&m).await;
        for i in 0..27 {
            let mut body = test_product_body();
            body["name"] = json!(format!("Item {i:02}"));
            app.product(&shop, &body).await;
        }
        let first = m.get("/dashboard/products").await;
        assert_eq!(first.html.matches("<tr>").count() - 1, 25, "a header row and 25 products");
        assert!(first.html.contains("Item 26") && !first.html.contains("Item 01"));
        let marker = "href=\"/dashboard/products?after=";
        let start = first.html.find(marker).expect("a next page") + "href=\"".len();
        let next = first.html[start..].split('"').next().unwrap().replace("&#38;", "&").replace("&amp;", "&");
        let second = m.get(&next).await;
        assert!(second.html.contains("Item 01") && second.html.contains("Item 00") && !second.html.contains("Item 26"));
        assert!(!second.html.contains("rel=\"next\""));
        let searched = m.get("/dashboard/products?q=item").await;
        let pager = searched.html.split("class=\"pager\"").nth(1).expect("a next page");
        assert!(pager.split("rel=\"next\"").next().unwrap().contains("?q=item&"), "the search is kept: {pager}");
    }
}

#[tokio::test]
async fn live_payments_are_the_revenue_and_test_payments_stand_beside_it() {
    let args = ConfigArgs { simulated_live: Some("on".into()), ..Default::default() };
    let app = TestApp::spawn_with(Backend::Sqlite, args).await;
    let m = sign_up(&app, "Books", "ann@example.com").await;
    let shop = api_shop(&m).await;
    let live = app.product(&shop, &product_body()).await;
    let test = app.product(&shop, &test_product_body()).await;
    for _ in 0..2 {
        assert_eq!(app.pay(live["id"].as_str().unwrap(), cards::SUCCESS, &[]).await.status, StatusCode::SEE_OTHER);
    }
    app.pay(live["id"].as_str().unwrap(), cards::DECLINED, &[]).await;
    app.pay(test["id"].as_str().unwrap(), cards::SUCCESS, &[]).await;
    let home = m.get("/dashboard").await;
    let price = live["amount"].as_i64().unwrap() * 2;
    assert_eq!(live["currency"], "EUR");
    let figure = format!("data-testid=\"today\">€{}.{:02}", price / 100, price % 100);
    assert!(home.html.contains(&figure), "{figure}: {}", home.html);
    assert!(home.html.contains("data-testid=\"today-test\">Test mode:"));
    assert!(!home.html.contains("no live payments yet"), "the chart shows live money");
    let mut dollars = product_body();
    dollars["currency"] = json!("USD");
    let dollars = app.product(&shop, &dollars).await;
    app.pay(dollars["id"].as_str().unwrap(), cards::SUCCESS, &[]).await;
    let home = m.get("/dashboard").await;
    assert!(
        home.html.contains("data-testid=\"chart-EUR\"") && home.html.contains("data-testid=\"chart-USD\""),
        "every currency"
    );
}
