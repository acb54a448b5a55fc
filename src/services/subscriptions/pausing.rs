//! Pausing a subscription (now or from the end of its period) and resuming it.

use chrono::Utc;

use super::{Changed, ended, now_of, refused};
use crate::db::entities::{plans, subscriptions};
use crate::db::{self};
use crate::domain::Errors;
use crate::domain::billing::{ResumeBilling, State as SubState, Terms};
use crate::domain::event::EventType;
use crate::web::error::AppError;
use crate::web::state::AppState;
use crate::web::views::SubscriptionParts as Parts;

/// and how it resumes by itself.
#[derive(Debug, Clone, Copy)]
pub struct PauseRequest {
    pub at_period_end: bool,
    pub resume: db::subscriptions::ResumePlan,
}

/// Pauses a subscription now (its trial, a paid period or its retries; a paused one only
/// takes the new resume) or from the end of its paid period (`subscription.pause_requested`).
/// `409` when it has ended, is set to end with its period, or a charge of it is in flight.
pub async fn pause(state: &AppState, sub: &subscriptions::Model, ask: PauseRequest) -> Result<Changed, AppError> {
    let now = now_of(state, sub).await?;
    if ask.resume.at.is_some_and(|at| at <= now) {
        let message = format!("must be after the subscription's current time, {}", crate::web::views::timestamp(now));
        return Err(AppError::Validation(Errors::one("resume_at", message)));
    }
    if sub.state.has_ended() {
        return Err(ended(sub.state));
    }
    if !SubState::PAUSABLE.contains(&sub.state) && sub.state != SubState::Paused {
        let message = "Only a subscription in its trial, a paid period or its retries can pause; cancel it instead";
        return Err(AppError::Conflict(message.into()));
    }
    if sub.cancel_at_period_end {
        return Err(AppError::Conflict("The subscription ends with its period: withdraw that cancel first".into()));
    }
    // Read before the writer's turn: a pause changes none of them (and records no event of
    // a paused subscription, whose resume alone moves).
    let parts = match sub.state {
        SubState::Paused => Parts::default(),
        _ => Parts::of(&state.db, std::slice::from_ref(sub)).await?,
    };
    let txn = crate::db::begin(&state.db).await?;
    if ask.at_period_end && sub.state != SubState::Paused {
        let Some(marked) = db::subscriptions::pause_at_period_end(&txn, sub, ask.resume, now).await? else {
            let message =
                "Only a subscription in its trial or a paid period can pause from its end; pause it now instead";
            return Err(AppError::Conflict(message.into()));
        };
        let requested = EventType::SubscriptionPauseRequested;
        let view = crate::services::events::record_of(&txn, &state.config, parts, requested, &marked).await?;
        txn.commit().await?;
        return Ok(Changed::recorded(marked, view));
    }
    let paused = match db::subscriptions::pause_now(&txn, sub, ask.resume, now).await? {
        Some(paused) => paused,
        None => {
            drop(txn);
            // Paused a moment ago by another request (a double click): this one only sets
            // the resume, as a pause of a paused subscription does.
            let current = db::find::<subscriptions::Entity>(&state.db, sub.shop_id, &sub.id).await?;
            if let Some(current) = current.filter(|c| c.state == SubState::Paused && sub.state != SubState::Paused) {
                return Box::pin(pause(state, &current, ask)).await;
            }
            return Err(refused(state, sub).await);
        }
    };
    if sub.state == SubState::Paused {
        // Only its resume moved: no line, no event.
        txn.commit().await?;
        return Ok(Changed::unrecorded(paused));
    }
    let reason = Some("paused by the merchant".to_string());
    let row =
        db::subscriptions::event_row(&paused, Some(sub.state), (paused.state, paused.renew_at), None, reason, now);
    let line = crate::services::events::Line { row, sub: paused.clone(), charge: None };
    let view = crate::services::events::timeline_of(&txn, &state.config, parts, line, None).await?;
    txn.commit().await?;
    Ok(Changed::recorded(paused, view))
}

/// Resumes a paused subscription now, with a new period (charged at once) or on its old
/// schedule; for one set to pause from the end of its period, withdraws that
/// (`subscription.pause_withdrawn`). `409` when it is neither, or a charge of it is in flight.
pub async fn resume(state: &AppState, sub: &subscriptions::Model, billing: ResumeBilling) -> Result<Changed, AppError> {
    let now = now_of(state, sub).await?;
    if sub.pause_at_period_end && sub.state != SubState::Paused {
        // Read before the writer's turn: a withdrawal changes none of them.
        let parts = Parts::of(&state.db, std::slice::from_ref(sub)).await?;
        let txn = crate::db::begin(&state.db).await?;
        if let Some(kept) = db::subscriptions::withdraw_pause(&txn, sub, now).await? {
            let withdrawn = EventType::SubscriptionPauseWithdrawn;
            let view = crate::services::events::record_of(&txn, &state.config, parts, withdrawn, &kept).await?;
            txn.commit().await?;
            return Ok(Changed::recorded(kept, view));
        }
    }
    if sub.state.has_ended() {
        return Err(ended(sub.state));
    }
    if sub.state != SubState::Paused {
        return Err(AppError::Conflict("The subscription is not paused".into()));
    }
    let plan =
        db::find::<plans::Entity>(&state.db, sub.shop_id, &sub.plan_id).await?.ok_or(AppError::NotFound("Plan"))?;
    // Read before the writer's turn: a resume changes none of them (its charge comes after).
    let mut parts = Parts::default().with_plan(plan.clone());
    parts.complete(&state.db, std::slice::from_ref(sub)).await?;
    let tz = state.config.timezone;
    let (progress, anchor) = crate::domain::billing::resume(
        &Terms::from(&plan.fields()),
        &sub.progress(),
        sub.anchor(now),
        billing,
        now,
        tz,
    );
    // Due at once (a new period, outside the night): charged in this request, claimed for it.
    let token = crate::domain::ids::random_hex(12);
    let charge_now = progress.renew_at.is_some_and(|at| at <= now);
    let claim = charge_now.then(|| (token.as_str(), Utc::now() + state.config.lease));
    let txn = crate::db::begin(&state.db).await?;
    let by = db::subscriptions::Resumer::Merchant;
    let Some(resumed) = db::subscriptions::resume(&txn, sub, by, (&progress, anchor), claim, now).await? else {
        drop(txn);
        return Err(refused(state, sub).await);
    };
    let reason = Some(crate::services::billing::resume_reason(billing, false).to_string());
    let row =
        db::subscriptions::event_row(&resumed, Some(sub.state), (resumed.state, resumed.renew_at), None, reason, now);
    let line = crate::services::events::Line { row, sub: resumed.clone(), charge: None };
    let view = crate::services::events::timeline_of(&txn, &state.config, parts, line, None).await?;
    txn.commit().await?;
    if !charge_now {
        return Ok(Changed::recorded(resumed, view));
    }
    let billed = crate::services::billing::charge_claimed(state, resumed.clone(), now, &token).await?;
    Ok(Changed::unrecorded(billed.unwrap_or(resumed)))
}
