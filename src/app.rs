//! The application: shared state, the router of all three faces, and the server.

use std::sync::Arc;

use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::{Json, Router};
use migration::{Migrator, MigratorTrait};
use sea_orm::DatabaseConnection;
use serde_json::json;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::trace::TraceLayer;

use crate::acquirer::{Acquirer, SimulatedAcquirer};
use crate::api::json::BODY_LIMIT;
use crate::config::Config;
use crate::error::AppError;
use crate::{api, db, guard, pay};

/// What every handler can reach.
#[derive(Clone)]
pub struct AppState {
    /// The database (SQLite or PostgreSQL).
    pub db: DatabaseConnection,
    /// Checked configuration.
    pub config: Arc<Config>,
    /// Who moves the money.
    pub acquirer: Arc<dyn Acquirer>,
    /// Addresses refused for a while after too many wrong API credentials.
    pub api_locks: Arc<crate::auth::Locks>,
}

impl AppState {
    /// The state of a server: the built-in simulated acquirer, live use as configured.
    pub fn new(db: DatabaseConnection, config: Config) -> Self {
        let acquirer = Arc::new(SimulatedAcquirer::new(config.simulated_live));
        AppState { db, config: Arc::new(config), acquirer, api_locks: Default::default() }
    }
}

/// The Content-Security-Policy of every answer: only our own styles and scripts, never
/// framed; forms post to us, and to `form_target` (where a hosted page sends the browser
/// after paying: browsers check redirects of a form post against `form-action`).
pub fn csp(form_target: Option<&str>) -> String {
    let extra = form_target.map(|origin| format!(" {origin}")).unwrap_or_default();
    format!(
        "default-src 'none'; style-src 'self'; img-src 'self' data:; script-src 'self'; \
         form-action 'self'{extra}; frame-ancestors 'none'; base-uri 'none'"
    )
}

/// The whole HTTP app.
pub fn router(state: AppState) -> Router {
    let policy = HeaderValue::from_str(&csp(None)).expect("the policy is ASCII");
    let headers = [
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::REFERRER_POLICY, "no-referrer"),
        (HeaderName::from_static("cross-origin-opener-policy"), "same-origin"),
    ];
    let mut app = Router::new()
        .merge(api::router(&state))
        .merge(pay::router())
        .route("/healthz", get(healthz))
        .merge(crate::dashboard::router(&state))
        .route("/static/paydesk.css", get(|| asset("text/css", include_str!("../static/paydesk.css"))))
        .route("/static/dashboard.css", get(|| asset("text/css", include_str!("../static/dashboard.css"))))
        .route("/static/dashboard.js", get(|| asset("text/javascript", include_str!("../static/dashboard.js"))))
        .fallback(|| async { AppError::NotFound("Page") })
        .method_not_allowed_fallback(|| async { AppError::MethodNotAllowed })
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .layer(axum::middleware::from_fn(guard::refuse_unstorable))
        .layer(CatchPanicLayer::custom(guard::panic_answer))
        .layer(axum::middleware::from_fn(guard::page_panics));
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
    app.layer(TraceLayer::new_for_http())
}

/// For load balancers: 200 while the database answers, 503 when it does not.
async fn healthz(State(state): State<AppState>) -> impl IntoResponse {
    match state.db.ping().await {
        Ok(()) => (StatusCode::OK, Json(json!({"status": "ok"}))),
        Err(e) => {
            tracing::error!(error = %e, "health check: database unreachable");
            (StatusCode::SERVICE_UNAVAILABLE, Json(json!({"message": "database unreachable"})))
        }
    }
}

/// A file of `static/`, built into the binary.
async fn asset(kind: &'static str, body: &'static str) -> impl IntoResponse {
    let kind = match kind {
        "text/css" => "text/css; charset=utf-8",
        _ => "text/javascript; charset=utf-8",
    };
    ([(header::CONTENT_TYPE, kind), (header::CACHE_CONTROL, "public, max-age=3600")], body)
}

/// Opens the database and applies pending migrations.
pub async fn open_database(config: &Config) -> Result<DatabaseConnection, sea_orm::DbErr> {
    let db = db::connect(&config.database_url).await?;
    Migrator::up(&db, None).await?;
    Ok(db)
}

/// Migrates, then serves HTTP until Ctrl-C or SIGTERM.
pub async fn serve(config: Config) -> Result<(), Box<dyn std::error::Error>> {
    let db = open_database(&config).await?;
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", config.listen))?;
    tracing::info!(listen = %config.listen, base_url = %config.base_url, "paydesk is serving");
    let state = AppState::new(db, config);
    let scheduler = match state.config.scheduler {
        true => {
            Some(crate::scheduler::start(state.clone()).await.map_err(|e| format!("cannot start the scheduler: {e}"))?)
        }
        false => None,
    };
    run(listener, state).await?;
    if let Some(mut scheduler) = scheduler {
        scheduler.shutdown().await.ok();
    }
    Ok(())
}

/// Serves the app on `listener` until Ctrl-C or SIGTERM (the hosted pages see the client's address).
pub async fn run(listener: tokio::net::TcpListener, state: AppState) -> std::io::Result<()> {
    let app = router(state).into_make_service_with_connect_info::<std::net::SocketAddr>();
    axum::serve(listener, app).with_graceful_shutdown(shutdown_signal()).await
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
    tracing::info!("shutting down");
}
