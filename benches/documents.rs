//! The books: what invoicing adds to the charges that issue them, and how long a document's
//! PDF takes to write. For N due subscriptions, on SQLite and on PostgreSQL
//! (`PAYDESK_TEST_POSTGRES_URL`, default the local server), one billing run is timed without
//! invoices (no seller details) and with them (each renewal numbered and invoiced in the
//! transaction that records it); then the PDFs of 200 of those invoices are written, one at
//! a time, and their p50 and p99 printed with their size.
//! Run with `cargo bench --bench documents`; pass sizes to change them:
//! `cargo bench --bench documents -- 1000 10000`.

mod common;

use std::time::Instant;

use chrono::{Duration, Utc};
use paydesk::config::ConfigArgs;
use paydesk::db::entities::documents;
use paydesk::web::state::AppState;
use sea_orm::{EntityTrait, QuerySelect};
use serde_json::json;

#[tokio::main]
async fn main() {
    let sizes: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let sizes = if sizes.is_empty() { vec![10_000] } else { sizes };
    println!("the books: one billing run over N due subscriptions, without and with invoices (release build)");
    for &n in &sizes {
        for backend in ["sqlite", "postgres"] {
            let mut runs = Vec::new();
            for invoiced in [false, true] {
                let (state, _dir) = common::fresh(backend, ConfigArgs::default()).await;
                let plan = json!({"title": "Gold", "currency": "EUR", "test": true,
                                  "plan": {"amount": 990, "interval": 1, "interval_unit": "month"}});
                let shop = common::seed(&state, n, plan, Utc::now() - Duration::minutes(1)).await;
                if invoiced {
                    seller(&state, shop).await;
                }
                let started = Instant::now();
                let report = paydesk::services::billing::run_due(&state, Utc::now()).await.expect("engine run");
                let took = started.elapsed().as_secs_f64();
                assert_eq!(report.charged, n);
                let issued = documents::Entity::find().all(&state.db).await.unwrap().len();
                assert_eq!(issued, if invoiced { n } else { 0 });
                println!(
                    "{backend:>8} n={n:>7} invoices {:>3}: run {took:>7.2} s ({:>6.0} charges/s, {:>6.3} ms each)",
                    if invoiced { "on" } else { "off" },
                    n as f64 / took,
                    took * 1000.0 / n as f64,
                );
                runs.push(took);
                if invoiced {
                    pdfs(&state, backend).await;
                }
            }
            if let [without, with] = runs[..] {
                println!("{backend:>8} n={n:>7}: run with invoices / without = {:.2}", with / without);
            }
        }
    }
}

/// Complete seller details for the shop: its charges are invoiced from now on.
async fn seller(state: &AppState, shop_id: i64) {
    let body = json!({"legal_name": "Bench GmbH", "address_line1": "Hauptstraße 1", "city": "Berlin",
                      "postal_code": "10115", "country": "DE", "vat_id": "DE123456789"});
    let seller = paydesk::domain::seller::Seller::parse(body.as_object().unwrap()).unwrap();
    let audit = paydesk::domain::audit::Entry::new(
        shop_id,
        paydesk::domain::audit::Actor::api_key("key_bench", "Bench", None),
        paydesk::domain::audit::Origin::default(),
        "seller.updated",
    );
    paydesk::db::sellers::replace(&state.db, shop_id, &seller, &audit, Utc::now()).await.unwrap();
}

/// Writes the PDFs of 200 invoices one at a time: p50, p99 and their size.
async fn pdfs(state: &AppState, backend: &str) {
    let docs = documents::Entity::find().limit(200).all(&state.db).await.unwrap();
    let mut times = Vec::with_capacity(docs.len());
    let mut bytes = 0;
    for d in &docs {
        let content = paydesk::web::documents::content(d).unwrap();
        let started = Instant::now();
        let pdf = paydesk::web::documents::pdf(d, &content).unwrap();
        times.push(started.elapsed().as_secs_f64() * 1000.0);
        bytes += pdf.len();
    }
    times.sort_by(f64::total_cmp);
    let at = |q: f64| times[((times.len() - 1) as f64 * q).round() as usize];
    println!(
        "{backend:>8}: PDF/A-3b of an invoice with its XML: p50 {:.2} ms, p99 {:.2} ms, {:.1} KB each ({} written)",
        at(0.5),
        at(0.99),
        bytes as f64 / docs.len() as f64 / 1024.0,
        docs.len()
    );
}
