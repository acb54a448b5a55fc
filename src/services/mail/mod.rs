//! Subscriber mails. Requests, the billing engine and the reminder sweep only write outbox
//! rows (in the transaction of what causes them); the worker every instance runs claims due
//! rows (an atomic UPDATE, `SKIP LOCKED` on PostgreSQL) under a lease longer than an SMTP
//! attempt, renders each once before its first attempt (the same words go on every retry),
//! sends it, and records the attempt. A refusal (5xx) is final; anything else is tried
//! again with growing waits. A crash after the server took a mail and before that was
//! recorded sends it once more, with the same `Message-ID`: the one duplicate SMTP cannot
//! rule out.

mod letters;
pub mod links;
pub mod reminders;
mod staff;
pub mod words;

use std::time::Duration;

use chrono::{DateTime, Utc};
use futures::StreamExt;

use crate::db::entities::mails;
use crate::db::mails::Attempted;
use crate::db::{self};
use crate::domain::ids::random_hex;
use crate::domain::mail::{self as rules, MailStatus};
use crate::external::smtp::{Outgoing, Sent};
use crate::web::error::AppError;
use crate::web::state::AppState;

pub use letters::{Letter, portal_link, preview};
pub use staff::account_locked;

/// Mails one claim takes, all sent at once: a claim then lasts one attempt.
const BATCH: u64 = 8;
/// How often the worker looks for due mails.
const POLL: Duration = Duration::from_millis(500);

/// Runs the mail worker of this instance until the process ends.
pub fn start(state: AppState) -> tokio::task::JoinHandle<()> {
    crate::services::worker::every(
        state,
        POLL,
        "sending mails",
        |state| async move { send_due(&state, Utc::now()).await },
    )
}

/// A claim outlives the longest attempt (the SMTP timeout bounds each) by the instance's
/// lease, so an instance that stopped mid-batch has its mails taken over that soon after.
fn claim_length(state: &AppState) -> chrono::TimeDelta {
    let timeout = state.config.smtp.as_ref().map_or(Duration::from_secs(30), |s| s.timeout);
    chrono::TimeDelta::from_std(timeout).unwrap_or(chrono::TimeDelta::seconds(30)) + state.config.lease
}

/// Sends every mail due by `due_by` (now, or later to send retries early); answers how many
/// attempts were made. Nothing without an SMTP server.
pub async fn send_due(state: &AppState, due_by: DateTime<Utc>) -> Result<usize, AppError> {
    let Some(mailer) = state.mailer.clone() else { return Ok(0) };
    let mut made = 0;
    loop {
        if state.lifecycle.is_stopping() {
            return Ok(made);
        }
        let token = random_hex(12);
        let now = Utc::now();
        let claimed =
            db::mails::claim_due(&state.db, due_by.max(now), now, BATCH, &token, now + claim_length(state)).await?;
        if claimed.is_empty() {
            return Ok(made);
        }
        made += claimed.len();
        // Each attempt is recorded as soon as it ends: a crash repeats only the mails whose
        // answer was not recorded yet.
        let attempts = futures::stream::iter(claimed).map(|m| async {
            let (mail, attempted) = attempt(state, &mailer, m).await;
            record(state, &token, &mail, &attempted).await
        });
        let recorded: Vec<Result<(), AppError>> = attempts.buffer_unordered(BATCH as usize).collect().await;
        recorded.into_iter().collect::<Result<(), AppError>>()?;
    }
}

/// One attempt of a claimed mail: rendered first if it was not yet, then sent.
async fn attempt(
    state: &AppState,
    mailer: &crate::external::smtp::Mailer,
    mail: mails::Model,
) -> (mails::Model, Attempted) {
    let at = Utc::now();
    let skipped = |why: String| Attempted {
        at,
        code: None,
        latency_ms: 0,
        error: Some(why),
        status: MailStatus::Skipped,
        next_attempt_at: None,
    };
    if mail.kind.to_staff() && mail.attempts == 0 && at - mail.created_at > rules::STAFF_NEWS {
        return (mail, skipped("too old to be news (no mail was sent when it was queued)".into()));
    }
    let mail = match mail.subject.is_some() {
        true => mail,
        false => match render(state, &mail).await {
            Ok(Ok(rendered)) => match db::mails::store_rendered(&state.db, &mail, rendered).await {
                Ok(Some(stored)) => stored,
                Ok(None) => return (mail, skipped("the mail is gone".into())),
                Err(e) => {
                    let attempted = later(at, 0, None, format!("storing the mail: {e}"), &mail);
                    return (mail, attempted);
                }
            },
            Ok(Err(why)) => return (mail, skipped(why)),
            Err(e) => {
                let attempted = later(at, 0, None, format!("rendering the mail: {e}"), &mail);
                return (mail, attempted);
            }
        },
    };
    let sender = match sender_of(state, &mail).await {
        Ok(sender) => sender,
        Err(e) => {
            let attempted = later(at, 0, None, format!("reading the shop: {e}"), &mail);
            return (mail, attempted);
        }
    };
    let outgoing = Outgoing {
        from: (&sender.0, &sender.1),
        to: mail.to_address.as_deref().unwrap_or_default(),
        subject: mail.subject.as_deref().unwrap_or_default(),
        message_id: &mail.message_id,
        text: mail.text_body.as_deref().unwrap_or_default(),
        html: mail.html_body.as_deref().unwrap_or_default(),
        headers: vec![("Auto-Submitted", "auto-generated".into()), ("X-Paydesk-Mail", mail.kind.to_string())],
    };
    let (sent, took) = mailer.send(&outgoing).await;
    let latency_ms = i64::try_from(took.as_millis()).unwrap_or(i64::MAX);
    let attempted = match sent {
        Sent::Accepted(code) => Attempted {
            at,
            code: Some(i32::from(code)),
            latency_ms,
            error: None,
            status: MailStatus::Sent,
            next_attempt_at: None,
        },
        Sent::Refused { code, error } => Attempted {
            at,
            code: code.map(i32::from),
            latency_ms,
            error: Some(error),
            status: MailStatus::Failed,
            next_attempt_at: None,
        },
        Sent::Later { code, error } => later(at, latency_ms, code, error, &mail),
    };
    (mail, attempted)
}

/// Writes a queued mail: to a customer, or a notice to the shop's owners.
async fn render(state: &AppState, mail: &mails::Model) -> Result<Result<db::mails::Rendered, String>, AppError> {
    match mail.kind {
        rules::MailKind::SecurityNotice => staff::notice(state, mail).await,
        rules::MailKind::DisputeOpened => staff::dispute(state, mail).await,
        rules::MailKind::RefundFailedLater => staff::refund_failed(state, mail).await,
        _ => letters::render(state, mail).await,
    }
}

/// An attempt to make again later, or the last one that failed.
fn later(at: DateTime<Utc>, latency_ms: i64, code: Option<u16>, error: String, mail: &mails::Model) -> Attempted {
    let next = rules::next_attempt(mail.attempts + 1, at);
    Attempted {
        at,
        code: code.map(i32::from),
        latency_ms,
        error: Some(error),
        status: if next.is_some() { MailStatus::Queued } else { MailStatus::Failed },
        next_attempt_at: next,
    }
}

/// The address a shop's mails come from and the name shown with it (the shop's); mails to
/// the shop's own users come from the instance's address, as paydesk.
async fn sender_of(state: &AppState, mail: &mails::Model) -> Result<(String, String), AppError> {
    if mail.kind.to_staff() {
        return Ok((state.config.mail_from.clone(), "paydesk".into()));
    }
    let shop = crate::services::shops::find(state, mail.shop_id).await?.ok_or(AppError::NotFound("Shop"))?;
    let settings = db::mails::settings_of(&state.db, &[mail.shop_id]).await?;
    let from = settings.get(&mail.shop_id).and_then(|(_, from)| from.clone());
    Ok((from.unwrap_or_else(|| state.config.mail_from.clone()), shop.name.clone()))
}

/// Records an attempt, then logs it.
async fn record(state: &AppState, token: &str, mail: &mails::Model, attempted: &Attempted) -> Result<(), AppError> {
    let txn = crate::db::begin(&state.db).await?;
    db::mails::record_attempt(&txn, mail, token, attempted).await?;
    txn.commit().await?;
    crate::external::telemetry::mail(attempted.status.as_str());
    tracing::info!(
        mail = %mail.id, kind = %mail.kind, message_id = %mail.message_id, status = %attempted.status,
        smtp_code = ?attempted.code, latency_ms = attempted.latency_ms, error = ?attempted.error,
        attempt = mail.attempts + 1, "mail attempt"
    );
    Ok(())
}
