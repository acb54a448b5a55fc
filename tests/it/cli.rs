//! The `paydesk` command line: shop creation, migrations, serving, and refusing bad settings.

use std::process::{Command, Stdio};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::Value;

use crate::helpers::*;

fn paydesk(database_url: &str) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_paydesk"));
    command.env_clear().env("DATABASE_URL", database_url).env("RUST_LOG", "warn");
    command
}

db_tests! {
    async fn shop_create_prints_an_id_and_a_secret_that_authenticate(app) {
        let output = paydesk(&app.database_url).args(["shop", "create", "--name", "Corner Shop"]).output().unwrap();
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
    }

    async fn serve_migrates_and_answers_on_its_listen_address(app) {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
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
        for _ in 0..100 {
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
            let output = paydesk(&app.database_url).arg("migrate").output().unwrap();
            assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        }
    }
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
