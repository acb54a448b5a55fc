//! `TestApp`: the app served on a free port over a fresh database, and request helpers.

use paydesk::app;
use paydesk::config::{Config, ConfigArgs};
use paydesk::web::state::AppState;
use reqwest::{Method, RequestBuilder, StatusCode};
use sea_orm::{ConnectionTrait, Database};
use serde_json::Value;
use std::time::{Duration, Instant};
use tokio::sync::OnceCell;

/// How long a test waits for work it cannot hurry (a server or a browser starting or
/// answering, a mail, a delivery or a payment arriving, a child process exiting) before it
/// fails. Generous, so that no verdict depends on how busy the machine is; a passing test
/// waits only as long as the work takes, since each wait polls as often as it always did.
pub const PATIENCE: Duration = Duration::from_secs(120);

/// A wait bounded by [`PATIENCE`] from the moment it starts.
pub struct Patience(Instant);

impl Patience {
    pub fn start() -> Patience {
        Self::times(1)
    }

    /// A wait `n` times as long, for work known to take long (a month of hourly renewals).
    pub fn times(n: u32) -> Patience {
        Patience(Instant::now() + PATIENCE * n)
    }

    /// Whether the wait has run out.
    pub fn spent(&self) -> bool {
        Instant::now() >= self.0
    }
}

/// Asks `check` every `every` until it answers `Some`, and returns that; fails naming `what`
/// once [`PATIENCE`] has run out.
pub async fn eventually<T>(what: &str, every: Duration, mut check: impl AsyncFnMut() -> Option<T>) -> T {
    let patience = Patience::start();
    loop {
        if let Some(found) = check().await {
            return found;
        }
        assert!(!patience.spent(), "{what}: not within {} s", PATIENCE.as_secs());
        tokio::time::sleep(every).await;
    }
}

/// Where a test's database lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// The PostgreSQL server the tests use; CI points it at the machine's server.
/// The key-encryption key of the tests' instances (in-process and child processes alike).
pub const TEST_KEK: &str = "cGF5ZGVzay10ZXN0LWtleS1lbmNyeXB0aW9uLWtleSE=";

pub fn postgres_url() -> String {
    std::env::var("PAYDESK_TEST_POSTGRES_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into())
}

/// Runs one test body on SQLite and on PostgreSQL, as `name::sqlite` and `name::postgres`.
macro_rules! db_tests {
    ($($(#[$meta:meta])* async fn $name:ident($app:ident) $body:block)*) => {$(
        $(#[$meta])*
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            async fn run($app: $crate::helpers::TestApp) $body
            #[tokio::test]
            async fn sqlite() {
                run($crate::helpers::TestApp::spawn($crate::helpers::Backend::Sqlite).await).await
            }
            #[tokio::test]
            async fn postgres() {
                run($crate::helpers::TestApp::spawn($crate::helpers::Backend::Postgres).await).await
            }
        }
    )*};
}

/// Like `db_tests!`, for tests that spawn the app themselves (with settings of their own):
/// each gets the backend to spawn it on.
macro_rules! backend_tests {
    ($($(#[$meta:meta])* async fn $name:ident($backend:ident) $body:block)*) => {$(
        $(#[$meta])*
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            async fn run($backend: $crate::helpers::Backend) $body
            #[tokio::test]
            async fn sqlite() {
                run($crate::helpers::Backend::Sqlite).await
            }
            #[tokio::test]
            async fn postgres() {
                run($crate::helpers::Backend::Postgres).await
            }
        }
    )*};
}

/// A shop's API credentials.
#[derive(Clone, Debug)]
pub struct Shop {
    pub id: i64,
    pub secret: String,
}

/// The app, serving on 127.0.0.1 over its own database.
pub struct TestApp {
    pub backend: Backend,
    pub base: String,
    pub client: reqwest::Client,
    pub database_url: String,
    pub db: sea_orm::DatabaseConnection,
    pub state: AppState,
    _dir: std::sync::Arc<tempfile::TempDir>,
}

static OLD_SCHEMAS_DROPPED: OnceCell<()> = OnceCell::const_new();

/// A fresh PostgreSQL schema, and a URL whose connections use it.
pub async fn postgres_schema() -> String {
    let admin = Database::connect(postgres_url())
        .await
        .unwrap_or_else(|e| panic!("PostgreSQL at {} is unreachable: {e}", postgres_url()));
    OLD_SCHEMAS_DROPPED
        .get_or_init(|| async {
            // Schemas left by earlier runs of the suite.
            let old = admin
                .query_all(sea_orm::Statement::from_string(
                    admin.get_database_backend(),
                    "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'paydesk_t_%'",
                ))
                .await
                .expect("list old schemas");
            for row in old {
                let name: String = row.try_get("", "nspname").unwrap();
                admin.execute_unprepared(&format!("DROP SCHEMA IF EXISTS {name} CASCADE")).await.ok();
            }
        })
        .await;
    let schema = format!("paydesk_t_{}", paydesk::domain::ids::random_hex(8));
    admin.execute_unprepared(&format!("CREATE SCHEMA {schema}")).await.expect("create schema");
    let sep = if postgres_url().contains('?') { '&' } else { '?' };
    format!("{}{sep}options=-c%20search_path%3D{schema}", postgres_url())
}

impl TestApp {
    /// Serves the app on a free port over a fresh database of `backend`.
    pub async fn spawn(backend: Backend) -> TestApp {
        Self::spawn_with(backend, ConfigArgs::default()).await
    }

    /// Like [`TestApp::spawn`], with settings of `args` (database, listen and checkout URL are the test's).
    pub async fn spawn_with(backend: Backend, args: ConfigArgs) -> TestApp {
        let dir = tempfile::tempdir().unwrap();
        let database_url = match backend {
            Backend::Sqlite => format!("sqlite://{}?mode=rwc", dir.path().join("paydesk.db").display()),
            Backend::Postgres => postgres_schema().await,
        };
        Self::spawn_in(backend, dir, database_url, args).await
    }

    /// Serves the app over the database at `database_url` (migrated first), as [`TestApp::spawn_with`].
    pub async fn spawn_at(backend: Backend, database_url: &str, args: ConfigArgs) -> TestApp {
        Self::spawn_in(backend, tempfile::tempdir().unwrap(), database_url.to_string(), args).await
    }

    async fn spawn_in(backend: Backend, dir: tempfile::TempDir, database_url: String, args: ConfigArgs) -> TestApp {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let config = Config::from_args(&ConfigArgs {
            database_url: Some(database_url.clone()),
            listen: Some(addr.to_string()),
            checkout_url: Some("https://checkout.paydesk.test".into()),
            key_encryption_key: args.key_encryption_key.clone().or_else(|| Some(TEST_KEK.into())),
            webhooks_allow_private: args.webhooks_allow_private.clone().or_else(|| Some("on".into())),
            ..args
        })
        .unwrap();
        let db = app::open_database(&config).await.expect("open and migrate the database");
        let state = AppState::new(db.clone(), config).expect("the state of the app");
        tokio::spawn(app::run(listener, state.clone()));
        let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        TestApp {
            backend,
            base: format!("http://{addr}"),
            client,
            database_url,
            db,
            state,
            _dir: std::sync::Arc::new(dir),
        }
    }

    /// The same database, with requests sent to another server at `base` (a `paydesk` process).
    pub fn pointed_at(&self, base: String) -> TestApp {
        TestApp {
            backend: self.backend,
            base,
            client: self.client.clone(),
            database_url: self.database_url.clone(),
            db: self.db.clone(),
            state: self.state.clone(),
            _dir: self._dir.clone(),
        }
    }

    /// A new shop.
    pub async fn shop(&self, name: &str) -> Shop {
        self.shop_with_url(name, None).await
    }

    /// A new shop with a registered URL (where customers return after paying).
    pub async fn shop_with_url(&self, name: &str, url: Option<&str>) -> Shop {
        let created = paydesk::services::keys::create_shop(
            &self.db,
            &self.state.vault,
            name,
            url.map(str::to_string),
            chrono::Utc::now(),
        )
        .await
        .unwrap();
        Shop { id: created.shop.id, secret: created.secret_key }
    }

    /// A request without credentials.
    pub fn anon(&self, method: Method, path: &str) -> RequestBuilder {
        self.client.request(method, format!("{}{path}", self.base))
    }

    /// A request as `shop`.
    pub fn req(&self, shop: &Shop, method: Method, path: &str) -> RequestBuilder {
        self.anon(method, path).basic_auth(shop.id, Some(&shop.secret))
    }

    /// GET as `shop`: status and JSON body.
    pub async fn get(&self, shop: &Shop, path: &str) -> (StatusCode, Value) {
        send(self.req(shop, Method::GET, path)).await
    }

    /// POST JSON as `shop`: status and JSON body.
    pub async fn post(&self, shop: &Shop, path: &str, body: &Value) -> (StatusCode, Value) {
        send(self.req(shop, Method::POST, path).json(body)).await
    }

    /// PUT JSON as `shop`: status and JSON body (`null` when empty).
    pub async fn put(&self, shop: &Shop, path: &str, body: &Value) -> (StatusCode, Value) {
        send(self.req(shop, Method::PUT, path).json(body)).await
    }

    /// Creates a product and returns it.
    pub async fn product(&self, shop: &Shop, body: &Value) -> Value {
        let (status, product) = self.post(shop, "/products", body).await;
        assert_eq!(status, StatusCode::CREATED, "{product}");
        product
    }
}

/// Sends a request; the status and the body as JSON (`null` for an empty body).
pub async fn send(request: RequestBuilder) -> (StatusCode, Value) {
    let response = request.send().await.expect("request");
    let status = response.status();
    let text = response.text().await.unwrap();
    let body = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or_else(|_| panic!("{status}: body is not JSON: {text}"))
    };
    (status, body)
}

/// A valid product request.
pub fn product_body() -> Value {
    serde_json::json!({
        "name": "Gift card",
        "description": "A card worth 9.90",
        "currency": "EUR",
        "amount": "990",
        "quantity": "5",
        "expired_at": "2030-06-30T23:59:59+02:00",
    })
}

/// A valid plan request.
pub fn plan_body() -> Value {
    serde_json::json!({
        "title": "Gold",
        "currency": "EUR",
        "plan": {"amount": 990, "interval": 1, "interval_unit": "month"},
    })
}

/// A valid customer request.
pub fn customer_body() -> Value {
    serde_json::json!({"email": "ann@example.com", "ip": "203.0.113.9"})
}

/// Asserts a 422 whose `errors` has exactly `messages` for `field`.
pub fn assert_invalid(status: StatusCode, body: &Value, field: &str, messages: &[&str]) {
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["errors"][field], serde_json::json!(messages), "{field}: {body}");
    assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()), "{body}");
}

/// Whether `s` is a UTC time with milliseconds: `2026-11-22T10:15:30.123Z`.
pub fn is_api_time(s: &Value) -> bool {
    let s = s.as_str().unwrap_or("");
    s.len() == 24 && s.ends_with('Z') && chrono::DateTime::parse_from_rfc3339(s).is_ok() && s.as_bytes()[19] == b'.'
}

/// A test product request: test mode, so the simulated acquirer takes test cards.
pub fn test_product_body() -> Value {
    let mut body = product_body();
    body["test"] = serde_json::json!(true);
    body
}

/// An opened hosted form: its CSRF token, the cookie that goes with it, and its checkout
/// attempt (one payment per attempt).
#[derive(Clone)]
pub struct OpenForm {
    pub csrf: String,
    pub cookie: String,
    pub attempt: String,
}

/// The value of the hidden field `name` of a page.
pub fn hidden(html: &str, name: &str) -> Option<String> {
    let marker = format!("name=\"{name}\" value=\"");
    let start = html.find(&marker)? + marker.len();
    Some(html[start..].split('"').next()?.to_string())
}

/// An HTML answer.
pub struct Page {
    pub status: StatusCode,
    pub headers: reqwest::header::HeaderMap,
    pub html: String,
}

impl Page {
    /// Where a redirect points.
    pub fn location(&self) -> &str {
        self.headers.get(reqwest::header::LOCATION).map(|v| v.to_str().unwrap()).unwrap_or("")
    }
}

impl TestApp {
    /// GETs a page as a browser would.
    pub async fn page(&self, path: &str) -> Page {
        let response = self.anon(Method::GET, path).header("accept", "text/html").send().await.unwrap();
        Page { status: response.status(), headers: response.headers().clone(), html: response.text().await.unwrap() }
    }

    /// Opens a hosted form: the page must show one.
    pub async fn open_form(&self, path: &str) -> OpenForm {
        let page = self.page(path).await;
        assert_eq!(page.status, StatusCode::OK, "{}", page.html);
        let cookie = page.headers.get("set-cookie").expect("a CSRF cookie").to_str().unwrap();
        let cookie = cookie.split(';').next().unwrap().to_string();
        let csrf = hidden(&page.html, "csrf").expect("a CSRF field");
        let attempt = hidden(&page.html, "attempt").expect("a checkout attempt");
        OpenForm { csrf, cookie, attempt }
    }

    /// Submits a hosted form with `fields` (the CSRF token and the attempt are added).
    pub async fn submit(&self, path: &str, form: &OpenForm, fields: &[(&str, &str)]) -> Page {
        let mut pairs: Vec<(&str, &str)> = vec![("csrf", &form.csrf), ("attempt", &form.attempt)];
        pairs.extend_from_slice(fields);
        let body = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs).finish();
        let response = self
            .anon(Method::POST, path)
            .header("cookie", &form.cookie)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await
            .unwrap();
        Page { status: response.status(), headers: response.headers().clone(), html: response.text().await.unwrap() }
    }

    /// Opens and submits a product's form with a card and `details`.
    pub async fn pay(&self, product_id: &str, number: &str, details: &[(&str, &str)]) -> Page {
        let path = format!("/products/{product_id}/pay");
        let form = self.open_form(&path).await;
        let mut fields = card(number);
        fields.extend_from_slice(details);
        self.submit(&path, &form, &fields).await
    }
}

/// The card fields of a form, with an expiry in the future.
pub fn card(number: &str) -> Vec<(&str, &str)> {
    vec![
        ("card_number", number),
        ("card_exp_month", "12"),
        ("card_exp_year", "2031"),
        ("card_cvc", "987"),
        ("card_holder", "Ann Lee"),
    ]
}

/// Test cards of the simulated acquirer.
pub mod cards {
    pub const SUCCESS: &str = "4200000000000000";
    pub const DECLINED: &str = "4005550000000019";
    pub const INSUFFICIENT_FUNDS: &str = "4000000000009995";
    pub const PROCESSING_ERROR: &str = "4000000000000119";
    pub const SUCCEEDS_THEN_DECLINES: &str = "4000000000000341";
}

/// Copies the payment `id` `rows` times, each a second older than the one before (new ids,
/// every tenth declined), then has the database gather its statistics as paydesk's hourly
/// upkeep does.
pub async fn copy_payment(app: &TestApp, id: &str, rows: i64) {
    let status = "CASE WHEN n.i % 10 = 0 THEN 'failed' ELSE status END".to_string();
    copy_rows::<paydesk::db::entities::payments::Entity>(app, id, rows, &[("status", status)]).await;
}

/// Copies the shop's customer with the e-mail `email` `rows` times (`ann@example.com.1`…).
pub async fn copy_customer(app: &TestApp, shop: &Shop, email: &str, rows: i64) {
    use paydesk::db::entities::customers;
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
    let customer = customers::Entity::find()
        .filter(customers::Column::ShopId.eq(shop.id))
        .filter(customers::Column::Email.eq(email))
        .one(&app.db)
        .await
        .unwrap()
        .unwrap();
    copy_rows::<customers::Entity>(app, &customer.id, rows, &[("email", "email || '.' || n.i".to_string())]).await;
}

/// Copies the row of `E` whose id is `id` `rows` times in SQL, each a second older than the
/// one before (on SQLite in the text the driver writes), with `changed` columns computed from
/// the copy's number `n.i`; then gathers statistics.
pub async fn copy_rows<E: sea_orm::EntityTrait>(app: &TestApp, id: &str, rows: i64, changed: &[(&str, String)]) {
    use sea_orm::{ConnectionTrait, Iterable};
    let postgres = app.db.get_database_backend() == sea_orm::DatabaseBackend::Postgres;
    let table = sea_orm::IdenStatic::as_str(&E::default()).to_string();
    let columns: Vec<String> = E::Column::iter().map(|c| sea_orm::IdenStatic::as_str(&c).to_string()).collect();
    let columns: Vec<String> = columns.into_iter().filter(|c| c != "seq").collect();
    let older = if postgres {
        "created_at - make_interval(secs => n.i)".to_string()
    } else {
        "strftime('%Y-%m-%dT%H:%M:%f', created_at, '-' || n.i || ' seconds') || '+00:00'".to_string()
    };
    let values: Vec<String> = columns
        .iter()
        .map(|c| match c.as_str() {
            "id" => "id || '_' || n.i".to_string(),
            "created_at" => older.clone(),
            other => {
                changed.iter().find(|(name, _)| *name == other).map_or(other.to_string(), |(_, value)| value.clone())
            }
        })
        .collect();
    let sql = format!(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {rows}) \
         INSERT INTO {table} ({}) SELECT {} FROM {table}, n WHERE {table}.id = '{id}'",
        columns.join(", "),
        values.join(", ")
    );
    app.db.execute_unprepared(&sql).await.unwrap();
    app.db.execute_unprepared(if postgres { "ANALYZE" } else { "PRAGMA optimize = 0x10002" }).await.unwrap();
    if postgres {
        // As autovacuum would after such growth: it also merges the rows a GIN index keeps
        // aside for later into the index, which the planner otherwise prices as a scan.
        app.db.execute_unprepared(&format!("VACUUM {table}")).await.unwrap();
    }
}
