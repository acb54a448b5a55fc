//! Failures counted for throttling, shared by every instance through the database.

use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveValue::NotSet, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder, QuerySelect, Set,
};

use super::entities::throttle_hits::{ActiveModel, Column, Entity};
use crate::domain::throttle::Limit;

/// How long `key` must wait under `limit` at `now`; `None` when it may try.
pub async fn wait(
    db: &impl ConnectionTrait,
    limit: &Limit,
    key: &str,
    now: DateTime<Utc>,
) -> Result<Option<std::time::Duration>, DbErr> {
    let recent: Vec<DateTime<Utc>> = Entity::find()
        .select_only()
        .column(Column::At)
        .filter(Column::Scope.eq(limit.scope))
        .filter(Column::Key.eq(key))
        .filter(Column::At.gt(now - limit.window))
        .order_by_desc(Column::At)
        .limit(limit.max as u64)
        .into_tuple()
        .all(db)
        .await?;
    Ok(limit.wait(&recent, now).and_then(|d| d.to_std().ok()))
}

/// Counts one failure of `key` under `limit`.
pub async fn fail(db: &impl ConnectionTrait, limit: &Limit, key: &str, now: DateTime<Utc>) -> Result<(), DbErr> {
    let row = ActiveModel { seq: NotSet, scope: Set(limit.scope.into()), key: Set(key.into()), at: Set(now) };
    Entity::insert(row).exec_without_returning(db).await?;
    Ok(())
}

/// Forgets `key`'s failures (a successful login).
pub async fn forget(db: &impl ConnectionTrait, limit: &Limit, key: &str) -> Result<(), DbErr> {
    Entity::delete_many().filter(Column::Scope.eq(limit.scope)).filter(Column::Key.eq(key)).exec(db).await?;
    Ok(())
}

/// Deletes failures older than `before` (no window is that long).
pub async fn prune(db: &impl ConnectionTrait, before: DateTime<Utc>) -> Result<u64, DbErr> {
    Ok(Entity::delete_many().filter(Column::At.lt(before)).exec(db).await?.rows_affected)
}
