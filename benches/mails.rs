//! Subscriber mails, on SQLite and on PostgreSQL (`PAYDESK_TEST_POSTGRES_URL`, default the
//! local server): how long the reminder sweep takes over N subscriptions of a yearly plan that
//! all renew in three days (each gets its upcoming-renewal mail queued), how long a sweep with
//! nothing due takes, and how many mails per second one instance renders and sends to an SMTP
//! server on loopback (a sink in this process that takes every message).
//! Run with `cargo bench --bench mails`; pass sizes to change them:
//! `cargo bench --bench mails -- 500 5000`.

mod common;

use std::time::Instant;

use chrono::{Duration, Utc};
use paydesk::config::ConfigArgs;
use paydesk::db::entities::customers;
use paydesk::web::state::AppState;
use sea_orm::{ActiveValue::NotSet, EntityTrait, Set};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

#[tokio::main]
async fn main() {
    let sizes: Vec<usize> = std::env::args().skip(1).filter_map(|a| a.parse().ok()).collect();
    let sizes = if sizes.is_empty() { vec![2_000, 10_000] } else { sizes };
    println!("subscriber mails over N subscriptions (release build)");
    let smtp = sink().await;
    for &n in &sizes {
        for backend in ["sqlite", "postgres"] {
            let args = ConfigArgs { smtp_url: Some(smtp.clone()), ..Default::default() };
            let (state, _dir) = common::fresh(backend, args).await;
            let plan = json!({"title": "Gold yearly", "currency": "EUR", "test": true,
                              "plan": {"amount": 9900, "interval": 12, "interval_unit": "month"}});
            let shop = common::seed(&state, n, plan, Utc::now() + Duration::days(3)).await;
            add_customers(&state, shop, n).await;

            let started = Instant::now();
            let queued = paydesk::services::mail::reminders::sweep(&state, None, Utc::now()).await.unwrap();
            let sweep = started.elapsed().as_secs_f64();
            assert_eq!(queued, n);
            let started = Instant::now();
            assert_eq!(paydesk::services::mail::reminders::sweep(&state, None, Utc::now()).await.unwrap(), 0);
            let idle = started.elapsed().as_secs_f64();
            println!(
                "{backend:>8} n={n:>6}: reminder sweep {sweep:>6.2} s ({:>6.0} subscriptions/s); again with nothing due {:>6.1} ms",
                n as f64 / sweep,
                idle * 1000.0
            );

            let started = Instant::now();
            let mut sent = 0;
            loop {
                let made = paydesk::services::mail::send_due(&state, Utc::now()).await.unwrap();
                if made == 0 {
                    break;
                }
                sent += made;
            }
            let took = started.elapsed().as_secs_f64();
            assert_eq!(sent, n);
            println!(
                "{backend:>8} n={n:>6}: {sent} mails rendered and sent in {took:>6.2} s: {:>5.0} mails/s",
                n as f64 / took
            );
        }
    }
}

/// The customers the seeded subscriptions name (`cst_bench…`), each with an address.
async fn add_customers(state: &AppState, shop_id: i64, n: usize) {
    let now = Utc::now();
    let rows: Vec<customers::ActiveModel> = (0..n)
        .map(|i| customers::ActiveModel {
            seq: NotSet,
            id: Set(format!("cst_bench{i:011}")),
            shop_id: Set(shop_id),
            first_name: Set(Some("Ann".into())),
            last_name: Set(None),
            address: Set(None),
            city: Set(None),
            country: Set(None),
            zip: Set(None),
            state: Set(None),
            phone: Set(None),
            company: Set(None),
            vat_id: Set(None),
            email: Set(format!("ann{i}@example.com")),
            ip: Set("203.0.113.9".into()),
            external_id: Set(None),
            created_at: Set(now),
            updated_at: Set(now),
        })
        .collect();
    for chunk in rows.chunks(500) {
        customers::Entity::insert_many(chunk.to_vec()).exec(&state.db).await.unwrap();
    }
}

/// An SMTP server on loopback that takes every message (plain text, no TLS): its URL.
async fn sink() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("smtp://{}?tls=none", listener.local_addr().unwrap());
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            stream.set_nodelay(true).ok();
            tokio::spawn(async move {
                let (read, mut write) = stream.into_split();
                let mut lines = BufReader::new(read).lines();
                write.write_all(b"220 sink ESMTP\r\n").await.ok();
                let mut data = false;
                while let Ok(Some(line)) = lines.next_line().await {
                    let reply: &[u8] = match (data, line.as_str()) {
                        (true, ".") => {
                            data = false;
                            b"250 taken\r\n"
                        }
                        (true, _) => continue,
                        (false, l) if l.starts_with("EHLO") => b"250-sink\r\n250 8BITMIME\r\n",
                        (false, "DATA") => {
                            data = true;
                            b"354 go on\r\n"
                        }
                        (false, "QUIT") => {
                            write.write_all(b"221 bye\r\n").await.ok();
                            return;
                        }
                        _ => b"250 ok\r\n",
                    };
                    if write.write_all(reply).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    url
}
