//! The scheduler: tokio-cron-scheduler runs [`billing::run_due`] every minute (and once at
//! start, so charges missed while the service was down are made at once), then folds the
//! overview's summaries (`db::summaries::compact`); every hour it prunes expired sessions,
//! idempotency keys, finished webhook deliveries and mails, checkout attempts and throttling
//! records, and refreshes SQLite's table
//! statistics (`db::optimize`); at second 30 of every minute it takes the scheduled snapshot
//! of the database when it is due. Several instances may all run it: claims keep each charge to
//! one of them.

use chrono::Utc;
use tokio_cron_scheduler::{Job, JobScheduler, JobSchedulerError};

use tower_sessions::session_store::ExpiredDeletion;

use crate::db::sessions::DbSessionStore;
use crate::services::billing;
use crate::web::state::AppState;

/// When the engine runs: at second 0 of every minute.
pub const EVERY_MINUTE: &str = "0 * * * * *";
/// When a scheduled snapshot is looked for: at second 30 of every minute.
pub const HALF_MINUTE: &str = "30 * * * * *";
/// When expired sessions are deleted: at minute 17 of every hour.
pub const HOURLY: &str = "0 17 * * * *";

/// Starts the scheduler; it runs as long as the returned handle lives.
pub async fn start(state: AppState) -> Result<JobScheduler, JobSchedulerError> {
    let scheduler = JobScheduler::new().await?;
    let job_state = state.clone();
    scheduler
        .add(Job::new_async(EVERY_MINUTE, move |_, _| {
            let state = job_state.clone();
            Box::pin(async move { run_billing(&state).await })
        })?)
        .await?;
    let prune_state = state.clone();
    scheduler
        .add(Job::new_async(HOURLY, move |_, _| {
            let state = prune_state.clone();
            Box::pin(async move { prune(&state).await })
        })?)
        .await?;
    let backup_state = state.clone();
    scheduler
        .add(Job::new_async(HALF_MINUTE, move |_, _| {
            let state = backup_state.clone();
            Box::pin(async move { snapshot(&state).await })
        })?)
        .await?;
    scheduler.start().await?;
    tokio::spawn(async move { run_billing(&state).await });
    Ok(scheduler)
}

/// Deletes what has outlived its use: expired sessions; idempotency keys older than
/// `PAYDESK_IDEMPOTENCY_HOURS`; webhook deliveries and mails that ended longer ago than
/// `PAYDESK_RETENTION_DAYS`, with their attempts; checkout attempts and subscriber-page
/// tokens older than a day, and throttling failures older than any window; looks the
/// processors' disputes up (in case a webhook was missed); then refreshes SQLite's table
/// statistics.
pub async fn prune(state: &AppState) {
    let day_ago = Utc::now() - chrono::TimeDelta::hours(24);
    let (kept, retained) = (Utc::now() - state.config.idempotency_kept, Utc::now() - state.config.retention);
    let db = &state.db;
    if let Err(e) = DbSessionStore::new(db.clone()).delete_expired().await {
        tracing::warn!(error = %e, "deleting expired sessions failed");
    }
    let pruned = [
        ("idempotency keys", crate::db::idempotency::prune(db, kept).await),
        ("webhook deliveries", crate::db::webhooks::prune_ended(db, retained).await),
        ("mails", crate::db::mails::prune_ended(db, retained).await),
        ("stale mails to shops' users", crate::db::mails::prune_stale_staff(db, day_ago).await),
        ("checkout attempts", crate::db::checkout_attempts::prune(db, day_ago).await),
        ("throttling failures", crate::db::throttle::prune(db, day_ago).await),
        ("subscriber page links and sessions", crate::db::portal::prune(db, day_ago).await),
        ("audit records", crate::db::audit::prune(db, Utc::now() - state.config.audit_kept).await),
    ];
    match crate::services::disputes::sweep(state, Utc::now()).await {
        Ok(count) => tracing::debug!(count, "swept the processors' disputes"),
        Err(e) => tracing::warn!(error = %e, "sweeping the processors' disputes failed"),
    }
    if let Err(e) = crate::db::optimize(db).await {
        tracing::warn!(error = %e, "gathering SQLite's table statistics failed");
    }
    for (what, done) in pruned {
        match done {
            Ok(count) => tracing::debug!(count, "pruned {what}"),
            Err(e) => tracing::warn!(error = %e, "pruning {what} failed"),
        }
    }
}

/// Takes the scheduled snapshot of the database when it is due (`PAYDESK_BACKUP_HOURS`).
async fn snapshot(state: &AppState) {
    match crate::services::backup::scheduled(state, Utc::now()).await {
        Ok(Some(taken)) => tracing::info!(snapshot = %taken.path.display(), "took the scheduled snapshot"),
        Ok(None) => {}
        Err(e) => tracing::error!(error = %e, "the scheduled snapshot failed; tried again in ten minutes"),
    }
}

async fn run_billing(state: &AppState) {
    let Some(_working) = state.lifecycle.work().await else { return };
    let started = std::time::Instant::now();
    match crate::services::refunds::resume_interrupted(state, Utc::now()).await {
        Ok(0) => {}
        Ok(count) => tracing::info!(count, "finished interrupted refunds"),
        Err(e) => tracing::error!(error = %e, "finishing interrupted refunds failed"),
    }
    let ran = billing::run_due(state, Utc::now()).await;
    match crate::services::captures::resume_interrupted(state, Utc::now()).await {
        Ok(0) => {}
        Ok(count) => tracing::info!(count, "finished interrupted captures and voids"),
        Err(e) => tracing::error!(error = %e, "finishing interrupted captures and voids failed"),
    }
    match crate::services::notifications::recheck_ended(state, Utc::now()).await {
        Ok(0) => {}
        Ok(count) => tracing::info!(count, "looked ended payments up once more"),
        Err(e) => tracing::error!(error = %e, "looking ended payments up failed"),
    }
    match crate::services::network::run(state, None, Utc::now()).await {
        Ok(0) => {}
        Ok(count) => tracing::info!(count, "the simulated card network acted"),
        Err(e) => tracing::error!(error = %e, "the simulated card network failed"),
    }
    if let Err(e) = crate::services::api_keys::tend(state, state.clock.now()).await {
        tracing::error!(error = %e, "tending the API keys (rolled standard keys, expiry notices) failed");
    }
    match crate::services::mail::reminders::sweep(state, None, Utc::now()).await {
        Ok(0) => {}
        Ok(count) => tracing::info!(count, "queued reminders"),
        Err(e) => tracing::error!(error = %e, "queuing reminders failed"),
    }
    match crate::db::summaries::compact(&state.db).await {
        Ok(folded) => tracing::debug!(folded, "compacted the overview's summaries"),
        Err(e) => tracing::warn!(error = %e, "compacting the overview's summaries failed"),
    }
    let charged = ran.as_ref().map_or(0, |report| report.charged);
    crate::external::telemetry::billing_run(started.elapsed().as_secs_f64(), charged);
    match ran {
        Ok(report) if report.charged + report.expired > 0 => {
            tracing::info!(
                charged = report.charged,
                succeeded = report.succeeded,
                expired = report.expired,
                "billing run"
            )
        }
        Ok(_) => tracing::debug!("billing run: nothing due"),
        Err(e) => tracing::error!(error = %e, "billing run failed"),
    }
}
