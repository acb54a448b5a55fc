//! Idempotency keys of the API: the first request under a shop's key runs, and its answer is
//! kept for 24 hours so that a retry under the same key gets it again instead of running twice.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{ActiveValue::NotSet, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, Set};

use super::entities::idempotency_keys::{ActiveModel, Column, Entity};

/// What the key says about a request.
#[derive(Debug, PartialEq, Eq)]
pub enum Begin {
    /// The first request under the key: run it (the row is `seq`).
    Fresh(i64),
    /// The key's answer.
    Replay { status: u16, body: String },
    /// The key was used for another path or other parameters.
    Mismatch,
    /// The first request under the key is still running.
    Running,
}

/// Looks up the shop's `key` for `request` (method and path) with body `fingerprint`, and
/// takes it when it is new, older than `kept`, or its first request stopped and its lease
/// ran out.
pub async fn begin(
    db: &impl ConnectionTrait,
    (shop_id, key): (i64, &str),
    request: &str,
    fingerprint: &str,
    lease_until: DateTime<Utc>,
    (now, kept): (DateTime<Utc>, chrono::TimeDelta),
) -> Result<Begin, DbErr> {
    let expired = Entity::delete_many()
        .filter(Column::ShopId.eq(shop_id))
        .filter(Column::Key.eq(key))
        .filter(Column::CreatedAt.lt(now - kept));
    expired.exec(db).await?;
    let row = ActiveModel {
        seq: NotSet,
        shop_id: Set(shop_id),
        key: Set(key.to_string()),
        request: Set(request.to_string()),
        fingerprint: Set(fingerprint.to_string()),
        status: Set(None),
        body: Set(None),
        locked_until: Set(lease_until),
        created_at: Set(now),
    };
    let first = OnConflict::columns([Column::ShopId, Column::Key]).do_nothing().to_owned();
    match Entity::insert(row).on_conflict(first).exec(db).await {
        Ok(inserted) => return Ok(Begin::Fresh(inserted.last_insert_id)),
        Err(DbErr::RecordNotInserted) => {}
        Err(e) => return Err(e),
    }
    let found = Entity::find().filter(Column::ShopId.eq(shop_id)).filter(Column::Key.eq(key)).one(db).await?;
    let Some(found) = found else { return Ok(Begin::Running) };
    if found.request != request || found.fingerprint != fingerprint {
        return Ok(Begin::Mismatch);
    }
    if let (Some(status), Some(body)) = (found.status, found.body) {
        return Ok(Begin::Replay { status: status as u16, body });
    }
    if found.locked_until >= now {
        return Ok(Begin::Running);
    }
    let taken = Entity::update_many()
        .col_expr(Column::LockedUntil, Expr::value(lease_until))
        .filter(Column::Seq.eq(found.seq))
        .filter(Column::Status.is_null())
        .filter(Column::LockedUntil.lt(now))
        .exec(db)
        .await?;
    Ok(if taken.rows_affected == 1 { Begin::Fresh(found.seq) } else { Begin::Running })
}

/// Extends the hold of a running request on its key.
pub async fn renew(db: &impl ConnectionTrait, seq: i64, until: DateTime<Utc>) -> Result<(), DbErr> {
    Entity::update_many()
        .col_expr(Column::LockedUntil, Expr::value(until))
        .filter(Column::Seq.eq(seq))
        .filter(Column::Status.is_null())
        .exec(db)
        .await?;
    Ok(())
}

/// Keeps the answer of the key's request.
pub async fn complete(db: &impl ConnectionTrait, seq: i64, status: u16, body: String) -> Result<(), DbErr> {
    Entity::update_many()
        .col_expr(Column::Status, Expr::value(Some(i32::from(status))))
        .col_expr(Column::Body, Expr::value(Some(body)))
        .filter(Column::Seq.eq(seq))
        .exec(db)
        .await?;
    Ok(())
}

/// Forgets the key: its request was refused before it ran, so nothing is kept.
pub async fn abandon(db: &impl ConnectionTrait, seq: i64) -> Result<(), DbErr> {
    Entity::delete_many().filter(Column::Seq.eq(seq)).exec(db).await?;
    Ok(())
}

/// Deletes keys made before `before`.
pub async fn prune(db: &impl ConnectionTrait, before: DateTime<Utc>) -> Result<u64, DbErr> {
    Ok(Entity::delete_many().filter(Column::CreatedAt.lt(before)).exec(db).await?.rows_affected)
}
