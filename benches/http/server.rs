//! paydesk as its users run it: the release binary in its own process over a fresh database.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

pub const KEK: &str = "YmVuY2htYXJrLWtleS1lbmNyeXB0aW9uLWtleS0zMiE=";
pub const PASSWORD: &str = "correct horse battery";

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Sqlite => "SQLite",
            Backend::Postgres => "PostgreSQL",
        }
    }
}

/// A fresh database: an SQLite file in a temporary folder, or a new PostgreSQL schema
/// (dropped again with the value).
pub struct Fresh {
    pub url: String,
    schema: Option<String>,
    _dir: tempfile::TempDir,
}

pub fn postgres_url() -> String {
    std::env::var("PAYDESK_TEST_POSTGRES_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into())
}

impl Fresh {
    pub async fn new(backend: Backend) -> Fresh {
        let dir = tempfile::tempdir().unwrap();
        match backend {
            Backend::Sqlite => Fresh {
                url: format!("sqlite://{}?mode=rwc", dir.path().join("bench.db").display()),
                schema: None,
                _dir: dir,
            },
            Backend::Postgres => {
                let schema = format!("paydesk_bench_{}", paydesk::domain::ids::random_hex(4));
                psql(&format!("CREATE SCHEMA {schema}"));
                let url = format!("{}?options=-c%20search_path%3D{schema}", postgres_url());
                Fresh { url, schema: Some(schema), _dir: dir }
            }
        }
    }
}

impl Drop for Fresh {
    fn drop(&mut self) {
        if let Some(schema) = &self.schema {
            psql(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE"));
        }
    }
}

fn psql(sql: &str) {
    let ok = Command::new("psql")
        .args(["-q", "-v", "ON_ERROR_STOP=1", &postgres_url(), "-c", "SET client_min_messages = warning", "-c", sql])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "psql: {sql}");
}

/// A running `paydesk serve`; killed with the value.
pub struct Server {
    pub base: String,
    pub child: Child,
}

/// This build's `paydesk`.
pub const THIS: &str = env!("CARGO_BIN_EXE_paydesk");

fn paydesk(binary: &str, url: &str) -> Command {
    let mut cmd = Command::new(binary);
    cmd.env("DATABASE_URL", url)
        .env("PAYDESK_KEY_ENCRYPTION_KEY", KEK)
        .env("PAYDESK_SCHEDULER", "off")
        .env("RUST_LOG", std::env::var("PAYDESK_BENCH_LOG").unwrap_or_else(|_| "warn".into()))
        .env("PAYDESK_API_AUTH_FAILURES", "1000000");
    cmd
}

impl Server {
    /// `binary` (this build's, [`THIS`], or an earlier one) serving `url`.
    pub async fn start(binary: &str, url: &str) -> Server {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let base = format!("http://127.0.0.1:{port}");
        let child = paydesk(binary, url)
            .arg("serve")
            .env("PAYDESK_LISTEN", format!("127.0.0.1:{port}"))
            .env("PAYDESK_BASE_URL", &base)
            .stdout(Stdio::null())
            .spawn()
            .expect("start paydesk");
        let server = Server { base, child };
        for _ in 0..200 {
            if reqwest::get(format!("{}/healthz", server.base)).await.is_ok_and(|r| r.status().is_success()) {
                return server;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("paydesk did not start");
    }

    /// The most memory the server has held (VmHWM), in MiB.
    pub fn peak_mib(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        let kib: f64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(f64::NAN);
        kib / 1024.0
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A shop made with `paydesk shop create`, with a dashboard user.
#[derive(Clone, Debug)]
pub struct Shop {
    pub id: i64,
    pub secret: String,
    pub email: String,
}

impl Shop {
    /// A shop made by `binary` in the database at `url`.
    pub fn create(binary: &str, url: &str) -> Shop {
        let out =
            paydesk(binary, url).args(["shop", "create", "--name", "Bench"]).output().expect("paydesk shop create");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let created: Value = serde_json::from_slice(&out.stdout).unwrap();
        let id = created["shop_id"].as_i64().unwrap();
        let email = format!("owner{id}@bench.example");
        let mut child = paydesk(binary, url)
            .args(["user", "create", "--shop-id", &id.to_string(), "--email", &email])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        use std::io::Write;
        writeln!(child.stdin.take().unwrap(), "{PASSWORD}").unwrap();
        assert!(child.wait().unwrap().success(), "paydesk user create");
        Shop { id, secret: created["secret_key"].as_str().unwrap().into(), email }
    }

    /// The `Authorization` header of the API.
    pub fn authorization(&self) -> String {
        use base64::Engine;
        let token = base64::engine::general_purpose::STANDARD.encode(format!("{}:{}", self.id, self.secret));
        format!("Authorization: Basic {token}")
    }
}

/// A client of the API and the pages.
pub struct Client {
    pub base: String,
    pub http: reqwest::Client,
    pub shop: Shop,
}

impl Client {
    pub fn new(base: &str, shop: &Shop) -> Client {
        let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        Client { base: base.into(), http, shop: shop.clone() }
    }

    pub async fn post(&self, path: &str, body: &Value) -> Value {
        let (status, _, answer) = self.timed_post(path, body).await;
        assert_eq!(status, StatusCode::CREATED, "POST {path}: {answer}");
        serde_json::from_str(&answer).unwrap()
    }

    /// Posts `body` to `path`: the answer's status, the time it took and its body.
    pub async fn timed_post(&self, path: &str, body: &Value) -> (StatusCode, std::time::Duration, String) {
        let started = std::time::Instant::now();
        let response = self
            .http
            .post(format!("{}{path}", self.base))
            .basic_auth(self.shop.id, Some(&self.shop.secret))
            .json(body)
            .send()
            .await
            .unwrap();
        let status = response.status();
        let answer = response.text().await.unwrap();
        (status, started.elapsed(), answer)
    }

    pub async fn put(&self, path: &str, body: &Value) -> Value {
        let response = self
            .http
            .put(format!("{}{path}", self.base))
            .basic_auth(self.shop.id, Some(&self.shop.secret))
            .json(body)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
        response.json().await.unwrap()
    }

    pub async fn get_text(&self, path: &str) -> String {
        let response = self
            .http
            .get(format!("{}{path}", self.base))
            .basic_auth(self.shop.id, Some(&self.shop.secret))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        response.text().await.unwrap()
    }

    /// Logs the shop's user in: the `Cookie` header of the session.
    pub async fn log_in(&self) -> String {
        let page = self.http.get(format!("{}/dashboard/login", self.base)).send().await.unwrap();
        let cookie = session_cookie(&page).expect("a session cookie with the login form");
        let csrf = hidden(&page.text().await.unwrap(), "csrf");
        let done = self
            .http
            .post(format!("{}/dashboard/login", self.base))
            .header("cookie", &cookie)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form(&[("csrf", csrf.as_str()), ("email", &self.shop.email), ("password", PASSWORD)]))
            .send()
            .await
            .unwrap();
        assert_eq!(done.status(), StatusCode::SEE_OTHER);
        format!("Cookie: {}", session_cookie(&done).unwrap_or(cookie))
    }

    /// Pays `product_id` once through its hosted form with the test card that succeeds: the
    /// time its form's POST took.
    pub async fn pay(&self, product_id: &str, email: &str) -> std::time::Duration {
        let path = format!("{}/products/{product_id}/pay", self.base);
        let page = self.http.get(&path).header("accept", "text/html").send().await.unwrap();
        let cookie = session_cookie(&page).expect("a CSRF cookie");
        let html = page.text().await.unwrap();
        let fields = [
            ("csrf", hidden(&html, "csrf")),
            ("attempt", hidden(&html, "attempt")),
            ("card_number", "4200000000000000".into()),
            ("card_exp_month", "12".into()),
            ("card_exp_year", "2040".into()),
            ("card_cvc", "123".into()),
            ("card_holder", "Ann Lee".into()),
            ("email", email.into()),
        ];
        let fields: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let posted = std::time::Instant::now();
        let done = self
            .http
            .post(&path)
            .header("cookie", cookie)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form(&fields))
            .send()
            .await
            .unwrap();
        let took = posted.elapsed();
        assert!(done.status().is_success() || done.status().is_redirection(), "pay: {}", done.status());
        took
    }
}

fn form(pairs: &[(&str, &str)]) -> String {
    url::form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs).finish()
}

/// The cookie a response sets: the dashboard's session (`pd_session`) when it sets several.
fn session_cookie(response: &reqwest::Response) -> Option<String> {
    let cookies: Vec<&str> = response.headers().get_all("set-cookie").iter().filter_map(|v| v.to_str().ok()).collect();
    let chosen = cookies.iter().find(|c| c.starts_with("pd_session=")).or(cookies.first())?;
    Some(chosen.split(';').next()?.to_string())
}

fn hidden(html: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\" value=\"");
    let start = html.find(&marker).unwrap_or_else(|| panic!("no {name} field")) + marker.len();
    html[start..].split('"').next().unwrap().to_string()
}

/// The body of a product as the benchmark creates them.
pub fn product_body(i: usize) -> Value {
    json!({"name": format!("Poster {i}"), "description": "A2 print", "currency": "USD", "amount": 1500,
           "infinite": true, "immortal": true, "visible_fields": ["email"], "language": "en", "test": true})
}

/// The shop's seller details, complete: its charges are invoiced.
pub fn seller_body() -> Value {
    json!({"legal_name": "Bench GmbH", "address_line1": "Hauptstraße 1", "city": "Berlin",
           "postal_code": "10115", "country": "DE", "vat_id": "DE123456789"})
}

/// The body of a customer as the benchmark creates them.
pub fn customer_body() -> Value {
    json!({"email": "ann@example.com", "ip": "203.0.113.9", "first_name": "Ann", "last_name": "Lee"})
}
