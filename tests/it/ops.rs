//! What operators rely on: request ids in answers and logs, JSON logs, error codes, the
//! metrics endpoint, and a stop that lets work in flight finish.

use std::io::{Read, Write};
use std::process::Stdio;
use std::time::Duration;

use paydesk::config::ConfigArgs;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::cli::{free_port, paydesk};
use crate::helpers::*;

const METRICS_TOKEN: &str = "metrics-token-for-tests";

/// The value of the series `name` whose labels include all of `labels` (summed over the
/// rest), 0 when there is none.
fn sample(text: &str, name: &str, labels: &[(&str, &str)]) -> f64 {
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| {
            let (series, value) = line.rsplit_once(' ')?;
            let (series_name, rest) = series.split_once('{').unwrap_or((series, ""));
            let matches = series_name == name && labels.iter().all(|(k, v)| rest.contains(&format!("{k}=\"{v}\"")));
            matches.then(|| value.parse::<f64>().ok()).flatten()
        })
        .sum()
}

async fn scrape(app: &TestApp) -> String {
    let response = app.anon(Method::GET, "/metrics").bearer_auth(METRICS_TOKEN).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert!(response.headers()["content-type"].to_str().unwrap().starts_with("text/plain; version=0.0.4"));
    response.text().await.unwrap()
}

db_tests! {
    async fn every_answer_names_its_request(app) {
        let shop = app.shop("Shop").await;
        let response = app.req(&shop, Method::GET, "/products").send().await.unwrap();
        let id = response.headers()["x-request-id"].to_str().unwrap().to_string();
        assert!(id.starts_with("req_") && id.len() == 28, "{id}");
        // The client's own id is kept; one that could not be logged safely is replaced.
        let kept = app.anon(Method::GET, "/nothing").header("x-request-id", "trace-7f3a:2").send().await.unwrap();
        assert_eq!(kept.headers()["x-request-id"], "trace-7f3a:2");
        assert_eq!(kept.status(), StatusCode::NOT_FOUND);
        for junk in ["has space", "quote\"", &"x".repeat(129)] {
            let replaced = app.anon(Method::GET, "/healthz").header("x-request-id", junk).send().await.unwrap();
            let id = replaced.headers()["x-request-id"].to_str().unwrap();
            assert!(id.starts_with("req_"), "{junk}: {id}");
        }
        // Pages and error answers carry it too.
        let page = app.anon(Method::GET, "/dashboard/login").send().await.unwrap();
        assert!(page.headers().contains_key("x-request-id"));
    }

    async fn errors_carry_a_stable_code_beside_the_message(app) {
        let shop = app.shop("Shop").await;
        let (status, body) = app.post(&shop, "/products", &json!({})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(body["code"], "parameter_invalid");
        assert!(body["message"].is_string() && body["errors"]["name"].is_array());
        let (status, body) = app.get(&shop, "/products/prd_0000000000000000").await;
        assert_eq!((status, &body["code"]), (StatusCode::NOT_FOUND, &json!("resource_missing")));
        let (status, body) = send(app.anon(Method::GET, "/products")).await;
        assert_eq!((status, &body["code"]), (StatusCode::UNAUTHORIZED, &json!("authentication_failed")));
        let (status, body) = send(app.req(&shop, Method::POST, "/products").body("{")).await;
        assert_eq!((status, &body["code"]), (StatusCode::BAD_REQUEST, &json!("invalid_request")));
        let (status, body) = send(app.req(&shop, Method::DELETE, "/products")).await;
        assert_eq!((status, &body["code"]), (StatusCode::METHOD_NOT_ALLOWED, &json!("method_not_allowed")));
        let keyed = |body: Value| app.req(&shop, Method::POST, "/customers").header("idempotency-key", "k-1").json(&body);
        let (status, _) = send(keyed(customer_body())).await;
        assert_eq!(status, StatusCode::CREATED);
        let mut other = customer_body();
        other["email"] = json!("other@example.com");
        let (status, body) = send(keyed(other)).await;
        assert_eq!((status, &body["code"]), (StatusCode::UNPROCESSABLE_ENTITY, &json!("idempotency_error")));
        assert!(body["errors"]["Idempotency-Key"].is_array());
        // An authorization voided twice: the second is refused for its state.
        let mut body = test_product_body();
        body["transaction_type"] = json!("authorization");
        let product = app.product(&shop, &body).await;
        let page = app.pay(product["id"].as_str().unwrap(), cards::SUCCESS, &[]).await;
        assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.html);
        let (_, payments) = app.get(&shop, "/payments").await;
        let void = format!("/payments/{}/void", payments[0]["id"].as_str().unwrap());
        assert_eq!(app.post(&shop, &void, &json!({})).await.0, StatusCode::OK);
        let (status, body) = app.post(&shop, &void, &json!({})).await;
        assert_eq!((status, &body["code"]), (StatusCode::CONFLICT, &json!("invalid_state")));
    }

    async fn metrics_are_off_until_a_token_is_set(app) {
        let response = app.anon(Method::GET, "/metrics").send().await.unwrap();
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
    }

    async fn metrics_count_requests_payments_and_deliveries(app) {
        let app = TestApp::spawn_with(app.backend, ConfigArgs {
            metrics_token: Some(METRICS_TOKEN.into()),
            ..Default::default()
        }).await;
        for token in [None, Some("wrong-token-of-some-length")] {
            let mut request = app.anon(Method::GET, "/metrics");
            if let Some(token) = token {
                request = request.bearer_auth(token);
            }
            let response = request.send().await.unwrap();
            assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
            assert_eq!(response.headers()["www-authenticate"], "Bearer realm=\"metrics\"");
        }
        let before = scrape(&app).await;
        let shop = app.shop("Shop").await;
        let product = app.product(&shop, &test_product_body()).await;
        app.get(&shop, &format!("/products/{}", product["id"].as_str().unwrap())).await;
        app.get(&shop, "/products/prd_0000000000000000").await;
        let page = app.pay(product["id"].as_str().unwrap(), cards::SUCCESS, &[]).await;
        assert_eq!(page.status, StatusCode::SEE_OTHER);
        let page = app.pay(product["id"].as_str().unwrap(), cards::DECLINED, &[]).await;
        assert_eq!(page.status, StatusCode::PAYMENT_REQUIRED);
        let after = scrape(&app).await;

        let moved = |name: &str, labels: &[(&str, &str)]| sample(&after, name, labels) - sample(&before, name, labels);
        let created = [("method", "POST"), ("route", "/products"), ("status", "201")];
        assert!(moved("paydesk_http_requests_total", &created) >= 1.0, "{after}");
        let missing = [("method", "GET"), ("route", "/products/{id}"), ("status", "404")];
        assert!(moved("paydesk_http_requests_total", &missing) >= 1.0);
        let timed = [("method", "GET"), ("route", "/products/{id}")];
        assert!(moved("paydesk_http_request_duration_seconds_count", &timed) >= 2.0);
        assert!(sample(&after, "paydesk_http_request_duration_seconds_bucket", &[("le", "+Inf")]) >= 1.0);
        for outcome in ["succeeded", "failed"] {
            let labels = [("outcome", outcome), ("source", "hosted")];
            assert!(moved("paydesk_payments_total", &labels) >= 1.0, "{outcome}: {after}");
        }
        // Levels read at scrape time.
        for series in ["paydesk_subscriptions_due", "paydesk_webhook_queue_depth"] {
            assert!(after.lines().any(|l| l.starts_with(&format!("{series} "))), "{series}: {after}");
        }
        assert!(sample(&after, "paydesk_db_pool_connections", &[("state", "idle")]) >= 0.0);
        assert!(after.contains("# TYPE paydesk_db_pool_connections gauge"));
        assert!(after.contains("# HELP paydesk_payments_total"));

        // A webhook delivery counts by its outcome.
        let receiver = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", receiver.local_addr().unwrap());
        drop(receiver);
        let (status, _) = app.post(&shop, "/webhook_endpoints", &json!({"url": url})).await;
        assert_eq!(status, StatusCode::CREATED);
        app.product(&shop, &test_product_body()).await;
        let (status, _) = app.post(&shop, "/products", &json!({})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
        let page = app.pay(product["id"].as_str().unwrap(), cards::SUCCESS, &[]).await;
        assert_eq!(page.status, StatusCode::SEE_OTHER);
        // Sent here or by the instance's own worker, which may have claimed it first.
        let mut delivered = String::new();
        let patience = Patience::start();
        while !patience.spent() {
            paydesk::services::webhooks::deliver_due(&app.state, chrono::Utc::now()).await.unwrap();
            delivered = scrape(&app).await;
            let retrying = sample(&delivered, "paydesk_webhook_deliveries_total", &[("outcome", "retrying")])
                - sample(&after, "paydesk_webhook_deliveries_total", &[("outcome", "retrying")]);
            if retrying >= 1.0 {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        panic!("no delivery counted: {delivered}");
    }
}

/// `paydesk serve` as a child process over `app`'s database, with `env` set.
async fn serve(app: &TestApp, env: &[(&str, &str)], log: &std::path::Path) -> (std::process::Child, TestApp, u16) {
    let port = free_port();
    let mut command = paydesk(&app.database_url);
    command.env("PAYDESK_LISTEN", format!("127.0.0.1:{port}")).env("PAYDESK_SCHEDULER", "off");
    for (name, value) in env {
        command.env(name, value);
    }
    let mut child =
        command.arg("serve").stdout(Stdio::null()).stderr(std::fs::File::create(log).unwrap()).spawn().unwrap();
    let served = app.pointed_at(format!("http://127.0.0.1:{port}"));
    let patience = Patience::start();
    while !patience.spent() {
        if served.client.get(format!("{}/healthz", served.base)).send().await.is_ok() {
            return (child, served, port);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    child.kill().ok();
    child.wait().ok();
    panic!("paydesk serve did not start");
}

db_tests! {
    async fn json_logs_carry_the_request_id_on_every_line(app) {
        let dir = tempfile::tempdir().unwrap();
        let log_path = dir.path().join("paydesk.log");
        let env = [("PAYDESK_LOG_FORMAT", "json"), ("RUST_LOG", "debug,sqlx=warn,sea_orm=warn,hyper=warn")];
        let (mut child, served, _) = serve(&app, &env, &log_path).await;
        let shop = app.shop("Shop").await;
        let refused = served.req(&shop, Method::POST, "/products").header("x-request-id", "probe-422").json(&json!({}));
        assert_eq!(send(refused).await.0, StatusCode::UNPROCESSABLE_ENTITY);
        let fine = served.req(&shop, Method::GET, "/products").header("x-request-id", "probe-200");
        assert_eq!(send(fine).await.0, StatusCode::OK);
        child.kill().ok();
        child.wait().ok();

        let log = std::fs::read_to_string(&log_path).unwrap();
        let lines: Vec<Value> = log
            .lines()
            .map(|line| serde_json::from_str(line).unwrap_or_else(|_| panic!("not a JSON line: {line}")))
            .collect();
        let of = |id: &str| -> Vec<&Value> { lines.iter().filter(|l| l["span"]["request_id"] == id).collect() };
        let refused = of("probe-422");
        assert!(!refused.is_empty(), "{log}");
        let end = refused.iter().find(|l| l["fields"]["message"] == "refused").expect("the refusal is logged");
        assert_eq!(end["level"], "DEBUG");
        assert_eq!(end["fields"]["status"], 422);
        assert_eq!(end["span"]["path"], "/products");
        assert!(end["fields"]["reason"].as_str().unwrap().contains("Name can't be blank"), "{end}");
        assert!(end["timestamp"].is_string());
        assert!(of("probe-200").iter().any(|l| l["fields"]["message"] == "answered"));
    }

    async fn a_stop_lets_the_request_in_flight_finish(app) {
        let dir = tempfile::tempdir().unwrap();
        let log_path = dir.path().join("paydesk.log");
        let (mut child, served, port) = serve(&app, &[("PAYDESK_SHUTDOWN_SECONDS", "20")], &log_path).await;
        let shop = app.shop("Shop").await;
        let body = product_body().to_string();
        let (first, rest) = body.split_at(body.len() / 2);
        let auth = base64_basic(&shop);
        // A slow client: the headers and half the body, then the stop, then the rest.
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream.set_read_timeout(Some(PATIENCE)).unwrap();
        write!(
            stream,
            "POST /products HTTP/1.1\r\nHost: x\r\nAuthorization: Basic {auth}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{first}",
            body.len()
        )
        .unwrap();
        stream.flush().unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        let killed = std::process::Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
        assert!(killed.success());
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(child.try_wait().unwrap().is_none(), "it waits for the request in flight");
        // Once it has heard the stop (however busy the machine), it takes no new connection.
        let stopped_listening = async || std::net::TcpStream::connect(("127.0.0.1", port)).is_err().then_some(());
        eventually("no new connections once stopping", Duration::from_millis(50), stopped_listening).await;
        stream.write_all(rest.as_bytes()).unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
        let mut status = None;
        let patience = Patience::start();
        while !patience.spent() {
            status = child.try_wait().unwrap();
            if status.is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let status = status.expect("it exits once the request is answered");
        assert!(status.success(), "{status}: {}", std::fs::read_to_string(&log_path).unwrap());
        let (_, products) = served.pointed_at(app.base.clone()).get(&shop, "/products").await;
        assert_eq!(products.as_array().unwrap().len(), 1, "the product was stored");
    }
}

fn base64_basic(shop: &Shop) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(format!("{}:{}", shop.id, shop.secret))
}

/// Whether the connections of `db` to PostgreSQL are encrypted.
async fn encrypted(db: &sea_orm::DatabaseConnection) -> bool {
    use sea_orm::{ConnectionTrait, Statement};
    let sql = "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()";
    let row = db.query_one(Statement::from_string(sea_orm::DatabaseBackend::Postgres, sql)).await.unwrap().unwrap();
    row.try_get("", "ssl").unwrap()
}

#[tokio::test]
async fn postgres_on_this_machine_is_reached_without_tls_unless_the_address_asks_for_it() {
    let url = postgres_url();
    assert!(url.contains("127.0.0.1") || url.contains("localhost"), "the tests' server runs on this machine: {url}");
    let plain = paydesk::db::connect(&url, 1).await.unwrap();
    assert!(!encrypted(&plain).await, "nothing sent on this machine leaves it");
    plain.close().await.unwrap();
    // The server here offers TLS; an address that asks for it gets it.
    let separator = if url.contains('?') { '&' } else { '?' };
    let asked = paydesk::db::connect(&format!("{url}{separator}sslmode=require"), 1).await.unwrap();
    assert!(encrypted(&asked).await, "sslmode=require is done as said");
    asked.close().await.unwrap();
}
