//! Settings → E-mails to customers: the sender, which kinds go out, the renewal reminders'
//! lead, and a preview of each kind in English and Russian; and whether this instance can
//! send mail at all.

use askama::Template;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse};
use axum::routing::{get, post};
use chrono::Utc;

use super::form::{FormView, PostedForm};
use super::{Chrome, Merchant, Page, k, ok, render, see_other};
use crate::db::{self};
use crate::domain::Errors;
use crate::domain::mail::{self as rules, MailKind, MailSettings};
use crate::domain::vocab::Language;
use crate::web::error::AppError;
use crate::web::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/dashboard/settings/mails", get(page).post(save))
        .route("/dashboard/settings/mails/subscriber_pause", post(subscriber_pause))
        .route("/dashboard/settings/mails/preview/{kind}", get(preview))
}

/// What each kind is, as the merchant reads it.
pub fn kind_label(kind: MailKind) -> &'static str {
    match kind {
        MailKind::Receipt => k("Receipt for each payment"),
        MailKind::RefundReceipt => k("Refund receipt"),
        MailKind::RenewalFailed => k("Failed renewal, with a link to update the card"),
        MailKind::SubscriptionEnded => k("Subscription ended after the last attempt"),
        MailKind::TrialEnding => k("Trial ending, 7 days before (card networks require it)"),
        MailKind::RenewalReminder => k("Upcoming renewal"),
        MailKind::CardExpiring => k("Card expiring before the next charge"),
        MailKind::CancellationConfirmed => k("Cancellation confirmed"),
        MailKind::PortalLink => k("Link to the subscriber page"),
        MailKind::SecurityNotice => k("Security notice to the shop's owners"),
        MailKind::AccountLocked => k("Account locked, with the link that opens it"),
        MailKind::DisputeOpened => k("A payment disputed, to the shop's owners"),
        MailKind::RefundFailedLater => k("A refund failed after it was accepted, to the shop's owners"),
    }
}

/// A kind's line on the page: its field, label, whether it is on.
struct KindLine {
    field: String,
    label: &'static str,
    on: bool,
    preview: String,
}

#[derive(Template)]
#[template(path = "dashboard/mails.html")]
struct MailsPage {
    chrome: Chrome,
    form: FormView,
    kinds: Vec<KindLine>,
    /// Whether this instance has an SMTP server.
    configured: bool,
    default_sender: String,
    /// Where the shop's customers ask for a link to their subscriber page.
    portal: String,
    /// Subscribers may pause and resume on their page.
    subscriber_pause: bool,
}

impl MailsPage {
    /// The reminders' lead as saved, for the sentence that says it to those who only see it.
    fn reminder_days(&self) -> i64 {
        self.form.value("reminder_days").parse().unwrap_or(i64::from(rules::REMINDER_DAYS))
    }
}

async fn page(State(state): State<AppState>, m: Merchant) -> Page {
    let (settings, from) = settings(&state, m.shop.id).await?;
    let form = FormView::filled(vec![
        ("mail_from", from.unwrap_or_default()),
        ("reminder_days", settings.reminder_days.to_string()),
        ("reminder_all_periods", settings.reminder_all_periods.to_string()),
    ]);
    ok(&view(&state, &m, &settings, form).await)
}

async fn settings(state: &AppState, shop_id: i64) -> Result<(MailSettings, Option<String>), AppError> {
    Ok(db::mails::settings_of(&state.db, &[shop_id]).await?.remove(&shop_id).unwrap_or_default())
}

async fn view(state: &AppState, m: &Merchant, settings: &MailSettings, form: FormView) -> MailsPage {
    let language = if m.words == super::Words::Ru { "ru" } else { "en" };
    MailsPage {
        kinds: MailKind::CHOSEN
            .iter()
            .map(|kind| KindLine {
                field: format!("send.{kind}"),
                label: m.t(kind_label(*kind)),
                on: settings.sends(*kind),
                preview: format!("/dashboard/settings/mails/preview/{kind}?language={language}"),
            })
            .collect(),
        configured: state.mailer.is_some(),
        default_sender: state.config.mail_from.clone(),
        portal: crate::web::urls::portal_request(&state.config, m.shop.id),
        subscriber_pause: m.shop.subscriber_pause,
        chrome: m.chrome("settings").await,
        form,
    }
}

async fn save(State(state): State<AppState>, m: Merchant, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let mut errors = Errors::default();
    let from = form.get("mail_from").map(str::trim).filter(|f| !f.is_empty());
    if from.is_some_and(|f| !rules::is_address(f)) {
        errors.add("mail_from", crate::domain::input::msg::INVALID);
    }
    let days = MailSettings::check_days(form.get("reminder_days").unwrap_or(""), &mut errors);
    let settings = MailSettings {
        off: MailKind::CHOSEN.into_iter().filter(|kind| form.get(&format!("send.{kind}")) != Some("true")).collect(),
        reminder_days: days.unwrap_or(rules::REMINDER_DAYS),
        reminder_all_periods: form.get("reminder_all_periods") == Some("true"),
    };
    if !errors.is_empty() {
        let page = view(&state, &m, &settings, FormView::sent(&form, errors, m.words)).await;
        return Ok(render(StatusCode::UNPROCESSABLE_ENTITY, &page));
    }
    let audit = m.audit("shop.updated");
    let write = db::shops::set_mails(&state.db, m.shop.id, &settings, from.map(str::to_string), &audit, Utc::now());
    crate::services::shops::changing(&state, m.shop.id, write).await?;
    m.flash(m.t("E-mail settings saved.")).await;
    see_other("/dashboard/settings/mails")
}

#[derive(serde::Deserialize)]
struct PreviewQuery {
    language: Option<String>,
}

/// A kind as the shop's customers get it, with made-up facts.
async fn preview(
    State(_state): State<AppState>,
    m: Merchant,
    Path(kind): Path<String>,
    Query(query): Query<PreviewQuery>,
) -> Result<axum::response::Response, AppError> {
    let kind = MailKind::parse(&kind).ok_or(AppError::NotFound("Mail kind"))?;
    let language = query.language.as_deref().and_then(Language::parse).unwrap_or(Language::En);
    let letter =
        crate::services::mail::preview(&m.shop, kind, language, false).ok_or(AppError::NotFound("Mail kind"))?;
    let (html, _) = letter.render()?;
    // A mail's styles are inline (mail clients take no style sheets): this page alone allows
    // them, and nothing else.
    let policy = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; frame-ancestors 'none'";
    Ok(([(axum::http::header::CONTENT_SECURITY_POLICY, policy)], Html(html)).into_response())
}

/// A mail in a customer's list.
pub struct MailRow {
    pub kind: &'static str,
    pub subject: String,
    pub status: String,
    pub at: String,
    /// Why it was not sent (yet), if it was not.
    pub error: String,
}

/// The newest mails to a customer, as their page lists them.
pub async fn rows_for(state: &AppState, m: &Merchant, customer_id: &str) -> Result<Vec<MailRow>, AppError> {
    let page = db::Page { limit: 25, starting_after: None };
    let listed = db::mails::list(&state.db, m.shop.id, &page, Some(customer_id))
        .await
        .map_err(|e| AppError::Internal(format!("listing mails: {e:?}")))?;
    Ok(listed
        .rows
        .iter()
        .map(|mail| MailRow {
            kind: m.t(kind_label(mail.kind)),
            subject: mail.subject.clone().unwrap_or_default(),
            status: m.words.t_in("mail", mail.status.as_str()).to_string(),
            at: super::local(mail.sent_at.unwrap_or(mail.created_at), m.tz),
            error: match mail.status {
                crate::domain::mail::MailStatus::Sent => String::new(),
                _ => mail.last_error.clone().unwrap_or_default(),
            },
        })
        .collect())
}

/// Lets subscribers pause and resume on their page, or not.
async fn subscriber_pause(State(state): State<AppState>, m: Merchant, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let allowed = form.get("subscriber_pause") == Some("true");
    let audit = m.audit("shop.updated");
    let write = db::shops::set_subscriber_pause(&state.db, m.shop.id, allowed, &audit, Utc::now());
    crate::services::shops::changing(&state, m.shop.id, write).await?;
    m.flash(match allowed {
        true => m.t("Subscribers may now pause and resume on their page."),
        false => m.t("Subscribers no longer pause on their page."),
    })
    .await;
    see_other("/dashboard/settings/mails")
}
