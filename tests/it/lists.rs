//! Lists: newest first, `limit`, `starting_after`, and the `Link` header.

use reqwest::{Method, StatusCode, header};
use serde_json::{Value, json};

use crate::helpers::*;

db_tests! {
    async fn lists_are_newest_first_and_paginate_with_a_link_header(app) {
        let shop = app.shop("Shop").await;
        let mut ids = Vec::new();
        for i in 0..5 {
            let mut body = customer_body();
            body["external_id"] = json!(format!("c{i}"));
            let (_, c) = app.post(&shop, "/customers", &body).await;
            ids.push(c["id"].as_str().unwrap().to_string());
        }
        ids.reverse();

        let (status, all) = app.get(&shop, "/customers").await;
        assert_eq!(status, StatusCode::OK);
        let listed: Vec<&str> = all.as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap()).collect();
        assert_eq!(listed, ids);

        let mut seen = Vec::new();
        let mut next = Some(format!("{}/customers?limit=2", app.base));
        while let Some(url) = next.take() {
            let response = app.client.get(&url).basic_auth(shop.id, Some(&shop.secret)).send().await.unwrap();
            assert_eq!(response.status(), StatusCode::OK);
            next = response.headers().get(header::LINK).map(|l| {
                let l = l.to_str().unwrap();
                assert!(l.ends_with(">; rel=\"next\""), "{l}");
                l[1..l.find('>').unwrap()].to_string()
            });
            let page: Value = response.json().await.unwrap();
            assert!(page.as_array().unwrap().len() <= 2);
            seen.extend(page.as_array().unwrap().iter().map(|c| c["id"].as_str().unwrap().to_string()));
        }
        assert_eq!(seen, ids, "the pages walk the whole list once");
    }

    async fn every_list_takes_limit_and_refuses_bad_ones(app) {
        let shop = app.shop("Shop").await;
        app.product(&shop, &product_body()).await;
        app.product(&shop, &product_body()).await;
        app.post(&shop, "/plans", &plan_body()).await;
        for path in ["/products", "/plans", "/customers"] {
            for bad in ["0", "1001", "ten", "-1"] {
                let (status, body) = app.get(&shop, &format!("{path}?limit={bad}")).await;
                assert_invalid(status, &body, "limit", &["must be a whole number from 1 to 1000"]);
            }
            let (status, body) = app.get(&shop, &format!("{path}?starting_after=nope")).await;
            assert_eq!((status, &body["code"]), (StatusCode::NOT_FOUND, &json!("resource_missing")));
            assert_eq!(body["errors"]["starting_after"], json!(["is not an id of this list"]));
        }
        let response = app.req(&shop, Method::GET, "/products?limit=1").send().await.unwrap();
        assert!(response.headers().get(header::LINK).is_some());
        let page: Value = response.json().await.unwrap();
        assert_eq!(page.as_array().unwrap().len(), 1);
        let response = app.req(&shop, Method::GET, "/products?limit=2").send().await.unwrap();
        assert!(response.headers().get(header::LINK).is_none(), "no next page after the last");
    }

    async fn infinite_products_list_with_a_null_quantity(app) {
        let shop = app.shop("Shop").await;
        let mut body = product_body();
        body["infinite"] = json!(true);
        body.as_object_mut().unwrap().remove("quantity");
        app.product(&shop, &body).await;
        let (_, list) = app.get(&shop, "/products").await;
        assert_eq!(list[0]["quantity"], Value::Null);
        assert_eq!(list[0]["infinite"], true);
    }
}
