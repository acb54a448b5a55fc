//! The scheduler: tokio-cron-scheduler runs [`billing::run_due`] every minute (and once at
//! start, so charges missed while the service was down are made at once), and clears
//! expired dashboard sessions every hour. Several instances may all run it: claims keep
//! each charge to one of them.

use chrono::Utc;
use tokio_cron_scheduler::{Job, JobScheduler, JobSchedulerError};

use tower_sessions::session_store::ExpiredDeletion;

use crate::app::AppState;
use crate::billing;
use crate::db::sessions::DbSessionStore;

/// When the engine runs: at second 0 of every minute.
pub const EVERY_MINUTE: &str = "0 * * * * *";
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
    let store = DbSessionStore::new(state.db.clone());
    scheduler
        .add(Job::new_async(HOURLY, move |_, _| {
            let store = store.clone();
            Box::pin(async move {
                if let Err(e) = store.delete_expired().await {
                    tracing::warn!(error = %e, "deleting expired sessions failed");
                }
            })
        })?)
        .await?;
    scheduler.start().await?;
    tokio::spawn(async move { run_billing(&state).await });
    Ok(scheduler)
}

async fn run_billing(state: &AppState) {
    match billing::run_due(state, Utc::now()).await {
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
