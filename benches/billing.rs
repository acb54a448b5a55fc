//! How long one run of the billing engine takes for 10,000 and 100,000 due subscriptions,
//! on SQLite and on PostgreSQL (`PAYDESK_TEST_POSTGRES_URL`, default the local server),
//! without webhooks and with a webhook endpoint and a notification URL taking every event
//! (the run writes the same events either way: workers fan them out to their deliveries
//! later); then how fast one instance fans out and sends those deliveries to a receiver on
//! loopback.
//! Run with `cargo bench --bench billing`; pass sizes to change them:
//! `cargo bench --bench billing -- 1000 5000`.

use std::time::Instant;

use chrono::{Duration, Utc};
use paydesk::app;
use paydesk::config::{Config, ConfigArgs};
use paydesk::db::entities::subscriptions;
use paydesk::domain::billing::State;
use paydesk::web::state::AppState;
use sea_orm::{ActiveValue::NotSet, ConnectionTrait, Database, EntityTrait, Set};
use serde_json::json;

#[tokio::main]
async fn main() {
    let sizes: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let sizes = if sizes.is_empty() { vec![10_000, 100_000] } else { sizes };
    println!("billing engine: one run over N due subscriptions (release build)");
    let receiver = receiver().await;
    for &n in &sizes {
        for backend in ["sqlite", "postgres"] {
            let mut runs = Vec::new();
            for webhooks in [false, true] {
                let (state, _dir) = fresh(backend).await;
                let shop = seed(&state, n).await;
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
            println!("{backend:>8} n={n:>7}: run with webhooks / without = {:.2}", runs[1] / runs[0]);
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
    paydesk::services::webhooks::create_endpoint(state, shop_id, &fields, Utc::now()).await.unwrap();
    paydesk::db::shops::set_notification_url(&state.db, shop_id, Some(url.into()), Utc::now()).await.unwrap();
}

async fn fresh(backend: &str) -> (AppState, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let url = match backend {
        "sqlite" => format!("sqlite://{}?mode=rwc", dir.path().join("bench.db").display()),
        _ => {
            let admin_url = std::env::var("PAYDESK_TEST_POSTGRES_URL")
                .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into());
            let admin = Database::connect(&admin_url).await.expect("PostgreSQL");
            let schema = format!("paydesk_t_bench_{}", paydesk::domain::ids::random_hex(4));
            admin.execute_unprepared(&format!("CREATE SCHEMA {schema}")).await.unwrap();
            format!("{admin_url}?options=-c%20search_path%3D{schema}")
        }
    };
    let kek = Some("YmVuY2htYXJrLWtleS1lbmNyeXB0aW9uLWtleS0zMiE=".into());
    let args = ConfigArgs {
        database_url: Some(url),
        scheduler: Some("off".into()),
        key_encryption_key: kek,
        webhooks_allow_private: Some("on".into()),
        ..Default::default()
    };
    let config = Config::from_args(&args).unwrap();
    let db = app::open_database(&config).await.unwrap();
    (AppState::new(db, config).unwrap(), dir)
}

/// `n` active monthly subscriptions with a test card, all due a minute ago; answers the shop.
async fn seed(state: &AppState, n: usize) -> i64 {
    let shop =
        paydesk::services::keys::create_shop(&state.db, &state.vault, "Bench", None, Utc::now()).await.unwrap().shop;
    let plan_body = json!({"title": "Gold", "currency": "EUR", "test": true,
                           "plan": {"amount": 990, "interval": 1, "interval_unit": "month"}});
    let fields = paydesk::domain::plan::PlanFields::parse(plan_body.as_object().unwrap()).unwrap();
    let plan = paydesk::db::plans::insert(&state.db, shop.id, &fields, Utc::now()).await.unwrap();
    let now = paydesk::db::now_millis(Utc::now());
    let anchor = now - Duration::days(31);
    let rows = (0..n).map(|i| subscriptions::ActiveModel {
        seq: NotSet,
        id: Set(format!("sbs_bench{i:011}")),
        shop_id: Set(shop.id),
        plan_id: Set(plan.id.clone()),
        customer_id: Set(format!("cst_bench{i:011}")),
        state: Set(State::Active),
        test: Set(true),
        test_clock_id: Set(None),
        tracking_id: Set(None),
        return_url: Set(None),
        notification_url: Set(None),
        additional_data: Set(None),
        card_token: Set(Some(format!("tok_sim_ok_{i:024}"))),
        card_brand: Set(Some("visa".into())),
        card_last4: Set(Some("0000".into())),
        card_exp_month: Set(Some(12)),
        card_exp_year: Set(Some(2040)),
        card_holder: Set(Some("Bench".into())),
        started_at: Set(Some(anchor)),
        anchor_at: Set(Some(anchor)),
        period: Set(1),
        paid_cycles: Set(1),
        failed_attempts: Set(0),
        has_success: Set(true),
        renew_at: Set(Some(now - Duration::minutes(1))),
        active_to: Set(Some(now - Duration::minutes(1))),
        last_payment_id: Set(None),
        cancel_reason: Set(None),
        cancelled_at: Set(None),
        cancel_at_period_end: Set(false),
        remind_at: Set(None),
        claim_token: Set(None),
        claimed_until: Set(None),
        created_at: Set(anchor),
        updated_at: Set(anchor),
    });
    let rows: Vec<_> = rows.collect();
    for chunk in rows.chunks(500) {
        subscriptions::Entity::insert_many(chunk.to_vec()).exec(&state.db).await.unwrap();
    }
    shop.id
}
