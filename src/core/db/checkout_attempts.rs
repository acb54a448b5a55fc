//! Checkout attempts: each rendered pay form carries a fresh random attempt id, and the
//! first submit of it claims the attempt by inserting its row. A repeated or concurrent
//! submit of the same form finds the row and is shown the first one's result instead of
//! paying again.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, Set};

use super::entities::checkout_attempts::{ActiveModel, Column, Entity};

use crate::domain::vocab::AttemptStatus::{self, Done, Open, Running};

/// What claiming an attempt found.
#[derive(Debug, PartialEq, Eq)]
pub enum Claim {
    /// This submit goes ahead.
    Won,
    /// Another submit of the form is paying right now (its lease runs until then).
    Running { until: DateTime<Utc> },
    /// The form was paid already: this payment.
    Done(String),
    /// The attempt id belongs to another pay page.
    Foreign,
}

/// Claims attempt `id` of the page for `target` (a product, plan or subscription id).
pub async fn claim(
    db: &impl ConnectionTrait,
    id: &str,
    target: &str,
    lease_until: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<Claim, DbErr> {
    let row = ActiveModel {
        id: Set(id.to_string()),
        target: Set(target.to_string()),
        status: Set(Running),
        payment_id: Set(None),
        claimed_until: Set(Some(super::now_millis(lease_until))),
        created_at: Set(super::now_millis(now)),
        updated_at: Set(super::now_millis(now)),
    };
    let first = OnConflict::column(Column::Id).do_nothing().to_owned();
    match Entity::insert(row).on_conflict(first).exec_without_returning(db).await {
        Ok(1) => return Ok(Claim::Won),
        Ok(_) | Err(DbErr::RecordNotInserted) => {}
        Err(e) => return Err(e),
    }
    // A form whose earlier submit was refused before anything was charged may be sent again.
    let reopened = Entity::update_many()
        .col_expr(Column::Status, Expr::value(Running))
        .col_expr(Column::ClaimedUntil, Expr::value(Some(super::now_millis(lease_until))))
        .filter(Column::Id.eq(id))
        .filter(Column::Target.eq(target))
        .filter(Column::Status.eq(Open))
        .exec(db)
        .await?;
    if reopened.rows_affected == 1 {
        return Ok(Claim::Won);
    }
    let Some(found) = Entity::find_by_id(id.to_string()).one(db).await? else { return Ok(Claim::Foreign) };
    Ok(match (found.target == target, found.status, found.payment_id) {
        (false, _, _) => Claim::Foreign,
        (true, Done, Some(payment_id)) => Claim::Done(payment_id),
        _ => Claim::Running { until: found.claimed_until.unwrap_or(now) },
    })
}

/// The payment of attempt `id`, once it was made.
pub async fn paid_by(db: &impl ConnectionTrait, id: &str) -> Result<Option<String>, DbErr> {
    let found = Entity::find_by_id(id.to_string()).one(db).await?;
    Ok(found.filter(|a| a.status == Done).and_then(|a| a.payment_id))
}

/// The attempt paid: `payment_id` is its result from now on.
pub async fn finish(db: &impl ConnectionTrait, id: &str, payment_id: &str, now: DateTime<Utc>) -> Result<(), DbErr> {
    set(db, id, Done, Some(payment_id), now).await
}

/// The attempt was refused before anything was charged: the form may be sent again.
pub async fn release(db: &impl ConnectionTrait, id: &str, now: DateTime<Utc>) -> Result<(), DbErr> {
    set(db, id, Open, None, now).await
}

async fn set(
    db: &impl ConnectionTrait,
    id: &str,
    status: AttemptStatus,
    payment: Option<&str>,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    Entity::update_many()
        .col_expr(Column::Status, Expr::value(status))
        .col_expr(Column::PaymentId, Expr::value(payment))
        .col_expr(Column::UpdatedAt, Expr::value(super::now_millis(now)))
        .filter(Column::Id.eq(id))
        .exec(db)
        .await?;
    Ok(())
}

/// Deletes attempts made before `before`.
pub async fn prune(db: &impl ConnectionTrait, before: DateTime<Utc>) -> Result<u64, DbErr> {
    Ok(Entity::delete_many().filter(Column::CreatedAt.lt(super::now_millis(before))).exec(db).await?.rows_affected)
}
