//! How long one run of the billing engine takes for 10,000 and 100,000 due subscriptions,
//! on SQLite and on PostgreSQL (`PAYDESK_TEST_POSTGRES_URL`, default the local server),
//! without webhooks and with a webhook endpoint and a notification URL taking every event
//! (the run writes the same events either way: workers fan them out to their deliveries
//! later); then how fast one instance fans out and sends those deliveries to a receiver on
//! loopback.
//! Run with `cargo bench --bench billing`; pass sizes to change them:
//! `cargo bench --bench billing -- 1000 5000`, and `--without-webhooks` to time the run alone.
//! `--clock` instead times a test clock's advance over as many subscriptions due on it.

mod common;

use std::time::Instant;

use chrono::{Duration, Utc};
use paydesk::config::ConfigArgs;
use paydesk::web::state::AppState;
use serde_json::json;

#[tokio::main]
async fn main() {
    let sizes: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let sizes = if sizes.is_empty() { vec![10_000, 100_000] } else { sizes };
    let variants: &[bool] = if std::env::args().any(|a| a == "--without-webhooks") { &[false] } else { &[false, true] };
    if std::env::args().any(|a| a == "--clock") {
        return advances(&sizes).await;
    }
    println!("billing engine: one run over N due subscriptions (release build)");
    let receiver = receiver().await;
    for &n in &sizes {
        for backend in ["sqlite", "postgres"] {
            let mut runs = Vec::new();
            for &webhooks in variants {
                let args = ConfigArgs { webhooks_allow_private: Some("on".into()), ..Default::default() };
                let (state, _dir) = common::fresh(backend, args).await;
                let plan = json!({"title": "Gold", "currency": "EUR", "test": true,
                                  "plan": {"amount": 990, "interval": 1, "interval_unit": "month"}});
                let shop = common::seed(&state, n, plan, Utc::now() - Duration::minutes(1)).await;
                if webhooks {
                    listen(&state, shop, &receiver).await;
                }
                let started = Instant::now();
                let report = paydesk::services::billing::run_due(&state, Utc::now()).await.expect("engine run");
                let took = started.elapsed();
                assert_eq!(report.charged, n);
                runs.push(took.as_secs_f64());
                println!(
                    "{backend:>8} n={n:>7} webhooks {:>3}: run {:>7.2} s ({:>6.0} charges/s)",
                    if webhooks { "on" } else { "off" },
                    took.as_secs_f64(),
                    n as f64 / took.as_secs_f64(),
                );
                if !webhooks {
                    let ledger = ledger_cost(&state, shop, n).await;
                    println!(
                        "{backend:>8} n={n:>7}: the MRR ledger's part of it {:>7.2} s ({:.3} ms a renewal, {:.0} % of the run)",
                        ledger,
                        ledger * 1000.0 / n as f64,
                        100.0 * ledger / took.as_secs_f64()
                    );
                }
                if webhooks {
                    let started = Instant::now();
                    let sent = paydesk::services::webhooks::deliver_due(&state, Utc::now()).await.expect("deliveries");
                    let took = started.elapsed().as_secs_f64();
                    println!(
                        "{backend:>8} n={n:>7}: {sent} deliveries ({} Standard Webhooks, {} bePaid) sent in {took:.2} s: {:.0}/s",
                        2 * n,
                        n,
                        sent as f64 / took
                    );
                }
            }
            if let [without, with] = runs[..] {
                println!("{backend:>8} n={n:>7}: run with webhooks / without = {:.2}", with / without);
            }
        }
    }
}

/// What keeping the ledger of MRR costs a renewal: `revenue::follow` over the subscription
/// events the run recorded, again, in batches as the engine's (500), each in a transaction
/// rolled back. A renewal moves no MRR: this is the reading of where each subscription and
/// customer stood, and (PostgreSQL) the hold on each customer. (The seeded subscriptions had
/// no movement yet, so the run itself also wrote each one's `new`.)
async fn ledger_cost(state: &AppState, shop: i64, n: usize) -> f64 {
    let events = paydesk::db::mrr::subscription_events(&state.db, shop, 0, 4 * n as u64).await.unwrap();
    let new: Vec<paydesk::db::events::NewEvent> = events
        .iter()
        .map(|e| paydesk::db::events::NewEvent {
            shop_id: e.shop_id,
            kind: e.kind,
            object_id: e.object_id.clone(),
            test: e.test,
            data: serde_json::from_str(&e.data).unwrap(),
            child: None,
        })
        .collect();
    let ids: Vec<String> = events.iter().map(|e| e.id.clone()).collect();
    let read = new.iter().filter(|e| e.data["plan"]["plan"]["amount"].is_i64()).count();
    println!("  (the run recorded {} subscription events, {read} of them with the subscription's plan)", new.len());
    let mut took = 0.0;
    for (events, ids) in new.chunks(500).zip(ids.chunks(500)) {
        let txn = paydesk::db::begin(&state.db).await.unwrap();
        let started = Instant::now();
        let mut batch = paydesk::db::Batch::new(&txn);
        paydesk::services::revenue::follow(&txn, &mut batch, events, ids).await.unwrap();
        batch.send(&txn).await.unwrap();
        took += started.elapsed().as_secs_f64();
        txn.rollback().await.unwrap();
    }
    took
}

/// Times a test clock's advance past the renewal of `n` subscriptions on it, for each size.
async fn advances(sizes: &[usize]) {
    println!("test clock: one advance over N subscriptions due on it (release build)");
    for &n in sizes {
        for backend in ["sqlite", "postgres"] {
            let (state, _dir) = common::fresh(backend, ConfigArgs::default()).await;
            let plan = json!({"title": "Gold", "currency": "EUR", "test": true,
                              "plan": {"amount": 990, "interval": 1, "interval_unit": "month"}});
            let shop = common::seed(&state, 0, plan.clone(), Utc::now()).await;
            let frozen = Utc::now() - Duration::days(30);
            let clock = paydesk::db::test_clocks::insert(&state.db, shop, None, frozen, Utc::now()).await.unwrap();
            common::seed_on(&state, shop, n, plan, frozen + Duration::hours(1), Some(&clock.id)).await;
            let started = Instant::now();
            let to = frozen + Duration::hours(2);
            let report = paydesk::services::billing::advance_clock(&state, &clock, to).await.unwrap().unwrap();
            let took = started.elapsed().as_secs_f64();
            assert_eq!(report.charged, n);
            println!("{backend:>8} n={n:>7}: advance {took:>7.2} s ({:>6.3} ms a charge)", took * 1000.0 / n as f64);
        }
    }
}

/// A receiver on loopback that answers every POST with 200 at once.
async fn receiver() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let app = axum::Router::new().fallback(|| async { "ok" });
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    url
}

/// An endpoint taking every event, and the shop's notification URL, both at `url`.
async fn listen(state: &AppState, shop_id: i64, url: &str) {
    let body = json!({"url": url});
    let fields = paydesk::domain::webhook::EndpointFields::read(
        &paydesk::domain::input::Reader::new(body.as_object().unwrap()),
        true,
        true,
    )
    .unwrap();
    use paydesk::domain::audit::{Actor, Entry, Origin};
    let audit = Entry::new(shop_id, Actor::operator(), Origin::default(), "webhook_endpoint.created");
    paydesk::services::webhooks::create_endpoint(state, shop_id, &fields, &audit, Utc::now()).await.unwrap();
    let audit = Entry::new(shop_id, Actor::operator(), Origin::default(), "shop.updated");
    paydesk::db::shops::set_notification_url(&state.db, shop_id, Some(url.into()), &audit, Utc::now()).await.unwrap();
}
