//! Ending a subscription: now, or with its period (and taking that back); a new card on one
//! still running.

use super::{Changed, ended, now_of};
use crate::db::entities::subscriptions;
use crate::db::{self};
use crate::domain::billing::State as SubState;
use crate::domain::event::EventType;
use crate::external::acquirer::CardRef;
use crate::web::error::AppError;
use crate::web::state::AppState;
use crate::web::views::SubscriptionParts as Parts;

/// Cancels the merchant's subscription at its own time (its clock's in test mode); 409 if
/// it has already ended, also when the engine ended it a moment before.
pub async fn cancel(state: &AppState, sub: subscriptions::Model, reason: Option<String>) -> Result<Changed, AppError> {
    if sub.state.has_ended() {
        return Err(ended(sub.state));
    }
    let now = now_of(state, &sub).await?;
    // Read before the writer's turn: a cancel changes none of them.
    let parts = Parts::of(&state.db, std::slice::from_ref(&sub)).await?;
    let txn = crate::db::begin(&state.db).await?;
    match db::subscriptions::cancel(&txn, &sub, reason, false, now).await? {
        Some((canceled, row)) => {
            let line = crate::services::events::Line { row, sub: canceled.clone(), charge: None };
            let view = crate::services::events::timeline_of(&txn, &state.config, parts, line, None).await?;
            txn.commit().await?;
            Ok(Changed::recorded(canceled, view))
        }
        None => {
            let current = db::find::<subscriptions::Entity>(&state.db, sub.shop_id, &sub.id).await?;
            Err(ended(current.map_or(sub.state, |s| s.state)))
        }
    }
}

/// Ends a subscription when its trial or paid period does, without charging it again; the
/// `reason` is its cancel reason then. Asked again, it changes nothing; integrators hear it
/// once (`subscription.cancellation_requested`).
pub async fn cancel_at_period_end(
    state: &AppState,
    sub: &subscriptions::Model,
    reason: Option<String>,
) -> Result<(), AppError> {
    let now = now_of(state, sub).await?;
    let txn = crate::db::begin(&state.db).await?;
    if let Some(marked) = db::subscriptions::cancel_at_period_end(&txn, sub, reason, now).await? {
        crate::services::events::record_about(
            &txn,
            &state.config,
            EventType::SubscriptionCancellationRequested,
            &marked,
        )
        .await?;
        txn.commit().await?;
        return Ok(());
    }
    drop(txn);
    let current = db::find::<subscriptions::Entity>(&state.db, sub.shop_id, &sub.id).await?;
    if current.is_some_and(|s| s.cancel_at_period_end && matches!(s.state, SubState::Trial | SubState::Active)) {
        return Ok(());
    }
    let message = "Only a subscription in its trial or a paid period can end with it; cancel it now instead";
    Err(AppError::Conflict(message.into()))
}

/// Withdraws a cancel at the end of the period: the subscription goes on being charged.
/// Asked again, it changes nothing; `409` once the subscription has ended.
pub async fn keep(state: &AppState, sub: &subscriptions::Model) -> Result<(), AppError> {
    let now = now_of(state, sub).await?;
    let txn = crate::db::begin(&state.db).await?;
    if let Some(kept) = db::subscriptions::withdraw_cancellation(&txn, sub, now).await? {
        crate::services::events::record_about(&txn, &state.config, EventType::SubscriptionCancellationWithdrawn, &kept)
            .await?;
        txn.commit().await?;
        return Ok(());
    }
    drop(txn);
    let current = db::find::<subscriptions::Entity>(&state.db, sub.shop_id, &sub.id).await?;
    match current {
        Some(s) if !s.state.has_ended() => Ok(()),
        Some(s) => Err(AppError::Conflict(format!("The subscription has already ended: it is {}", s.state))),
        None => Err(AppError::NotFound("Subscription")),
    }
}

/// Saves a card the subscriber typed on a subscription in its trial or a paid period: the
/// next charges use it (`subscription.card_updated`). `409` once it has ended.
pub async fn replace_card(state: &AppState, sub: &subscriptions::Model, card: &CardRef) -> Result<(), AppError> {
    let now = now_of(state, sub).await?;
    let txn = crate::db::begin(&state.db).await?;
    let Some(updated) = db::subscriptions::replace_card(&txn, sub, card, now).await? else {
        return Err(AppError::Conflict("The subscription has ended".into()));
    };
    crate::services::events::record_about(&txn, &state.config, EventType::SubscriptionCardUpdated, &updated).await?;
    txn.commit().await?;
    Ok(())
}
