//! Stored test clocks.

use chrono::{DateTime, Utc};
use sea_orm::DatabaseConnection;
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ActiveValue::NotSet, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, Set,
};

use super::ShopOwned;
use super::entities::test_clocks::{ActiveModel, Column, Entity, Model};
use crate::domain::ids::{TEST_CLOCK, new_id};
use crate::domain::vocab::ClockStatus;

impl ShopOwned for Entity {
    const SEQ: Column = Column::Seq;
    const ID: Column = Column::Id;
    const SHOP: Column = Column::ShopId;
    fn public_id(row: &Model) -> &str {
        &row.id
    }
}

/// Stores a clock frozen at `frozen_time`.
pub async fn insert(
    db: &DatabaseConnection,
    shop_id: i64,
    name: Option<String>,
    frozen_time: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<Model, DbErr> {
    let txn = crate::db::begin(db).await?;
    let at = now;
    let audited = serde_json::json!({"name": name, "frozen_time": frozen_time.to_rfc3339()});
    let now = super::now_millis(now);
    let created = ActiveModel {
        seq: NotSet,
        id: Set(new_id(TEST_CLOCK)),
        shop_id: Set(shop_id),
        name: Set(name),
        frozen_time: Set(super::now_millis(frozen_time)),
        status: Set(ClockStatus::Ready),
        advance_to: Set(None),
        lease_token: Set(None),
        lease_until: Set(None),
        created_at: Set(now),
        updated_at: Set(now),
    }
    .insert(&txn)
    .await?;
    let fields = crate::domain::audit::changes(&serde_json::json!({}), &audited, &[]);
    super::audit::record_acting(&txn, shop_id, "test_clock.created", ("test_clock", &created.id), fields, at).await?;
    txn.commit().await?;
    Ok(created)
}

/// Starts an advance to `to` under the lease `token`, if the clock is ready, or if an
/// earlier advance stopped (its lease ran out) and this one takes it over. False if another
/// advance is running.
pub async fn begin_advance(
    db: &impl ConnectionTrait,
    id: &str,
    to: DateTime<Utc>,
    token: &str,
    lease_until: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<bool, DbErr> {
    let now = super::now_millis(now);
    let result = Entity::update_many()
        .col_expr(Column::Status, Expr::value(ClockStatus::Advancing))
        .col_expr(Column::AdvanceTo, Expr::value(Some(super::now_millis(to))))
        .col_expr(Column::LeaseToken, Expr::value(Some(token)))
        .col_expr(Column::LeaseUntil, Expr::value(Some(super::now_millis(lease_until))))
        .col_expr(Column::UpdatedAt, Expr::value(now))
        .filter(Column::Id.eq(id))
        // Only forward, judged on the clock as it is now (not as the caller read it).
        .filter(Column::FrozenTime.lte(super::now_millis(to)))
        .filter(Column::Status.eq(ClockStatus::Ready).or(Column::LeaseUntil.is_null()).or(Column::LeaseUntil.lt(now)))
        .exec(db)
        .await?;
    Ok(result.rows_affected == 1)
}

/// Extends the lease of a running advance; false if another run took the clock over.
pub async fn renew(
    db: &impl ConnectionTrait,
    id: &str,
    token: &str,
    lease_until: DateTime<Utc>,
) -> Result<bool, DbErr> {
    let result = Entity::update_many()
        .col_expr(Column::LeaseUntil, Expr::value(Some(super::now_millis(lease_until))))
        .filter(Column::Id.eq(id))
        .filter(Column::LeaseToken.eq(token))
        .exec(db)
        .await?;
    Ok(result.rows_affected == 1)
}

/// A clock's time now (its frozen time), whoever's it is.
pub async fn frozen_time(db: &impl ConnectionTrait, id: &str) -> Result<Option<DateTime<Utc>>, DbErr> {
    Ok(Entity::find().filter(Column::Id.eq(id)).one(db).await?.map(|c| c.frozen_time))
}

/// Moves a running advance's clock to `time`; false if another run took the clock over.
pub async fn step(
    db: &impl ConnectionTrait,
    id: &str,
    token: &str,
    time: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<bool, DbErr> {
    let result = Entity::update_many()
        .col_expr(Column::FrozenTime, Expr::value(super::now_millis(time)))
        .col_expr(Column::UpdatedAt, Expr::value(super::now_millis(now)))
        .filter(Column::Id.eq(id))
        .filter(Column::LeaseToken.eq(token))
        .exec(db)
        .await?;
    Ok(result.rows_affected == 1)
}

/// Ends a running advance: the clock is ready again, at `reached` (where it got to when
/// `None`), if this run still holds it.
pub async fn finish(
    db: &impl ConnectionTrait,
    id: &str,
    token: &str,
    reached: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    let never: Option<DateTime<Utc>> = None;
    let mut update = Entity::update_many()
        .col_expr(Column::Status, Expr::value(ClockStatus::Ready))
        .col_expr(Column::AdvanceTo, Expr::value(never))
        .col_expr(Column::LeaseToken, Expr::value(Option::<String>::None))
        .col_expr(Column::LeaseUntil, Expr::value(never))
        .col_expr(Column::UpdatedAt, Expr::value(super::now_millis(now)));
    if let Some(time) = reached {
        update = update.col_expr(Column::FrozenTime, Expr::value(super::now_millis(time)));
    }
    update.filter(Column::Id.eq(id)).filter(Column::LeaseToken.eq(token)).exec(db).await?;
    Ok(())
}

/// Clocks left advancing by a run that stopped (their lease has run out).
pub async fn stalled(db: &impl ConnectionTrait, now: DateTime<Utc>) -> Result<Vec<Model>, DbErr> {
    Entity::find()
        .filter(Column::Status.eq(ClockStatus::Advancing))
        .filter(Column::LeaseUntil.is_null().or(Column::LeaseUntil.lt(super::now_millis(now))))
        .all(db)
        .await
}

/// The time of a subscription on the clock `clock_id` (of `shop_id`): the clock's frozen
/// time; `now` for a subscription on no clock (or a clock since deleted).
pub async fn time_of(
    db: &impl ConnectionTrait,
    shop_id: i64,
    clock_id: Option<&str>,
    now: DateTime<Utc>,
) -> Result<DateTime<Utc>, DbErr> {
    let Some(id) = clock_id else { return Ok(now) };
    Ok(super::find::<Entity>(db, shop_id, id).await?.map_or(now, |c| c.frozen_time))
}
