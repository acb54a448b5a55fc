//! Captures and voids of held payments: claimed on the payment's row before the processor is
//! asked, recorded once it approves, given up when it refuses; a claim an interrupted request
//! left is found by the sweep and taken up again.

use super::*;

/// Claims the shop's authorized payment for a capture or void (`kind`), if nothing claimed it
/// first: of two at once, one wins. The claim's time (also the row's `updated_at`, which the
/// sweep gives up by) is its holder's token: answers it when this call claimed the payment.
pub async fn claim_settling(
    db: &impl ConnectionTrait,
    shop_id: i64,
    id: &str,
    kind: &str,
    now: DateTime<Utc>,
) -> Result<Option<DateTime<Utc>>, DbErr> {
    let token = crate::db::now_millis(now);
    let claimed = Entity::update_many()
        .col_expr(Column::Settling, Expr::value(Some(kind)))
        .col_expr(Column::SettlingAt, Expr::value(Some(token)))
        .col_expr(Column::UpdatedAt, Expr::value(token))
        .filter(Column::ShopId.eq(shop_id))
        .filter(Column::Id.eq(id))
        .filter(Column::Status.eq(PaymentStatus::Authorized))
        .filter(Column::Settling.is_null())
        .exec(db)
        .await?;
    Ok((claimed.rows_affected == 1).then_some(token))
}

/// Gives up the claim its holder knows by `token`: the processor refused, or its answer was
/// lost and the caller is told to send it again. A claim another holder took since is left.
pub async fn release_settling(db: &impl ConnectionTrait, id: &str, token: DateTime<Utc>) -> Result<(), DbErr> {
    let none: Option<String> = None;
    let never: Option<DateTime<Utc>> = None;
    Entity::update_many()
        .col_expr(Column::Settling, Expr::value(none))
        .col_expr(Column::SettlingAt, Expr::value(never))
        .filter(Column::Id.eq(id))
        .filter(Column::SettlingAt.eq(token))
        .exec(db)
        .await?;
    Ok(())
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
/// the processor approved (asked by paydesk, or made in its back office), whatever claim it
/// had: the processor's approval decides. Whether this call moved it: of two at once, one.
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

/// Takes up a claim the sweep found (its token `was`), renewing it with the token `now`: of
/// two sweeps at once, one takes it. Whether this call took it.
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
