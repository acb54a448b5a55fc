//! The limits paydesk is measured against, served by this benchmark's own process: a bare axum
//! handler answering paydesk's bytes from memory (the framework's limit), and the same read
//! and single-row insert done straight through sqlx with paydesk's pool settings (the
//! storage's limit).

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use chrono::Utc;
use sea_orm::sqlx::postgres::PgPoolOptions;
use sea_orm::sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sea_orm::sqlx::{self, PgPool, SqlitePool};

#[derive(Clone)]
enum Pool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// What the limit handlers need: the bytes paydesk answers, the database, and the product
/// read (its shop and id) and copied by inserts.
struct Limits {
    bytes: Vec<u8>,
    /// The bytes of paydesk's first page of 100 products.
    page: Vec<u8>,
    pool: Pool,
    shop_id: i64,
    product_id: String,
    visible_fields: String,
    transaction_type: String,
}

/// Serves the limits on a free port; answers its base URL.
pub async fn serve(
    database_url: &str,
    connections: u32,
    shop_id: i64,
    product_id: &str,
    bytes: Vec<u8>,
    page: Vec<u8>,
) -> String {
    let pool = if database_url.starts_with("sqlite:") {
        let options = SqliteConnectOptions::from_str(database_url)
            .unwrap()
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(10))
            .foreign_keys(true)
            .row_buffer_size(paydesk::db::ROW_BUFFER);
        let pool = SqlitePoolOptions::new().max_connections(connections).test_before_acquire(false);
        Pool::Sqlite(pool.connect_with(options).await.unwrap())
    } else {
        let pool = PgPoolOptions::new().max_connections(connections).test_before_acquire(false);
        Pool::Postgres(pool.connect(database_url).await.unwrap())
    };
    let sql = "SELECT visible_fields, transaction_type FROM products WHERE id = $1";
    let (visible_fields, transaction_type): (String, String) = match &pool {
        Pool::Sqlite(p) => sqlx::query_as(sql).bind(product_id).fetch_one(p).await.unwrap(),
        Pool::Postgres(p) => sqlx::query_as(sql).bind(product_id).fetch_one(p).await.unwrap(),
    };
    let limits = Arc::new(Limits {
        bytes,
        page,
        pool,
        shop_id,
        product_id: product_id.into(),
        visible_fields,
        transaction_type,
    });
    let app = Router::new()
        .route("/bare", get(bare))
        .route("/bare_page", get(bare_page))
        .route("/read", get(read))
        .route("/list", get(list))
        .route("/insert", post(insert))
        .with_state(limits);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    base
}

fn answer(bytes: &[u8], status: u16) -> impl IntoResponse + use<> {
    let status = axum::http::StatusCode::from_u16(status).unwrap();
    (status, [(CONTENT_TYPE, "application/json")], bytes.to_vec())
}

async fn bare(State(limits): State<Arc<Limits>>) -> impl IntoResponse {
    answer(&limits.bytes, 200)
}

async fn bare_page(State(limits): State<Arc<Limits>>) -> impl IntoResponse {
    answer(&limits.page, 200)
}

async fn read(State(limits): State<Arc<Limits>>) -> impl IntoResponse {
    let sql = "SELECT * FROM products WHERE shop_id = $1 AND id = $2";
    let found = match &limits.pool {
        Pool::Sqlite(p) => {
            sqlx::query(sql).bind(limits.shop_id).bind(&limits.product_id).fetch_optional(p).await.unwrap().is_some()
        }
        Pool::Postgres(p) => {
            sqlx::query(sql).bind(limits.shop_id).bind(&limits.product_id).fetch_optional(p).await.unwrap().is_some()
        }
    };
    assert!(found);
    answer(&limits.bytes, 200)
}

async fn list(State(limits): State<Arc<Limits>>) -> impl IntoResponse {
    let sql = "SELECT * FROM products WHERE shop_id = $1 ORDER BY seq DESC LIMIT 100";
    let rows = match &limits.pool {
        Pool::Sqlite(p) => sqlx::query(sql).bind(limits.shop_id).fetch_all(p).await.unwrap().len(),
        Pool::Postgres(p) => sqlx::query(sql).bind(limits.shop_id).fetch_all(p).await.unwrap().len(),
    };
    assert_eq!(rows, 100);
    answer(&limits.page, 200)
}

async fn insert(State(limits): State<Arc<Limits>>) -> impl IntoResponse {
    let sql = "INSERT INTO products (id, shop_id, name, description, currency, amount, quantity, infinite, \
               visible_fields, test, immortal, expired_at, return_url, notification_url, language, \
               transaction_type, created_at, updated_at) \
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)";
    let id = paydesk::domain::ids::new_id("prd_");
    let now = Utc::now();
    macro_rules! bound {
        ($pool:expr) => {
            sqlx::query(sql)
                .bind(&id)
                .bind(limits.shop_id)
                .bind("Poster")
                .bind("A2 print")
                .bind("USD")
                .bind(1500_i64)
                .bind(None::<i64>)
                .bind(true)
                .bind(&limits.visible_fields)
                .bind(true)
                .bind(true)
                .bind(None::<chrono::DateTime<Utc>>)
                .bind(None::<String>)
                .bind(None::<String>)
                .bind("en")
                .bind(&limits.transaction_type)
                .bind(now)
                .bind(now)
                .execute($pool)
                .await
                .map(|_| ())
                .unwrap()
        };
    }
    match &limits.pool {
        Pool::Sqlite(p) => bound!(p),
        Pool::Postgres(p) => bound!(p),
    }
    answer(&limits.bytes, 201)
}
