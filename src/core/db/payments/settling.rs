//! Captures and voids of held payments: claimed on the payment's row before the processor is
//! asked, recorded once it approves, given up when it refuses; a claim an interrupted request
//! left is found by the sweep and taken up again.

use super::*;

/// Claims the shop's authorized payment for a capture or void (`kind`), if nothing claimed it
/// first: of two at once, one wins. Whether this call claimed it.
pub async fn claim_settling(
    db: &impl ConnectionTrait,
    shop_id: i64,
    id: &str,
    kind: &str,
    now: DateTime<Utc>,
) -> Result<bool, DbErr> {
    let claimed = Entity::update_many()
        .col_expr(Column::Settling, Expr::value(Some(kind)))
        .col_expr(Column::SettlingAt, Expr::value(Some(crate::db::now_millis(now))))
        .filter(Column::ShopId.eq(shop_id))
        .filter(Column::Id.eq(id))
        .filter(Column::Status.eq(PaymentStatus::Authorized))
        .filter(Column::Settling.is_null())
        .exec(db)
        .await?;
    Ok(claimed.rows_affected == 1)
}

/// Gives a claim of `kind` up: the processor refused, or its answer was lost and the caller
/// is told to send it again.
pub async fn release_settling(db: &impl ConnectionTrait, id: &str, kind: &str) -> Result<(), DbErr> {
    let none: Option<String> = None;
    let never: Option<DateTime<Utc>> = None;
    Entity::update_many()
        .col_expr(Column::Settling, Expr::value(none))
        .col_expr(Column::SettlingAt, Expr::value(never))
        .filter(Column::Id.eq(id))
        .filter(Column::Settling.eq(kind))
        .exec(db)
        .await?;
    Ok(())
}

/// Records the claimed capture (`to` succeeded) or void (`to` voided) the processor approved,
/// if the payment is still authorized under that claim: whether this call recorded it.
pub async fn record_settled(
    db: &impl ConnectionTrait,
    id: &str,
    kind: &str,
    to: PaymentStatus,
    now: DateTime<Utc>,
) -> Result<bool, DbErr> {
    let recorded = settled_to(to, now).filter(Column::Id.eq(id)).filter(Column::Settling.eq(kind)).exec(db).await?;
    Ok(recorded.rows_affected == 1)
}

/// The update that moves an authorized payment to `to` (succeeded or voided) at `now`, its
/// claim done with.
fn settled_to(to: PaymentStatus, now: DateTime<Utc>) -> sea_orm::UpdateMany<Entity> {
    let now = crate::db::now_millis(now);
    let none: Option<String> = None;
    let never: Option<DateTime<Utc>> = None;
    let at = match to {
        PaymentStatus::Voided => Column::VoidedAt,
        _ => Column::CapturedAt,
    };
    Entity::update_many()
        .col_expr(Column::Status, Expr::value(to.as_str()))
        .col_expr(at, Expr::value(Some(now)))
        .col_expr(Column::UpdatedAt, Expr::value(now))
        .col_expr(Column::Settling, Expr::value(none))
        .col_expr(Column::SettlingAt, Expr::value(never))
        .filter(Column::Status.eq(PaymentStatus::Authorized))
}

/// Records a capture (`to` succeeded) or void (`to` voided) of the shop's authorized payment
/// made in the processor's back office, whatever claim it had (the claim has nothing left to
/// do): whether this call moved it. Of two notifications at once, one moves it.
pub async fn settle_held(
    db: &impl ConnectionTrait,
    shop_id: i64,
    id: &str,
    to: PaymentStatus,
    now: DateTime<Utc>,
) -> Result<bool, DbErr> {
    let moved = settled_to(to, now).filter(Column::ShopId.eq(shop_id)).filter(Column::Id.eq(id)).exec(db).await?;
    Ok(moved.rows_affected == 1)
}

/// Claims an interrupted request left, made before `before` (at most `limit`).
pub async fn settling_due(db: &impl ConnectionTrait, before: DateTime<Utc>, limit: u64) -> Result<Vec<Model>, DbErr> {
    Entity::find()
        .filter(Column::Settling.is_not_null())
        .filter(Column::SettlingAt.lt(crate::db::now_millis(before)))
        .order_by_asc(Column::SettlingAt)
        .limit(limit)
        .all(db)
        .await
}

/// Takes up a claim the sweep found (made at `was`), renewing it for `now`: of two sweeps at
/// once, one takes it. Whether this call took it.
pub async fn take_settling(
    db: &impl ConnectionTrait,
    id: &str,
    was: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<bool, DbErr> {
    let taken = Entity::update_many()
        .col_expr(Column::SettlingAt, Expr::value(Some(crate::db::now_millis(now))))
        .filter(Column::Id.eq(id))
        .filter(Column::SettlingAt.eq(was))
        .exec(db)
        .await?;
    Ok(taken.rows_affected == 1)
}
