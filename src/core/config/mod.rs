//! Configuration: read once at start from flags and environment variables, checked, then
//! passed around inside `AppState`. A bad value stops start-up with one clear line.

mod backups;
mod proxies;
mod smtp;

pub use backups::*;
pub use proxies::*;
pub use smtp::*;

use std::net::{IpAddr, SocketAddr};

use chrono_tz::Tz;
use clap::Args;

/// Raw settings as given on the command line or in the environment.
#[derive(Args, Debug, Clone, Default)]
pub struct ConfigArgs {
    /// Database: `sqlite://FILE?mode=rwc` (default) or `postgres://…`.
    #[arg(long, env = "DATABASE_URL", global = true)]
    pub database_url: Option<String>,
    /// Address to serve HTTP on.
    #[arg(long, env = "PAYDESK_LISTEN", global = true)]
    pub listen: Option<String>,
    /// Public base URL; pay links are built from it.
    #[arg(long, env = "PAYDESK_BASE_URL", global = true)]
    pub base_url: Option<String>,
    /// Base URL of the checkout pages (confirm_url); defaults to the base URL.
    #[arg(long, env = "PAYDESK_CHECKOUT_URL", global = true)]
    pub checkout_url: Option<String>,
    /// IANA time zone of the system (night window, retry times).
    #[arg(long, env = "PAYDESK_TIMEZONE", global = true)]
    pub timezone: Option<String>,
    /// `on` or `off`: run the billing scheduler in this process.
    #[arg(long, env = "PAYDESK_SCHEDULER", global = true)]
    pub scheduler: Option<String>,
    /// `on` lets live (non-test) products be paid through the simulated acquirer.
    #[arg(long, env = "PAYDESK_SIMULATED_LIVE", global = true)]
    pub simulated_live: Option<String>,
    /// `on` (default) lets anyone create a shop on the dashboard's sign-up page.
    #[arg(long, env = "PAYDESK_SIGNUP", global = true)]
    pub signup: Option<String>,
    /// Seconds a lease on running work (an engine batch, a clock advance) holds unrenewed:
    /// how soon another instance resumes the work of one that stopped.
    #[arg(long, env = "PAYDESK_LEASE_SECONDS", global = true)]
    pub lease_seconds: Option<String>,
    /// Seconds paydesk waits for a payment processor's answer before its outcome is unknown
    /// (then looked up, never sent as new).
    #[arg(long, env = "PAYDESK_PROCESSOR_TIMEOUT_SECONDS", global = true)]
    pub processor_timeout_seconds: Option<String>,
    /// Stripe's API base URL (default `https://api.stripe.com`): another for tests or staging
    /// (a Stripe double). The operator's own setting, so it may be a private address.
    #[arg(long, env = "PAYDESK_STRIPE_API_URL", global = true)]
    pub stripe_api_url: Option<String>,
    /// Key-encryption key (base64 of 32 random bytes) that seals secrets at rest; required
    /// with PostgreSQL, where every instance must share it. With SQLite, a key is kept in a
    /// file beside the database when this is unset.
    #[arg(long, env = "PAYDESK_KEY_ENCRYPTION_KEY", global = true, hide_env_values = true)]
    pub key_encryption_key: Option<String>,
    /// `on` lets webhooks and notifications go to private, loopback and link-local addresses
    /// (for tests and closed networks); off by default.
    #[arg(long, env = "PAYDESK_WEBHOOKS_ALLOW_PRIVATE", global = true)]
    pub webhooks_allow_private: Option<String>,
    /// `text` (default) or `json`: JSON lines for log collectors.
    #[arg(long, env = "PAYDESK_LOG_FORMAT", global = true)]
    pub log_format: Option<String>,
    /// Bearer token that `GET /metrics` requires; metrics are off (404) while it is unset.
    #[arg(long, env = "PAYDESK_METRICS_TOKEN", global = true, hide_env_values = true)]
    pub metrics_token: Option<String>,
    /// Wrong API credentials one address may send in 10 minutes before it is answered 429
    /// (default 30).
    #[arg(long, env = "PAYDESK_API_AUTH_FAILURES", global = true)]
    pub api_auth_failures: Option<String>,
    /// Days finished webhook deliveries and mails (with their attempts) are kept (default 30,
    /// at least 7).
    #[arg(long, env = "PAYDESK_RETENTION_DAYS", global = true)]
    pub retention_days: Option<String>,
    /// Days the audit trail is kept (default 365, at least 90).
    #[arg(long, env = "PAYDESK_AUDIT_RETENTION_DAYS", global = true)]
    pub audit_retention_days: Option<String>,
    /// Hours an `Idempotency-Key` and its answer are kept (default 24, at least 24).
    #[arg(long, env = "PAYDESK_IDEMPOTENCY_HOURS", global = true)]
    pub idempotency_hours: Option<String>,
    /// Seconds a stopping instance waits for in-flight requests and the running billing
    /// batch (default 30).
    #[arg(long, env = "PAYDESK_SHUTDOWN_SECONDS", global = true)]
    pub shutdown_seconds: Option<String>,
    /// Addresses or CIDR ranges of the load balancers in front of paydesk, comma-separated:
    /// their `X-Forwarded-For` names the client (default none: the peer is the client).
    #[arg(long, env = "PAYDESK_TRUSTED_PROXIES", global = true)]
    pub trusted_proxies: Option<String>,
    /// Connections to the database an instance keeps at most (default 4 on SQLite, 20 on
    /// PostgreSQL).
    #[arg(long, env = "PAYDESK_DB_CONNECTIONS", global = true)]
    pub db_connections: Option<String>,
    /// The SMTP server subscriber mails go through: `smtp://USER:PASSWORD@HOST:587`
    /// (STARTTLS, required), `smtps://…:465` (TLS), `smtp://HOST:25?tls=none` (plain, for a
    /// relay on a trusted network); `?timeout=SECONDS` (default 30). Unset: no mail is sent.
    #[arg(long, env = "PAYDESK_SMTP_URL", global = true, hide_env_values = true)]
    pub smtp_url: Option<String>,
    /// The address mails come from when the shop names none (default `no-reply@` the host
    /// of the base URL).
    #[arg(long, env = "PAYDESK_MAIL_FROM", global = true)]
    pub mail_from: Option<String>,
    /// Where snapshots of the database go (default: `FILE.backups` beside an SQLite
    /// database; none on PostgreSQL). Best on another disk.
    #[arg(long, env = "PAYDESK_BACKUP_DIR", global = true)]
    pub backup_dir: Option<String>,
    /// Where the snapshots' key files go, kept apart from them (default: inside each snapshot).
    #[arg(long, env = "PAYDESK_BACKUP_KEY_DIR", global = true)]
    pub backup_key_dir: Option<String>,
    /// Hours between scheduled snapshots (default 24), or `off`.
    #[arg(long, env = "PAYDESK_BACKUP_HOURS", global = true)]
    pub backup_hours: Option<String>,
    /// Scheduled and pre-migration snapshots kept, the newest (default 7).
    #[arg(long, env = "PAYDESK_BACKUP_KEEP", global = true)]
    pub backup_keep: Option<String>,
    /// Minutes a snapshot may take before it stops and fails (default 30).
    #[arg(long, env = "PAYDESK_BACKUP_TIMEOUT_MINUTES", global = true)]
    pub backup_timeout_minutes: Option<String>,
}

/// Checked configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// Connection URL of the database.
    pub database_url: String,
    /// Bind address of the HTTP server.
    pub listen: SocketAddr,
    /// `{base_url}` of the spec, without a trailing slash.
    pub base_url: String,
    /// `{checkout_url}` of the spec, without a trailing slash.
    pub checkout_url: String,
    /// "The time zone set for the system".
    pub timezone: Tz,
    /// Whether this instance runs the billing scheduler.
    pub scheduler: bool,
    /// Whether live payments may go through the simulated acquirer (demos only).
    pub simulated_live: bool,
    /// Whether the dashboard's sign-up page is open.
    pub signup: bool,
    /// How long a lease on running work holds unrenewed.
    pub lease: chrono::Duration,
    /// How long a payment processor's answer is waited for.
    pub processor_timeout: std::time::Duration,
    /// Stripe's API base URL, without a trailing `/`.
    pub stripe_api_url: String,
    /// Where the key-encryption key comes from.
    pub kek: KekSource,
    /// Whether webhooks may go to private addresses.
    pub webhooks_allow_private: bool,
    /// How log lines are written.
    pub log_format: LogFormat,
    /// The token `GET /metrics` requires; `None`: metrics are off.
    pub metrics_token: Option<String>,
    /// How long a stop waits for work in flight.
    pub shutdown_timeout: std::time::Duration,
    /// Load balancers whose `X-Forwarded-For` names the client.
    pub trusted_proxies: TrustedProxies,
    /// Wrong API credentials allowed per address in the window of `throttle::API_AUTH`.
    pub api_auth_failures: usize,
    /// How long finished webhook deliveries and mails are kept.
    pub retention: chrono::TimeDelta,
    /// How long idempotency keys are kept.
    pub idempotency_kept: chrono::TimeDelta,
    /// How long the audit trail is kept.
    pub audit_kept: chrono::TimeDelta,
    /// Connections to the database kept at most.
    pub db_connections: u32,
    /// The SMTP server; `None`: no mail is queued or sent.
    pub smtp: Option<Smtp>,
    /// The sender of shops that name none.
    pub mail_from: String,
    /// Snapshots of the database.
    pub backups: Backups,
}

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line.
    Json,
}

/// Where the key-encryption key comes from.
#[derive(Clone, PartialEq, Eq)]
pub enum KekSource {
    /// Given in the configuration.
    Given([u8; 32]),
    /// Kept in this file beside the SQLite database (made on first use).
    File(std::path::PathBuf),
    /// A new key for this run only (an in-memory database lives no longer).
    Ephemeral,
}

impl std::fmt::Debug for KekSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KekSource::Given(_) => f.write_str("Given(…)"),
            KekSource::File(path) => write!(f, "File({})", path.display()),
            KekSource::Ephemeral => f.write_str("Ephemeral"),
        }
    }
}

/// A key-encryption key written as base64 of 32 bytes.
pub fn parse_kek(text: &str) -> Option<[u8; 32]> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD.decode(text.trim()).ok()?;
    bytes.try_into().ok()
}

/// Where the KEK of `database_url` comes from when none is given.
fn default_kek(database_url: &str) -> Option<KekSource> {
    if !database_url.starts_with("sqlite:") {
        return None;
    }
    Some(match sqlite_file(database_url) {
        Some(file) => KekSource::File(std::path::PathBuf::from(format!("{}.kek", file.display()))),
        None => KekSource::Ephemeral,
    })
}

/// The default database: a file in the working directory, created on first use.
pub const DEFAULT_DATABASE_URL: &str = "sqlite://paydesk.db?mode=rwc";

const DEFAULT_LISTEN: &str = "127.0.0.1:3000";

/// A configuration value that cannot be used; displays as one line.
#[derive(Debug, thiserror::Error)]
#[error("{name}={value:?} {problem}")]
pub struct ConfigError {
    name: &'static str,
    value: String,
    problem: String,
}

fn bad(name: &'static str, value: &str, problem: impl Into<String>) -> ConfigError {
    ConfigError { name, value: value.to_string(), problem: problem.into() }
}

impl Config {
    /// Checks every value and fills in the defaults.
    pub fn from_args(args: &ConfigArgs) -> Result<Self, ConfigError> {
        let database_url = args.database_url.clone().unwrap_or_else(|| DEFAULT_DATABASE_URL.into());
        if !["sqlite:", "postgres://", "postgresql://"].iter().any(|p| database_url.starts_with(p)) {
            return Err(bad(
                "DATABASE_URL",
                &database_url,
                "is not supported: use sqlite://FILE?mode=rwc or postgres://USER@HOST/DB",
            ));
        }
        let listen_raw = args.listen.as_deref().unwrap_or(DEFAULT_LISTEN);
        let listen: SocketAddr = listen_raw
            .parse()
            .map_err(|_| bad("PAYDESK_LISTEN", listen_raw, "is not an address like 127.0.0.1:3000"))?;
        let base_url = match &args.base_url {
            Some(url) => parse_base_url("PAYDESK_BASE_URL", url)?,
            None => format!("http://{listen}"),
        };
        let checkout_url = match &args.checkout_url {
            Some(url) => parse_base_url("PAYDESK_CHECKOUT_URL", url)?,
            None => base_url.clone(),
        };
        let tz_raw = args.timezone.as_deref().unwrap_or("UTC");
        let timezone: Tz = tz_raw
            .parse()
            .map_err(|_| bad("PAYDESK_TIMEZONE", tz_raw, "is not an IANA time zone such as Europe/Berlin"))?;
        let scheduler = on_off("PAYDESK_SCHEDULER", args.scheduler.as_deref(), true)?;
        let simulated_live = on_off("PAYDESK_SIMULATED_LIVE", args.simulated_live.as_deref(), false)?;
        let signup = on_off("PAYDESK_SIGNUP", args.signup.as_deref(), true)?;
        let lease_raw = args.lease_seconds.as_deref().unwrap_or("60");
        let lease = match lease_raw.trim().parse::<i64>() {
            Ok(seconds) if (2..=3600).contains(&seconds) => chrono::Duration::seconds(seconds),
            _ => {
                return Err(bad("PAYDESK_LEASE_SECONDS", lease_raw, "is not a whole number of seconds from 2 to 3600"));
            }
        };
        let timeout_raw = args.processor_timeout_seconds.as_deref().unwrap_or("30");
        let processor_timeout = match timeout_raw.trim().parse::<u64>() {
            Ok(seconds) if (1..=300).contains(&seconds) => std::time::Duration::from_secs(seconds),
            _ => {
                let problem = "is not a whole number of seconds from 1 to 300";
                return Err(bad("PAYDESK_PROCESSOR_TIMEOUT_SECONDS", timeout_raw, problem));
            }
        };
        let stripe_raw = args.stripe_api_url.as_deref().unwrap_or(STRIPE_API);
        let stripe_api_url = match url::Url::parse(stripe_raw.trim()) {
            Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() && u.query().is_none() => {
                u.as_str().trim_end_matches('/').to_string()
            }
            _ => return Err(bad("PAYDESK_STRIPE_API_URL", stripe_raw, "is not an absolute http or https URL")),
        };
        let kek = match args.key_encryption_key.as_deref() {
            Some(raw) => KekSource::Given(parse_kek(raw).ok_or_else(|| {
                bad("PAYDESK_KEY_ENCRYPTION_KEY", "…", "is not base64 of 32 bytes (openssl rand -base64 32)")
            })?),
            None => default_kek(&database_url).ok_or_else(|| {
                bad(
                    "PAYDESK_KEY_ENCRYPTION_KEY",
                    "",
                    "is required with PostgreSQL so that every instance shares it (openssl rand -base64 32)",
                )
            })?,
        };
        let webhooks_allow_private =
            on_off("PAYDESK_WEBHOOKS_ALLOW_PRIVATE", args.webhooks_allow_private.as_deref(), false)?;
        let log_format = match args.log_format.as_deref().map(str::trim) {
            None | Some("text") => LogFormat::Text,
            Some("json") => LogFormat::Json,
            Some(other) => return Err(bad("PAYDESK_LOG_FORMAT", other, "is not text or json")),
        };
        let metrics_token = match args.metrics_token.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(token) if token.len() >= 16 && token.bytes().all(|b| b.is_ascii_graphic()) => Some(token.to_string()),
            Some(_) => return Err(bad("PAYDESK_METRICS_TOKEN", "…", "must be at least 16 visible ASCII characters")),
        };
        let shutdown_raw = args.shutdown_seconds.as_deref().unwrap_or("30");
        let shutdown_timeout = match shutdown_raw.trim().parse::<u64>() {
            Ok(seconds) if (1..=3600).contains(&seconds) => std::time::Duration::from_secs(seconds),
            _ => {
                return Err(bad(
                    "PAYDESK_SHUTDOWN_SECONDS",
                    shutdown_raw,
                    "is not a whole number of seconds from 1 to 3600",
                ));
            }
        };
        let api_auth_failures =
            whole("PAYDESK_API_AUTH_FAILURES", args.api_auth_failures.as_deref(), 30, 1..=1_000_000)?;
        let days = whole("PAYDESK_RETENTION_DAYS", args.retention_days.as_deref(), 30, 7..=3650)?;
        let hours = whole("PAYDESK_IDEMPOTENCY_HOURS", args.idempotency_hours.as_deref(), 24, 24..=720)?;
        let audit_days = whole("PAYDESK_AUDIT_RETENTION_DAYS", args.audit_retention_days.as_deref(), 365, 90..=36500)?;
        let audit_kept = chrono::TimeDelta::days(audit_days as i64);
        let (retention, idempotency_kept) =
            (chrono::TimeDelta::days(days as i64), chrono::TimeDelta::hours(hours as i64));
        let proxies_raw = args.trusted_proxies.as_deref().unwrap_or("");
        let trusted_proxies = TrustedProxies::parse(proxies_raw).ok_or_else(|| {
            bad("PAYDESK_TRUSTED_PROXIES", proxies_raw, "is not a comma-separated list of addresses or CIDR ranges")
        })?;
        // SQLite has one writer and the machine's cores as readers: more connections only
        // add threads to switch between.
        let default_connections = if database_url.starts_with("sqlite:") { "4" } else { "20" };
        let connections_raw = args.db_connections.as_deref().unwrap_or(default_connections);
        let db_connections = match connections_raw.trim().parse::<u32>() {
            Ok(n) if (2..=1000).contains(&n) => n,
            _ => return Err(bad("PAYDESK_DB_CONNECTIONS", connections_raw, "is not a whole number from 2 to 1000")),
        };
        let smtp = match args.smtp_url.as_deref().map(str::trim) {
            None | Some("") => None,
            Some(raw) => Some(Smtp::parse(raw).map_err(|problem| bad("PAYDESK_SMTP_URL", "…", problem))?),
        };
        let mail_from = match args.mail_from.as_deref().map(str::trim) {
            None | Some("") => default_sender(&base_url),
            Some(address)
                if address.split_once('@').is_some_and(|(l, d)| {
                    !l.is_empty() && d.contains('.') && !address.contains(char::is_whitespace)
                }) =>
            {
                address.to_string()
            }
            Some(other) => return Err(bad("PAYDESK_MAIL_FROM", other, "is not an e-mail address")),
        };
        let backups = Backups::from_args(args, &database_url)?;
        Ok(Config {
            backups,
            smtp,
            mail_from,
            api_auth_failures,
            retention,
            idempotency_kept,
            audit_kept,
            db_connections,
            trusted_proxies,
            log_format,
            metrics_token,
            shutdown_timeout,
            database_url,
            listen,
            base_url,
            checkout_url,
            timezone,
            scheduler,
            simulated_live,
            signup,
            lease,
            processor_timeout,
            stripe_api_url,
            kek,
            webhooks_allow_private,
        })
    }
}

/// The domain of the default sender when the base URL has none (an IP address, `localhost`).
const NO_DOMAIN: &str = "localhost.localdomain";

/// `no-reply@` the host of the base URL, or `no-reply@localhost.localdomain` when that host
/// is not a dotted domain name (an IP address, `localhost`).
fn default_sender(base_url: &str) -> String {
    let host = url::Url::parse(base_url).ok().and_then(|u| u.domain().map(str::to_string));
    let host = host.filter(|h| h.contains('.')).unwrap_or_else(|| NO_DOMAIN.into());
    format!("no-reply@{host}")
}

impl Config {
    /// Why mail would likely be refused, when the instance sends mail from the default sender
    /// of a base URL with no domain (relays reject `@localhost.localdomain`).
    pub fn sender_problem(&self) -> Option<&'static str> {
        let unusable = self.smtp.is_some() && self.mail_from.ends_with(&format!("@{NO_DOMAIN}"));
        unusable.then_some(
            "mail is sent from no-reply@localhost.localdomain, which mail relays refuse: set PAYDESK_MAIL_FROM \
             (or PAYDESK_BASE_URL to the instance's public address)",
        )
    }
}

/// Stripe's API, where a Stripe account's calls go unless `PAYDESK_STRIPE_API_URL` says otherwise.
pub const STRIPE_API: &str = "https://api.stripe.com";

/// A whole number in `range`, `default` when unset.
fn whole(
    name: &'static str,
    raw: Option<&str>,
    default: usize,
    range: std::ops::RangeInclusive<usize>,
) -> Result<usize, ConfigError> {
    let Some(raw) = raw else { return Ok(default) };
    match raw.trim().parse::<usize>() {
        Ok(n) if range.contains(&n) => Ok(n),
        _ => Err(bad(name, raw, format!("is not a whole number from {} to {}", range.start(), range.end()))),
    }
}

fn on_off(name: &'static str, raw: Option<&str>, default: bool) -> Result<bool, ConfigError> {
    match raw {
        None => Ok(default),
        Some("on") => Ok(true),
        Some("off") => Ok(false),
        Some(other) => Err(bad(name, other, "must be on or off")),
    }
}

fn parse_base_url(name: &'static str, raw: &str) -> Result<String, ConfigError> {
    let url = url::Url::parse(raw).map_err(|e| bad(name, raw, format!("is not a URL ({e})")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(bad(name, raw, "must be an absolute http:// or https:// URL"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(bad(name, raw, "must not have a query or fragment"));
    }
    Ok(raw.trim_end_matches('/').to_string())
}

#[cfg(test)]
mod tests;
