//! Crash tests: a real `paydesk serve` child is killed with SIGKILL in the middle of its
//! work; another instance then resumes that work once the leases run out, and nothing is
//! charged twice or left stuck.

use std::process::{Child, Stdio};
use std::time::Duration;

use chrono::Utc;
use paydesk::config::ConfigArgs;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::cli::{free_port, paydesk};
use crate::helpers::*;
use crate::subscriptions::{clock, plan, subscribe};

/// Seconds a lease holds in these tests.
const LEASE: &str = "2";

fn short_leases() -> ConfigArgs {
    ConfigArgs { lease_seconds: Some(LEASE.into()), scheduler: Some("off".into()), ..Default::default() }
}

/// A second instance as a child process over the same database.
pub async fn child(app: &TestApp, scheduler: &str) -> (Child, TestApp) {
    let port = free_port();
    let child = paydesk(&app.database_url)
        .env("PAYDESK_LISTEN", format!("127.0.0.1:{port}"))
        .env("PAYDESK_LEASE_SECONDS", LEASE)
        .env("PAYDESK_SCHEDULER", scheduler)
        .arg("serve")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let other = app.pointed_at(format!("http://127.0.0.1:{port}"));
    let patience = Patience::start();
    while !patience.spent() {
        if other.client.get(format!("{}/healthz", other.base)).send().await.is_ok() {
            return (child, other);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    kill(child);
    panic!("paydesk serve did not start");
}

pub fn kill(mut child: Child) {
    // SIGKILL: no shutdown, no cleanup.
    child.kill().unwrap();
    child.wait().unwrap();
}

/// Every payment of the subscriptions: none processing, one per period paid since they had
/// `seeded` periods paid.
pub async fn charged_once_each(app: &TestApp, shop: &Shop, ids: &[String], seeded: i64) {
    for id in ids {
        let (_, sub) = app.get(shop, &format!("/subscriptions/{id}")).await;
        let (_, paid) = app.get(shop, &format!("/payments?subscription={id}&limit=1000")).await;
        let paid = paid.as_array().unwrap();
        assert!(paid.iter().all(|p| p["status"] == "succeeded"), "{id}: nothing stuck or failed");
        assert_eq!(
            paid.len() as i64,
            sub["paid_billing_cycles"].as_i64().unwrap() - seeded,
            "{id}: one charge per period"
        );
    }
}

/// Answers whether it is done, and fails naming `what` once [`PATIENCE`] has run out.
fn wait_for(what: &str) -> impl FnMut(bool) -> bool + '_ {
    let patience = Patience::start();
    move |done| {
        assert!(done || !patience.spent(), "gave up waiting for {what}");
        done
    }
}

db_tests! {
    async fn a_clock_advance_killed_midway_is_resumed_and_charges_each_period_once(app) {
        let app = TestApp::spawn_with(app.backend, short_leases()).await;
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({"plan": {"amount": 100, "interval": 1, "interval_unit": "hour"}})).await;
        let clock = clock(&app, &shop, "2026-03-01T00:00:00Z").await;
        let mut ids = Vec::new();
        for _ in 0..10 {
            ids.push(subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await["id"].as_str().unwrap().to_string());
        }
        let (process, other) = child(&app, "off").await;
        let path = format!("/test_clocks/{clock}/advance");
        let target = json!({"frozen_time": "2026-04-01T00:00:00Z"});
        let request = other.req(&shop, reqwest::Method::POST, &path).json(&target).send();
        let advancing = tokio::spawn(request);
        let mut waiting = wait_for("the advance to start");
        loop {
            let (_, c) = app.get(&shop, &format!("/test_clocks/{clock}")).await;
            if waiting(c["frozen_time"] != "2026-03-01T00:00:00.000Z" && c["frozen_time"] != "2026-03-01T01:00:00.000Z") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        kill(process);
        assert!(advancing.await.unwrap().is_err(), "the killed instance never answered");
        let (_, stuck) = app.get(&shop, &format!("/test_clocks/{clock}")).await;
        assert_eq!(stuck["status"], "advancing", "{stuck}");

        // While the lease holds, the clock is busy; once it runs out, the next advance resumes.
        let (status, _) = app.post(&shop, &path, &target).await;
        assert_eq!(status, StatusCode::CONFLICT);
        tokio::time::sleep(Duration::from_millis(2500)).await;
        let (status, resumed) = app.post(&shop, &path, &target).await;
        assert_eq!(status, StatusCode::OK, "{resumed}");
        assert_eq!(resumed["status"], "ready");
        assert_eq!(resumed["frozen_time"], "2026-04-01T00:00:00.000Z");
        charged_once_each(&app, &shop, &ids, 0).await;
        let (_, sub) = app.get(&shop, &format!("/subscriptions/{}", ids[0])).await;
        assert_eq!(sub["paid_billing_cycles"], 745, "every hour of March and the first one");
    }

    async fn an_engine_run_killed_midway_is_resumed_by_the_next_run(app) {
        let app = TestApp::spawn_with(app.backend, short_leases()).await;
        let shop = app.shop("Gym").await;
        let ids = crate::engine::due_subscriptions(&app, &shop, 400).await;
        let (process, _) = child(&app, "on").await;
        let mut waiting = wait_for("the engine to start charging");
        loop {
            let (_, paid) = app.get(&shop, "/payments?limit=1").await;
            if waiting(!paid.as_array().unwrap().is_empty()) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        kill(process);
        tokio::time::sleep(Duration::from_millis(2500)).await;
        // The next run (here this instance's) takes over what the killed one had claimed.
        paydesk::services::billing::run_due(&app.state, Utc::now()).await.unwrap();
        charged_once_each(&app, &shop, &ids, 1).await;
        for id in &ids {
            let (_, sub) = app.get(&shop, &format!("/subscriptions/{id}")).await;
            assert_eq!(sub["paid_billing_cycles"], 2, "{id}: the due period paid once");
            assert_eq!(sub["state"], "active");
        }
        let (_, processing) = app.get(&shop, "/payments?status=processing").await;
        assert_eq!(processing, Value::Array(vec![]));
    }

    async fn a_hosted_payment_left_processing_is_settled_and_its_unit_returned(app) {
        let app = TestApp::spawn_with(app.backend, short_leases()).await;
        let shop = app.shop("Books").await;
        let product = app.product(&shop, &test_product_body()).await;
        let id = product["id"].as_str().unwrap();
        // As a request killed between the charge and its answer leaves it: a unit taken,
        // the payment processing.
        use paydesk::db::entities::products;
        assert!(paydesk::db::products::reserve_unit(&app.db, id).await.unwrap());
        let card = paydesk::external::acquirer::CardRef {
            token: "tok_sim_decline_000000000000000000".into(),
            brand: "visa".into(),
            last4: "0019".into(),
            exp_month: 12,
            exp_year: 2040,
            holder: "Ann Lee".into(),
            fingerprint: None,
        };
        let new = paydesk::db::payments::NewPayment {
            shop_id: shop.id,
            product_id: Some(id),
            plan_id: None,
            subscription_id: None,
            customer_id: None,
            amount: 990,
            currency: paydesk::domain::currency::find("EUR").unwrap(),
            transaction_type: paydesk::domain::vocab::TransactionType::Payment,
            test: true,
            card: &card,
            billing_key: None,
            discount: None,
            customer_details: None,
            tax: None,
        };
        let then = Utc::now() - chrono::Duration::seconds(10);
        paydesk::db::payments::insert_processing(&app.db, new, then).await.unwrap();
        paydesk::services::billing::run_due(&app.state, Utc::now()).await.unwrap();
        let (_, paid) = app.get(&shop, &format!("/payments?product={id}")).await;
        assert_eq!(paid[0]["status"], "failed", "{paid}");
        let left = paydesk::db::find_public::<products::Entity>(&app.db, id).await.unwrap().unwrap().quantity;
        assert_eq!(left, Some(5), "the unit is back");
        paydesk::services::billing::run_due(&app.state, Utc::now()).await.unwrap();
        let left = paydesk::db::find_public::<products::Entity>(&app.db, id).await.unwrap().unwrap().quantity;
        assert_eq!(left, Some(5), "and only once");
    }
}
