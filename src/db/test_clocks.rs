//! Stored test clocks.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ActiveValue::NotSet, ColumnTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter, Set,
};

use super::ShopOwned;
use super::entities::test_clocks::{ActiveModel, Column, Entity, Model};
use crate::domain::ids::{TEST_CLOCK, new_id};

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
    let now = super::now_millis(now);
    ActiveModel {
        seq: NotSet,
        id: Set(new_id(TEST_CLOCK)),
        shop_id: Set(shop_id),
        name: Set(name),
        frozen_time: Set(super::now_millis(frozen_time)),
        status: Set("ready".into()),
        created_at: Set(now),
        updated_at: Set(now),
    }
    .insert(db)
    .await
}

/// Marks the clock as advancing if it is ready; false if another advance is running.
pub async fn begin_advance(db: &DatabaseConnection, id: &str, now: DateTime<Utc>) -> Result<bool, DbErr> {
    let result = Entity::update_many()
        .col_expr(Column::Status, Expr::value("advancing"))
        .col_expr(Column::UpdatedAt, Expr::value(super::now_millis(now)))
        .filter(Column::Id.eq(id))
        .filter(Column::Status.eq("ready"))
        .exec(db)
        .await?;
    Ok(result.rows_affected == 1)
}

/// Sets the clock's time (and whether it is still advancing).
pub async fn set_time(
    db: &DatabaseConnection,
    id: &str,
    time: DateTime<Utc>,
    done: bool,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    Entity::update_many()
        .col_expr(Column::FrozenTime, Expr::value(super::now_millis(time)))
        .col_expr(Column::Status, Expr::value(if done { "ready" } else { "advancing" }))
        .col_expr(Column::UpdatedAt, Expr::value(super::now_millis(now)))
        .filter(Column::Id.eq(id))
        .exec(db)
        .await?;
    Ok(())
}
