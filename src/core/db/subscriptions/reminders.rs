//! When a subscription's reminders are looked at next.

use super::*;

/// Subscriptions in their trial or a paid period whose reminders are to be looked at by
/// `now` (never looked at, or due again), on the clock `clock_id` or in real time; those due
/// for a charge are left to the engine (their reminders are moot).
pub async fn reminders_due(
    db: &impl ConnectionTrait,
    clock_id: Option<&str>,
    now: DateTime<Utc>,
    limit: u64,
) -> Result<Vec<Model>, DbErr> {
    let now = crate::db::now_millis(now);
    let on_clock = match clock_id {
        Some(id) => Column::TestClockId.eq(id),
        None => Column::TestClockId.is_null(),
    };
    Entity::find()
        .filter(on_clock)
        .filter(Column::State.is_in([State::Trial, State::Active]))
        .filter(Column::RemindAt.is_null().or(Column::RemindAt.lte(now)))
        .filter(Column::RenewAt.gt(now))
        .order_by_asc(Column::Seq)
        .limit(limit)
        .all(db)
        .await
}

/// When each of these subscriptions' reminders are looked at next.
pub async fn set_remind_at(db: &impl ConnectionTrait, next: &[(String, DateTime<Utc>)]) -> Result<(), DbErr> {
    for (id, at) in next {
        Entity::update_many()
            .col_expr(Column::RemindAt, Expr::value(Some(crate::db::now_millis(*at))))
            .filter(Column::Id.eq(id.as_str()))
            .exec(db)
            .await?;
    }
    Ok(())
}

/// The earliest moment after `after` and up to `until` when a reminder of a subscription on
/// the clock falls due.
pub async fn next_remind_on_clock(
    db: &impl ConnectionTrait,
    clock_id: &str,
    after: DateTime<Utc>,
    until: DateTime<Utc>,
) -> Result<Option<DateTime<Utc>>, DbErr> {
    let next: Option<Option<DateTime<Utc>>> = Entity::find()
        .select_only()
        .column(Column::RemindAt)
        .filter(Column::TestClockId.eq(clock_id))
        .filter(Column::State.is_in([State::Trial, State::Active]))
        .filter(Column::RemindAt.gt(crate::db::now_millis(after)))
        .filter(Column::RemindAt.lte(crate::db::now_millis(until)))
        .order_by_asc(Column::RemindAt)
        .into_tuple()
        .one(db)
        .await?;
    Ok(next.flatten())
}
