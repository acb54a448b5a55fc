//! A subscription's card: given when it starts, taken for a charge its customer confirms,
//! replaced; and the outcomes a test subscription's card is told to have.

use super::*;

/// Sets the stored card's columns on a row about to be written.
pub(super) fn set_card_columns(row: &mut ActiveModel, card: &CardRef) {
    row.card_token = Set(Some(card.token.clone()));
    row.card_brand = Set(Some(card.brand.clone()));
    row.card_last4 = Set(Some(card.last4.clone()));
    row.card_exp_month = Set(Some(card.exp_month));
    row.card_exp_year = Set(Some(card.exp_year));
    row.card_holder = Set(Some(card.holder.clone()));
    row.card_fingerprint = Set(card.fingerprint.clone());
}

/// Sets the card and the start of billing on a row about to be written.
pub fn set_card(row: &mut ActiveModel, card: &CardRef, started_at: DateTime<Utc>, anchor_at: DateTime<Utc>) {
    set_card_columns(row, card);
    row.started_at = Set(Some(crate::db::now_millis(started_at)));
    row.anchor_at = Set(Some(crate::db::now_millis(anchor_at)));
}

/// How a subscription starts: when, where its periods count from, and when its trial ends
/// (where its first plan period begins, if its plan has a trial).
pub struct Start {
    pub at: DateTime<Utc>,
    pub anchor_at: DateTime<Utc>,
    pub trial_ends_at: Option<DateTime<Utc>>,
}

/// Records the card and the start of billing, and claims the subscription for its first
/// charge, if, and only if, it is still waiting for its card: of two submits of one card
/// form, one starts it. `None` when another request started it first.
pub async fn start(
    db: &impl ConnectionTrait,
    sub: Model,
    card: &CardRef,
    start: Start,
    claim: (&str, DateTime<Utc>),
) -> Result<Option<Model>, DbErr> {
    let started_at = start.at;
    let mut row = sub.clone().into_active_model();
    set_card(&mut row, card, started_at, start.anchor_at);
    row.trial_ends_at = Set(start.trial_ends_at.map(crate::db::now_millis));
    row.claim_token = Set(Some(claim.0.to_string()));
    row.claimed_until = Set(Some(crate::db::now_millis(claim.1)));
    let update = Entity::update_many().set(row);
    guarded(
        db,
        &sub.id,
        started_at,
        update,
        Condition::all().add(Column::State.eq(State::Redirecting)).add(Column::StartedAt.is_null()),
    )
    .await
}

/// Takes a new card for a started subscription waiting for its customer (the bank asked for
/// them on a renewal) or in its retries (the customer pays what is overdue with another
/// card), and claims it for the charge the customer makes now, if, and only if, it still
/// waits and no engine holds it: of two submits, one goes on. `None` otherwise.
pub async fn take_card(
    db: &impl ConnectionTrait,
    sub: Model,
    card: &CardRef,
    now: DateTime<Utc>,
    claim: (&str, DateTime<Utc>),
) -> Result<Option<Model>, DbErr> {
    let mut row = sub.clone().into_active_model();
    set_card_columns(&mut row, card);
    row.claim_token = Set(Some(claim.0.to_string()));
    row.claimed_until = Set(Some(crate::db::now_millis(claim.1)));
    let update = Entity::update_many().set(row);
    guarded(
        db,
        &sub.id,
        now,
        update,
        Condition::all()
            .add(
                Condition::any()
                    .add(
                        Condition::all()
                            .add(Column::State.eq(State::Redirecting))
                            .add(Column::StartedAt.is_not_null())
                            .add(Column::RenewAt.is_null()),
                    )
                    .add(Column::State.eq(State::FailedAttempt)),
            )
            .add(
                Condition::any()
                    .add(Column::ClaimedUntil.is_null())
                    .add(Column::ClaimedUntil.lt(crate::db::now_millis(now))),
            ),
    )
    .await
}

/// Adds to a test subscription's card schedule: from `from` on, the card behaves as
/// `outcome` (an entry at the same moment is replaced, in one statement, whatever runs at once).
pub async fn schedule_test_outcome(
    db: &impl ConnectionTrait,
    subscription_id: &str,
    outcome: Behaviour,
    from: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    let entry = outcomes::ActiveModel {
        seq: NotSet,
        subscription_id: Set(subscription_id.to_string()),
        effective_from: Set(crate::db::now_millis(from)),
        outcome: Set(outcome),
        created_at: Set(crate::db::now_millis(now)),
    };
    let upsert = OnConflict::columns([outcomes::Column::SubscriptionId, outcomes::Column::EffectiveFrom])
        .update_columns([outcomes::Column::Outcome, outcomes::Column::CreatedAt])
        .to_owned();
    outcomes::Entity::insert(entry).on_conflict(upsert).exec_without_returning(db).await?;
    Ok(())
}

/// The card schedules of `subscription_ids`, each in time order.
pub async fn test_outcomes_of(
    db: &impl ConnectionTrait,
    subscription_ids: &[&str],
) -> Result<HashMap<String, Vec<outcomes::Model>>, DbErr> {
    let mut schedules: HashMap<String, Vec<outcomes::Model>> = HashMap::new();
    if subscription_ids.is_empty() {
        return Ok(schedules);
    }
    let entries = outcomes::Entity::find()
        .filter(outcomes::Column::SubscriptionId.is_in(subscription_ids.iter().copied()))
        .order_by_asc(outcomes::Column::EffectiveFrom)
        .all(db)
        .await?;
    for entry in entries {
        schedules.entry(entry.subscription_id.clone()).or_default().push(entry);
    }
    Ok(schedules)
}

/// Saves a new card on a subscription in its trial, a paid period or its retries (its
/// reminders are looked at again; a charge being made meanwhile keeps the card it was
/// asked with); answers it, `None` if it is in no such state.
pub async fn replace_card(
    db: &impl ConnectionTrait,
    sub: &Model,
    card: &CardRef,
    now: DateTime<Utc>,
) -> Result<Option<Model>, DbErr> {
    let mut row = <ActiveModel as Default>::default();
    set_card_columns(&mut row, card);
    row.remind_at = Set(None);
    let update = Entity::update_many().set(row);
    guarded(
        db,
        &sub.id,
        now,
        update,
        Condition::all().add(Column::State.is_in([State::Trial, State::Active, State::FailedAttempt, State::Paused])),
    )
    .await
}
