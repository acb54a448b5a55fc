//! Snapshots and restores (`paydesk backup`, `paydesk restore`, the schedule), the schema's
//! version (`paydesk migrate --dry-run`, a paydesk older than its database), and what a kill
//! in the middle of a snapshot or a migration leaves: the helpers they share, and a file per
//! concern.

mod faults;
mod restore;
mod schema;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use chrono::{TimeDelta, Utc};
use paydesk::config::ConfigArgs;
use reqwest::StatusCode;
use sea_orm::ConnectionTrait;
use serde_json::{Value, json};
use sha2::Digest;

use crate::cli::paydesk;
use crate::helpers::*;
use crate::subscriptions::{clock, plan, subscribe};

/// `paydesk` over `database_url`, able to find `pg_dump` and `pg_restore`.
pub fn command(database_url: &str) -> Command {
    let mut command = paydesk(database_url);
    command.env("PATH", std::env::var("PATH").unwrap_or_default());
    command
}

/// Runs `paydesk ARGS` over `database_url`.
pub async fn pd(database_url: &str, args: &[&str]) -> Output {
    crate::cli::output(command(database_url).args(args)).await
}

/// The JSON line a command that succeeded printed.
pub fn printed(output: &Output) -> Value {
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The one line a command that failed said.
pub fn refusal(output: &Output) -> String {
    assert!(!output.status.success(), "refused: {}", String::from_utf8_lossy(&output.stdout));
    let said = String::from_utf8_lossy(&output.stderr).trim().to_string();
    assert_eq!(said.lines().count(), 1, "one line: {said}");
    said
}

/// A database nothing uses yet, of the same kind as `app`'s: a new SQLite file, or a new
/// PostgreSQL database whose search path names the same schema as `app`'s (so that a dump of
/// `app`'s schema restores there).
pub async fn fresh_target(app: &TestApp, dir: &Path) -> String {
    match app.backend {
        Backend::Sqlite => format!("sqlite://{}?mode=rwc", dir.join("restored/paydesk.db").display()),
        Backend::Postgres => spare_postgres(app).await,
    }
}

/// A new PostgreSQL database whose search path names `app`'s schema.
pub async fn spare_postgres(app: &TestApp) -> String {
    let mut url = new_postgres_database().await;
    url.set_query(url::Url::parse(&app.database_url).unwrap().query());
    url.to_string()
}

/// A new PostgreSQL database of the tests' server (those left by earlier runs are dropped
/// first, before any of this run is made).
pub async fn new_postgres_database() -> url::Url {
    static OLD_DROPPED: tokio::sync::OnceCell<()> = tokio::sync::OnceCell::const_new();
    let admin = paydesk::db::connect(&postgres_url(), 1).await.unwrap();
    OLD_DROPPED
        .get_or_init(|| async {
            let sql = "SELECT datname FROM pg_database WHERE datname LIKE 'paydesk_r_%'";
            let old = admin.query_all(sea_orm::Statement::from_string(admin.get_database_backend(), sql)).await;
            for row in old.unwrap_or_default() {
                let name: String = row.try_get("", "datname").unwrap();
                admin.execute_unprepared(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).await.ok();
            }
        })
        .await;
    let name = format!("paydesk_r_{}", paydesk::domain::ids::random_hex(6));
    admin.execute_unprepared(&format!("CREATE DATABASE {name}")).await.unwrap();
    admin.close().await.ok();
    let mut url = url::Url::parse(&postgres_url()).unwrap();
    url.set_path(&format!("/{name}"));
    url
}

/// A shop with a little of everything: products, a paid and a refunded payment, customers,
/// subscriptions on a test clock (active and cancelled), a webhook endpoint (a sealed
/// secret) and the events all this made.
pub async fn fill(app: &TestApp, shop: &Shop) {
    let product = app.product(shop, &test_product_body()).await;
    let id = product["id"].as_str().unwrap();
    for _ in 0..2 {
        let page = app.pay(id, cards::SUCCESS, &[]).await;
        assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.html);
    }
    let (_, payments) = app.get(shop, "/payments").await;
    let paid = payments[0]["id"].as_str().unwrap();
    let (status, refund) = app.post(shop, &format!("/payments/{paid}/refund"), &json!({"amount": 300})).await;
    assert!(status.is_success(), "{refund}");
    let (status, _) = app.post(shop, "/customers", &customer_body()).await;
    assert_eq!(status, StatusCode::CREATED);
    let plan = plan(app, shop, json!({})).await;
    let clock = clock(app, shop, "2026-01-10T10:00:00Z").await;
    subscribe(app, shop, &plan, &clock, cards::SUCCESS).await;
    let ended = subscribe(app, shop, &plan, &clock, cards::SUCCESS).await;
    let (status, _) =
        app.post(shop, &format!("/subscriptions/{}/cancel", ended["id"].as_str().unwrap()), &json!({})).await;
    assert_eq!(status, StatusCode::OK);
    let body = json!({"url": "https://merchant.example/hooks", "enabled_events": ["payment.*"]});
    let (status, _) = app.post(shop, "/webhook_endpoints", &body).await;
    assert_eq!(status, StatusCode::CREATED);
}

/// What the API answers `shop` about everything it holds.
pub async fn answers(app: &TestApp, shop: &Shop) -> Vec<(String, Value)> {
    let mut all = Vec::new();
    for list in [
        "products",
        "plans",
        "customers",
        "payments",
        "refunds",
        "subscriptions",
        "test_clocks",
        "events",
        "webhook_endpoints",
        "coupons",
        "disputes",
    ] {
        let (status, body) = app.get(shop, &format!("/{list}?limit=100")).await;
        assert_eq!(status, StatusCode::OK, "{list}: {body}");
        for item in body.as_array().unwrap() {
            let path = format!("/{list}/{}", item["id"].as_str().unwrap());
            let (status, one) = app.get(shop, &path).await;
            assert_eq!(status, StatusCode::OK, "{path}: {one}");
            all.push((path, one));
        }
        all.push((format!("/{list}"), body));
    }
    let (_, me) = app.get(shop, "/shop").await;
    all.push(("/shop".into(), me));
    // Links name the instance that answered (events keep the one of their time).
    all.into_iter().map(|(path, body)| (path, serde_json::from_str(&unported(&body.to_string())).unwrap())).collect()
}

/// `text` with every `http://127.0.0.1:PORT` written `{base}`.
fn unported(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("http://127.0.0.1:") {
        out.push_str(&rest[..at]);
        out.push_str("{base}");
        rest = rest[at + "http://127.0.0.1:".len()..].trim_start_matches(|c: char| c.is_ascii_digit());
    }
    out.push_str(rest);
    out
}

/// Asserts that two instances answered the same, naming the first answer that differs.
pub fn assert_same_answers(got: &[(String, Value)], expected: &[(String, Value)]) {
    for ((path, body), (expected_path, expected_body)) in got.iter().zip(expected) {
        assert_eq!(path, expected_path);
        assert_eq!(body, expected_body, "{path}");
    }
    assert_eq!(got.len(), expected.len());
}

/// The snapshot folder a backup printed.
pub fn snapshot_of(backup: &Value) -> PathBuf {
    PathBuf::from(backup["snapshot"].as_str().unwrap())
}

/// Whether the database at `url` has any table (a restore that was refused left none).
pub async fn has_tables(backend: Backend, url: &str) -> bool {
    if matches!(backend, Backend::Sqlite) {
        let file = paydesk::config::sqlite_file(url).unwrap();
        return file.exists();
    }
    let db = paydesk::db::connect(url, 1).await.unwrap();
    let tables = paydesk::db::backup::tables(&db).await.unwrap();
    db.close().await.ok();
    !tables.is_empty()
}

/// Copies the folder `from` to `to`.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// The payment a pay page's answer names (its receipt, or the return URL's `payment_id`).
pub fn paid_id(page: &Page) -> Option<String> {
    let at = page.location().find("pay_")?;
    Some(page.location()[at..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect())
}
