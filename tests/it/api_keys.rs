//! The shop's API keys (docs/api.md, "API keys"): several named keys, restricted per resource
//! and to networks, rolled with an overlap, revoked; every operation of the OpenAPI document
//! refused to a key without its permission.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::helpers::*;

/// Makes a key of `body` with `by`; the key's credentials and its view.
async fn key(app: &TestApp, by: &Shop, body: Value) -> (Shop, Value) {
    let (status, made) = app.post(by, "/api_keys", &body).await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    let secret = made["secret"].as_str().expect("the secret, shown once").to_string();
    (Shop { id: by.id, secret }, made)
}

/// Every resource with `write`, but `resource` with `access`.
fn all_but(resource: &str, access: &str) -> Value {
    let resources = [
        "products",
        "plans",
        "coupons",
        "customers",
        "payments",
        "refunds",
        "subscriptions",
        "disputes",
        "events",
        "webhook_endpoints",
        "test_clocks",
        "audit",
        "invoices",
        "tax_rates",
        "revenue",
        "shop",
    ];
    let mut given = serde_json::Map::new();
    for r in resources {
        given.insert(r.into(), json!(if r == resource { access } else { "write" }));
    }
    Value::Object(given)
}

/// The key the shop's notifications carry.
async fn notifications_key(app: &TestApp, shop_id: i64) -> String {
    let shop = paydesk::db::shops::find(&app.db, shop_id).await.unwrap().unwrap();
    paydesk::services::keys::api_secret(&app.state.vault, &shop).unwrap()
}

/// What the shop's trail and event log hold: their lengths.
async fn recorded(app: &TestApp, shop: &Shop) -> (usize, usize) {
    let (_, trail) = app.get(shop, "/audit_events?limit=1000").await;
    let (_, events) = app.get(shop, "/events?limit=1000").await;
    (trail.as_array().unwrap().len(), events.as_array().unwrap().len())
}

db_tests! {
    async fn every_operation_refuses_a_key_without_its_permission_and_serves_one_with_it(app) {
        let shop = app.shop("Shop").await;
        let document: Value = app.anon(Method::GET, "/openapi.json").send().await.unwrap().json().await.unwrap();
        let mut operations = Vec::new();
        for (path, item) in document["paths"].as_object().unwrap() {
            for (method, operation) in item.as_object().unwrap() {
                let Some(permission) = operation["x-paydesk-permission"].as_str() else {
                    let public = operation["security"].as_array().is_some_and(|s| s.iter().all(|r| r == &json!({})));
                    assert!(public, "{method} {path} says which permission it needs");
                    continue;
                };
                operations.push((method.to_uppercase(), path.replace("{id}", "key_0000000000000000").replace("{name}", "invoice"), permission.to_string()));
            }
        }
        assert!(operations.len() > 90, "{}", operations.len());
        let mut keys: std::collections::HashMap<String, (Shop, Shop)> = Default::default();
        let (everything, _) = key(&app, &shop, json!({"name": "Everything", "permissions": all_but("products", "write")})).await;
        for (_, _, permission) in &operations {
            if keys.contains_key(permission) || permission == "unrestricted" {
                continue;
            }
            let (resource, access) = permission.split_once(':').unwrap();
            let short = if access == "write" { "read" } else { "none" };
            let (lacking, _) = key(&app, &shop, json!({"name": format!("Lacks {permission}"), "permissions": all_but(resource, short)})).await;
            let (holding, _) = key(&app, &shop, json!({"name": format!("Holds {permission}"), "permissions": {resource: access}})).await;
            keys.insert(permission.clone(), (lacking, holding));
        }
        let before = recorded(&app, &shop).await;
        for (method, path, permission) in &operations {
            let method = Method::from_bytes(method.as_bytes()).unwrap();
            let (lacking, holding) = match keys.get(permission) {
                Some((lacking, holding)) => (lacking, Some(holding)),
                None => (&everything, None),
            };
            // A POST is refused the same with an Idempotency-Key (checked before it is kept).
            let tries = match method {
                Method::POST => vec![None, Some(format!("refused-{path}"))],
                _ => vec![None],
            };
            for key in tries {
                let mut request = app.req(lacking, method.clone(), path).json(&json!({}));
                if let Some(key) = &key {
                    request = request.header("Idempotency-Key", key);
                }
                let (status, body) = send(request).await;
                assert_eq!(status, StatusCode::FORBIDDEN, "{method} {path} without {permission} ({key:?}): {body}");
                assert_eq!(body["code"], "permission_missing", "{method} {path}");
                assert!(body["message"].as_str().unwrap().contains(&format!("`{permission}`")), "{method} {path}: {body}");
            }
            if method == Method::GET {
                let head = app.req(lacking, Method::HEAD, path).send().await.unwrap();
                assert_eq!(head.status(), StatusCode::FORBIDDEN, "HEAD {path} without {permission}");
            }
            if let Some(holding) = holding {
                let (status, body) = send(app.req(holding, method.clone(), path).json(&json!({}))).await;
                assert!(![StatusCode::FORBIDDEN, StatusCode::UNAUTHORIZED].contains(&status), "{method} {path} with {permission}: {status} {body}");
            }
        }
        assert_eq!(recorded(&app, &shop).await.0, before.0, "no refusal is in the trail");
        assert_eq!(recorded(&app, &shop).await.1, before.1, "no refusal made an event");
    }

    async fn only_a_key_without_restrictions_chooses_where_notifications_go(app) {
        // Notifications carry the shop's standard key: a restricted key that could send them
        // to its own address would get it.
        let shop = app.shop("Shop").await;
        let (writer, _) = key(&app, &shop, json!({"name": "Catalogue", "permissions": {"products": "write", "subscriptions": "write", "shop": "write", "plans": "write", "customers": "write"}})).await;
        let mut body = product_body();
        body["notification_url"] = json!("https://attacker.example/notify");
        let (status, refused) = app.post(&writer, "/products", &body).await;
        assert_eq!((status, refused["message"].as_str()), (StatusCode::FORBIDDEN, Some("This API key lacks the permission `unrestricted`: it may not make this request")));
        let product = app.product(&writer, &product_body()).await;
        let path = format!("/products/{}", product["id"].as_str().unwrap());
        assert_eq!(app.put(&writer, &path, &json!({"notification_url": "https://attacker.example/notify"})).await.0, StatusCode::FORBIDDEN);
        assert_eq!(app.put(&writer, &path, &json!({"name": "Renamed"})).await.0, StatusCode::NO_CONTENT);
        // A product the standard key gave an address: sent back unchanged, or cleared (its
        // notifications then go to the shop's own address), by the restricted key.
        let mut body = product_body();
        body["notification_url"] = json!("https://books.example/notify");
        let owned = app.product(&shop, &body).await;
        let owned_path = format!("/products/{}", owned["id"].as_str().unwrap());
        assert_eq!(app.put(&writer, &owned_path, &json!({"notification_url": "https://books.example/notify", "name": "Kept"})).await.0, StatusCode::NO_CONTENT);
        assert_eq!(app.put(&writer, &owned_path, &json!({"notification_url": "https://attacker.example/notify"})).await.0, StatusCode::FORBIDDEN);
        assert_eq!(app.put(&writer, &owned_path, &json!({"notification_url": null})).await.0, StatusCode::NO_CONTENT);
        let (_, plan) = app.post(&writer, "/plans", &plan_body()).await;
        let (_, customer) = app.post(&writer, "/customers", &customer_body()).await;
        let subscription = json!({"plan_id": plan["id"], "customer_id": customer["id"], "notification_url": "https://attacker.example/notify"});
        assert_eq!(app.post(&writer, "/subscriptions", &subscription).await.0, StatusCode::FORBIDDEN);
        assert_eq!(app.put(&writer, "/shop", &json!({"notification_url": "https://attacker.example/notify"})).await.0, StatusCode::FORBIDDEN);
        assert_eq!(app.put(&writer, "/shop/processor", &json!({"kind": "simulated"})).await.0, StatusCode::FORBIDDEN, "nor where the money goes");
        let (_, settings) = app.get(&shop, "/shop").await;
        assert!(settings["notification_url"].is_null(), "{settings}");
        assert_eq!(app.post(&shop, "/subscriptions", &subscription).await.0, StatusCode::CREATED, "the standard key may");
    }

    async fn a_restricted_key_does_what_it_may_and_a_refusal_changes_nothing(app) {
        let shop = app.shop("Shop").await;
        let product = app.product(&shop, &test_product_body()).await;
        app.pay(product["id"].as_str().unwrap(), cards::SUCCESS, &[]).await;
        let (_, payments) = app.get(&shop, "/payments").await;
        let payment = payments[0]["id"].as_str().unwrap().to_string();
        let (reader, _) = key(&app, &shop, json!({"name": "Reporting", "permissions": {"payments": "read", "products": "read"}})).await;
        let (_, seen) = app.get(&reader, &format!("/payments/{payment}")).await;
        assert_eq!(seen["id"], payment.as_str());
        let before = recorded(&app, &shop).await;
        let (status, refused) = app.post(&reader, &format!("/payments/{payment}/refund"), &json!({"amount": 100})).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{refused}");
        assert_eq!(refused["message"], "This API key lacks the permission `refunds:write`: it may not make this request");
        let (status, refused) = app.post(&reader, "/products", &product_body()).await;
        assert_eq!((status, refused["code"].as_str()), (StatusCode::FORBIDDEN, Some("permission_missing")));
        let (status, _) = app.post(&reader, "/api_keys", &json!({"name": "Mine"})).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "a restricted key makes no key");
        assert_eq!(recorded(&app, &shop).await, before, "the refusals left no trace but themselves");
        let (_, unchanged) = app.get(&shop, &format!("/payments/{payment}")).await;
        assert_eq!(unchanged["refunded_amount"], 0);
        let (_, products) = app.get(&shop, "/products").await;
        assert_eq!(products.as_array().unwrap().len(), 1);
        // The same refund by a key that may refund: done, and the trail names that key.
        let (refunder, made) = key(&app, &shop, json!({"name": "Support desk", "permissions": {"refunds": "write"}})).await;
        let (status, refund) = app.post(&refunder, &format!("/payments/{payment}/refund"), &json!({"amount": 100})).await;
        assert_eq!(status, StatusCode::CREATED, "{refund}");
        let (_, trail) = app.get(&shop, &format!("/audit_events?object_id={payment}")).await;
        let by = trail.as_array().unwrap().iter().find(|r| r["action"] == "payment.refunded").expect("the refund's record");
        assert_eq!(by["actor"]["type"], "api_key");
        assert_eq!(by["actor"]["id"], made["id"]);
        assert_eq!(by["actor"]["name"], format!("Support desk ({}…)", made["prefix"].as_str().unwrap()));
    }

    async fn keys_are_made_shown_once_restricted_and_revoked(app) {
        let shop = app.shop("Shop").await;
        let (_, listed) = app.get(&shop, "/api_keys").await;
        let standard = listed.as_array().unwrap().iter().find(|k| k["standard"] == true).expect("the standard key").clone();
        assert_eq!((standard["name"].as_str(), standard["status"].as_str()), (Some("Secret key"), Some("active")));
        assert!(standard["secret"].is_null());
        let (made, view) = key(&app, &shop, json!({"name": "  ERP  ", "networks": ["127.0.0.0/8"]})).await;
        assert_eq!(view["name"], "ERP");
        assert!(made.secret.starts_with(view["prefix"].as_str().unwrap()));
        assert_eq!((view["standard"].as_bool(), view["permissions"].is_null()), (Some(false), true));
        assert_eq!(view["networks"], json!(["127.0.0.0/8"]));
        let id = view["id"].as_str().unwrap().to_string();
        let (_, shown) = app.get(&shop, &format!("/api_keys/{id}")).await;
        assert!(shown.get("secret").is_none(), "shown once: {shown}");
        assert_eq!(app.get(&made, "/products").await.0, StatusCode::OK);
        // Restricted, then lifted; the standard key takes no permissions.
        let (status, view) = app.post(&shop, &format!("/api_keys/{id}"), &json!({"permissions": {"products": "read"}})).await;
        assert_eq!((status, view["permissions"].clone()), (StatusCode::OK, json!({"products": "read"})));
        assert_eq!(app.post(&made, "/products", &product_body()).await.0, StatusCode::FORBIDDEN);
        let (_, view) = app.post(&shop, &format!("/api_keys/{id}"), &json!({"permissions": null})).await;
        assert!(view["permissions"].is_null());
        let standard_id = standard["id"].as_str().unwrap();
        let (status, body) = app.post(&shop, &format!("/api_keys/{standard_id}"), &json!({"permissions": {"products": "read"}})).await;
        assert_eq!(status, StatusCode::CONFLICT, "{body}");
        // Bad input names its field and changes nothing.
        let bad = [
            (json!({"permissions": {"payment": "read"}}), "permissions", "`payment` is not a permission's resource"),
            (json!({"permissions": {"payments": "admin"}}), "permissions", "`admin` is not an access (none, read or write) for `payments`"),
            (json!({"permissions": ["payments"]}), "permissions", "must be an object of resources and their access, or null"),
            (json!({"networks": ["203.0.113.7/24"]}), "networks", "`203.0.113.7/24` is not an address or a network (203.0.113.0/24)"),
            (json!({"name": "a".repeat(101)}), "name", "is too long (maximum is 100 characters)"),
            (json!({"name": "   "}), "name", "can't be blank"),
            (json!({"expires_at": "2030-01-01T00:00:00Z"}), "expires_at", "cannot be changed: roll the key to end it"),
        ];
        for (body, field, message) in bad {
            let (status, answer) = app.post(&shop, &format!("/api_keys/{id}"), &body).await;
            assert_invalid(status, &answer, field, &[message]);
        }
        let (_, unchanged) = app.get(&shop, &format!("/api_keys/{id}")).await;
        assert_eq!((unchanged["name"].as_str(), unchanged["permissions"].is_null()), (Some("ERP"), true), "refused changes change nothing");
        let (status, answer) = app.post(&shop, "/api_keys", &json!({"expires_at": "2001-01-01T00:00:00Z"})).await;
        assert_invalid(status, &answer, "expires_at", &["must be in the future"]);
        assert_invalid(status, &answer, "name", &["can't be blank"]);
        // Revoked: refused at once, like a wrong key; the standard key only rolls.
        let (status, view) = app.post(&shop, &format!("/api_keys/{id}/revoke"), &json!({})).await;
        assert_eq!((status, view["status"].as_str()), (StatusCode::OK, Some("revoked")));
        assert_eq!(app.get(&made, "/products").await.0, StatusCode::UNAUTHORIZED);
        let (status, _) = app.post(&shop, &format!("/api_keys/{standard_id}/revoke"), &json!({})).await;
        assert_eq!(status, StatusCode::CONFLICT);
        assert_eq!(app.get(&shop, "/api_keys/key_0000000000000000").await.0, StatusCode::NOT_FOUND);
        // No secret in the trail or the event log.
        let (_, trail) = app.get(&shop, "/audit_events?limit=1000").await;
        let (_, events) = app.get(&shop, "/events?limit=1000").await;
        for text in [trail.to_string(), events.to_string()] {
            assert!(!text.contains(&made.secret) && !text.contains(&shop.secret));
        }
        let actions: Vec<&str> = trail.as_array().unwrap().iter().filter_map(|r| r["action"].as_str()).collect();
        for action in ["api_key.created", "api_key.updated", "api_key.revoked"] {
            assert!(actions.contains(&action), "{action} in {actions:?}");
        }
    }

    async fn a_key_used_from_outside_its_networks_is_refused(app) {
        let shop = app.shop("Shop").await;
        let (far, _) = key(&app, &shop, json!({"name": "Office", "networks": ["203.0.113.0/24", "2001:db8::/32"]})).await;
        let (status, body) = app.get(&far, "/products").await;
        assert_eq!((status, body["code"].as_str()), (StatusCode::FORBIDDEN, Some("forbidden")), "{body}");
        let (near, _) = key(&app, &shop, json!({"name": "Here", "networks": ["127.0.0.1"]})).await;
        assert_eq!(app.get(&near, "/products").await.0, StatusCode::OK);
    }

    async fn a_rolled_key_works_until_its_overlap_ends_to_the_second(app) {
        let shop = app.shop("Shop").await;
        let (old, view) = key(&app, &shop, json!({"name": "ERP", "permissions": {"products": "write"}})).await;
        let id = view["id"].as_str().unwrap().to_string();
        let now = app.state.clock.now();
        let until = (now + chrono::Duration::hours(1)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        let (status, rolled) = app.post(&shop, &format!("/api_keys/{id}/roll"), &json!({"expires_at": until})).await;
        assert_eq!(status, StatusCode::CREATED, "{rolled}");
        assert_eq!((rolled["name"].as_str(), rolled["permissions"].clone()), (Some("ERP"), json!({"products": "write"})));
        let new = Shop { id: shop.id, secret: rolled["secret"].as_str().unwrap().to_string() };
        let (_, before) = app.get(&shop, &format!("/api_keys/{id}")).await;
        assert_eq!(before["rolled_to"], rolled["id"]);
        let (status, again) = app.post(&shop, &format!("/api_keys/{id}/roll"), &json!({})).await;
        assert_eq!(status, StatusCode::CONFLICT, "a key rolls once: {again}");
        assert!(again["message"].as_str().unwrap().contains(rolled["id"].as_str().unwrap()));
        assert_eq!(app.get(&old, "/products").await.0, StatusCode::OK);
        assert_eq!(app.get(&new, "/products").await.0, StatusCode::OK);
        // The clock moves by whole seconds: to between one and two seconds before the end.
        let left = chrono::DateTime::parse_from_rfc3339(&until).unwrap().to_utc() - app.state.clock.now();
        app.state.clock.advance(chrono::Duration::seconds(left.num_milliseconds() / 1000 - 1));
        assert_eq!(app.get(&old, "/products").await.0, StatusCode::OK, "a second before its end");
        app.state.clock.advance(chrono::Duration::seconds(2));
        assert_eq!(app.get(&old, "/products").await.0, StatusCode::UNAUTHORIZED, "at its end");
        assert_eq!(app.get(&new, "/products").await.0, StatusCode::OK);
        let (_, after) = app.get(&shop, &format!("/api_keys/{id}")).await;
        assert_eq!(after["status"], "expired");
        let (status, answer) = app.post(&shop, &format!("/api_keys/{}/roll", rolled["id"].as_str().unwrap()), &json!({"expires_at": app.state.clock.now().timestamp() + 8 * 86_400})).await;
        assert_invalid(status, &answer, "expires_at", &["must be at most 7 days from now"]);
    }

    async fn rolling_the_standard_key_moves_the_notifications_to_its_successor_when_the_overlap_ends(app) {
        let shop = app.shop("Shop").await;
        assert_eq!(notifications_key(&app, shop.id).await, shop.secret);
        let (_, listed) = app.get(&shop, "/api_keys").await;
        let standard = listed[0]["id"].as_str().unwrap().to_string();
        let in_a_day = app.state.clock.now().timestamp() + 86_400;
        let (status, rolled) = app.post(&shop, &format!("/api_keys/{standard}/roll"), &json!({"expires_at": in_a_day})).await;
        assert_eq!((status, rolled["standard"].as_bool()), (StatusCode::CREATED, Some(true)), "{rolled}");
        let successor = rolled["secret"].as_str().unwrap().to_string();
        paydesk::services::api_keys::tend(&app.state, app.state.clock.now()).await.unwrap();
        assert_eq!(notifications_key(&app, shop.id).await, shop.secret, "the old key during the overlap");
        app.state.clock.advance(chrono::Duration::days(1));
        paydesk::services::api_keys::tend(&app.state, app.state.clock.now()).await.unwrap();
        assert_eq!(notifications_key(&app, shop.id).await, successor, "its successor once it stopped");
        assert_eq!(app.get(&shop, "/products").await.0, StatusCode::UNAUTHORIZED);
        let new = Shop { id: shop.id, secret: successor };
        let (_, listed) = app.get(&new, "/api_keys").await;
        let standards: Vec<&Value> = listed.as_array().unwrap().iter().filter(|k| k["standard"] == true).collect();
        assert_eq!(standards.len(), 1, "{listed}");
        assert_eq!(standards[0]["id"], rolled["id"]);
        let old = listed.as_array().unwrap().iter().find(|k| k["id"] == standard.as_str()).unwrap();
        assert_eq!(old["status"], "expired", "an ended overlap is not a revocation");
    }

    async fn the_standard_key_rolled_at_once_or_revoked_mid_overlap_hands_over_at_once(app) {
        let shop = app.shop("Shop").await;
        let standard_of = |listed: &Value| listed.as_array().unwrap().iter().find(|k| k["standard"] == true).unwrap()["id"].as_str().unwrap().to_string();
        let (_, listed) = app.get(&shop, "/api_keys").await;
        // Rolled with no overlap: the successor is the standard key and signs notifications now.
        let (status, b) = app.post(&shop, &format!("/api_keys/{}/roll", standard_of(&listed)), &json!({})).await;
        assert_eq!(status, StatusCode::CREATED, "{b}");
        let b_key = Shop { id: shop.id, secret: b["secret"].as_str().unwrap().to_string() };
        assert_eq!(notifications_key(&app, shop.id).await, b_key.secret);
        assert_eq!(app.get(&shop, "/products").await.0, StatusCode::UNAUTHORIZED);
        // Rolled with an overlap, then its successor rolled at once before the overlap ended,
        // then the first revoked: the notifications go to the last, the one that works.
        let in_a_day = app.state.clock.now().timestamp() + 86_400;
        let (_, c) = app.post(&b_key, &format!("/api_keys/{}/roll", b["id"].as_str().unwrap()), &json!({"expires_at": in_a_day})).await;
        let c_key = Shop { id: shop.id, secret: c["secret"].as_str().unwrap().to_string() };
        let (_, d) = app.post(&c_key, &format!("/api_keys/{}/roll", c["id"].as_str().unwrap()), &json!({})).await;
        let d_key = Shop { id: shop.id, secret: d["secret"].as_str().unwrap().to_string() };
        assert_eq!(notifications_key(&app, shop.id).await, b_key.secret, "still the overlap's");
        let (status, revoked) = app.post(&d_key, &format!("/api_keys/{}/revoke", b["id"].as_str().unwrap()), &json!({})).await;
        assert_eq!((status, revoked["status"].as_str()), (StatusCode::OK, Some("revoked")), "{revoked}");
        assert_eq!(notifications_key(&app, shop.id).await, d_key.secret);
        let (_, listed) = app.get(&d_key, "/api_keys").await;
        assert_eq!(standard_of(&listed), d["id"].as_str().unwrap());
        assert_eq!(listed.as_array().unwrap().iter().filter(|k| k["standard"] == true).count(), 1, "{listed}");
        // A rotation in the dashboard during an overlap ends the old key at once, and the
        // overlap's successor stays a key of its own.
        let in_a_day = app.state.clock.now().timestamp() + 86_400;
        let (_, e) = app.post(&d_key, &format!("/api_keys/{}/roll", d["id"].as_str().unwrap()), &json!({"expires_at": in_a_day})).await;
        let e_key = Shop { id: shop.id, secret: e["secret"].as_str().unwrap().to_string() };
        let row = paydesk::db::shops::find(&app.db, shop.id).await.unwrap().unwrap();
        let audit = paydesk::domain::audit::Entry::new(shop.id, paydesk::domain::audit::Actor::operator(), Default::default(), "api_key.rotated");
        let rotated = paydesk::services::keys::rotate_secret(&app.state, row, &audit, chrono::Utc::now()).await.unwrap().unwrap();
        assert_eq!(notifications_key(&app, shop.id).await, rotated);
        assert_eq!(app.get(&d_key, "/products").await.0, StatusCode::UNAUTHORIZED, "rotated away at once");
        assert_eq!(app.get(&e_key, "/products").await.0, StatusCode::OK);
        let (_, e_now) = app.get(&e_key, &format!("/api_keys/{}", e["id"].as_str().unwrap())).await;
        assert_eq!(e_now["standard"], false, "{e_now}");
        let (status, _) = app.post(&e_key, &format!("/api_keys/{}/revoke", e["id"].as_str().unwrap()), &json!({})).await;
        assert_eq!(status, StatusCode::OK, "no longer the standard key: it may be revoked");
    }

    async fn the_same_key_rolled_many_times_at_once_has_one_successor(app) {
        let shop = app.shop("Shop").await;
        let (_, view) = key(&app, &shop, json!({"name": "ERP"})).await;
        let id = view["id"].as_str().unwrap().to_string();
        let (path, body) = (format!("/api_keys/{id}/roll"), json!({}));
        let rolls = (0..8).map(|_| app.post(&shop, &path, &body));
        let answers = futures::future::join_all(rolls).await;
        let made: Vec<&Value> = answers.iter().filter(|(s, _)| *s == StatusCode::CREATED).map(|(_, b)| b).collect();
        assert_eq!(made.len(), 1, "{answers:?}");
        assert!(answers.iter().all(|(s, _)| [StatusCode::CREATED, StatusCode::CONFLICT].contains(s)), "{answers:?}");
        let (_, listed) = app.get(&shop, "/api_keys").await;
        let named: Vec<&Value> = listed.as_array().unwrap().iter().filter(|k| k["name"] == "ERP").collect();
        assert_eq!(named.len(), 2, "the key and its one successor: {listed}");
    }

    async fn owners_hear_once_of_a_key_that_stops_within_seven_days(app) {
        let shop = app.shop("Shop").await;
        let eight_days = app.state.clock.now().timestamp() + 8 * 86_400;
        let (_, view) = key(&app, &shop, json!({"name": "Temporary", "expires_at": eight_days})).await;
        let expiring = || async {
            let (_, events) = app.get(&shop, "/events?type=api_key.expiring").await;
            events.as_array().unwrap().clone()
        };
        paydesk::services::api_keys::tend(&app.state, app.state.clock.now()).await.unwrap();
        assert!(expiring().await.is_empty(), "eight days ahead");
        app.state.clock.advance(chrono::Duration::days(1) + chrono::Duration::seconds(1));
        for _ in 0..2 {
            paydesk::services::api_keys::tend(&app.state, app.state.clock.now()).await.unwrap();
        }
        let events = expiring().await;
        assert_eq!(events.len(), 1, "{events:?}");
        assert_eq!(events[0]["data"]["object"]["id"], view["id"]);
        let (_, trail) = app.get(&shop, "/audit_events?action=api_key.expiring").await;
        assert_eq!(trail.as_array().unwrap().len(), 1, "{trail}");
    }

    async fn a_keys_last_use_is_noted(app) {
        let shop = app.shop("Shop").await;
        let (made, view) = key(&app, &shop, json!({"name": "ERP"})).await;
        assert!(view["last_used_at"].is_null());
        assert_eq!(app.get(&made, "/products").await.0, StatusCode::OK);
        let id = view["id"].as_str().unwrap().to_string();
        let used = eventually("the use noted", std::time::Duration::from_millis(20), async || {
            let (_, key) = app.get(&shop, &format!("/api_keys/{id}")).await;
            (!key["last_used_at"].is_null()).then_some(key)
        })
        .await;
        assert_eq!(used["last_used_from"], "127.0.0.1");
    }
}
