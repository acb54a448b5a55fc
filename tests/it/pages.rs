//! The public pay pages behind pay_url (minimal until the payments issue).

use reqwest::{Method, StatusCode, header};
use serde_json::json;

use crate::helpers::*;

async fn html(app: &TestApp, method: Method, path: &str) -> (StatusCode, reqwest::header::HeaderMap, String) {
    let response = app.anon(method, path).header(header::ACCEPT, "text/html,*/*").send().await.unwrap();
    let (status, headers) = (response.status(), response.headers().clone());
    (status, headers, response.text().await.unwrap())
}

db_tests! {
    async fn a_products_pay_page_shows_it_and_asks_for_exactly_its_visible_fields(app) {
        let shop = app.shop("Books <&> Co").await;
        let mut body = test_product_body();
        body["name"] = json!("<script>alert(1)</script>");
        body["visible_fields"] = json!(["email", "phone", "birth_date"]);
        let p = app.product(&shop, &body).await;
        let pay_url = p["pay_url"].as_str().unwrap();
        let path = pay_url.strip_prefix(&app.base).unwrap();

        let (status, headers, page) = html(&app, Method::GET, path).await;
        assert_eq!(status, StatusCode::OK);
        assert!(headers[header::CONTENT_TYPE].to_str().unwrap().starts_with("text/html"));
        assert!(headers[header::CONTENT_SECURITY_POLICY].to_str().unwrap().contains("frame-ancestors 'none'"));
        assert_eq!(headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        assert!(page.contains("Books &#60;&#38;&#62; Co"), "the shop name is escaped");
        assert!(!page.contains("<script>alert(1)</script>"), "the product name is escaped");
        assert!(page.contains("€9.90"));
        assert!(page.contains("A card worth 9.90"));
        for field in ["email", "phone", "birth_date"] {
            assert!(page.contains(&format!("name=\"{field}\"")), "{field}");
            assert!(page.contains(&format!("<label for=\"f-{field}\">")), "{field} has a label");
        }
        for card_field in ["card_number", "card_exp_month", "card_exp_year", "card_cvc", "card_holder"] {
            assert!(page.contains(&format!("name=\"{card_field}\"")), "{card_field}");
        }
        assert!(page.contains("Pay €9.90"));
        for field in ["first_name", "last_name", "country", "state", "city", "address", "zip", "taxpayer_id"] {
            assert!(!page.contains(&format!("name=\"{field}\"")), "{field} is not asked for");
        }
    }

    async fn pay_links_answer_json_to_api_clients(app) {
        let shop = app.shop("Shop").await;
        let p = app.product(&shop, &product_body()).await;
        let (_, plan) = app.post(&shop, "/plans", &plan_body()).await;
        for object in [&p, &plan] {
            let path = object["pay_url"].as_str().unwrap().strip_prefix(&app.base).unwrap().to_string();
            let request = app.anon(Method::GET, &path).header(header::ACCEPT, "application/json");
            let (status, body) = send(request).await;
            assert_eq!(status, StatusCode::OK);
            assert_eq!(body["id"], object["id"]);
            assert_eq!(body["pay_url"], object["pay_url"]);
        }
        let request = app.anon(Method::GET, "/products/prd_0000000000000000/pay").header(header::ACCEPT, "application/json");
        let (status, body) = send(request).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(body["message"], "Product not found");
    }

    async fn a_plans_pay_page_shows_price_interval_and_trial_by_get_and_post(app) {
        let shop = app.shop("Gym").await;
        let mut body = plan_body();
        body["test"] = json!(true);
        body["plan"] = json!({"amount": 1990, "interval": 3, "interval_unit": "month"});
        body["trial"] = json!({"amount": 100, "interval": 7, "interval_unit": "day"});
        let (_, plan) = app.post(&shop, "/plans", &body).await;
        let path = format!("/plans/{}/pay", plan["id"].as_str().unwrap());
        for method in [Method::GET, Method::POST] {
            let (status, _, page) = html(&app, method, &path).await;
            assert_eq!(status, StatusCode::OK);
            assert!(page.contains("Gym") && page.contains("Gold"));
            assert!(page.contains("€19.90") && page.contains("every 3 months"), "{page}");
            assert!(page.contains("€1.00 for the first 7 days"));
            assert!(page.contains("name=\"email\""));
            let next = (chrono::Utc::now() + chrono::Duration::days(7)).format("%-d %B %Y");
            assert!(page.contains("<li>Today: €1.00 for the first 7 days.</li>"), "{page}");
            assert!(page.contains(&format!("<li>Then €19.90 every 3 months from {next}, until you cancel.</li>")), "{page}");
            assert!(page.contains("<li>You can cancel at any time online, on your subscriber page (every receipt links to it), or by asking Gym; nothing is charged after that.</li>"));
        }
    }

    async fn a_plans_page_says_how_long_it_charges_and_a_free_trial_reads_free(app) {
        let shop = app.shop("Gym").await;
        let mut body = plan_body();
        body["test"] = json!(true);
        body["infinite"] = json!(false);
        body["billing_cycles"] = json!(12);
        body["trial"] = json!({"amount": 0, "interval": 1, "interval_unit": "month"});
        let (_, plan) = app.post(&shop, "/plans", &body).await;
        let (_, _, page) = html(&app, Method::GET, &format!("/plans/{}/pay", plan["id"].as_str().unwrap())).await;
        let next = chrono::Utc::now().checked_add_months(chrono::Months::new(1)).unwrap().format("%-d %B %Y");
        assert!(page.contains("<li>Today: nothing to pay, the first month is free.</li>"), "{page}");
        assert!(page.contains(&format!("<li>Then €9.90 every month from {next}: 12 payments in all.</li>")), "{page}");
        assert!(!page.contains("0.00"), "a free trial shows no zero amount");

        body["trial"] = serde_json::Value::Null;
        body["billing_cycles"] = json!(1);
        let (_, once) = app.post(&shop, "/plans", &body).await;
        let (_, _, page) = html(&app, Method::GET, &format!("/plans/{}/pay", once["id"].as_str().unwrap())).await;
        assert!(page.contains("<li>Today: €9.90.</li><li>Nothing more is charged after today.</li>"), "{page}");
    }

    async fn unknown_pay_pages_are_404_pages(app) {
        for path in ["/products/prd_0000000000000000/pay", "/plans/pln_0000000000000000/pay"] {
            let (status, headers, page) = html(&app, Method::GET, path).await;
            assert_eq!(status, StatusCode::NOT_FOUND);
            assert!(headers[header::CONTENT_TYPE].to_str().unwrap().starts_with("text/html"));
            assert!(page.contains("not found"));
        }
    }
}
