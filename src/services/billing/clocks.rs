//! Test clocks: an advance runs everything due on the clock in time order, each step at its
//! own due time, under the clock's lease; an advance whose instance stopped is taken over.

use super::*;

/// Starts advancing the shop's `clock` to `to` and runs the advance to its end in a task of
/// its own, so that it finishes even if the caller goes away. `None` when another advance
/// of the clock is running.
pub async fn advance_clock(
    state: &AppState,
    clock: &test_clocks::Model,
    to: DateTime<Utc>,
) -> Result<Option<Report>, AppError> {
    let token = random_hex(12);
    if !db::test_clocks::begin_advance(&state.db, &clock.id, to, &token, lease_from_now(state), Utc::now()).await? {
        return Ok(None);
    }
    let (state, id) = (state.clone(), clock.id.clone());
    let task = tokio::spawn(async move { run_advance(&state, &id, to, &token).await });
    Ok(task.await.map_err(|e| AppError::Internal(format!("clock advance: {e}")))?.map(Some)?)
}

/// Takes over the advances whose instance stopped (their lease ran out) and runs them to
/// their end.
pub(super) async fn resume_clocks(state: &AppState) -> Result<Report, DbErr> {
    let mut report = Report::default();
    for clock in db::test_clocks::stalled(&state.db, Utc::now()).await? {
        let Some(to) = clock.advance_to else { continue };
        let token = random_hex(12);
        if db::test_clocks::begin_advance(&state.db, &clock.id, to, &token, lease_from_now(state), Utc::now()).await? {
            tracing::info!(clock = %clock.id, "resuming an interrupted clock advance");
            report += run_advance(state, &clock.id, to, &token).await?;
        }
    }
    Ok(report)
}

/// Runs everything due on the clock up to `to`, in time order, each at its own due time,
/// while this run holds the clock's lease `token`.
pub(super) async fn run_advance(
    state: &AppState,
    clock_id: &str,
    to: DateTime<Utc>,
    token: &str,
) -> Result<Report, DbErr> {
    let renewer = {
        let (db, id, token) = (state.db.clone(), clock_id.to_string(), token.to_string());
        Renewer::start(state, move |until| {
            let (db, id, token) = (db.clone(), id.clone(), token.clone());
            async move { db::test_clocks::renew(&db, &id, &token, until).await.map(|_| ()) }
        })
    };
    let advanced = advance_steps(state, clock_id, to, token).await;
    drop(renewer);
    let reached = match &advanced {
        Ok(_) => Some(to),
        Err(e) => {
            tracing::error!(clock = clock_id, error = %e, "clock advance failed; the clock stops where it got to");
            None
        }
    };
    db::test_clocks::finish(&state.db, clock_id, token, reached, Utc::now()).await?;
    advanced
}

pub(super) async fn advance_steps(
    state: &AppState,
    clock_id: &str,
    to: DateTime<Utc>,
    token: &str,
) -> Result<Report, DbErr> {
    let mut report = Report::default();
    let mut events = 0;
    let mut time = db::test_clocks::frozen_time(&state.db, clock_id).await?.unwrap_or(to);
    reminders::sweep(state, Some(clock_id), time).await?;
    loop {
        let due = db::subscriptions::due_next_on_clock(&state.db, clock_id, to, BATCH).await?;
        let renew = due.first().and_then(|s| s.renew_at);
        // A reminder, or the card network's step on a test card's payment or dispute, due
        // before the next charge happens at its own time.
        let remind = match state.mailer {
            Some(_) => db::subscriptions::next_remind_on_clock(&state.db, clock_id, time, to).await?,
            None => None,
        };
        let network = db::disputes::next_network_on_clock(&state.db, clock_id, time, to).await?;
        let between = [remind, network].into_iter().flatten().min();
        if let Some(at) = between.filter(|at| renew.is_none_or(|renew| *at < renew)) {
            if !db::test_clocks::step(&state.db, clock_id, token, at, Utc::now()).await? {
                return Ok(report);
            }
            time = at;
            reminders::sweep(state, Some(clock_id), at).await?;
            network_at(state, clock_id, at).await?;
            continue;
        }
        let Some(at) = renew else { break };
        if !db::test_clocks::step(&state.db, clock_id, token, at, Utc::now()).await? {
            // Another run took the clock over: it carries on from here.
            return Ok(report);
        }
        time = time.max(at);
        let claim = random_hex(12);
        let ids = due.iter().map(|s| s.id.clone()).collect();
        let claimed =
            db::subscriptions::claim_ids(&state.db, ids, at, &claim, lease_from_now(state), Utc::now()).await?;
        if claimed.is_empty() {
            // Held by a run that stopped; its claims run out within the lease.
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
            continue;
        }
        events += claimed.len();
        report += bill(state, claimed, at, false, &claim).await?.0;
        // The periods that just began have reminders of their own.
        reminders::sweep(state, Some(clock_id), at).await?;
        network_at(state, clock_id, at).await?;
        if events >= MAX_CLOCK_EVENTS {
            break;
        }
    }
    reminders::sweep(state, Some(clock_id), to).await?;
    network_at(state, clock_id, to).await?;
    Ok(report)
}

/// Runs the simulated card network on the clock's payments and disputes due by `at`.
async fn network_at(state: &AppState, clock_id: &str, at: DateTime<Utc>) -> Result<(), DbErr> {
    match crate::services::network::run(state, Some(clock_id), at).await {
        Ok(_) => Ok(()),
        Err(AppError::Db(e)) => Err(e),
        Err(e) => Err(DbErr::Custom(e.to_string())),
    }
}
