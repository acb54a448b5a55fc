//! The merchant dashboard: server-rendered pages behind a session login, over everything
//! the API can do. Each resource has its own file with its routes; this one wires them
//! up with the session layer and holds what the pages share.

use askama::Template;
use axum::Router;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use tower_sessions::cookie::SameSite;
use tower_sessions::cookie::time::Duration;
use tower_sessions::{Expiry, SessionManagerLayer};

use crate::db::sessions::DbSessionStore;
use crate::domain::access::Role;
use crate::domain::currency::Currency;
use crate::web::error::AppError;
use crate::web::state::AppState;

pub mod access;
mod account;
mod api_keys;
mod audit;
mod books;
mod chart;
mod coupons;
mod customers;
mod disputes;
mod form;
mod list;
mod mails;
mod merchant;
mod overview;
mod payments;
mod plans;
mod processor;
mod products;
mod reauth;
mod revenue;
mod schedule;
mod sessions;
mod settings;
mod subscriptions;
mod tables;
mod taxing;
mod team;
mod two_step;
mod webhooks;
mod words;

pub use form::PostedForm;
pub use merchant::Merchant;
pub use words::{Words, k};

/// How long the store keeps a session without use: the longest idle time a shop may choose.
/// Each shop's own (15 minutes unless an owner chose longer, as PCI DSS 8.2.8 asks) and the
/// session's lifetime are checked on every request (see [`Merchant`]).
const STORE_IDLE: Duration = Duration::minutes(crate::domain::session::LONGEST_IDLE_MINUTES as i64);

/// Routes of the dashboard, with `more` (pages of the dashboard made with other faces), all
/// behind the session layer.
pub fn router(state: &AppState, more: Router<AppState>) -> Router<AppState> {
    let sessions = SessionManagerLayer::new(DbSessionStore::new(state.db.clone()))
        .with_name("pd_session")
        .with_http_only(true)
        .with_same_site(SameSite::Lax)
        .with_secure(state.config.base_url.starts_with("https://"))
        // Saved only when changed: a signed-in merchant's last use is written at most once a
        // minute (see [`Merchant`]), and each such write pushes the store's expiry on.
        .with_expiry(Expiry::OnInactivity(STORE_IDLE));
    Router::new()
        .route("/", get(|| async { Redirect::to("/dashboard") }))
        .merge(account::router())
        .merge(overview::router())
        .merge(revenue::router())
        .merge(products::router())
        .merge(plans::router())
        .merge(customers::router())
        .merge(payments::router())
        .merge(disputes::router())
        .merge(subscriptions::router())
        .merge(settings::router())
        .merge(team::router())
        .merge(two_step::router())
        .merge(sessions::router())
        .merge(audit::router())
        .merge(books::router())
        .merge(processor::router())
        .merge(coupons::router())
        .merge(webhooks::router())
        .merge(api_keys::router())
        .merge(mails::router())
        .merge(more)
        .layer(axum::middleware::from_fn_with_state(state.clone(), reauth::guard))
        .layer(sessions)
}

#[derive(Template)]
#[template(path = "dashboard/error.html")]
struct ErrorPage {
    words: Words,
    status: u16,
    title: &'static str,
    message: String,
}

/// The dashboard's error page: the status and what the merchant is told, in the language of
/// the request (see [`Words::of_request`]).
pub fn error_page(status: StatusCode, message: String, request: &axum::http::HeaderMap) -> Response {
    error_page_in(Words::of_request(request), status, &message)
}

/// The dashboard's error page in `words`.
fn error_page_in(words: Words, status: StatusCode, message: &str) -> Response {
    let title = words.t_data(status.canonical_reason().unwrap_or("Error"));
    render(status, &ErrorPage { words, status: status.as_u16(), title, message: words.rule(message) })
}

/// What a dashboard handler answers (errors become the dashboard's error page).
pub type Page = Result<Response, AppError>;

/// Renders a template with `status`; pages are never cached (they show a shop's data).
pub fn render(status: StatusCode, page: &impl Template) -> Response {
    match page.render() {
        Ok(html) => {
            (status, [(header::CONTENT_TYPE, "text/html; charset=utf-8"), (header::CACHE_CONTROL, "no-store")], html)
                .into_response()
        }
        Err(e) => {
            tracing::error!(error = %e, "template failed");
            (StatusCode::INTERNAL_SERVER_ERROR, "Internal server error").into_response()
        }
    }
}

/// A page answered 200.
pub fn ok(page: &impl Template) -> Page {
    Ok(render(StatusCode::OK, page))
}

/// The 303 after a successful form post.
pub fn see_other(to: &str) -> Page {
    Ok(Redirect::to(to).into_response())
}

/// What every signed-in page shows around its content.
pub struct Chrome {
    pub shop_name: String,
    pub email: String,
    pub csrf: String,
    /// The key of the section this page belongs to (`products`, …).
    pub active: &'static str,
    pub flash: Option<String>,
    /// A plain notice left for this page (something to know or to do, not a success).
    pub notice: Option<merchant::Notice>,
    /// The shop requires two-step login and the user has not set it up: nothing but that
    /// (and logging out) opens, so the page offers nothing else.
    pub enrolling: bool,
    /// The language of the signed-in user.
    pub words: Words,
    /// What the signed-in user's role may do.
    pub can: access::Can,
    /// The signed-in user's role.
    pub role: Role,
}

const NAV: &[(&str, &str, &str)] = &[
    ("/dashboard", k("Overview"), "overview"),
    ("/dashboard/products", k("Products"), "products"),
    ("/dashboard/plans", k("Plans"), "plans"),
    ("/dashboard/customers", k("Customers"), "customers"),
    ("/dashboard/payments", k("Payments"), "payments"),
    ("/dashboard/disputes", k("Disputes"), "disputes"),
    ("/dashboard/subscriptions", k("Subscriptions"), "subscriptions"),
    ("/dashboard/invoices", k("Invoices"), "invoices"),
    ("/dashboard/credit_notes", k("Credit notes"), "credit_notes"),
    ("/dashboard/revenue", k("Revenue"), "revenue"),
    ("/dashboard/coupons", k("Coupons"), "coupons"),
    ("/dashboard/webhooks", k("Webhooks"), "webhooks"),
    ("/dashboard/api_keys", k("API keys"), "api_keys"),
    ("/dashboard/settings", k("Settings"), "settings"),
];

/// A role's name as the dashboard shows it (a key of its words).
pub fn role_name(role: Role) -> &'static str {
    match role {
        Role::Owner => k("Owner"),
        Role::Administrator => k("Administrator"),
        Role::Developer => k("Developer"),
        Role::Support => k("Support"),
        Role::Analyst => k("Analyst"),
    }
}

impl Chrome {
    /// The sections the user's role may open: link, label (in the user's language), key.
    pub fn nav(&self) -> Vec<(&'static str, &'static str, &'static str)> {
        if self.enrolling {
            return Vec::new();
        }
        NAV.iter()
            .filter(|(href, _, _)| access::needed("GET", href).is_some_and(|p| self.role.can(p)))
            .map(|&(href, label, key)| (href, self.words.t(label), key))
            .collect()
    }

    /// The signed-in user's role in their language.
    pub fn role_name(&self) -> &'static str {
        self.words.t(role_name(self.role))
    }

    /// Whether this page belongs to the section `key`.
    pub fn is_active(&self, key: &str) -> bool {
        self.active == key
    }

    /// `english` in the user's language (see [`Words::t`]).
    pub fn t(&self, english: &'static str) -> &'static str {
        self.words.t(english)
    }

    /// A text known only when the page runs, in the user's language (see [`Words::t_data`]).
    pub fn t_data<'a>(&self, english: &'a str) -> &'a str {
        self.words.t_data(english)
    }

    /// A status of a `kind` of object (`payment`, `subscription`, `delivery`) in the user's
    /// language (see [`Words::t_in`]).
    pub fn status<'a>(&self, kind: &str, english: &'a str) -> &'a str {
        self.words.t_in(kind, english)
    }

    /// `english` with its `{}` filled by `a`, in the user's language.
    pub fn f1(&self, english: &'static str, a: impl std::fmt::Display + Sync) -> String {
        self.words.f1(english, a)
    }

    /// `english` with its two `{}` filled by `a` and `b`, in the user's language.
    pub fn f2(
        &self,
        english: &'static str,
        a: impl std::fmt::Display + Sync,
        b: impl std::fmt::Display + Sync,
    ) -> String {
        self.words.f2(english, a, b)
    }
}

impl Merchant {
    /// The frame of a page of section `active`, with the flash message left for it.
    pub async fn chrome(&self, active: &'static str) -> Chrome {
        Chrome {
            shop_name: self.shop.name.clone(),
            email: self.user.email.clone(),
            csrf: self.csrf.clone(),
            active,
            flash: self.take_flash().await,
            notice: self.take_notice().await,
            enrolling: self.shop.two_step_required && self.user.totp_sealed.is_none(),
            words: self.words,
            can: self.can,
            role: self.user.role,
        }
    }

    /// `english` in the user's language (see [`Words::t`]).
    pub fn t(&self, english: &'static str) -> &'static str {
        self.words.t(english)
    }

    /// `english` in the user's language with each `{}` filled by the next of `args`.
    pub fn f(&self, english: &'static str, args: &[&(dyn std::fmt::Display + Sync)]) -> String {
        self.words.f(english, args)
    }

    /// Money as the user's language writes it: `€9.90`, `9,90 €`.
    pub fn money(&self, amount: i64, currency: Currency) -> String {
        self.words.money(amount, currency)
    }
}

/// The step before an action that cannot be undone: what it will do, and a form that does
/// it (`confirm=yes` and the given fields) or a way back. Works without script.
#[derive(Template)]
#[template(path = "dashboard/confirm.html")]
pub struct ConfirmPage {
    pub chrome: Chrome,
    pub title: String,
    pub lines: Vec<String>,
    pub action: String,
    pub fields: Vec<(String, String)>,
    pub button: String,
    pub back: String,
    /// Marked with [`k`] where it is written, shown in the user's language.
    pub back_label: &'static str,
}

/// A QR code of `link` as SVG.
pub fn qr_svg(link: &str) -> Result<impl IntoResponse + use<>, AppError> {
    let code = qrcode::QrCode::new(link.as_bytes()).map_err(|e| AppError::BadRequest(e.to_string()))?;
    let svg = code.render::<qrcode::render::svg::Color>().min_dimensions(200, 200).quiet_zone(true).build();
    Ok(([(header::CONTENT_TYPE, "image/svg+xml"), (header::CACHE_CONTROL, "private, max-age=3600")], svg))
}

/// A time as the dashboard shows it, in the shop's zone and naming it: `2026-11-23 14:05 CET`.
pub fn local(at: DateTime<Utc>, tz: Tz) -> String {
    at.with_timezone(&tz).format("%Y-%m-%d %H:%M %Z").to_string()
}
