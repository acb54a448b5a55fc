//! The application: the router of all three faces, and the server.

pub mod cli;
pub mod openapi;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use sea_orm::DatabaseConnection;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::compression::CompressionLayer;
use tower_http::compression::predicate::{DefaultPredicate, Predicate, SizeAbove};
use tower_http::set_header::SetResponseHeaderLayer;

use crate::config::Config;
use crate::db;
use crate::db::entities::products;
use crate::frontends::{api, dashboard, notifications, ops, pay};
use crate::web::error::{AppError, Failure};
use crate::web::guard;
use crate::web::guard::BODY_LIMIT;
use crate::web::guard::csp;
use crate::web::state::AppState;

/// The whole HTTP app.
pub fn router(state: AppState) -> Router {
    let policy = HeaderValue::from_str(&csp(&[])).expect("the policy is ASCII");
    let headers = [
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::REFERRER_POLICY, "no-referrer"),
        (HeaderName::from_static("cross-origin-opener-policy"), "same-origin"),
    ];
    let mut app = Router::new()
        .merge(api::router(&state))
        .merge(pay::router())
        .merge(ops::router())
        .merge(notifications::router())
        .merge(crate::app::openapi::router())
        .merge(dashboard::router(&state, Router::new().route("/dashboard/products/{id}/preview", get(preview))))
        .route("/static/paydesk.css", get(|| asset("text/css", include_str!("../../static/paydesk.css"))))
        .route("/static/dashboard.css", get(|| asset("text/css", include_str!("../../static/dashboard.css"))))
        .route("/static/docs.css", get(|| asset("text/css", include_str!("../../static/docs.css"))))
        .route("/static/dashboard.js", get(|| asset("text/javascript", include_str!("../../static/dashboard.js"))))
        .fallback(|| async { AppError::NotFound("Page") })
        .method_not_allowed_fallback(|| async { AppError::MethodNotAllowed })
        .layer(axum::middleware::from_fn(guard::mark_route))
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .layer(axum::middleware::from_fn(guard::refuse_unstorable))
        .layer(CatchPanicLayer::custom(guard::panic_answer))
        .layer(axum::middleware::from_fn(error_pages))
        .layer(axum::middleware::from_fn_with_state(state.clone(), guard::acting));
    if state.config.base_url.starts_with("https://") {
        app = app.layer(SetResponseHeaderLayer::if_not_present(header::STRICT_TRANSPORT_SECURITY, guard::hsts()));
    }
    let mut app = app.with_state(state);
    app = app.layer(SetResponseHeaderLayer::if_not_present(header::CONTENT_SECURITY_POLICY, policy));
    // Answers carry money and personal data: no cache keeps them (static assets say otherwise).
    app =
        app.layer(SetResponseHeaderLayer::if_not_present(header::CACHE_CONTROL, HeaderValue::from_static("no-store")));
    for (name, value) in headers {
        app = app.layer(SetResponseHeaderLayer::if_not_present(name, HeaderValue::from_static(value)));
    }
    // Pages and JSON go compressed to clients that accept it (forms carry their CSRF tokens
    // masked afresh on every page, so compression gives nothing away), from the size of one
    // TCP segment: a smaller answer takes one packet either way, and compressing it cost a
    // create 4 % of its time.
    let worth_compressing = DefaultPredicate::new().and(SizeAbove::new(COMPRESSED_FROM));
    app.layer(axum::middleware::from_fn(guard::observe)).layer(CompressionLayer::new().compress_when(worth_compressing))
}

/// The smallest answer, in bytes, that goes compressed.
pub const COMPRESSED_FROM: u64 = 1400;

/// Who a request is for, which decides how its errors look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Face {
    Api,
    Pay,
    Dashboard,
}

/// The face of a request: by its path, and for paths of no face by what the client accepts
/// (a browser that strays gets a page, a program JSON). A hosted page asked for JSON answers
/// JSON.
fn face(path: &str, accept: &str) -> Face {
    let wants_json = accept.contains("application/json") && !accept.contains("text/html");
    let is_api = API_PATHS.iter().any(|prefix| path == *prefix || path.starts_with(&format!("{prefix}/")));
    if path == "/dashboard" || path.starts_with("/dashboard/") {
        Face::Dashboard
    } else if (guard::is_page(path) && !wants_json) || (!is_api && accept.contains("text/html")) {
        Face::Pay
    } else {
        Face::Api
    }
}

/// The first segments of the API's paths.
const API_PATHS: &[&str] = &[
    "/products",
    "/plans",
    "/customers",
    "/payments",
    "/subscriptions",
    "/test_clocks",
    "/healthz",
    "/metrics",
    "/openapi.json",
];

/// One error path: every error is an [`AppError`] answered as JSON and marked with a
/// [`Failure`]; for the dashboard and the hosted pages that answer becomes their error page,
/// keeping its status and headers (`Retry-After`, `WWW-Authenticate`).
async fn error_pages(request: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let accept = request.headers().get(header::ACCEPT).and_then(|v| v.to_str().ok()).unwrap_or("");
    let face = face(request.uri().path(), accept);
    // Only the dashboard's error page reads the request (for its language).
    let headers = if matches!(face, Face::Dashboard) { request.headers().clone() } else { HeaderMap::new() };
    let response = next.run(request).await;
    let Some(failure) = response.extensions().get::<Failure>().cloned() else { return response };
    let page = match face {
        Face::Api => return response,
        Face::Pay => pay::error_page(response.status(), failure.message),
        Face::Dashboard => dashboard::error_page(response.status(), failure.message, &headers),
    };
    let (mut parts, _) = response.into_parts();
    let (page_parts, body) = page.into_parts();
    for name in [header::CONTENT_TYPE, header::CONTENT_LENGTH, header::CACHE_CONTROL] {
        parts.headers.remove(&name);
        if let Some(value) = page_parts.headers.get(&name) {
            parts.headers.insert(name, value.clone());
        }
    }
    Response::from_parts(parts, body)
}

/// The dashboard's preview of a product's pay page: the merchant signed in as the dashboard
/// checks, the page rendered as customers see it.
async fn preview(
    State(state): State<AppState>,
    m: dashboard::Merchant,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, AppError> {
    let product =
        db::find::<products::Entity>(&state.db, m.shop.id, &id).await?.ok_or(AppError::NotFound("Product"))?;
    Ok(pay::preview_product(&state, &product, &m.shop, &headers).await)
}

/// A file of `static/`, built into the binary.
async fn asset(kind: &'static str, body: &'static str) -> impl IntoResponse {
    let kind = match kind {
        "text/css" => "text/css; charset=utf-8",
        _ => "text/javascript; charset=utf-8",
    };
    ([(header::CONTENT_TYPE, kind), (header::CACHE_CONTROL, "public, max-age=3600")], body)
}

/// Opens the database and applies pending migrations (see [`migrate`]).
pub async fn open_database(config: &Config) -> Result<DatabaseConnection, Box<dyn std::error::Error>> {
    migrate(config).await?;
    let db = db::connect(&config.database_url, config.db_connections).await?;
    db::optimize(&db).await?;
    crate::services::backup::check_key(&db, config).await?;
    Ok(db)
}

/// Applies pending migrations, each in its own transaction, and returns their names. A
/// database a newer paydesk migrated is refused with one line; an SQLite database gets a
/// snapshot first (`PAYDESK_BACKUP_DIR`). Over one connection of their own, because SQLite
/// checks a schema change against the schema its connection last read (a trigger created on
/// one connection right after another dropped it "already exists"); on PostgreSQL under the
/// advisory lock of [`db::migration_lock`], so instances starting together migrate one after
/// the other.
pub async fn migrate(config: &Config) -> Result<Vec<String>, Box<dyn std::error::Error>> {
    let db = db::connect(&config.database_url, 1).await?;
    let lock = db::migration_lock(&db).await?;
    let standing = db::schema::standing(&db).await?;
    if let Some(line) = standing.newer() {
        return Err(line.into());
    }
    if standing.version.is_some() && !standing.pending.is_empty() {
        crate::services::backup::before_migrating(&db, config, chrono::Utc::now())
            .await
            .map_err(|e| format!("the snapshot before migrating failed, so nothing was migrated: {e}"))?;
    }
    let applied = db::schema::apply_pending(&db).await?;
    if let (Some(from), Some(to)) = (&standing.version, applied.last()) {
        tracing::info!(from = %from, to = %to, count = applied.len(), "migrated the database");
    }
    drop(lock);
    db::close(db).await;
    Ok(applied)
}

/// Migrates, then serves HTTP until Ctrl-C or SIGTERM.
pub async fn serve(config: Config) -> Result<(), Box<dyn std::error::Error>> {
    let db = open_database(&config).await?;
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", config.listen))?;
    tracing::info!(listen = %config.listen, base_url = %config.base_url, "paydesk is serving");
    if let Some(problem) = config.sender_problem() {
        tracing::warn!(sender = %config.mail_from, "{problem}");
    }
    let state = AppState::new(db, config)?;
    let scheduler = match state.config.scheduler {
        true => Some(
            crate::services::scheduler::start(state.clone())
                .await
                .map_err(|e| format!("cannot start the scheduler: {e}"))?,
        ),
        false => None,
    };
    let lifecycle = state.lifecycle.clone();
    tokio::spawn(async move {
        shutdown_signal().await;
        lifecycle.stop();
    });
    let db = state.db.clone();
    run(listener, state).await?;
    if let Some(mut scheduler) = scheduler {
        scheduler.shutdown().await.ok();
    }
    db::close(db).await;
    tracing::info!("stopped");
    Ok(())
}

/// How often the server indexes the words of the rows added since (on SQLite; see
/// [`db::search_index`]).
const SEARCH_INDEX_PAUSE: std::time::Duration = std::time::Duration::from_millis(50);

/// Stops a background task when the server it belongs to stops.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Serves the app on `listener` (the hosted pages see the client's address) until the
/// state's lifecycle stops: then it accepts no more connections, lets the requests in
/// flight, the running billing batch and the delivery batch finish (each wait bounded by
/// `PAYDESK_SHUTDOWN_SECONDS`), and returns.
pub async fn run(listener: tokio::net::TcpListener, state: AppState) -> std::io::Result<()> {
    // Held while serving: `paydesk restore` refuses a PostgreSQL schema that is served.
    let _served = db::backup::hold_in_use(&state.db).await.map_err(std::io::Error::other)?;
    let deliveries = crate::services::webhooks::start(state.clone());
    let _stop_deliveries = AbortOnDrop(deliveries);
    let _sealer = AbortOnDrop(crate::services::audit::start(state.clone()));
    let _search_indexes =
        (sea_orm::ConnectionTrait::get_database_backend(&state.db) == sea_orm::DatabaseBackend::Sqlite).then(|| {
            AbortOnDrop(crate::services::worker::every(
                state.clone(),
                SEARCH_INDEX_PAUSE,
                "indexing the words of new rows",
                |state| async move { Ok(db::search_index::catch_up(&state.db).await? as usize) },
            ))
        });
    let _stop_mails = state.mailer.is_some().then(|| AbortOnDrop(crate::services::mail::start(state.clone())));
    let _shop_changes = crate::services::shops::needs_listener(&state.db)
        .then(|| AbortOnDrop(tokio::spawn(crate::services::shops::listen(state.clone()))));
    let _upkeep = AbortOnDrop(tokio::spawn(async {
        loop {
            tokio::time::sleep(std::time::Duration::from_secs(5)).await;
            crate::external::telemetry::upkeep();
        }
    }));
    let (lifecycle, timeout) = (state.lifecycle.clone(), state.config.shutdown_timeout);
    let app = router(state).into_make_service_with_connect_info::<std::net::SocketAddr>();
    let stopping = lifecycle.clone();
    let server = axum::serve(listener, app).with_graceful_shutdown(async move { stopping.stopping().await });
    let mut server = tokio::spawn(async move { server.await });
    tokio::select! {
        served = &mut server => return served.map_err(std::io::Error::other)?,
        () = lifecycle.stopping() => {}
    }
    // One deadline from the moment the stop began bounds both waits.
    let deadline = tokio::time::Instant::now() + timeout;
    match tokio::time::timeout_at(deadline, server).await {
        Ok(served) => served.map_err(std::io::Error::other)??,
        Err(_) => {
            tracing::warn!(seconds = timeout.as_secs(), "requests still running at the end of the shutdown timeout")
        }
    }
    if tokio::time::timeout_at(deadline, lifecycle.drained()).await.is_err() {
        tracing::warn!(seconds = timeout.as_secs(), "background work still running at the end of the shutdown timeout");
    }
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            s.recv().await;
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = terminate => {} }
    tracing::info!("stopping: no new connections; finishing the requests and work in flight");
}
