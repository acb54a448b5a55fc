//! The `paydesk` command line: shop creation, migrations, serving, and refusing bad settings.

use std::process::{Command, Stdio};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;

pub fn paydesk(database_url: &str) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_paydesk"));
    command
        .env_clear()
        .env("DATABASE_URL", database_url)
        .env("PAYDESK_KEY_ENCRYPTION_KEY", TEST_KEK)
        .env("RUST_LOG", "warn");
    command
}

/// Runs `command` to its end off the test's runtime: that thread also runs the in-process
/// instance, whose task caught mid-transaction would otherwise hold SQLite's lock until the
/// command, waiting on it, gave up ("database is locked").
pub async fn output(command: &mut Command) -> std::process::Output {
    let child = command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    tokio::task::spawn_blocking(move || child.wait_with_output().unwrap()).await.unwrap()
}

db_tests! {
    async fn shop_create_prints_an_id_and_a_secret_that_authenticate(app) {
        let args = ["shop", "create", "--name", "Corner Shop", "--url", "http:Corner.example"];
        let output = output(paydesk(&app.database_url).args(args)).await;
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let stdout = String::from_utf8(output.stdout).unwrap();
        assert_eq!(stdout.lines().count(), 1, "one JSON object: {stdout}");
        let created: Value = serde_json::from_str(&stdout).unwrap();
        let shop = Shop {
            id: created["shop_id"].as_i64().expect("shop_id is an integer"),
            secret: created["secret_key"].as_str().unwrap().to_string(),
        };
        assert!(shop.secret.len() >= 40);
        assert_eq!(created["name"], "Corner Shop");
        let (status, product) = app.post(&shop, "/products", &product_body()).await;
        assert_eq!(status, StatusCode::CREATED);
        assert_eq!(product["shop_id"], shop.id);
        let (_, stored) = app.get(&shop, "/shop").await;
        assert_eq!(stored["url"], "http://corner.example/", "kept as customers are sent there");
    }

    async fn no_card_number_or_cvc_reaches_the_database_or_the_logs(app) {
        const CANARY: &str = "5555555555554444";
        let dir = tempfile::tempdir().unwrap();
        let log_path = dir.path().join("paydesk.log");
        let port = free_port();
        let mut child = paydesk(&app.database_url)
            .env("PAYDESK_LISTEN", format!("127.0.0.1:{port}"))
            .env("RUST_LOG", "debug")
            .arg("serve")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log_path).unwrap())
            .spawn()
            .unwrap();
        let served = app.pointed_at(format!("http://127.0.0.1:{port}"));
        wait_until_up(&served).await;
        let shop = app.shop("Books").await;
        let mut body = test_product_body();
        body["visible_fields"] = json!(["email"]);
        let product = app.product(&shop, &body).await;
        let path = format!("/products/{}/pay", product["id"].as_str().unwrap());
        for number in ["5555 5555 5555 4444", CANARY] {
            let form = served.open_form(&path).await;
            let fields = [("card_number", number), ("card_exp_month", "12"), ("card_exp_year", "2031"),
                          ("card_cvc", "7391"), ("card_holder", "Ann Lee"), ("email", "ann@example.com")];
            let page = served.submit(&path, &form, &fields).await;
            assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.html);
        }
        child.kill().ok();
        child.wait().ok();

        let (_, payments) = app.get(&shop, "/payments").await;
        assert_eq!(payments[0]["card"]["last_4"], "4444", "what may be kept is kept");
        let log = std::fs::read_to_string(&log_path).unwrap();
        assert!(log.contains("/pay"), "the log was written at debug level");
        let stored = stored_bytes(&app).await;
        assert!(contains(&stored, b"ann@example.com"), "the database files were read");
        for (what, haystack) in [("log", log.as_bytes()), ("database", stored.as_slice())] {
            for needle in [CANARY, "5555 5555 5555 4444", "555555555555", "cvc=7391", "card_cvc=", "card_number="] {
                assert!(!contains(haystack, needle.as_bytes()), "{needle} found in the {what}");
            }
        }
    }

    async fn serve_migrates_and_answers_on_its_listen_address(app) {
        let port = free_port();
        let mut child = paydesk(&app.database_url)
            .env("PAYDESK_LISTEN", format!("127.0.0.1:{port}"))
            .env("PAYDESK_BASE_URL", "https://pay.example.com/")
            .arg("serve")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let shop = app.shop("Served").await;
        let mut answered = None;
        let patience = Patience::start();
        while !patience.spent() {
            let request = app.client.post(format!("http://127.0.0.1:{port}/products"))
                .basic_auth(shop.id, Some(&shop.secret)).json(&product_body());
            if let Ok(response) = request.send().await {
                answered = Some(response.json::<Value>().await.unwrap());
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        child.kill().ok();
        child.wait().ok();
        let product = answered.expect("paydesk serve answered");
        let id = product["id"].as_str().unwrap();
        assert_eq!(product["pay_url"], format!("https://pay.example.com/products/{id}/pay"));
    }

    async fn migrate_is_idempotent(app) {
        for _ in 0..2 {
            let output = output(paydesk(&app.database_url).arg("migrate")).await;
            assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        }
    }
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

async fn wait_until_up(app: &TestApp) {
    let up = async || app.client.get(format!("{}/healthz", app.base)).send().await.ok().map(drop);
    eventually("paydesk starts", Duration::from_millis(100), up).await;
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// Everything the database holds: the SQLite files byte for byte, or every row of every
/// table of the test's PostgreSQL schema as JSON text.
async fn stored_bytes(app: &TestApp) -> Vec<u8> {
    use sea_orm::{ConnectionTrait, Statement};
    if let Some(path) = app.database_url.strip_prefix("sqlite://") {
        let file = path.split('?').next().unwrap();
        return ["", "-wal", "-shm"]
            .iter()
            .flat_map(|suffix| std::fs::read(format!("{file}{suffix}")).unwrap_or_default())
            .collect();
    }
    let backend = app.db.get_database_backend();
    let tables = app
        .db
        .query_all(Statement::from_string(
            backend,
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()",
        ))
        .await
        .unwrap();
    let mut all = Vec::new();
    for table in tables {
        let name: String = table.try_get("", "table_name").unwrap();
        let sql = format!("SELECT coalesce(string_agg(row_to_json(t)::text, ''), '') AS rows FROM \"{name}\" t");
        let row = app.db.query_one(Statement::from_string(backend, sql)).await.unwrap().unwrap();
        all.extend(row.try_get::<String>("", "rows").unwrap().into_bytes());
    }
    assert!(!all.is_empty());
    all
}

#[test]
fn bad_settings_stop_start_up_with_one_clear_line() {
    for (name, value) in [
        ("PAYDESK_LISTEN", "not-an-address"),
        ("PAYDESK_TIMEZONE", "Mars/Olympus"),
        ("PAYDESK_SCHEDULER", "sometimes"),
        ("PAYDESK_BASE_URL", "pay.example.com"),
        ("PAYDESK_CHECKOUT_URL", "ftp://x"),
        ("DATABASE_URL", "mysql://root@localhost/x"),
        ("PAYDESK_DB_CONNECTIONS", "1"),
        ("PAYDESK_DB_CONNECTIONS", "many"),
    ] {
        let output = paydesk("sqlite::memory:").env(name, value).arg("migrate").output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{name}");
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.starts_with(&format!("paydesk: {name}=")), "{stderr}");
    }
}

#[test]
fn shop_create_refuses_a_blank_name() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("p.db").display());
    let output = paydesk(&url).args(["shop", "create", "--name", "  "]).output().unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8(output.stderr).unwrap().contains("--name"));
}

/// Instances started together on a fresh PostgreSQL schema migrate one after the other
/// (an advisory lock), and every one starts.
#[tokio::test]
async fn instances_starting_together_on_postgres_migrate_once() {
    let url = crate::helpers::postgres_schema().await;
    let started: Vec<_> = (0..4)
        .map(|_| paydesk(&url).arg("migrate").stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap())
        .collect();
    for child in started {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
}

/// SQLite only (PostgreSQL has no files of its own here): every command closes the database,
/// moving the write-ahead log into the file, so that the file alone is whole and no `-wal` or
/// `-shm` file stays behind; a served instance does the same when it stops cleanly.
#[tokio::test]
async fn every_command_and_a_clean_stop_leave_the_database_file_whole() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("paydesk.db");
    let url = format!("sqlite://{}?mode=rwc", file.display());
    let beside = |suffix: &str| dir.path().join(format!("paydesk.db{suffix}"));
    let no_log = |after: &str| {
        for suffix in ["-wal", "-shm"] {
            assert!(!beside(suffix).exists(), "{suffix} left after {after}");
        }
    };
    let ran = |args: &[&str]| {
        let output = paydesk(&url).args(args).output().unwrap();
        assert!(output.status.success(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
        output
    };
    ran(&["migrate"]);
    no_log("migrate");
    ran(&["migrate", "--dry-run"]);
    no_log("migrate --dry-run");
    let created: Value = serde_json::from_slice(&ran(&["shop", "create", "--name", "Files"]).stdout).unwrap();
    no_log("shop create");
    ran(&["audit", "verify"]);
    no_log("audit verify");

    let port = free_port();
    let mut child = paydesk(&url).env("PAYDESK_LISTEN", format!("127.0.0.1:{port}")).arg("serve").spawn().unwrap();
    let shop =
        Shop { id: created["shop_id"].as_i64().unwrap(), secret: created["secret_key"].as_str().unwrap().into() };
    let client = reqwest::Client::new();
    let mut stored = None;
    let patience = Patience::start();
    while !patience.spent() {
        let request = client.post(format!("http://127.0.0.1:{port}/products")).basic_auth(shop.id, Some(&shop.secret));
        if let Ok(response) = request.json(&product_body()).send().await {
            stored = Some(response.status());
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(stored, Some(StatusCode::CREATED));
    assert!(std::process::Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap().success());
    let patience = Patience::start();
    while child.try_wait().unwrap().is_none() {
        assert!(!patience.spent(), "it stops");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // A background job still running when the pool closed may keep the log's file, emptied.
    let wal = std::fs::metadata(beside("-wal")).map(|m| m.len()).unwrap_or(0);
    assert_eq!(wal, 0, "the log went into the file on a clean stop");
    // The file alone, copied elsewhere, holds the product.
    let alone = tempfile::tempdir().unwrap();
    std::fs::copy(&file, alone.path().join("paydesk.db")).unwrap();
    let db = paydesk::db::connect(&format!("sqlite://{}", alone.path().join("paydesk.db").display()), 1).await.unwrap();
    use sea_orm::{EntityTrait, PaginatorTrait};
    assert_eq!(paydesk::db::entities::products::Entity::find().count(&db).await.unwrap(), 1);
}
