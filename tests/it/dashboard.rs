//! The merchant dashboard over HTTP with a cookie-keeping client: login everywhere, CSRF,
//! each form's success and error paths, and isolation between shops.

use paydesk::config::ConfigArgs;
use reqwest::StatusCode;
use sea_orm::EntityTrait;
use serde_json::{Value, json};

use crate::helpers::*;

/// A browser of one merchant: keeps cookies, does not follow redirects.
struct Merchant {
    base: String,
    client: reqwest::Client,
    csrf: String,
}

/// An answer: status, where it redirects, the page.
struct Answer {
    status: StatusCode,
    location: String,
    html: String,
}

fn browser() -> reqwest::Client {
    reqwest::Client::builder().cookie_store(true).redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

/// The value of the first `name="csrf"` field of a page.
fn csrf_of(html: &str) -> String {
    let marker = "name=\"csrf\" value=\"";
    let start = html.find(marker).expect("a CSRF field") + marker.len();
    html[start..start + 32].to_string()
}

async fn answer(response: reqwest::Response) -> Answer {
    let status = response.status();
    let location = response.headers().get("location").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
    Answer { status, location, html: response.text().await.unwrap() }
}

impl Merchant {
    async fn get(&self, path: &str) -> Answer {
        answer(self.client.get(format!("{}{path}", self.base)).send().await.unwrap()).await
    }

    /// Posts a form with this session's CSRF token.
    async fn post(&self, path: &str, fields: &[(&str, &str)]) -> Answer {
        let mut pairs = vec![("csrf", self.csrf.as_str())];
        pairs.extend_from_slice(fields);
        self.post_raw(path, &pairs).await
    }

    async fn post_raw(&self, path: &str, pairs: &[(&str, &str)]) -> Answer {
        let body = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs).finish();
        let request = self
            .client
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body);
        answer(request.send().await.unwrap()).await
    }

    /// The id at the end of a redirect to a created object's page.
    fn created(a: &Answer, prefix: &str) -> String {
        assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.html);
        let id = a.location.rsplit('/').next().unwrap().to_string();
        assert!(id.starts_with(prefix), "{}", a.location);
        id
    }
}

/// Signs a new shop up through the sign-up page; the browser is then logged in.
async fn sign_up(app: &TestApp, shop_name: &str, email: &str) -> Merchant {
    let mut m = Merchant { base: app.base.clone(), client: browser(), csrf: String::new() };
    let page = m.get("/dashboard/signup").await;
    assert_eq!(page.status, StatusCode::OK);
    let fields = [
        ("csrf", csrf_of(&page.html)),
        ("shop_name", shop_name.into()),
        ("email", email.into()),
        ("password", PASSWORD.into()),
        ("password_confirmation", PASSWORD.into()),
    ];
    let pairs: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let done = m.post_raw("/dashboard/signup", &pairs).await;
    assert_eq!((done.status, done.location.as_str()), (StatusCode::SEE_OTHER, "/dashboard"), "{}", done.html);
    m.csrf = csrf_of(&m.get("/dashboard").await.html);
    m
}

/// Logs in through the login page.
async fn log_in(app: &TestApp, email: &str, password: &str) -> (Merchant, Answer) {
    let mut m = Merchant { base: app.base.clone(), client: browser(), csrf: String::new() };
    let page = m.get("/dashboard/login").await;
    let token = csrf_of(&page.html);
    let done = m.post_raw("/dashboard/login", &[("csrf", &token), ("email", email), ("password", password)]).await;
    if done.status == StatusCode::SEE_OTHER {
        m.csrf = csrf_of(&m.get("/dashboard").await.html);
    }
    (m, done)
}

const PASSWORD: &str = "correct horse battery";

/// The shop id the settings page shows, and API credentials made by rotating its key.
async fn api_shop(m: &Merchant) -> Shop {
    let settings = m.get("/dashboard/settings").await;
    let marker = "data-testid=\"shop-id\">";
    let start = settings.html.find(marker).unwrap() + marker.len();
    let id: i64 = settings.html[start..].split('<').next().unwrap().parse().unwrap();
    let rotated = m.post("/dashboard/settings/rotate", &[("confirm", "yes")]).await;
    let marker = "data-testid=\"secret-key\"";
    let at = rotated.html.find(marker).expect("the new key");
    let value = rotated.html[..at].rsplit("value=\"").next().unwrap();
    Shop { id, secret: value.split('"').next().unwrap().to_string() }
}

db_tests! {
    async fn every_dashboard_page_needs_a_login(app) {
        let stranger = Merchant { base: app.base.clone(), client: browser(), csrf: String::new() };
        for path in ["/dashboard", "/dashboard/products", "/dashboard/products/new", "/dashboard/products/prd_0000000000000000",
                     "/dashboard/plans", "/dashboard/plans/new", "/dashboard/customers", "/dashboard/customers/new",
                     "/dashboard/payments", "/dashboard/payments/pay_0000000000000000", "/dashboard/subscriptions",
                     "/dashboard/subscriptions/sbs_0000000000000000", "/dashboard/settings", "/dashboard/password"] {
            let a = stranger.get(path).await;
            assert_eq!(a.status, StatusCode::SEE_OTHER, "{path}");
            assert!(a.location.starts_with("/dashboard/login?next=%2Fdashboard"), "{path}: {}", a.location);
        }
        for path in ["/dashboard/products", "/dashboard/plans", "/dashboard/customers", "/dashboard/settings",
                     "/dashboard/settings/rotate", "/dashboard/logout", "/dashboard/payments/pay_0000000000000000/capture"] {
            let a = stranger.post_raw(path, &[("name", "x")]).await;
            assert_eq!(a.status, StatusCode::SEE_OTHER, "{path}");
            assert!(a.location.starts_with("/dashboard/login"), "{path}");
        }
        assert_eq!(stranger.get("/").await.location, "/dashboard");
    }

    async fn a_merchant_signs_up_logs_out_and_logs_in_again(app) {
        let m = sign_up(&app, "Corner <Books>", "Ann@Example.com").await;
        let home = m.get("/dashboard").await;
        assert!(home.html.contains("Corner &#60;Books&#62;") || home.html.contains("Corner &lt;Books&gt;"), "escaped");
        assert!(!home.html.contains("Corner <Books>"));
        assert!(home.html.contains("ann@example.com"));

        // The session cookie is HttpOnly and SameSite=Lax.
        let page = m.client.get(format!("{}/dashboard/login", app.base)).send().await.unwrap();
        drop(page);
        let fresh = browser();
        let signup = fresh.get(format!("{}/dashboard/signup", app.base)).send().await.unwrap();
        let html = signup.text().await.unwrap();
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs([("csrf", csrf_of(&html).as_str()), ("shop_name", "Other"), ("email", "bob@example.com"),
                           ("password", PASSWORD), ("password_confirmation", PASSWORD)])
            .finish();
        let done = fresh.post(format!("{}/dashboard/signup", app.base))
            .header("content-type", "application/x-www-form-urlencoded").body(body).send().await.unwrap();
        let cookie = done.headers().get_all("set-cookie").iter().map(|v| v.to_str().unwrap().to_string())
            .find(|c| c.starts_with("pd_session=")).expect("a session cookie");
        assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax"), "{cookie}");
        assert!(!cookie.contains("Secure"), "not on plain http");

        // A second shop cannot take the same address.
        let again = Merchant { base: app.base.clone(), client: browser(), csrf: String::new() };
        let page = again.get("/dashboard/signup").await;
        let token = csrf_of(&page.html);
        let taken = again.post_raw("/dashboard/signup", &[("csrf", &token), ("shop_name", "Copy"), ("email", "ann@example.com"),
            ("password", PASSWORD), ("password_confirmation", PASSWORD)]).await;
        assert_eq!(taken.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(taken.html.contains("has already been taken"));
        let short = again.post_raw("/dashboard/signup", &[("csrf", &token), ("shop_name", ""), ("email", "x"),
            ("password", "short"), ("password_confirmation", "short")]).await;
        assert_eq!(short.status, StatusCode::UNPROCESSABLE_ENTITY);
        for message in ["can&#39;t be blank", "is invalid", "is too short (minimum is 10 characters)"] {
            assert!(short.html.contains(message) || short.html.contains(&message.replace("&#39;", "&#x27;")), "{message}");
        }

        // Logging out ends the session on the server: the old cookie no longer opens anything.
        let out = m.post("/dashboard/logout", &[]).await;
        assert_eq!((out.status, out.location.as_str()), (StatusCode::SEE_OTHER, "/dashboard/login"));
        assert_eq!(m.get("/dashboard").await.status, StatusCode::SEE_OTHER);

        let (_, wrong) = log_in(&app, "ann@example.com", "not the password").await;
        assert_eq!(wrong.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(wrong.html.contains("Wrong e-mail or password."));
        let (_, unknown) = log_in(&app, "nobody@example.com", PASSWORD).await;
        assert_eq!(unknown.status, StatusCode::UNPROCESSABLE_ENTITY);
        let (back, ok) = log_in(&app, " ANN@example.com ", PASSWORD).await;
        assert_eq!((ok.status, ok.location.as_str()), (StatusCode::SEE_OTHER, "/dashboard"));
        assert_eq!(back.get("/dashboard/products").await.status, StatusCode::OK);
    }

    async fn a_login_gets_a_new_session_id_and_returns_to_the_page_asked_for(app) {
        sign_up(&app, "Books", "ann@example.com").await;
        let m = Merchant { base: app.base.clone(), client: browser(), csrf: String::new() };
        let bounced = m.get("/dashboard/payments?status=failed").await;
        assert_eq!(bounced.location, "/dashboard/login?next=%2Fdashboard%2Fpayments%3Fstatus%3Dfailed");
        let page = m.get(&bounced.location).await;
        assert!(page.html.contains("value=\"/dashboard/payments?status=failed\""));
        let token = csrf_of(&page.html);
        let done = m.post_raw("/dashboard/login", &[("csrf", &token), ("email", "ann@example.com"), ("password", PASSWORD),
                                                     ("next", "/dashboard/payments?status=failed")]).await;
        assert_eq!(done.location, "/dashboard/payments?status=failed");
        // Only the dashboard's own pages are followed.
        let (m2, _) = log_in(&app, "ann@example.com", PASSWORD).await;
        let page = m2.get("/dashboard/login?next=https://evil.example/").await;
        assert!(page.html.contains("value=\"/dashboard\""));
        let token = csrf_of(&page.html);
        let odd = m2.post_raw("/dashboard/login", &[("csrf", &token), ("email", "ann@example.com"), ("password", PASSWORD),
                                                   ("next", "/dashboard\n\rSet-Cookie: x=1")]).await;
        assert_eq!((odd.status, odd.location.as_str()), (StatusCode::SEE_OTHER, "/dashboard"));

        // A session id planted before login is not the one used after it.
        let planted = Merchant { base: app.base.clone(), client: browser(), csrf: String::new() };
        let before = planted.client.get(format!("{}/dashboard/login", app.base)).send().await.unwrap();
        let html = before.text().await.unwrap();
        let login = planted.client.post(format!("{}/dashboard/login", app.base))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(format!("csrf={}&email=ann%40example.com&password=correct+horse+battery", csrf_of(&html)))
            .send().await.unwrap();
        let set: Vec<String> = login.headers().get_all("set-cookie").iter().map(|v| v.to_str().unwrap().to_string()).collect();
        assert!(set.iter().any(|c| c.starts_with("pd_session=")), "a new session cookie at login: {set:?}");
    }

    async fn forms_without_this_sessions_csrf_token_are_refused(app) {
        let m = sign_up(&app, "Books", "ann@example.com").await;
        let other = sign_up(&app, "Games", "bob@example.com").await;
        let fields = [("name", "Mug"), ("description", "A mug"), ("amount", "9.90"), ("currency", "EUR"),
                      ("infinite", "true"), ("immortal", "true")];
        let none = m.post_raw("/dashboard/products", &fields).await;
        assert_eq!(none.status, StatusCode::FORBIDDEN);
        assert!(none.html.contains("The form has expired"));
        let mut foreign = vec![("csrf", other.csrf.as_str())];
        foreign.extend_from_slice(&fields);
        assert_eq!(m.post_raw("/dashboard/products", &foreign).await.status, StatusCode::FORBIDDEN);
        assert!(m.get("/dashboard/products").await.html.contains("No products yet"), "nothing was created");
        assert_eq!(m.post_raw("/dashboard/logout", &[]).await.status, StatusCode::FORBIDDEN);
        // Login and sign-up forms carry their own token too.
        let stranger = Merchant { base: app.base.clone(), client: browser(), csrf: String::new() };
        let login = stranger.post_raw("/dashboard/login", &[("email", "ann@example.com"), ("password", PASSWORD)]).await;
        assert_eq!(login.status, StatusCode::FORBIDDEN);
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
        assert!(preview.html.contains("Preview") && preview.html.contains("name=\"email\"") && preview.html.contains("name=\"phone\""));

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
        assert!(blank.html.contains("id=\"e-amount\">is not a number</p>"), "1,000 is not guessed: {}", blank.html);
        assert!(blank.html.contains("id=\"e-name\">can&#39;t be blank</p>") || blank.html.contains("id=\"e-name\">can&#x27;t be blank</p>"));
        let refused = m.post(&format!("/dashboard/products/{id}"), &[("name", "Big mug"), ("amount", "0")]).await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(refused.html.contains("must be greater than or equal to 1"));

        app.product(&shop, &json!({"name": "Poster", "description": "A poster", "currency": "EUR", "amount": "500",
                                   "infinite": true, "immortal": true})).await;
        let found = m.get("/dashboard/products?q=MUG").await;
        assert!(found.html.contains("Big mug") && !found.html.contains("Poster"));
        let all = m.get("/dashboard/products").await;
        assert!(all.html.contains("Big mug") && all.html.contains("Poster") && all.html.contains("12.00 EUR"));
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
        assert!(page.html.contains("9.90 EUR every month after a 7-day trial for 1.00 EUR, until cancelled."), "{}", page.html);
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
        assert!(held.html.contains("Authorized: the funds are held") && held.html.contains("Capture 9.90 EUR"), "{}", held.html);
        let captured = m.post(&format!("/dashboard/payments/{first}/capture"), &[]).await;
        assert_eq!(captured.status, StatusCode::SEE_OTHER);
        let page = m.get(&format!("/dashboard/payments/{first}")).await;
        assert!(page.html.contains("Captured 9.90 EUR.") && !page.html.contains("funds are held"));
        let (_, api) = app.get(&shop, &format!("/payments/{first}")).await;
        assert_eq!(api["status"], "succeeded");
        let again = m.post(&format!("/dashboard/payments/{first}/capture"), &[]).await;
        assert_eq!(again.status, StatusCode::CONFLICT);
        assert_eq!(m.post(&format!("/dashboard/payments/{second}/void"), &[]).await.status, StatusCode::SEE_OTHER);
        let (_, api) = app.get(&shop, &format!("/payments/{second}")).await;
        assert_eq!(api["status"], "voided");

        let failed = m.get("/dashboard/payments?status=failed").await;
        assert!(failed.html.contains("status-failed") && !failed.html.contains("status-voided"));
        let all = m.get(&format!("/dashboard/payments?product={id}")).await;
        assert!(all.html.contains("status-voided") && all.html.contains("status-succeeded"));
        assert_eq!(m.get("/dashboard/payments?status=lost").await.status, StatusCode::UNPROCESSABLE_ENTITY);
        // Captured money counts on the day of the capture, even for an older authorization.
        use sea_orm::{ActiveModelTrait, ActiveValue::Set, IntoActiveModel};
        let row = paydesk::db::payments::find_public(&app.db, first).await.unwrap().unwrap();
        let mut row = row.into_active_model();
        row.created_at = Set(chrono::Utc::now() - chrono::Duration::days(40));
        row.update(&app.db).await.unwrap();
        let home = m.get("/dashboard").await;
        assert!(home.html.contains("data-testid=\"today-test\">Test mode: 9.90 EUR"), "{}", home.html);
        assert!(!home.html.contains("data-testid=\"today\""), "test payments are not the shop's revenue");
        assert!(home.html.contains("<svg class=\"chart\"") && home.html.contains("(EUR, test mode)"));
        let customer = app.get(&shop, "/customers").await.1[0]["id"].as_str().unwrap().to_string();
        let page = m.get(&format!("/dashboard/customers/{customer}")).await;
        assert_eq!(page.html.matches("/dashboard/payments/pay_").count(), 3, "the customer's payments");
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
        assert!(page.html.contains("data-testid=\"next-charge\">2026-05-10 12:00"), "{}", page.html);
        assert_eq!(page.html.matches("Charge attempt → active").count(), 2);
        assert!(page.html.contains("Created (redirecting)"));
        let cancelled = m.post(&format!("/dashboard/subscriptions/{id}/cancel"), &[("cancel_reason", "moved away")]).await;
        assert_eq!(cancelled.status, StatusCode::SEE_OTHER);
        let (_, api) = app.get(&shop, &format!("/subscriptions/{id}")).await;
        assert_eq!((api["state"].clone(), api["cancel_reason"].clone()), (json!("canceled"), json!("moved away")));
        let page = m.get(&format!("/dashboard/subscriptions/{id}")).await;
        assert!(page.html.contains("active → canceled: moved away") && !page.html.contains("Cancel subscription"));
        assert_eq!(m.post(&format!("/dashboard/subscriptions/{id}/cancel"), &[]).await.status, StatusCode::CONFLICT);
        let home = m.get("/dashboard").await;
        assert!(home.html.contains("canceled</a>: 1"));
    }

    async fn settings_change_the_shop_rotate_the_key_and_add_users(app) {
        let m = sign_up(&app, "Books", "ann@example.com").await;
        let bad = m.post("/dashboard/settings", &[("name", ""), ("url", "ftp://x"), ("timezone", "Mars/Base")]).await;
        assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(bad.html.contains("id=\"e-timezone\">is not included in the list</p>"));
        assert!(bad.html.contains("id=\"e-url\">is not an absolute http or https URL</p>"));
        let saved = m.post("/dashboard/settings", &[("name", "Corner Books"), ("url", "https://books.example"),
            ("timezone", "Europe/Berlin")]).await;
        assert_eq!(saved.status, StatusCode::SEE_OTHER);
        let page = m.get("/dashboard/settings").await;
        assert!(page.html.contains("Settings saved.") && page.html.contains("value=\"Europe/Berlin\""));

        let unconfirmed = m.post("/dashboard/settings/rotate", &[]).await;
        assert_eq!(unconfirmed.status, StatusCode::UNPROCESSABLE_ENTITY);
        let first = api_shop(&m).await;
        assert_eq!(app.get(&first, "/products").await.0, StatusCode::OK);
        let second = api_shop(&m).await;
        assert_eq!(app.get(&first, "/products").await.0, StatusCode::UNAUTHORIZED, "the old key stops working");
        assert_eq!(app.get(&second, "/products").await.0, StatusCode::OK);
        assert!(!m.get("/dashboard/settings").await.html.contains(&second.secret), "shown once only");

        let bad = m.post("/dashboard/settings/users", &[("email", "ann@example.com"), ("password", "short"),
                                                          ("password_confirmation", "short")]).await;
        assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
        let added = m.post("/dashboard/settings/users", &[("email", "cleo@example.com"), ("password", PASSWORD),
                                                            ("password_confirmation", PASSWORD)]).await;
        assert_eq!(added.status, StatusCode::SEE_OTHER);
        let (cleo, _) = log_in(&app, "cleo@example.com", PASSWORD).await;
        assert!(cleo.get("/dashboard/settings").await.html.contains(&format!(">{}</code>", second.id)), "the same shop");

        let wrong = m.post("/dashboard/password", &[("current_password", "nope"), ("password", "a new password!"),
                                                     ("password_confirmation", "a new password!")]).await;
        assert_eq!(wrong.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(wrong.html.contains("id=\"e-current_password\">is wrong</p>"));
        assert!(!wrong.html.contains(PASSWORD) && !wrong.html.contains("value=\"nope\""), "passwords are never sent back");
        let (elsewhere, _) = log_in(&app, "ann@example.com", PASSWORD).await;
        assert_eq!(elsewhere.get("/dashboard").await.status, StatusCode::OK);
        let changed = m.post("/dashboard/password", &[("current_password", PASSWORD), ("password", "a new password!"),
                                                       ("password_confirmation", "a new password!")]).await;
        assert_eq!(changed.status, StatusCode::SEE_OTHER);
        assert_eq!(m.get("/dashboard").await.status, StatusCode::OK, "this session goes on");
        assert_eq!(elsewhere.get("/dashboard").await.status, StatusCode::SEE_OTHER, "other sessions end");
        assert_eq!(log_in(&app, "ann@example.com", PASSWORD).await.1.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(log_in(&app, "ann@example.com", "a new password!").await.1.status, StatusCode::SEE_OTHER);
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
    let figure =
        format!("data-testid=\"today\">{}.{:02} {}", price / 100, price % 100, live["currency"].as_str().unwrap());
    assert!(home.html.contains(&figure), "{figure}: {}", home.html);
    assert!(home.html.contains("data-testid=\"today-test\">Test mode:"));
    assert!(!home.html.contains("test mode)"), "the chart shows live money");
}

#[tokio::test]
async fn sign_up_can_be_turned_off() {
    let app =
        TestApp::spawn_with(Backend::Sqlite, ConfigArgs { signup: Some("off".into()), ..Default::default() }).await;
    let stranger = Merchant { base: app.base.clone(), client: browser(), csrf: String::new() };
    assert_eq!(stranger.get("/dashboard/signup").await.status, StatusCode::NOT_FOUND);
    assert_eq!(stranger.post_raw("/dashboard/signup", &[("shop_name", "x")]).await.status, StatusCode::NOT_FOUND);
    assert!(!stranger.get("/dashboard/login").await.html.contains("/dashboard/signup"));
}

db_tests! {
    async fn expired_sessions_are_never_loaded_and_are_cleared(app) {
        use paydesk::db::sessions::DbSessionStore;
        use tower_sessions::cookie::time::{Duration, OffsetDateTime};
        use tower_sessions::session::{Id, Record};
        use tower_sessions::session_store::{ExpiredDeletion, SessionStore};

        let store = DbSessionStore::new(app.db.clone());
        let mut live = Record { id: Id::default(), data: Default::default(), expiry_date: OffsetDateTime::now_utc() + Duration::hours(1) };
        live.data.insert("user_id".into(), json!("usr_1"));
        let mut old = Record { id: Id::default(), data: Default::default(), expiry_date: OffsetDateTime::now_utc() - Duration::minutes(1) };
        store.create(&mut live).await.unwrap();
        store.create(&mut old).await.unwrap();
        assert_eq!(store.load(&live.id).await.unwrap().unwrap().data["user_id"], "usr_1");
        assert!(store.load(&old.id).await.unwrap().is_none(), "an expired session is gone for its browser");
        store.delete_expired().await.unwrap();
        let rows = paydesk::db::entities::sessions::Entity::find().all(&app.db).await.unwrap();
        assert_eq!(rows.iter().map(|r| r.id.clone()).collect::<Vec<_>>(), vec![live.id.to_string()]);
        live.data.insert("flash".into(), json!("saved"));
        store.save(&live).await.unwrap();
        assert_eq!(store.load(&live.id).await.unwrap().unwrap().data.len(), 2);
        store.delete(&live.id).await.unwrap();
        assert!(store.load(&live.id).await.unwrap().is_none());
    }
}

db_tests! {
    async fn the_command_line_adds_a_user_who_can_log_in(app) {
        use std::io::Write;
        let shop = app.shop("Books").await;
        let run = |email: &str, password: &str| {
            let mut child = crate::cli::paydesk(&app.database_url)
                .args(["user", "create", "--shop-id", &shop.id.to_string(), "--email", email])
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            writeln!(child.stdin.take().unwrap(), "{password}").unwrap();
            child.wait_with_output().unwrap()
        };
        let short = run("ann@example.com", "short");
        assert!(!short.status.success());
        assert!(String::from_utf8_lossy(&short.stderr).contains("Password is too short"));
        let made = run("Ann@Example.com", PASSWORD);
        assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
        let user: Value = serde_json::from_slice(&made.stdout).unwrap();
        assert_eq!((user["shop_id"].as_i64(), user["email"].as_str()), (Some(shop.id), Some("ann@example.com")));
        let (m, done) = log_in(&app, "ann@example.com", PASSWORD).await;
        assert_eq!(done.status, StatusCode::SEE_OTHER);
        assert!(m.get("/dashboard/settings").await.html.contains(&format!(">{}</code>", shop.id)));
    }
}

db_tests! {
    async fn repeated_wrong_passwords_lock_the_address_for_a_while(app) {
        sign_up(&app, "Books", "ann@example.com").await;
        for _ in 0..10 {
            assert_eq!(log_in(&app, "ann@example.com", "guess guess guess").await.1.status, StatusCode::UNPROCESSABLE_ENTITY);
        }
        let (_, locked) = log_in(&app, "ann@example.com", PASSWORD).await;
        assert_eq!(locked.status, StatusCode::TOO_MANY_REQUESTS, "even the right password waits");
        assert!(locked.html.contains("Too many failed attempts for this address. Try again in 15 minutes."));
        assert_eq!(log_in(&app, "bob@example.com", PASSWORD).await.1.status, StatusCode::UNPROCESSABLE_ENTITY);
    }
}

#[tokio::test]
async fn cookies_are_secure_when_the_dashboard_is_served_over_https() {
    let args = ConfigArgs { base_url: Some("https://dash.example.test".into()), ..Default::default() };
    let app = TestApp::spawn_with(Backend::Sqlite, args).await;
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let page = client.get(format!("{}/dashboard/signup", app.base)).send().await.unwrap();
    let csrf_cookie = page.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(csrf_cookie.contains("; Secure"), "{csrf_cookie}");
    let token = csrf_of(&page.text().await.unwrap());
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs([
            ("csrf", token.as_str()),
            ("shop_name", "Books"),
            ("email", "ann@example.com"),
            ("password", PASSWORD),
            ("password_confirmation", PASSWORD),
        ])
        .finish();
    let done = client
        .post(format!("{}/dashboard/signup", app.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("cookie", csrf_cookie.split(';').next().unwrap())
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(done.status(), StatusCode::SEE_OTHER);
    let session = done
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .find(|c| c.starts_with("pd_session="));
    let session = session.expect("a session cookie");
    assert!(
        session.contains("Secure") && session.contains("HttpOnly") && session.contains("SameSite=Lax"),
        "{session}"
    );
}

db_tests! {
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
