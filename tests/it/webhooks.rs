//! Webhooks against receivers the tests start: Standard Webhooks deliveries checked with the
//! reference library, bePaid notifications checked with bePaid's client library (Python,
//! from PyPI), retries, timeouts, redelivery, secret rotation, two instances, a receiver that
//! is down for a while, refused private addresses, and endpoints disabled when they fail.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode as AxumStatus};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;
use crate::subscriptions::{advance, clock, make_card, plan, subscribe};

/// One request a receiver got.
#[derive(Clone, Debug)]
pub struct Received {
    pub headers: HeaderMap,
    pub body: Bytes,
}

/// An HTTP server that records what it is sent and answers with the statuses it is told
/// (200 once they run out), after an optional delay.
#[derive(Clone)]
pub struct Receiver {
    pub url: String,
    pub got: Arc<Mutex<Vec<Received>>>,
    answers: Arc<Mutex<Vec<u16>>>,
    delay: Arc<Mutex<Duration>>,
}

impl Receiver {
    pub async fn start() -> Receiver {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        Self::on(listener).await
    }

    async fn on(listener: tokio::net::TcpListener) -> Receiver {
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let receiver = Receiver {
            url,
            got: Default::default(),
            answers: Default::default(),
            delay: Arc::new(Mutex::new(Duration::ZERO)),
        };
        let r = receiver.clone();
        let app = axum::Router::new().fallback(move |headers: HeaderMap, body: Bytes| {
            let r = r.clone();
            async move {
                let delay = *r.delay.lock().unwrap();
                tokio::time::sleep(delay).await;
                r.got.lock().unwrap().push(Received { headers, body });
                let mut answers = r.answers.lock().unwrap();
                let status = if answers.is_empty() { 200 } else { answers.remove(0) };
                (AxumStatus::from_u16(status).unwrap(), "thanks from the receiver")
            }
        });
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        receiver
    }

    /// Answers these statuses to the next requests.
    pub fn answer(&self, statuses: &[u16]) {
        self.answers.lock().unwrap().extend_from_slice(statuses);
    }

    pub fn slow(&self, delay: Duration) {
        *self.delay.lock().unwrap() = delay;
    }

    pub fn received(&self) -> Vec<Received> {
        self.got.lock().unwrap().clone()
    }

    /// The event ids received, with how often each came.
    pub fn counts(&self) -> HashMap<String, usize> {
        let mut counts = HashMap::new();
        for r in self.received() {
            let id = r.headers.get("webhook-id").map(|v| v.to_str().unwrap().to_string()).unwrap_or_else(|| {
                let body: Value = serde_json::from_slice(&r.body).unwrap();
                format!("{}", body)
            });
            *counts.entry(id).or_default() += 1;
        }
        counts
    }
}

/// Fans out what was recorded and waits until no delivery of the shop is pending (up to
/// [`PATIENCE`]).
pub async fn settled(app: &TestApp, shop: &Shop) -> Vec<Value> {
    paydesk::services::webhooks::deliver_due(&app.state, chrono::Utc::now()).await.unwrap();
    let done = async || {
        let (_, list) = app.get(shop, "/webhook_deliveries?limit=1000").await;
        let list = list.as_array().unwrap().clone();
        list.iter().all(|d| d["status"] != "pending").then_some(list)
    };
    eventually("no delivery pending", Duration::from_millis(100), done).await
}

pub async fn endpoint(app: &TestApp, shop: &Shop, url: &str, events: Value) -> Value {
    let (status, endpoint) = app.post(shop, "/webhook_endpoints", &json!({"url": url, "enabled_events": events})).await;
    assert_eq!(status, StatusCode::CREATED, "{endpoint}");
    endpoint
}

/// Checks a Standard Webhooks request with the reference library; answers its JSON.
fn verify_standard(secret: &str, r: &Received) -> Value {
    let hook = standardwebhooks::Webhook::new(secret).unwrap();
    let mut headers = axum::http::HeaderMap::new();
    for name in ["webhook-id", "webhook-timestamp", "webhook-signature"] {
        headers.insert(name, r.headers[name].to_str().unwrap().parse().unwrap());
    }
    hook.verify(&r.body, &headers).unwrap_or_else(|e| panic!("a valid signature: {e:?}"));
    serde_json::from_slice(&r.body).unwrap()
}

/// The Python of the test environment, with bePaid's client library (`.ci/run` sets it up).
fn python() -> String {
    std::env::var("PAYDESK_TEST_PYTHON")
        .unwrap_or_else(|_| format!("{}/.ci/venv/bin/python", env!("CARGO_MANIFEST_DIR")))
}

/// Checks a bePaid notification with bePaid's client library: its signature, its Basic auth
/// and that it parses as a transaction notification (for payments).
fn verify_bepaid(public_key: &str, shop: &Shop, r: &Received, transaction: bool) {
    let dir = tempfile::tempdir().unwrap();
    let body = dir.path().join("body");
    std::fs::write(&body, &r.body).unwrap();
    let script = r#"
import sys
from bepaid.client import verify_webhook_signature, verify_webhook_auth, parse_webhook
pem, signature, auth, shop_id, secret, path, transaction = sys.argv[1:]
raw = open(path, "rb").read()
assert verify_webhook_signature(pem, signature, raw), "signature"
assert verify_webhook_auth(auth, shop_id, secret), "basic auth"
assert not verify_webhook_signature(pem, signature, raw + b" "), "a changed body fails"
if transaction == "yes":
    parse_webhook(raw.decode())
print("ok")
"#;
    let header = |name: &str| r.headers.get(name).map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
    let output = std::process::Command::new(python())
        .args(["-c", script, public_key, &header("content-signature"), &header("authorization")])
        .args([
            shop.id.to_string().as_str(),
            &shop.secret,
            body.to_str().unwrap(),
            if transaction { "yes" } else { "no" },
        ])
        .output()
        .unwrap_or_else(|e| {
            panic!("run {} (python3 -m venv .ci/venv && .ci/venv/bin/pip install bepaid==0.8.0): {e}", python())
        });
    assert!(output.status.success(), "bePaid's library refused it: {}", String::from_utf8_lossy(&output.stderr));
}

/// Makes one event of each type in the shop.
async fn every_event(app: &TestApp, shop: &Shop) {
    let mut body = test_product_body();
    body["quantity"] = json!("1");
    let product = app.product(shop, &body).await;
    let pid = product["id"].as_str().unwrap();
    app.pay(pid, cards::SUCCESS, &[]).await;
    let (_, paid) = app.get(shop, &format!("/payments?product={pid}")).await;
    let paid = paid[0]["id"].as_str().unwrap();
    app.post(shop, &format!("/payments/{paid}/refund"), &json!({"amount": 100})).await;
    let failing = app.product(shop, &test_product_body()).await;
    let fid = failing["id"].as_str().unwrap();
    app.pay(fid, "4000000000005126", &[]).await;
    app.pay(fid, cards::DECLINED, &[]).await;
    let (_, list) = app.get(shop, &format!("/payments?product={fid}&status=succeeded")).await;
    app.post(shop, &format!("/payments/{}/refund", list[0]["id"].as_str().unwrap()), &json!({})).await;
    let mut body = test_product_body();
    body["transaction_type"] = json!("authorization");
    let held = app.product(shop, &body).await;
    let hid = held["id"].as_str().unwrap();
    app.pay(hid, cards::SUCCESS, &[]).await;
    app.pay(hid, cards::SUCCESS, &[]).await;
    let (_, holds) = app.get(shop, &format!("/payments?product={hid}")).await;
    let captured = app.post(shop, &format!("/payments/{}/capture", holds[0]["id"].as_str().unwrap()), &json!({})).await;
    assert_eq!(captured.0, StatusCode::OK, "{holds}: {}", captured.1);
    let voided = app.post(shop, &format!("/payments/{}/void", holds[1]["id"].as_str().unwrap()), &json!({})).await;
    assert_eq!(voided.0, StatusCode::OK, "{holds}: {}", voided.1);

    let trial = json!({"trial": {"amount": 100, "interval": 7, "interval_unit": "day"}, "billing_cycles": 2, "infinite": false});
    let plan_id = plan(app, shop, trial).await;
    let clock_id = clock(app, shop, "2026-03-10T12:00:00Z").await;
    let sub = subscribe(app, shop, &plan_id, &clock_id, cards::SUCCESS).await;
    let id = sub["id"].as_str().unwrap();
    advance(app, shop, &clock_id, "2026-03-17T12:00:00Z").await;
    make_card(app, shop, id, "declined").await;
    advance(app, shop, &clock_id, "2026-04-17T12:00:00Z").await;
    app.post(shop, &format!("/subscriptions/{id}/cancel"), &json!({})).await;
    for (plan_change, outcome, until) in [
        (json!({}), "declined", "2026-05-20T12:00:00Z"),
        (json!({}), "processing_error", "2026-04-20T12:00:00Z"),
        (json!({"billing_cycles": 1, "infinite": false}), "succeeds", "2026-05-20T12:00:00Z"),
    ] {
        let plan_id = plan(app, shop, plan_change).await;
        let clock_id = clock(app, shop, "2026-03-10T12:00:00Z").await;
        let sub = subscribe(app, shop, &plan_id, &clock_id, cards::SUCCESS).await;
        make_card(app, shop, sub["id"].as_str().unwrap(), outcome).await;
        advance(app, shop, &clock_id, until).await;
    }
}

db_tests! {
    async fn finished_deliveries_and_their_attempts_are_pruned_after_the_retention(app) {
        use paydesk::db::entities::{webhook_attempts, webhook_deliveries};
        use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter, sea_query::Expr};
        let args = paydesk::config::ConfigArgs { retention_days: Some("7".into()), ..Default::default() };
        let app = TestApp::spawn_with(app.backend, args).await;
        let shop = app.shop("Books").await;
        let receiver = Receiver::start().await;
        endpoint(&app, &shop, &receiver.url, json!(["payment.succeeded"])).await;
        let product = app.product(&shop, &test_product_body()).await;
        for _ in 0..3 {
            app.pay(product["id"].as_str().unwrap(), cards::SUCCESS, &[]).await;
        }
        let delivered = settled(&app, &shop).await;
        let ids: Vec<String> = delivered.iter().map(|d| d["id"].as_str().unwrap().to_string()).collect();
        assert_eq!(ids.len(), 3);
        // Two ended eight days ago; the third, last changed that long ago, still waits for a retry.
        let long_ago = paydesk::db::now_millis(chrono::Utc::now() - chrono::TimeDelta::days(8));
        let age = |id: &str| {
            webhook_deliveries::Entity::update_many()
                .col_expr(webhook_deliveries::Column::UpdatedAt, Expr::value(long_ago))
                .col_expr(webhook_deliveries::Column::NextAttemptAt, Expr::value(long_ago))
                .filter(webhook_deliveries::Column::Id.eq(id))
        };
        for id in &ids {
            age(id).exec(&app.db).await.unwrap();
        }
        // Its retry is due tomorrow, so the delivery worker leaves it alone meanwhile.
        let tomorrow = paydesk::db::now_millis(chrono::Utc::now() + chrono::TimeDelta::days(1));
        webhook_deliveries::Entity::update_many()
            .col_expr(webhook_deliveries::Column::Status, Expr::value("pending"))
            .col_expr(webhook_deliveries::Column::NextAttemptAt, Expr::value(tomorrow))
            .filter(webhook_deliveries::Column::Id.eq(ids[2].as_str()))
            .exec(&app.db)
            .await
            .unwrap();
        paydesk::services::scheduler::prune(&app.state).await;
        let (_, left) = app.get(&shop, "/webhook_deliveries?limit=100").await;
        let left: Vec<&str> = left.as_array().unwrap().iter().map(|d| d["id"].as_str().unwrap()).collect();
        assert_eq!(left, vec![ids[2].as_str()], "only the one still waiting stays");
        let attempts = |id: &str| {
            webhook_attempts::Entity::find().filter(webhook_attempts::Column::DeliveryId.eq(id)).count(&app.db)
        };
        assert_eq!((attempts(&ids[0]).await.unwrap(), attempts(&ids[1]).await.unwrap()), (0, 0));
        assert_eq!(attempts(&ids[2]).await.unwrap(), 1, "its attempts stay with it");
        assert_eq!(paydesk::db::mails::prune_ended(&app.db, chrono::Utc::now()).await.unwrap(), 0, "mails prune alike");
    }

    async fn idempotency_keys_are_kept_as_long_as_configured(app) {
        use paydesk::db::entities::idempotency_keys;
        use sea_orm::{EntityTrait, sea_query::Expr};
        let args = paydesk::config::ConfigArgs { idempotency_hours: Some("48".into()), ..Default::default() };
        let app = TestApp::spawn_with(app.backend, args).await;
        let shop = app.shop("Books").await;
        let send = || app.req(&shop, reqwest::Method::POST, "/products").header("Idempotency-Key", "k-1").json(&test_product_body()).send();
        assert_eq!(send().await.unwrap().status(), StatusCode::CREATED);
        let aged = |hours: i64| {
            idempotency_keys::Entity::update_many()
                .col_expr(idempotency_keys::Column::CreatedAt, Expr::value(paydesk::db::now_millis(chrono::Utc::now() - chrono::TimeDelta::hours(hours))))
        };
        aged(30).exec(&app.db).await.unwrap();
        paydesk::services::scheduler::prune(&app.state).await;
        let replayed = send().await.unwrap();
        assert_eq!(replayed.headers()["idempotent-replayed"], "true", "30 hours old, kept for 48");
        aged(49).exec(&app.db).await.unwrap();
        paydesk::services::scheduler::prune(&app.state).await;
        let fresh = send().await.unwrap();
        assert!(fresh.headers().get("idempotent-replayed").is_none(), "pruned: the key is new again");
        assert_eq!(app.get(&shop, "/products").await.1.as_array().unwrap().len(), 2);
    }

    async fn the_dashboard_manages_endpoints_and_shows_their_deliveries(app) {
        use crate::dashboard::{api_shop, sign_up};
        let m = sign_up(&app, "Books", "ann@example.com").await;
        let shop = api_shop(&m).await;
        let r = Receiver::start().await;
        let added = m.post("/dashboard/webhooks", &[("url", r.url.as_str()), ("enabled_events", "payment.*"), ("enabled_events", "refund.failed")]).await;
        assert_eq!(added.status, StatusCode::CREATED, "{}", added.html);
        let marker = "value=\"whsec_";
        let at = added.html.find(marker).expect("the secret, shown once") + "value=\"".len();
        let secret = added.html[at..].split('"').next().unwrap().to_string();
        let (_, endpoints) = app.get(&shop, "/webhook_endpoints").await;
        let id = endpoints[0]["id"].as_str().unwrap().to_string();
        assert_eq!(endpoints[0]["enabled_events"], json!(["payment.*", "refund.failed"]));
        let refused = m.post("/dashboard/webhooks", &[("url", "nonsense")]).await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);

        let product = app.product(&shop, &test_product_body()).await;
        app.pay(product["id"].as_str().unwrap(), cards::SUCCESS, &[]).await;
        let got = wait_for(&r, 1).await;
        verify_standard(&secret, &got[0]);
        // The receiver's answer is recorded a moment after it was sent.
        let shown = async || {
            let page = m.get(&format!("/dashboard/webhooks/{id}")).await;
            page.html.contains("status-delivered").then_some(page)
        };
        let page = eventually("the delivery shown delivered", Duration::from_millis(100), shown).await;
        assert!(page.html.contains("status-delivered") && page.html.contains("HTTP 200"), "{}", page.html);
        let delivery = page.html.split("/dashboard/webhooks/msg_").nth(1).unwrap().split('/').next().unwrap();
        let again = m.post(&format!("/dashboard/webhooks/msg_{delivery}/redeliver"), &[]).await;
        assert_eq!(again.status, StatusCode::SEE_OTHER);
        wait_for(&r, 2).await;

        let ask = m.post(&format!("/dashboard/webhooks/{id}/rotate"), &[]).await;
        assert!(ask.html.contains("Rotate the signing secret?"), "a confirmation first");
        let rotated = m.post(&format!("/dashboard/webhooks/{id}/rotate"), &[("confirm", "yes")]).await;
        assert!(rotated.html.contains("data-testid=\"webhook-secret\"") && !rotated.html.contains(&secret));
        let saved = m.post(&format!("/dashboard/webhooks/{id}"), &[("url", r.url.as_str()), ("enabled_events", "*")]).await;
        assert_eq!(saved.status, StatusCode::SEE_OTHER);
        let (_, endpoint) = app.get(&shop, &format!("/webhook_endpoints/{id}")).await;
        assert_eq!((endpoint["enabled"].clone(), endpoint["enabled_events"].clone()), (json!(false), json!(["*"])), "unticked: disabled");
        let ask = m.post(&format!("/dashboard/webhooks/{id}/delete"), &[]).await;
        assert!(ask.html.contains("Delete this endpoint?"));
        assert_eq!(app.get(&shop, &format!("/webhook_endpoints/{id}")).await.0, StatusCode::OK, "not before the confirmation");
        let deleted = m.post(&format!("/dashboard/webhooks/{id}/delete"), &[("confirm", "yes")]).await;
        assert_eq!((deleted.status, deleted.location.as_str()), (StatusCode::SEE_OTHER, "/dashboard/webhooks"));
        assert_eq!(app.get(&shop, &format!("/webhook_endpoints/{id}")).await.0, StatusCode::NOT_FOUND);

        let settings = m.get("/dashboard/settings").await;
        assert!(settings.html.contains("-----BEGIN PUBLIC KEY-----"), "{}", settings.html);
        assert!(!settings.html.contains("No Basic auth yet"), "a key made by this version is kept");
        let saved = m.post("/dashboard/settings/notifications", &[("notification_url", "https://erp.example/notify")]).await;
        assert_eq!(saved.status, StatusCode::SEE_OTHER);
        let (_, view) = app.get(&shop, "/shop").await;
        assert_eq!(view["notification_url"], "https://erp.example/notify");
        let (_, api_key) = (0, view["public_key"].as_str().unwrap().to_string());
        assert!(m.get("/dashboard/settings").await.html.contains(api_key.lines().nth(1).unwrap()), "the same key in both");
    }

    async fn notifications_carry_a_rolled_standard_key_until_its_overlap_ends_then_its_successor(app) {
        // A merchant's integration checks notifications with bePaid's library and its key: it
        // keeps working with the old key during the overlap, and with the new one after it.
        let shop = app.shop("Books").await;
        let bepaid = Receiver::start().await;
        let (_, shop_view) = app.put(&shop, "/shop", &json!({"notification_url": bepaid.url})).await;
        let public_key = shop_view["public_key"].as_str().unwrap().to_string();
        let (_, keys) = app.get(&shop, "/api_keys").await;
        let in_a_day = app.state.clock.now().timestamp() + 86_400;
        let (status, rolled) = app.post(&shop, &format!("/api_keys/{}/roll", keys[0]["id"].as_str().unwrap()), &json!({"expires_at": in_a_day})).await;
        assert_eq!(status, StatusCode::CREATED, "{rolled}");
        let successor = Shop { id: shop.id, secret: rolled["secret"].as_str().unwrap().to_string() };
        let subscribe = async |by: &Shop| {
            let (_, plan) = app.post(by, "/plans", &plan_body()).await;
            let (_, customer) = app.post(by, "/customers", &customer_body()).await;
            let (status, sub) = app.post(by, "/subscriptions", &json!({"plan_id": plan["id"], "customer_id": customer["id"]})).await;
            assert_eq!(status, StatusCode::CREATED, "{sub}");
            settled(&app, by).await;
        };
        subscribe(&successor).await;
        let during = bepaid.received();
        assert!(!during.is_empty());
        for r in &during {
            verify_bepaid(&public_key, &shop, r, false);
        }
        app.state.clock.advance(chrono::Duration::days(1));
        paydesk::services::api_keys::tend(&app.state, app.state.clock.now()).await.unwrap();
        subscribe(&successor).await;
        let after = bepaid.received();
        assert!(after.len() > during.len());
        for r in &after[during.len()..] {
            verify_bepaid(&public_key, &successor, r, false);
        }
        let (_, view) = app.get(&successor, "/shop").await;
        assert_eq!(view["notifications_authenticated"], true);
    }

    async fn every_event_is_delivered_once_per_endpoint_under_both_schemes(app) {
        let shop = app.shop("Books").await;
        let (all, payments, bepaid) = (Receiver::start().await, Receiver::start().await, Receiver::start().await);
        let everything = endpoint(&app, &shop, &all.url, json!(["*"])).await;
        let only_payments = endpoint(&app, &shop, &payments.url, json!(["payment.*"])).await;
        let (status, shop_view) = app.put(&shop, "/shop", &json!({"notification_url": bepaid.url})).await;
        assert_eq!(status, StatusCode::OK, "{shop_view}");
        assert!(shop_view["public_key"].as_str().unwrap().starts_with("-----BEGIN PUBLIC KEY-----"));
        let bare = shop_view["public_key_base64"].as_str().unwrap();
        assert!(!bare.contains('-') && !bare.contains('\n') && shop_view["public_key"].as_str().unwrap().contains(&bare[..64]));
        assert_eq!(shop_view["notifications_authenticated"], true);
        every_event(&app, &shop).await;
        let deliveries = settled(&app, &shop).await;
        assert!(deliveries.iter().all(|d| d["status"] == "delivered"), "{deliveries:?}");

        let (_, events) = app.get(&shop, "/events?limit=1000").await;
        let events = events.as_array().unwrap();
        let mut types: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
        types.sort_unstable();
        types.dedup();
        assert_eq!(types.len(), 18, "every event type happened: {types:?}");
        let counts = all.counts();
        assert_eq!(counts.len(), events.len(), "every event reached the endpoint that takes all");
        assert!(counts.values().all(|n| *n == 1), "once each: {counts:?}");
        let secret = everything["secret"].as_str().unwrap();
        assert!(secret.starts_with("whsec_"));
        for r in all.received() {
            let body = verify_standard(secret, &r);
            let id = body["id"].as_str().unwrap();
            assert_eq!(r.headers["webhook-id"], id);
            let (_, stored) = app.get(&shop, &format!("/events/{id}")).await;
            assert_eq!(body, stored, "the delivery carries the event object");
        }
        let payment_events = events.iter().filter(|e| e["object"] == "payment").count();
        assert_eq!(payments.received().len(), payment_events);
        for r in payments.received() {
            assert!(verify_standard(only_payments["secret"].as_str().unwrap(), &r)["type"].as_str().unwrap().starts_with("payment."));
        }

        // bePaid: a product payment's events and a subscription's, signed and authenticated.
        let notified = events.iter().filter(|e| {
            (e["object"] == "payment" && !e["data"]["object"]["product_id"].is_null()) || e["object"] == "subscription"
        });
        assert_eq!(bepaid.received().len(), notified.count());
        let public_key = shop_view["public_key"].as_str().unwrap();
        for r in bepaid.received() {
            let body: Value = serde_json::from_slice(&r.body).unwrap();
            let transaction = body.get("transaction").is_some();
            if transaction {
                assert!(["successful", "failed"].contains(&body["transaction"]["status"].as_str().unwrap()), "{body}");
                assert!(body["event"].as_str().unwrap().ends_with(".payment"));
            } else {
                assert!(body["id"].as_str().unwrap().starts_with("sbs_") && body["event"].as_str().unwrap().ends_with(".subscription"));
            }
            verify_bepaid(public_key, &shop, &r, transaction);
        }
        assert!(bepaid.received().iter().any(|r| r.body.starts_with(b"{\"id\":\"sbs_")), "subscription notifications came");

        // A capture, a void and a refund are each their own transaction, with the payment as
        // parent and their own amount (the partial refund of 100 of a 990 payment says 100).
        let children: Vec<Value> = bepaid.received().iter()
            .filter_map(|r| serde_json::from_slice::<Value>(&r.body).ok())
            .map(|body| body["transaction"].clone())
            .filter(|tx| ["capture", "void", "refund"].contains(&tx["type"].as_str().unwrap_or("")))
            .collect();
        let of = |kind: &str| children.iter().filter(|tx| tx["type"] == kind).count();
        assert_eq!((of("capture"), of("void"), of("refund")), (1, 1, 1), "{children:?}");
        for tx in &children {
            assert!(tx["parent_uid"].as_str().unwrap().starts_with("pay_") && tx["uid"] != tx["parent_uid"], "{tx}");
        }
        let refund = children.iter().find(|tx| tx["type"] == "refund").unwrap();
        assert!(refund["uid"].as_str().unwrap().starts_with("rfd_") && refund["amount"] == 100, "{refund}");
    }

    async fn failed_deliveries_are_retried_on_schedule_and_every_attempt_is_logged(app) {
        let shop = app.shop("Books").await;
        let flaky = Receiver::start().await;
        flaky.answer(&[500, 503]);
        let created = endpoint(&app, &shop, &flaky.url, json!(["product.sold_out"])).await;
        let mut body = test_product_body();
        body["quantity"] = json!("1");
        let product = app.product(&shop, &body).await;
        app.pay(product["id"].as_str().unwrap(), cards::SUCCESS, &[]).await;
        let first = wait_for(&flaky, 1).await;
        let list = attempts_recorded(&app, &shop, 1).await;
        let delivery = &list[0];
        assert_eq!((delivery["status"].clone(), delivery["attempts"].clone()), (json!("pending"), json!(1)));
        assert_eq!(delivery["last_status_code"], 500);
        assert_eq!(delivery["recent_attempts"][0]["response_head"], "thanks from the receiver");
        let retry_at: chrono::DateTime<chrono::Utc> = delivery["next_attempt_at"].as_str().unwrap().parse().unwrap();
        let waited = retry_at - chrono::Utc::now();
        assert!(waited <= chrono::TimeDelta::seconds(5) && waited > chrono::TimeDelta::seconds(2), "{waited}");
        // The second attempt comes 5 s later; the third would come 5 minutes after: run it now.
        wait_for(&flaky, 2).await;
        attempts_recorded(&app, &shop, 2).await;
        let later = chrono::Utc::now() + chrono::TimeDelta::minutes(6);
        paydesk::services::webhooks::deliver_due(&app.state, later).await.unwrap();
        let got = flaky.received();
        assert_eq!(got.len(), 3);
        assert!(got.iter().all(|r| r.headers["webhook-id"] == first[0].headers["webhook-id"]), "the same id each time");
        let (_, list) = app.get(&shop, "/webhook_deliveries").await;
        assert_eq!((list[0]["status"].clone(), list[0]["attempts"].clone()), (json!("delivered"), json!(3)));
        let codes: Vec<i64> = list[0]["recent_attempts"].as_array().unwrap().iter().map(|a| a["status_code"].as_i64().unwrap()).collect();
        assert_eq!(codes, [200, 503, 500], "newest first");

        // A receiver that does not answer within 10 s: the attempt fails and is retried.
        let slow = Receiver::start().await;
        slow.slow(Duration::from_secs(12));
        let (status, _) = app.put(&shop, &format!("/webhook_endpoints/{}", created["id"].as_str().unwrap()), &json!({"url": slow.url})).await;
        assert_eq!(status, StatusCode::OK);
        let (_, events) = app.get(&shop, "/events?type=product.sold_out").await;
        let event = events[0]["id"].as_str().unwrap();
        let (status, body) = app.post(&shop, &format!("/events/{event}/redeliver"), &json!({})).await;
        assert_eq!((status, body["deliveries"].clone()), (StatusCode::ACCEPTED, json!(1)));
        // Given up on 10 s after it was sent (however late the worker took it up), to be retried.
        let given_up = async || {
            let (_, list) = app.get(&shop, "/webhook_deliveries").await;
            list[0]["last_error"].is_string().then_some(list)
        };
        let list = eventually("the slow attempt given up on", Duration::from_millis(100), given_up).await;
        assert_eq!(list[0]["status"], "pending");
        assert_eq!(list[0]["last_error"], "no answer within 10 s");
        assert!(list[0]["recent_attempts"][0]["latency_ms"].as_i64().unwrap() >= 10_000);
    }

    async fn every_attempt_failing_ends_the_delivery_and_a_410_disables_the_endpoint(app) {
        let shop = app.shop("Books").await;
        let down = Receiver::start().await;
        down.answer(&[500; 20]);
        let created = endpoint(&app, &shop, &down.url, json!(["*"])).await;
        let product = app.product(&shop, &test_product_body()).await;
        app.pay(product["id"].as_str().unwrap(), cards::SUCCESS, &[]).await;
        wait_for(&down, 1).await;
        attempts_recorded(&app, &shop, 1).await;
        paydesk::services::webhooks::deliver_due(&app.state, chrono::Utc::now() + chrono::TimeDelta::days(4)).await.unwrap();
        assert_eq!(down.received().len(), 10, "ten attempts over about three days");
        let (_, list) = app.get(&shop, "/webhook_deliveries").await;
        assert_eq!((list[0]["status"].clone(), list[0]["attempts"].clone()), (json!("failed"), json!(10)));

        // Failing for more than 5 days disables it.
        let id = created["id"].as_str().unwrap();
        let six_days_ago = chrono::Utc::now() - chrono::TimeDelta::days(6);
        let backend = app.db.get_database_backend();
        let sql = if backend == sea_orm::DatabaseBackend::Postgres {
            "UPDATE webhook_endpoints SET failing_since = $1 WHERE id = $2"
        } else {
            "UPDATE webhook_endpoints SET failing_since = ? WHERE id = ?"
        };
        use sea_orm::ConnectionTrait;
        app.db.execute(sea_orm::Statement::from_sql_and_values(backend, sql, [six_days_ago.into(), id.into()])).await.unwrap();
        app.pay(product["id"].as_str().unwrap(), cards::SUCCESS, &[]).await;
        wait_for(&down, 11).await;
        // The receiver's answer is recorded a moment after it was sent.
        let disabled = async || {
            let (_, endpoint) = app.get(&shop, &format!("/webhook_endpoints/{id}")).await;
            (endpoint["enabled"] == false).then_some(endpoint)
        };
        let disabled = eventually("the endpoint disabled", Duration::from_millis(100), disabled).await;
        assert_eq!(disabled["enabled"], false, "{disabled}");
        assert_eq!(disabled["disabled_reason"], "every delivery failed for 5 days");
        paydesk::services::webhooks::deliver_due(&app.state, chrono::Utc::now() + chrono::TimeDelta::days(1)).await.unwrap();
        assert_eq!(down.received().len(), 11, "nothing more is sent to a disabled endpoint");
        let (_, list) = app.get(&shop, "/webhook_deliveries").await;
        assert_eq!((list[0]["status"].clone(), list[0]["last_error"].clone()), (json!("failed"), json!("the endpoint is disabled or deleted")), "not retried: {list}");
        let (_, enabled) = app.put(&shop, &format!("/webhook_endpoints/{id}"), &json!({"enabled": true})).await;
        assert_eq!((enabled["enabled"].clone(), enabled["disabled_reason"].clone()), (json!(true), Value::Null));

        let gone = Receiver::start().await;
        gone.answer(&[410]);
        let created = endpoint(&app, &shop, &gone.url, json!(["*"])).await;
        app.pay(product["id"].as_str().unwrap(), cards::SUCCESS, &[]).await;
        wait_for(&gone, 1).await;
        let disabled = async || {
            let (_, endpoint) = app.get(&shop, &format!("/webhook_endpoints/{}", created["id"].as_str().unwrap())).await;
            (endpoint["enabled"] == false).then_some(endpoint)
        };
        let gone_view = eventually("the endpoint disabled", Duration::from_millis(100), disabled).await;
        assert_eq!((gone_view["enabled"].clone(), gone_view["disabled_reason"].clone()), (json!(false), json!("the receiver answered 410 Gone")));
    }

    async fn redelivery_repeats_the_event_and_a_rotated_secret_signs_beside_the_old_one(app) {
        let shop = app.shop("Books").await;
        let r = Receiver::start().await;
        let created = endpoint(&app, &shop, &r.url, json!(["payment.succeeded"])).await;
        let id = created["id"].as_str().unwrap();
        let old = created["secret"].as_str().unwrap().to_string();
        let product = app.product(&shop, &test_product_body()).await;
        app.pay(product["id"].as_str().unwrap(), cards::SUCCESS, &[]).await;
        let first = wait_for(&r, 1).await;
        let (status, rotated) = app.post(&shop, &format!("/webhook_endpoints/{id}/rotate_secret"), &json!({})).await;
        assert_eq!(status, StatusCode::OK);
        let new = rotated["secret"].as_str().unwrap().to_string();
        assert_ne!(new, old);
        let (_, shown) = app.get(&shop, &format!("/webhook_endpoints/{id}")).await;
        assert!(shown.get("secret").is_none(), "a secret is shown only once");
        let event = first[0].headers["webhook-id"].to_str().unwrap().to_string();
        let (status, _) = app.post(&shop, &format!("/events/{event}/redeliver"), &json!({"endpoint_id": id})).await;
        assert_eq!(status, StatusCode::ACCEPTED);
        let again = wait_for(&r, 2).await;
        assert_eq!(again[1].headers["webhook-id"].to_str().unwrap(), event, "the same event, the same id");
        assert_eq!(again[1].headers["webhook-signature"].to_str().unwrap().split(' ').count(), 2);
        verify_standard(&old, &again[1]);
        verify_standard(&new, &again[1]);
        let other = app.shop("Other").await;
        assert_eq!(app.post(&other, &format!("/events/{event}/redeliver"), &json!({})).await.0, StatusCode::NOT_FOUND);
        assert_eq!(app.get(&other, &format!("/webhook_endpoints/{id}")).await.0, StatusCode::NOT_FOUND);
    }

    async fn nothing_is_lost_while_the_receiver_is_down(app) {
        let shop = app.shop("Books").await;
        // A port nothing listens on yet.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        drop(listener);
        let url = format!("http://{address}/hook");
        endpoint(&app, &shop, &url, json!(["payment.*"])).await;
        let product = app.product(&shop, &test_product_body()).await;
        for _ in 0..5 {
            app.pay(product["id"].as_str().unwrap(), cards::SUCCESS, &[]).await;
        }
        // Each is tried once by the instance's worker, however late it comes to them.
        let tried = async || {
            let (_, list) = app.get(&shop, "/webhook_deliveries").await;
            let all = list.as_array().unwrap();
            (all.len() >= 5 && all.iter().all(|d| d["attempts"].as_i64() >= Some(1))).then_some(list)
        };
        let list = eventually("every delivery tried", Duration::from_millis(100), tried).await;
        assert_eq!(list.as_array().unwrap().len(), 5);
        assert!(list.as_array().unwrap().iter().all(|d| d["status"] == "pending" && d["attempts"].as_i64() >= Some(1)), "{list}");
        assert!(list[0]["last_error"].as_str().unwrap().contains("onnect"), "{list}");
        let receiver = Receiver::on(tokio::net::TcpListener::bind(address).await.unwrap()).await;
        paydesk::services::webhooks::deliver_due(&app.state, chrono::Utc::now() + chrono::TimeDelta::hours(1)).await.unwrap();
        let counts = receiver.counts();
        assert_eq!(counts.len(), 5);
        assert!(counts.values().all(|n| *n == 1));
    }

    async fn two_instances_never_send_a_delivery_twice(app) {
        let shop = app.shop("Books").await;
        let r = Receiver::start().await;
        r.slow(Duration::from_millis(20));
        endpoint(&app, &shop, &r.url, json!(["payment.succeeded"])).await;
        let mut body = test_product_body();
        body.as_object_mut().unwrap().remove("quantity");
        body["infinite"] = json!(true);
        let product = app.product(&shop, &body).await;
        let config = app.state.config.as_ref().clone();
        let second = paydesk::web::state::AppState::new(paydesk::db::connect(&config.database_url, config.db_connections).await.unwrap(), config).unwrap();
        let pays = (0..30).map(|_| app.pay(product["id"].as_str().unwrap(), cards::SUCCESS, &[]));
        futures::future::join_all(pays).await;
        let now = chrono::Utc::now();
        let (a, b) = tokio::join!(paydesk::services::webhooks::deliver_due(&second, now), paydesk::services::webhooks::deliver_due(&app.state, now));
        a.unwrap();
        b.unwrap();
        settled(&app, &shop).await;
        let counts = r.counts();
        assert_eq!(counts.len(), 30);
        assert!(counts.values().all(|n| *n == 1), "{counts:?}");
    }

    async fn endpoints_are_managed_through_the_api(app) {
        let shop = app.shop("Books").await;
        let (status, body) = app.post(&shop, "/webhook_endpoints", &json!({})).await;
        assert_invalid(status, &body, "url", &["can't be blank"]);
        let (status, body) = app.post(&shop, "/webhook_endpoints", &json!({"url": "ftp://x", "enabled_events": ["payment.paid"]})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(body["errors"]["enabled_events"], json!(["has an unknown event type: payment.paid"]));
        assert_eq!(body["errors"]["url"], json!(["is not an absolute http or https URL"]));
        let (status, created) = app.post(&shop, "/webhook_endpoints", &json!({"url": "https://hooks.example/in", "description": "ERP"})).await;
        assert_eq!(status, StatusCode::CREATED);
        assert!(created["id"].as_str().unwrap().starts_with("we_"));
        assert_eq!((created["enabled_events"].clone(), created["enabled"].clone()), (json!(["*"]), json!(true)));
        let id = created["id"].as_str().unwrap();
        let (status, updated) = app.post(&shop, &format!("/webhook_endpoints/{id}"), &json!({"enabled_events": ["refund.*"], "description": null})).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!((updated["enabled_events"].clone(), updated["description"].clone()), (json!(["refund.*"]), Value::Null));
        let (_, listed) = app.get(&shop, "/webhook_endpoints").await;
        assert_eq!(listed.as_array().unwrap().len(), 1);
        assert!(listed[0].get("secret").is_none());
        let other = app.shop("Other").await;
        assert_eq!(app.get(&other, "/webhook_endpoints").await.1, json!([]));
        assert_eq!(send(app.req(&other, reqwest::Method::DELETE, &format!("/webhook_endpoints/{id}"))).await.0, StatusCode::NOT_FOUND);
        let (status, deleted) = send(app.req(&shop, reqwest::Method::DELETE, &format!("/webhook_endpoints/{id}"))).await;
        assert_eq!((status, deleted), (StatusCode::OK, json!({"id": id, "deleted": true})));
        assert_eq!(app.get(&shop, &format!("/webhook_endpoints/{id}")).await.0, StatusCode::NOT_FOUND);
        // A retry under the same Idempotency-Key answers the same endpoint without its secret:
        // no secret is kept with the answers of idempotent requests.
        let request = || app.req(&shop, reqwest::Method::POST, "/webhook_endpoints")
            .header("idempotency-key", "hook-1").json(&json!({"url": "https://hooks.example/two"}));
        let (first_status, first) = send(request()).await;
        let (_, again) = send(request()).await;
        assert_eq!(first_status, StatusCode::CREATED);
        assert!(first["secret"].as_str().unwrap().starts_with("whsec_"));
        assert_eq!((again["id"].clone(), again.get("secret")), (first["id"].clone(), None));
        use sea_orm::ConnectionTrait;
        let kept = app.db.query_all(sea_orm::Statement::from_string(app.db.get_database_backend(), "SELECT body FROM idempotency_keys")).await.unwrap();
        assert!(kept.iter().all(|row| !row.try_get::<Option<String>>("", "body").unwrap().unwrap_or_default().contains("whsec_")));
        let (status, body) = app.put(&shop, "/shop", &json!({"notification_url": "not a url"})).await;
        assert_invalid(status, &body, "notification_url", &["is not an absolute http or https URL"]);
    }
}

/// Waits until the newest delivery's `n`th attempt is recorded; answers the deliveries.
async fn attempts_recorded(app: &TestApp, shop: &Shop, n: i64) -> Value {
    let patience = Patience::start();
    while !patience.spent() {
        let (_, list) = app.get(shop, "/webhook_deliveries").await;
        if list[0]["attempts"].as_i64() >= Some(n) {
            return list;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("attempt {n} was not recorded");
}

/// Waits until the receiver got `n` requests (up to [`PATIENCE`]); answers them.
async fn wait_for(r: &Receiver, n: usize) -> Vec<Received> {
    let patience = Patience::start();
    while !patience.spent() {
        if r.received().len() >= n {
            return r.received();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the receiver got {} requests, not {n}", r.received().len());
}

#[tokio::test]
async fn private_addresses_are_refused_unless_allowed() {
    let args = paydesk::config::ConfigArgs { webhooks_allow_private: Some("off".into()), ..Default::default() };
    let app = TestApp::spawn_with(Backend::Sqlite, args).await;
    let shop = app.shop("Books").await;
    let r = Receiver::start().await;
    let localhost = r.url.replace("127.0.0.1", "localhost");
    let (status, refused) =
        app.post(&shop, "/webhook_endpoints", &json!({"url": r.url, "enabled_events": ["*"]})).await;
    assert_invalid(status, &refused, "url", &["127.0.0.1 is not a public address"]);
    let (status, refused) = app.put(&shop, "/shop", &json!({"notification_url": "http://10.0.0.5/notify"})).await;
    assert_invalid(status, &refused, "notification_url", &["10.0.0.5 is not a public address"]);
    let mut body = test_product_body();
    body["notification_url"] = json!("http://[64:ff9b::a00:5]/notify");
    let (status, refused) = app.post(&shop, "/products", &body).await;
    assert_invalid(status, &refused, "notification_url", &["64:ff9b::a00:5 is not a public address"]);
    endpoint(&app, &shop, &localhost, json!(["*"])).await;
    let product = app.product(&shop, &test_product_body()).await;
    app.pay(product["id"].as_str().unwrap(), cards::SUCCESS, &[]).await;
    // Each delivery is tried (and refused) by the instance's worker, however late it comes to them.
    let tried = async || {
        let (_, list) = app.get(&shop, "/webhook_deliveries").await;
        let all = list.as_array().unwrap();
        (!all.is_empty() && all.iter().all(|d| d["last_error"].is_string())).then_some(list)
    };
    let list = eventually("every delivery tried", Duration::from_millis(100), tried).await;
    assert!(r.received().is_empty(), "nothing reached the loopback receiver");
    let errors: Vec<&str> = list.as_array().unwrap().iter().map(|d| d["last_error"].as_str().unwrap()).collect();
    assert!(
        errors.iter().any(|e| e.contains("resolves to no public address")),
        "a host name is checked as it is resolved: {errors:?}"
    );
}
