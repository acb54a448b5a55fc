//! The OpenAPI document and the reference page: the document and the routes agree both
//! ways, and `/docs` is served whole, from here, without scripts.

use std::collections::BTreeSet;

use reqwest::{Method, StatusCode};
use serde_json::Value;

use crate::helpers::*;

/// Routes of the front ends that are not the API: the hosted pages' forms and receipts, the
/// checkout's confirm link, operators' metrics and the documentation itself.
const NOT_API: &[(&str, &str)] = &[
    ("GET", "/subscriptions/{id}/pay"),
    ("POST", "/subscriptions/{id}/pay"),
    ("GET", "/receipts/{id}"),
    // An invoice's page and its files for its customer: public by the id, as a receipt is
    // (the API's are `/invoices/{id}/pdf` and `/xml`).
    ("GET", "/documents/{id}"),
    ("GET", "/documents/{id}/pdf"),
    ("GET", "/documents/{id}/xml"),
    ("GET", "/payments/{id}/return"),
    ("GET", "/payments/{id}/back"),
    ("GET", "/v2/confirm_order/{id}/{shop_id}"),
    ("GET", "/metrics"),
    // The subscriber page: a browser's, not the API's.
    ("GET", "/portal/home"),
    ("GET", "/portal/{shop_id}"),
    ("POST", "/portal/{shop_id}"),
    ("GET", "/portal/links/{token}"),
    ("POST", "/portal/links/{token}"),
    ("POST", "/portal/links/{token}/renew"),
    ("POST", "/portal/subscriptions/{id}/cancel"),
    ("POST", "/portal/subscriptions/{id}/keep"),
    ("GET", "/portal/subscriptions/{id}/card"),
    ("POST", "/portal/subscriptions/{id}/card"),
];

/// Every `(METHOD, path)` that `.route(...)` calls in `files` declare.
fn declared_routes(files: &[std::path::PathBuf]) -> BTreeSet<(String, String)> {
    let mut routes = BTreeSet::new();
    for file in files {
        let source = std::fs::read_to_string(file).unwrap();
        let mut rest = source.as_str();
        while let Some(at) = rest.find(".route(\"") {
            rest = &rest[at + ".route(\"".len()..];
            let path = &rest[..rest.find('"').unwrap()];
            // The method router: up to the parenthesis that closes `.route(`.
            let mut depth = 1;
            let end = rest.char_indices().find_map(|(i, c)| {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ => {}
                }
                (depth == 0).then_some(i)
            });
            let methods = &rest[path.len() + 1..end.unwrap()];
            for method in ["get", "post", "put", "delete"] {
                let call = format!("{method}(");
                let mut calls = methods.match_indices(&call);
                if calls.any(|(i, _)| i == 0 || matches!(methods.as_bytes()[i - 1], b'.' | b' ' | b',')) {
                    routes.insert((method.to_uppercase(), path.to_string()));
                }
            }
        }
    }
    routes
}

fn sources(dir: &str) -> Vec<std::path::PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect()
}

fn documented(document: &Value) -> BTreeSet<(String, String)> {
    let mut found = BTreeSet::new();
    for (path, item) in document["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            if ["get", "post", "put", "delete", "patch"].contains(&method.as_str()) {
                found.insert((method.to_uppercase(), path.clone()));
            }
        }
    }
    found
}

db_tests! {
    async fn the_document_and_the_routes_agree(app) {
        let (status, document) = send(app.anon(Method::GET, "/openapi.json")).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(document["openapi"], "3.1.0");
        assert_eq!(document["servers"][0]["url"], app.base.as_str());
        let documented = documented(&document);

        // Every route of the API, the pay links and the health check is documented.
        let mut files = sources("src/frontends/api");
        files.extend(sources("src/frontends/pay"));
        files.push(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/frontends/ops.rs"));
        let declared = declared_routes(&files);
        assert!(declared.len() > 40, "the routes were read: {declared:?}");
        for route in &declared {
            let excluded = NOT_API.iter().any(|(m, p)| route.0 == *m && route.1 == *p);
            assert!(excluded || documented.contains(route), "{route:?} is served but not in the document");
        }
        // Every documented operation is served: it reaches a handler, not the fallbacks.
        let shop = app.shop("Shop").await;
        for (method, path) in &documented {
            assert!(declared.contains(&(method.clone(), path.clone())), "{method} {path} is documented but not declared");
            let concrete = path.replace("{id}", "zz_unknown");
            let request = app.req(&shop, Method::from_bytes(method.as_bytes()).unwrap(), &concrete)
                .header("accept", "application/json");
            let request = if method == "GET" || method == "DELETE" { request } else { request.json(&serde_json::json!({})) };
            let (status, body) = send(request).await;
            assert_ne!(status, StatusCode::METHOD_NOT_ALLOWED, "{method} {path}");
            assert_ne!(body["message"], "Page not found", "{method} {path} fell through to the fallback");
        }
    }

    async fn every_operation_says_what_it_answers(app) {
        let (_, document) = send(app.anon(Method::GET, "/openapi.json")).await;
        assert!(document["components"]["securitySchemes"]["basic"]["scheme"] == "basic");
        for (path, item) in document["paths"].as_object().unwrap() {
            for (method, operation) in item.as_object().unwrap() {
                let responses = operation["responses"].as_object().unwrap();
                let what = format!("{method} {path}");
                assert!(operation["summary"].is_string(), "{what} has a summary");
                assert!(responses.contains_key("500"), "{what}");
                for (status, response) in responses {
                    assert!(response["headers"]["X-Request-Id"].is_object(), "{what} {status}");
                }
                let public = operation["security"] == serde_json::json!([{}]);
                if !public {
                    assert!(responses.contains_key("401") && responses.contains_key("429"), "{what}");
                }
                if path.contains('{') {
                    assert!(responses.contains_key("404"), "{what}");
                }
                if method == "post" && !public {
                    let params = operation["parameters"].as_array().unwrap();
                    assert!(params.iter().any(|p| p["name"] == "Idempotency-Key" && p["in"] == "header"), "{what}");
                }
                if operation["requestBody"].is_object() && !public {
                    for status in ["400", "413", "415", "422"] {
                        assert!(responses.contains_key(status), "{what} {status}");
                    }
                }
                let array = responses.get("200").and_then(|r| r["content"]["application/json"]["schema"]["type"].as_str());
                if array == Some("array") {
                    assert!(responses["200"]["headers"]["Link"].is_object(), "{what}");
                }
            }
        }
        // Operation ids are unique, and each create links to what can be done with its object.
        let ids: Vec<&str> = document["paths"].as_object().unwrap().values()
            .flat_map(|item| item.as_object().unwrap().values().filter_map(|op| op["operationId"].as_str()))
            .collect();
        assert_eq!(ids.len(), ids.iter().collect::<BTreeSet<_>>().len(), "{ids:?}");
        let links = &document["paths"]["/products"]["post"]["responses"]["201"]["links"];
        for target in ["get_products_id", "put_products_id", "get_products_id_pay"] {
            assert_eq!(links[target]["operationId"], target);
            assert_eq!(links[target]["parameters"]["id"], "$response.body#/id");
        }
        let refund = &document["paths"]["/payments/{id}/refund"]["post"]["responses"]["201"]["links"];
        assert_eq!(refund["get_refunds_id"]["parameters"]["id"], "$response.body#/id");
        let error = &document["components"]["schemas"]["Error"];
        assert_eq!(error["required"], serde_json::json!(["message", "code"]));
        let codes = document["components"]["schemas"]["ErrorCode"]["enum"].as_array().unwrap();
        assert!(codes.contains(&serde_json::json!("parameter_invalid")) && codes.contains(&serde_json::json!("card_declined")));
        // Either-or fields are oneOf branches: a coupon takes a percent or an amount, never both.
        let coupon = document["components"]["schemas"]["CouponCreate"].to_string();
        assert!(coupon.contains("\"oneOf\"") && coupon.contains("A percent off") && coupon.contains("An amount off"), "{coupon}");
        let pay = &document["paths"]["/products/{id}/pay"]["get"]["responses"]["200"]["content"];
        assert!(pay["application/json"].is_object() && pay["text/html"].is_object());
    }

    async fn the_reference_page_is_whole_and_self_contained(app) {
        let response = app.anon(Method::GET, "/docs").send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        assert!(response.headers()["content-type"].to_str().unwrap().starts_with("text/html"));
        let page = response.text().await.unwrap();
        let (_, document) = send(app.anon(Method::GET, "/openapi.json")).await;
        for (method, path) in documented(&document) {
            assert!(page.contains(&format!("{method}</span> <code>{path}</code>")), "{method} {path} is on the page");
        }
        for schema in document["components"]["schemas"].as_object().unwrap().keys() {
            assert!(page.contains(&format!("id=\"schema-{schema}\"")), "{schema} is on the page");
        }
        assert!(!page.contains("<script"), "no script");
        for source in ["src=\"http", "href=\"http", "src=\"//", "href=\"//"] {
            assert!(!page.contains(source), "nothing from elsewhere: {source}");
        }
        let css = app.anon(Method::GET, "/static/docs.css").send().await.unwrap();
        assert_eq!(css.status(), StatusCode::OK);
    }

    async fn the_reference_reads_in_a_browser_and_its_links_lead_somewhere(app) {
        let browser = crate::browser::Browser::start().await;
        browser.client.goto(&format!("{}/docs", app.base)).await.unwrap();
        assert_eq!(browser.client.title().await.unwrap(), "paydesk API reference");
        // The contents lead to the operation, the operation to the objects it answers.
        browser.client.find(fantoccini::Locator::Css("nav a[href='#post-products']")).await.unwrap().click().await.unwrap();
        assert!(browser.client.current_url().await.unwrap().as_str().ends_with("#post-products"));
        assert_eq!(browser.text_of("#post-products code").await, "/products");
        browser.client.find(fantoccini::Locator::Css("#post-products ~ table a[href='#schema-Product']")).await.unwrap();
        assert!(browser.has("#schema-Product").await && browser.has("#schema-ProductCreate").await);
        // Nothing but paydesk's own stylesheet was loaded.
        let sources: Vec<serde_json::Value> = serde_json::from_value(
            browser.client.execute("return performance.getEntriesByType('resource').map(r => r.name)", vec![]).await.unwrap(),
        ).unwrap();
        assert!(sources.iter().all(|s| s.as_str().unwrap().starts_with(&app.base)), "{sources:?}");
        browser.screenshot(&format!("docs-{}", crate::browser::backend_name(&app))).await;
        browser.close().await;
    }
}
