//! Twelve writes of every kind at once, through the API, the dashboard and the command line,
//! all fired together: none is answered with a 5xx (SQLite's "database is locked" when a
//! transaction that read first could not take the write lock), and every change is kept.

use std::future::Future;
use std::pin::Pin;
use std::process::Stdio;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::cli::paydesk;
use crate::dashboard::{Merchant, PASSWORD, api_shop, log_in, sign_up};
use crate::helpers::*;
use crate::subscriptions::card_json;

const AT_ONCE: usize = 12;

type Write<'a> = Pin<Box<dyn Future<Output = (String, StatusCode)> + 'a>>;

fn api<'a>(
    app: &'a TestApp,
    shop: &'a Shop,
    label: String,
    method: reqwest::Method,
    path: String,
    body: Value,
) -> Write<'a> {
    Box::pin(async move {
        let response = app.req(shop, method, &path).json(&body).send().await.unwrap();
        (label, response.status())
    })
}

fn form<'a>(m: &'a Merchant, label: String, path: String, fields: Vec<(&'static str, String)>) -> Write<'a> {
    Box::pin(async move {
        let fields: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
        (label, m.post(&path, &fields).await.status)
    })
}

/// `paydesk user create` as an operator runs it, stopped (and failed) after a minute.
fn command_line(database_url: String, shop_id: i64, email: String) -> Write<'static> {
    Box::pin(async move {
        let label = format!("paydesk user create {email}");
        let status = tokio::task::spawn_blocking(move || {
            let mut child = paydesk(&database_url)
                .args(["user", "create", "--shop-id", &shop_id.to_string(), "--email", &email, "--role", "support"])
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            use std::io::Write as _;
            writeln!(child.stdin.take().unwrap(), "{PASSWORD}").unwrap();
            let patience = Patience::start();
            loop {
                if let Some(status) = child.try_wait().unwrap() {
                    let mut err = String::new();
                    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
                    assert!(status.success(), "{email}: {err}");
                    return StatusCode::CREATED;
                }
                if patience.spent() {
                    child.kill().unwrap();
                    return StatusCode::GATEWAY_TIMEOUT;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        })
        .await
        .unwrap();
        (label, status)
    })
}

fn test_plan() -> Value {
    let mut body = plan_body();
    body["test"] = json!(true);
    body
}

async fn created(app: &TestApp, shop: &Shop, path: &str, body: Value) -> String {
    let (status, object) = app.post(shop, path, &body).await;
    assert_eq!(status, StatusCode::CREATED, "{path}: {object}");
    object["id"].as_str().unwrap().to_string()
}

async fn listed(app: &TestApp, shop: &Shop, path: &str) -> Vec<Value> {
    let (status, list) = app.get(shop, &format!("{path}?limit=100")).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    list.as_array().cloned().unwrap_or_else(|| list["data"].as_array().cloned().unwrap_or_default())
}

db_tests! {
    async fn twelve_writes_of_every_kind_at_once_all_land(app) {
        let owner = sign_up(&app, "Busy", "ann@example.com").await;
        let shop = api_shop(&owner).await;
        let mut team = Vec::new();
        for _ in 0..AT_ONCE {
            team.push(log_in(&app, "ann@example.com", PASSWORD).await.0);
        }
        // What the edits change, made one at a time beforehand.
        let mut customers = Vec::new();
        let mut products = Vec::new();
        let mut plans = Vec::new();
        for i in 0..2 * AT_ONCE {
            customers.push(created(&app, &shop, "/customers", json!({"email": format!("c{i}@example.com"), "ip": "203.0.113.9"})).await);
            products.push(created(&app, &shop, "/products", product_body()).await);
            plans.push(created(&app, &shop, "/plans", test_plan()).await);
        }
        created(&app, &shop, "/webhook_endpoints", json!({"url": "http://127.0.0.1:9/in", "enabled_events": ["*"]})).await;
        let first = created(&app, &shop, "/subscriptions", json!({"plan": {"id": plans[0]}, "customer": customer_body(),
            "card": card_json(cards::SUCCESS)})).await;
        let event = listed(&app, &shop, "/events").await[0]["id"].as_str().unwrap().to_string();
        let patience = Patience::start();
        let delivery = loop {
            if let Some(d) = listed(&app, &shop, "/webhook_deliveries").await.first() {
                break d["id"].as_str().unwrap().to_string();
            }
            assert!(!patience.spent(), "the event is queued for the endpoint");
            tokio::time::sleep(Duration::from_millis(100)).await;
        };

        let mut writes: Vec<Write> = Vec::new();
        for (i, m) in team.iter().enumerate() {
            let customer = &customers[i];
            writes.push(form(m, format!("dashboard customer {i}"), format!("/dashboard/customers/{customer}"),
                vec![("email", format!("c{i}@example.com")), ("ip", "203.0.113.9".into()), ("first_name", format!("Edited {i}"))]));
            writes.push(form(m, format!("dashboard product {i}"), format!("/dashboard/products/{}", products[i]),
                vec![("name", format!("Mug {i}")), ("description", "A mug".into()), ("amount", "9.90".into()), ("currency", "EUR".into())]));
            writes.push(form(m, format!("dashboard plan {i}"), format!("/dashboard/plans/{}", plans[i]),
                vec![("title", format!("Gold {i}")), ("language", "en".into())]));
            writes.push(form(m, format!("dashboard coupon {i}"), "/dashboard/coupons".into(),
                vec![("code", format!("DASH{i}")), ("kind", "percent".into()), ("percent_off", "10".into()), ("duration", "once".into()),
                     ("test", "true".into())]));
            writes.push(form(m, format!("dashboard settings {i}"), "/dashboard/settings".into(),
                vec![("name", format!("Busy {i}")), ("url", "https://busy.example".into()), ("timezone", "Europe/Berlin".into())]));
            writes.push(form(m, format!("dashboard invitation {i}"), "/dashboard/settings/users".into(),
                vec![("email", format!("invited{i}@example.com")), ("role", "analyst".into())]));
            writes.push(form(m, format!("dashboard subscription {i}"), format!("/dashboard/customers/{customer}/subscriptions"),
                vec![("plan_id", plans[i].clone())]));
            writes.push(form(m, format!("dashboard redelivery {i}"), format!("/dashboard/webhooks/{delivery}/redeliver"), vec![]));

            use reqwest::Method;
            writes.push(api(&app, &shop, format!("API customer {i}"), Method::POST, "/customers".into(),
                json!({"email": format!("api{i}@example.com"), "ip": "203.0.113.9"})));
            writes.push(api(&app, &shop, format!("API product {i}"), Method::POST, "/products".into(), product_body()));
            writes.push(api(&app, &shop, format!("API product edit {i}"), Method::PUT, format!("/products/{}", products[AT_ONCE + i]),
                json!({"description": format!("Edited {i}")})));
            writes.push(api(&app, &shop, format!("API plan {i}"), Method::POST, "/plans".into(), test_plan()));
            writes.push(api(&app, &shop, format!("API plan edit {i}"), Method::POST, format!("/plans/{}", plans[AT_ONCE + i]),
                json!({"language": "ru"})));
            writes.push(api(&app, &shop, format!("API coupon {i}"), Method::POST, "/coupons".into(),
                json!({"code": format!("API{i}"), "percent_off": 5, "test": true})));
            writes.push(api(&app, &shop, format!("API subscription {i}"), Method::POST, "/subscriptions".into(),
                json!({"plan": {"id": plans[i]}, "customer": {"email": format!("sub{i}@example.com"), "ip": "203.0.113.9"},
                       "card": card_json(cards::SUCCESS)})));
            writes.push(api(&app, &shop, format!("API settings {i}"), Method::PUT, "/shop".into(),
                json!({"notification_url": format!("https://busy.example/n{i}")})));
            writes.push(api(&app, &shop, format!("API redelivery {i}"), Method::POST, format!("/events/{event}/redeliver"), json!({})));
            writes.push(api(&app, &shop, format!("API pause {i}"), Method::POST, format!("/subscriptions/{first}/pause"), json!({})));
            writes.push(command_line(app.database_url.clone(), shop.id, format!("operator{i}@example.com")));
        }
        let answers = futures::future::join_all(writes).await;
        let failed: Vec<_> = answers.iter().filter(|(_, status)| status.is_server_error()).collect();
        assert!(failed.is_empty(), "{} of {} writes failed: {failed:?}", failed.len(), answers.len());
        for (label, status) in &answers {
            let kind: String = label.chars().take_while(|c| !c.is_ascii_digit()).collect();
            let expected: &[StatusCode] = match kind.trim_end() {
                k if k.starts_with("dashboard") => &[StatusCode::SEE_OTHER],
                "API pause" => &[StatusCode::OK, StatusCode::CONFLICT],
                "API product edit" => &[StatusCode::NO_CONTENT],
                "API plan edit" | "API settings" => &[StatusCode::OK],
                "API redelivery" => &[StatusCode::ACCEPTED],
                _ => &[StatusCode::CREATED],
            };
            assert!(expected.contains(status), "{label}: {status}");
        }

        // Every change kept.
        for i in 0..AT_ONCE {
            let (_, customer) = app.get(&shop, &format!("/customers/{}", customers[i])).await;
            assert_eq!(customer["first_name"], format!("Edited {i}"));
            let (_, product) = app.get(&shop, &format!("/products/{}", products[i])).await;
            assert_eq!(product["name"], format!("Mug {i}"));
            let (_, product) = app.get(&shop, &format!("/products/{}", products[AT_ONCE + i])).await;
            assert_eq!(product["description"], format!("Edited {i}"));
            let (_, plan) = app.get(&shop, &format!("/plans/{}", plans[i])).await;
            assert_eq!(plan["title"], format!("Gold {i}"));
            let (_, plan) = app.get(&shop, &format!("/plans/{}", plans[AT_ONCE + i])).await;
            assert_eq!(plan["language"], "ru");
        }
        let count = |list: &[Value], key: &str, prefix: &str| {
            list.iter().filter(|o| o[key].as_str().is_some_and(|v| v.starts_with(prefix))).count()
        };
        assert_eq!(count(&listed(&app, &shop, "/customers").await, "email", "api"), AT_ONCE);
        assert_eq!(count(&listed(&app, &shop, "/customers").await, "email", "sub"), AT_ONCE);
        assert_eq!(listed(&app, &shop, "/products").await.len(), 3 * AT_ONCE);
        assert_eq!(listed(&app, &shop, "/plans").await.len(), 3 * AT_ONCE);
        let coupons = listed(&app, &shop, "/coupons").await;
        assert_eq!((count(&coupons, "code", "DASH"), count(&coupons, "code", "API")), (AT_ONCE, AT_ONCE));
        assert_eq!(listed(&app, &shop, "/subscriptions").await.len(), 1 + 2 * AT_ONCE);
        let (_, settings) = app.get(&shop, "/shop").await;
        assert!(settings["name"].as_str().unwrap().starts_with("Busy "), "{settings}");
        assert!(settings["notification_url"].as_str().unwrap().starts_with("https://busy.example/n"), "{settings}");
        let users = owner.get("/dashboard/settings/users").await.html;
        for i in 0..AT_ONCE {
            assert!(users.contains(&format!("invited{i}@example.com")), "invitation {i}");
            assert!(users.contains(&format!("operator{i}@example.com")), "user {i} of the command line");
        }
    }
}

/// A transaction whose `BEGIN` was dropped while it waited for the server (a client gone, a
/// timeout) leaves nothing open on its pooled connection: the next statement on it runs on
/// its own, not inside a transaction nobody ends. Dropped at every moment from before the
/// connection is taken to after the server answered.
#[tokio::test]
async fn a_transaction_dropped_while_it_began_leaves_no_transaction_open() {
    use sea_orm::{ConnectionTrait, DatabaseBackend, Statement};
    let url = postgres_schema().await;
    let db = paydesk::db::connect(&url, 1).await.unwrap();
    // Two statements on their own are two transactions; inside one left open, one.
    let xid = Statement::from_string(DatabaseBackend::Postgres, "SELECT txid_current() AS xid");
    for micros in (0..600).step_by(3) {
        let _ = tokio::time::timeout(Duration::from_micros(micros), paydesk::db::begin(&db)).await;
        let first: i64 = db.query_one(xid.clone()).await.unwrap().unwrap().try_get("", "xid").unwrap();
        let second: i64 = db.query_one(xid.clone()).await.unwrap().unwrap().try_get("", "xid").unwrap();
        assert_ne!(first, second, "statements after a begin dropped at {micros} µs ran inside it");
    }
}

db_tests! {
    async fn creates_committed_together_fail_alone(app) {
        use paydesk::db::entities::products;
        use sea_orm::{ActiveValue::NotSet, ActiveValue::Set, EntityTrait, IntoActiveModel};
        let shop = app.shop("Shop").await;
        let existing = app.product(&shop, &test_product_body()).await["id"].as_str().unwrap().to_string();
        let model = paydesk::db::find::<products::Entity>(&app.db, shop.id, &existing).await.unwrap().unwrap();
        let copy = |id: &str| {
            let mut row = model.clone().into_active_model();
            row.seq = NotSet;
            row.id = Set(id.to_string());
            row
        };
        // Thirty creates at once, each of two products; the eleventh's second one takes the id
        // of a product that exists, after its first was inserted.
        let creates = (0..30).map(|i| {
            let (first, then) = (format!("prd_first{i}"), format!("prd_then{i}"));
            let then = if i == 10 { existing.clone() } else { then };
            let db = app.db.clone();
            let (first, then) = (copy(&first), copy(&then));
            async move { paydesk::db::insert_together(&db, first, then).await }
        });
        let answers = futures::future::join_all(creates).await;
        for (i, answer) in answers.iter().enumerate() {
            assert_eq!(answer.is_err(), i == 10, "create {i}: {answer:?}");
            // Each is answered its own row, although they shared a statement.
            if let Ok(row) = answer {
                assert_eq!(row.try_get::<String>("", "id").unwrap(), format!("prd_first{i}"));
            }
        }
        // Its own error: a unique key taken, which the API answers as the client's.
        let refused = answers[10].as_ref().unwrap_err();
        assert!(matches!(refused.sql_err(), Some(sea_orm::SqlErr::UniqueConstraintViolation(_))), "{refused:?}");
        for i in 0..30 {
            for id in [format!("prd_first{i}"), format!("prd_then{i}")] {
                let stored = paydesk::db::find::<products::Entity>(&app.db, shop.id, &id).await.unwrap();
                assert_eq!(stored.is_some(), i != 10, "{id}");
            }
        }
        let all = products::Entity::find().all(&app.db).await.unwrap();
        assert_eq!(all.len(), 1 + 29 * 2);
    }
}
