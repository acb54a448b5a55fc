//! What operators see: log lines (text or JSON, each line of a request carrying its id) and
//! metrics in Prometheus' text format, recorded by the `metrics` crate and rendered by its
//! Prometheus exporter. Every series paydesk keeps is named here.

use std::sync::OnceLock;

use metrics::{counter, describe_counter, describe_gauge, describe_histogram, gauge, histogram};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use tracing_subscriber::EnvFilter;

use crate::config::LogFormat;

/// Starts logging to stderr in `format`; `RUST_LOG` filters (info by default, the
/// database drivers' per-query lines at warn).
pub fn init_logs(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn,sea_orm=warn"));
    let logs = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    match format {
        LogFormat::Json => logs.json().with_current_span(true).with_span_list(false).init(),
        LogFormat::Text => logs.with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr())).init(),
    }
}

/// Statements the database driver ran, gathered by [`capture_statements`].
static STATEMENTS: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Instead of logging, gathers every SQL statement the database driver runs (for
/// `paydesk migrate --dry-run`); [`take_statements`] hands them over.
pub fn capture_statements() {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let gather = tracing_subscriber::filter::Targets::new().with_target("sqlx::query", tracing::Level::TRACE);
    tracing_subscriber::registry().with(tracing_subscriber::Layer::with_filter(Statements, gather)).init();
}

/// The statements gathered since the last call.
pub fn take_statements() -> Vec<String> {
    std::mem::take(&mut *STATEMENTS.lock().unwrap_or_else(|e| e.into_inner()))
}

struct Statements;

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Statements {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        #[derive(Default)]
        struct Fields {
            summary: String,
            statement: String,
        }
        impl tracing::field::Visit for Fields {
            fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
                match field.name() {
                    "summary" => self.summary = value.to_string(),
                    "db.statement" => self.statement = value.to_string(),
                    _ => {}
                }
            }
            fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
                if matches!(field.name(), "summary" | "db.statement") {
                    self.record_str(field, &format!("{value:?}"));
                }
            }
        }
        let mut fields = Fields::default();
        event.record(&mut fields);
        let sql = if fields.statement.trim().is_empty() { fields.summary } else { fields.statement };
        if !sql.trim().is_empty() {
            STATEMENTS.lock().unwrap_or_else(|e| e.into_inner()).push(sql.trim().to_string());
        }
    }
}

/// Upper bounds of the latency histograms, in seconds.
const SECONDS: &[f64] = &[0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0];
/// Upper bounds of the charges-per-run histogram.
const CHARGES: &[f64] = &[0.0, 1.0, 10.0, 100.0, 1_000.0, 10_000.0, 100_000.0];

static RECORDER: OnceLock<PrometheusHandle> = OnceLock::new();

/// The process's metrics, recorded from the first call on (one recorder per process: several
/// apps in one process, as in tests, share it).
pub fn metrics() -> &'static PrometheusHandle {
    RECORDER.get_or_init(|| {
        let recorder = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), SECONDS)
            .and_then(|b| b.set_buckets_for_metric(Matcher::Full(BILLING_CHARGES.into()), CHARGES))
            .expect("the buckets are not empty")
            .build_recorder();
        let handle = recorder.handle();
        if metrics::set_global_recorder(recorder).is_err() {
            tracing::warn!("another metrics recorder is installed: /metrics stays empty");
        }
        describe();
        handle
    })
}

const HTTP_REQUESTS: &str = "paydesk_http_requests_total";
const HTTP_SECONDS: &str = "paydesk_http_request_duration_seconds";
const PAYMENTS: &str = "paydesk_payments_total";
const BILLING_SECONDS: &str = "paydesk_billing_run_duration_seconds";
const BILLING_CHARGES: &str = "paydesk_billing_run_charges";
const DELIVERIES: &str = "paydesk_webhook_deliveries_total";
const MAILS: &str = "paydesk_mail_attempts_total";
const DUE: &str = "paydesk_subscriptions_due";
const QUEUE: &str = "paydesk_webhook_queue_depth";
const POOL: &str = "paydesk_db_pool_connections";

fn describe() {
    describe_counter!(HTTP_REQUESTS, "HTTP requests answered, by method, route and status");
    describe_histogram!(HTTP_SECONDS, metrics::Unit::Seconds, "Time to answer an HTTP request, by method and route");
    describe_counter!(PAYMENTS, "Payments recorded with the acquirer's answer, by outcome and source");
    describe_histogram!(BILLING_SECONDS, metrics::Unit::Seconds, "Duration of billing engine runs");
    describe_histogram!(BILLING_CHARGES, "Charges asked of the acquirer per billing run");
    describe_counter!(DELIVERIES, "Webhook and notification delivery attempts, by outcome");
    describe_counter!(MAILS, "Subscriber mail attempts, by outcome (sent, queued for a retry, failed, skipped)");
    describe_gauge!(DUE, "Subscriptions whose charge is due now and not yet made (real time, not test clocks)");
    describe_gauge!(QUEUE, "Webhook deliveries waiting to be sent (pending or to retry)");
    describe_gauge!(POOL, "Database connections of this instance, by state (in_use, idle)");
}

/// An HTTP request answered: `route` is the matched route pattern (never the raw path, so
/// ids do not multiply the series).
pub fn request(method: &str, route: &str, status: u16, seconds: f64) {
    let method = match method {
        "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS" => method.to_string(),
        _ => "other".to_string(),
    };
    let labels = [("method", method), ("route", route.to_string())];
    histogram!(HTTP_SECONDS, &labels).record(seconds);
    let [method, route] = labels;
    counter!(HTTP_REQUESTS, &[method, route, ("status", status.to_string())]).increment(1);
}

/// A payment recorded with its outcome (`succeeded`, `failed`, ...); `source` is `hosted`
/// (a customer on a pay page) or `billing` (the engine).
pub fn payment(outcome: &str, source: &'static str) {
    counter!(PAYMENTS, "outcome" => outcome.to_string(), "source" => source).increment(1);
}

/// A billing run that took `seconds` and asked the acquirer for `charges` charges.
pub fn billing_run(seconds: f64, charges: usize) {
    histogram!(BILLING_SECONDS).record(seconds);
    histogram!(BILLING_CHARGES).record(charges as f64);
}

/// A delivery attempt ended with `outcome` (`delivered`, `retrying`, `failed`).
pub fn delivery(outcome: &'static str) {
    counter!(DELIVERIES, "outcome" => outcome).increment(1);
}

/// A mail attempt ended with `outcome` (`sent`, `queued`, `failed`, `skipped`).
pub fn mail(outcome: &'static str) {
    counter!(MAILS, "outcome" => outcome).increment(1);
}

/// What the database holds now, read when metrics are scraped.
#[derive(Debug, Clone, Copy, Default)]
pub struct Levels {
    pub subscriptions_due: u64,
    pub webhook_queue: u64,
    pub pool_in_use: u64,
    pub pool_idle: u64,
}

/// The metrics as Prometheus text, with the `levels` read for this scrape.
pub fn render(levels: Levels) -> String {
    let handle = metrics();
    gauge!(DUE).set(levels.subscriptions_due as f64);
    gauge!(QUEUE).set(levels.webhook_queue as f64);
    gauge!(POOL, "state" => "in_use").set(levels.pool_in_use as f64);
    gauge!(POOL, "state" => "idle").set(levels.pool_idle as f64);
    handle.render()
}

/// Folds recorded histogram samples into their buckets; run every few seconds so memory
/// stays flat between scrapes.
pub fn upkeep() {
    metrics().run_upkeep();
}
