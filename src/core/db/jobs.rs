//! Work one instance at a time does now and then (a scheduled snapshot), taken under a lease
//! that expires: an instance that dies holding it only delays the work.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{ColumnTrait, Condition, ConnectionTrait, DbErr, EntityTrait, QueryFilter, Set};

use super::entities::jobs::{ActiveModel, Column, Entity};
use super::now_millis;

/// Takes job `name` for `holder` until `lease_until` when it was last done at or before
/// `due_by` (or never) and no lease on it runs at `now`; false when another holds it or it
/// is not due.
pub async fn take(
    db: &impl ConnectionTrait,
    name: &str,
    holder: &str,
    due_by: DateTime<Utc>,
    lease_until: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<bool, DbErr> {
    let row = ActiveModel { name: Set(name.into()), ..Default::default() };
    Entity::insert(row)
        .on_conflict(OnConflict::column(Column::Name).do_nothing().to_owned())
        .do_nothing()
        .exec(db)
        .await?;
    let taken = Entity::update_many()
        .col_expr(Column::Holder, Expr::value(holder))
        .col_expr(Column::LeaseUntil, Expr::value(now_millis(lease_until)))
        .filter(Column::Name.eq(name))
        .filter(Condition::any().add(Column::LeaseUntil.is_null()).add(Column::LeaseUntil.lt(now_millis(now))))
        .filter(Condition::any().add(Column::LastDoneAt.is_null()).add(Column::LastDoneAt.lte(now_millis(due_by))))
        .exec(db)
        .await?;
    Ok(taken.rows_affected == 1)
}

/// Marks job `name` done at `now` by `holder` and ends its lease; false when the lease was
/// lost to another holder meanwhile.
pub async fn done(db: &impl ConnectionTrait, name: &str, holder: &str, now: DateTime<Utc>) -> Result<bool, DbErr> {
    let done = Entity::update_many()
        .col_expr(Column::LastDoneAt, Expr::value(now_millis(now)))
        .col_expr(Column::Holder, Expr::value(Option::<String>::None))
        .col_expr(Column::LeaseUntil, Expr::value(Option::<DateTime<Utc>>::None))
        .filter(Column::Name.eq(name))
        .filter(Column::Holder.eq(holder))
        .exec(db)
        .await?;
    Ok(done.rows_affected == 1)
}

/// Keeps job `name` from being taken again until `until` (after a failure: tried again later
/// rather than every minute).
pub async fn retry_at(db: &impl ConnectionTrait, name: &str, holder: &str, until: DateTime<Utc>) -> Result<(), DbErr> {
    Entity::update_many()
        .col_expr(Column::LeaseUntil, Expr::value(now_millis(until)))
        .filter(Column::Name.eq(name))
        .filter(Column::Holder.eq(holder))
        .exec(db)
        .await?;
    Ok(())
}

/// When job `name` was last done.
pub async fn last_done(db: &impl ConnectionTrait, name: &str) -> Result<Option<DateTime<Utc>>, DbErr> {
    Ok(Entity::find_by_id(name).one(db).await?.and_then(|job| job.last_done_at))
}
