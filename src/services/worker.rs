//! The loop of a background worker every instance runs (webhook deliveries, mails): a step
//! while the instance is not stopping, then a pause; a stopping instance lets the running
//! step finish and starts no other.

use std::time::Duration;

use crate::web::error::AppError;
use crate::web::state::AppState;

/// Runs `step` every `pause` until the instance stops; a failed step is logged as `what`.
pub fn every<F, Fut>(state: AppState, pause: Duration, what: &'static str, step: F) -> tokio::task::JoinHandle<()>
where
    F: Fn(AppState) -> Fut + Send + 'static,
    Fut: Future<Output = Result<usize, AppError>> + Send,
{
    tokio::spawn(async move {
        loop {
            let Some(working) = state.lifecycle.work().await else { return };
            if let Err(e) = step(state.clone()).await {
                tracing::error!(error = %e, "{what} failed");
            }
            drop(working);
            tokio::select! {
                _ = tokio::time::sleep(pause) => {}
                _ = state.lifecycle.stopping() => return,
            }
        }
    })
}
