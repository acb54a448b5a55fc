//! Stored refunds, and the payment's columns that keep them within what was taken: a refund
//! holds its amount on the payment (`refunding_amount`) before the acquirer is asked, and
//! moves it to `refunded_amount` or releases it once the acquirer answered.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, ExprTrait};
use sea_orm::{
    ActiveModelTrait, ActiveValue::NotSet, ColumnTrait, Condition, ConnectionTrait, DbErr, EntityTrait, QueryFilter,
    QueryOrder, QuerySelect, Set,
};

use super::entities::payments;
use super::entities::refunds::{ActiveModel, Column, Entity, Model};
use super::{ListError, Listed, Page, ShopOwned};
use crate::domain::card::Outcome;
use crate::domain::ids::{REFUND, new_id};
use crate::domain::refund::RefundAsk;
use crate::domain::vocab::{PaymentStatus, RefundStatus};

impl ShopOwned for Entity {
    const SEQ: Column = Column::Seq;
    const ID: Column = Column::Id;
    const SHOP: Column = Column::ShopId;
    fn public_id(row: &Model) -> &str {
        &row.id
    }
}

/// A page of the shop's refunds (of one payment, if given), newest first.
pub async fn list(
    db: &impl ConnectionTrait,
    shop_id: i64,
    page: &Page,
    payment_id: Option<&str>,
) -> Result<Listed<Model>, ListError> {
    let mut condition = Condition::all();
    if let Some(payment_id) = payment_id {
        condition = condition.add(Column::PaymentId.eq(payment_id));
    }
    super::list_where::<Entity>(db, shop_id, page, condition).await
}

/// The shop's refund the processor knows by `reference`.
pub async fn find_by_reference(
    db: &impl ConnectionTrait,
    shop_id: i64,
    reference: &str,
) -> Result<Option<Model>, DbErr> {
    Entity::find().filter(Column::AcquirerReference.eq(reference)).filter(Column::ShopId.eq(shop_id)).one(db).await
}

/// The refunds of a payment, oldest first.
pub async fn of_payment(db: &impl ConnectionTrait, payment_id: &str) -> Result<Vec<Model>, DbErr> {
    Entity::find().filter(Column::PaymentId.eq(payment_id)).order_by_asc(Column::Seq).all(db).await
}

/// Holds `amount` of `payment` for a refund and records the refund as `pending`, if the
/// payment's money was taken and that much of it is neither refunded nor held by another
/// refund: of refunds started at once, one that would give back more than is left loses.
/// `None` when nothing was held: then roll the transaction back, as the refund and the hold
/// go together.
pub async fn begin(
    db: &impl ConnectionTrait,
    payment: &payments::Model,
    ask: &RefundAsk,
    amount: i64,
    now: DateTime<Utc>,
) -> Result<Option<Model>, DbErr> {
    // The refund first, the hold second: requests with the same chosen id meet at the
    // refund's key (the later one fails as a duplicate), and every refund takes the locks in
    // that order, so none waits on another in a circle.
    let at = super::now_millis(now);
    let row = ActiveModel {
        seq: NotSet,
        id: Set(ask.id.clone().unwrap_or_else(|| new_id(REFUND))),
        shop_id: Set(payment.shop_id),
        payment_id: Set(payment.id.clone()),
        amount: Set(amount),
        currency: Set(payment.currency),
        reason: Set(ask.reason.clone()),
        status: Set(RefundStatus::Pending),
        test: Set(payment.test),
        acquirer_reference: Set(None),
        failure_code: Set(None),
        failure_message: Set(None),
        created_at: Set(at),
        updated_at: Set(at),
    };
    let refund = row.insert(db).await?;
    use payments::Column as P;
    let left = Expr::col(P::Amount)
        .sub(Expr::col(P::RefundedAmount))
        .sub(Expr::col(P::RefundingAmount))
        .sub(Expr::col(P::DisputedAmount));
    let held = payments::Entity::update_many()
        .col_expr(P::RefundingAmount, Expr::col(P::RefundingAmount).add(amount))
        .filter(P::ShopId.eq(payment.shop_id))
        .filter(P::Id.eq(payment.id.as_str()))
        .filter(P::Status.is_in([PaymentStatus::Succeeded, PaymentStatus::PartiallyRefunded]))
        .filter(left.gte(amount))
        .exec(db)
        .await?;
    Ok((held.rows_affected == 1).then_some(refund))
}

/// Records the acquirer's answer to a pending refund and settles its hold on the payment:
/// given back (the payment becomes partly or fully refunded) or released. Only a refund
/// still pending takes an answer, so a request and the sweeper of interrupted refunds
/// never record one twice. Answers the refund as stored, and whether this call recorded it.
/// Run it in a transaction.
pub async fn finish(
    db: &impl ConnectionTrait,
    refund: &Model,
    outcome: &Outcome,
    now: DateTime<Utc>,
) -> Result<(Model, bool), DbErr> {
    let now = super::now_millis(now);
    let mut update = Entity::update_many().col_expr(Column::UpdatedAt, Expr::value(now));
    let succeeded = match outcome {
        Outcome::Approved { reference } => {
            update = update.col_expr(Column::AcquirerReference, Expr::value(Some(reference.clone())));
            true
        }
        Outcome::Declined { code, message } | Outcome::Error { code, message } => {
            update = update
                .col_expr(Column::FailureCode, Expr::value(Some(code.to_string())))
                .col_expr(Column::FailureMessage, Expr::value(Some(message.to_string())));
            false
        }
        Outcome::Pending { .. } => {
            // Not known yet: the sweeper asks again (under the same key) a while from now.
            Entity::update_many()
                .col_expr(Column::UpdatedAt, Expr::value(now))
                .filter(Column::Id.eq(refund.id.as_str()))
                .filter(Column::Status.eq(RefundStatus::Pending))
                .exec(db)
                .await?;
            let stored = Entity::find().filter(Column::Id.eq(refund.id.as_str())).one(db).await?;
            return Ok((stored.ok_or_else(|| DbErr::RecordNotFound(refund.id.clone()))?, false));
        }
    };
    let status = if succeeded { RefundStatus::Succeeded } else { RefundStatus::Failed };
    let recorded = update
        .col_expr(Column::Status, Expr::value(status.as_str()))
        .filter(Column::Id.eq(refund.id.as_str()))
        .filter(Column::Status.eq(RefundStatus::Pending))
        .exec(db)
        .await?
        .rows_affected
        == 1;
    if recorded {
        settle_hold(db, refund, succeeded, now).await?;
    }
    let stored = Entity::find().filter(Column::Id.eq(refund.id.as_str())).one(db).await?;
    Ok((stored.ok_or_else(|| DbErr::RecordNotFound(refund.id.clone()))?, recorded))
}

/// Moves a finished refund's hold on its payment to the refunded amount, or releases it.
async fn settle_hold(
    db: &impl ConnectionTrait,
    refund: &Model,
    given_back: bool,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    use payments::Column as P;
    let mut update = payments::Entity::update_many()
        .col_expr(P::RefundingAmount, Expr::col(P::RefundingAmount).sub(refund.amount))
        .col_expr(P::UpdatedAt, Expr::value(now));
    if given_back {
        // Every expression reads the row as it was: the refunded amount before this refund.
        let all_given_back = Expr::col(P::RefundedAmount).add(refund.amount).gte(Expr::col(P::Amount));
        let status = Expr::case(all_given_back, PaymentStatus::Refunded.as_str())
            .finally(PaymentStatus::PartiallyRefunded.as_str());
        update = update
            .col_expr(P::RefundedAmount, Expr::col(P::RefundedAmount).add(refund.amount))
            .col_expr(P::Status, status.into());
    }
    update.filter(P::Id.eq(refund.payment_id.as_str())).exec(db).await?;
    Ok(())
}

/// Refunds still `pending` since before `before` and begun after `since` (the latest a
/// resend is safe): their request stopped between asking the acquirer and recording its
/// answer, or the answer is not known yet.
pub async fn interrupted(
    db: &impl ConnectionTrait,
    before: DateTime<Utc>,
    since: DateTime<Utc>,
    limit: u64,
) -> Result<Vec<Model>, DbErr> {
    Entity::find()
        .filter(Column::Status.eq(RefundStatus::Pending))
        .filter(Column::UpdatedAt.lt(super::now_millis(before)))
        .filter(Column::CreatedAt.gte(super::now_millis(since)))
        .order_by_asc(Column::UpdatedAt)
        .limit(limit)
        .all(db)
        .await
}

/// Records that a refund recorded as made failed after all, if it is still recorded as made:
/// its amount goes back to what its payment may still refund, and the payment's status
/// follows (`succeeded` when nothing else was refunded). Whether this call recorded it.
pub async fn fail_made(
    db: &impl ConnectionTrait,
    refund: &Model,
    message: &str,
    now: DateTime<Utc>,
) -> Result<bool, DbErr> {
    let at = super::now_millis(now);
    let failed = Entity::update_many()
        .col_expr(Column::Status, Expr::value(RefundStatus::Failed.as_str()))
        .col_expr(Column::FailureCode, Expr::value(Some("refund_failed")))
        .col_expr(Column::FailureMessage, Expr::value(Some(message.to_string())))
        .col_expr(Column::UpdatedAt, Expr::value(at))
        .filter(Column::Id.eq(refund.id.as_str()))
        .filter(Column::Status.eq(RefundStatus::Succeeded))
        .exec(db)
        .await?
        .rows_affected
        == 1;
    if failed {
        use payments::Column as P;
        // Every expression reads the row as it was: the refunded amount with this refund.
        let none_left = Expr::col(P::RefundedAmount).sub(refund.amount).lte(0);
        let status =
            Expr::case(none_left, PaymentStatus::Succeeded.as_str()).finally(PaymentStatus::PartiallyRefunded.as_str());
        payments::Entity::update_many()
            .col_expr(P::RefundedAmount, Expr::col(P::RefundedAmount).sub(refund.amount))
            .col_expr(P::Status, status.into())
            .col_expr(P::UpdatedAt, Expr::value(at))
            .filter(P::Id.eq(refund.payment_id.as_str()))
            .filter(P::Status.is_in([PaymentStatus::PartiallyRefunded, PaymentStatus::Refunded]))
            .exec(db)
            .await?;
    }
    Ok(failed)
}

/// Refunds still `pending` that began before `began_before` and were last looked at before
/// `looked_before`: their answer was lost past the window a resend is safe in.
pub async fn unknown_since(
    db: &impl ConnectionTrait,
    began_before: DateTime<Utc>,
    looked_before: DateTime<Utc>,
    limit: u64,
) -> Result<Vec<Model>, DbErr> {
    Entity::find()
        .filter(Column::Status.eq(RefundStatus::Pending))
        .filter(Column::CreatedAt.lt(super::now_millis(began_before)))
        .filter(Column::UpdatedAt.lt(super::now_millis(looked_before)))
        .order_by_asc(Column::UpdatedAt)
        .limit(limit)
        .all(db)
        .await
}
