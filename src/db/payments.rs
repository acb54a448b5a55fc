//! Stored payments: every attempt to pay, whatever its outcome.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ActiveValue::NotSet, ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait,
    IntoActiveModel, QueryFilter, Set,
};

use super::ShopOwned;
use super::entities::payments::{ActiveModel, Column, Entity, Model};
use crate::acquirer::{CardRef, Outcome};
use crate::domain::ids::{PAYMENT, new_id};
use crate::domain::vocab::{PaymentStatus, TransactionType};

impl ShopOwned for Entity {
    const SEQ: Column = Column::Seq;
    const ID: Column = Column::Id;
    const SHOP: Column = Column::ShopId;
    fn public_id(row: &Model) -> &str {
        &row.id
    }
}

/// What a payment is for and who pays.
pub struct NewPayment<'a> {
    pub shop_id: i64,
    pub product_id: Option<&'a str>,
    pub plan_id: Option<&'a str>,
    pub subscription_id: Option<&'a str>,
    pub customer_id: Option<&'a str>,
    pub amount: i64,
    pub currency: &'a str,
    pub transaction_type: TransactionType,
    pub test: bool,
    pub card: &'a CardRef,
    /// Set for the billing engine's charges (unique per subscription, period and attempt).
    pub billing_key: Option<String>,
}

/// Records an attempt before the acquirer is asked, so that no charge goes unrecorded.
pub async fn insert_processing(
    db: &DatabaseConnection,
    new: NewPayment<'_>,
    now: DateTime<Utc>,
) -> Result<Model, DbErr> {
    processing_row(new, now).insert(db).await
}

/// The row of an attempt about to be made (its id is already chosen).
pub fn processing_row(new: NewPayment<'_>, now: DateTime<Utc>) -> ActiveModel {
    let now = super::now_millis(now);
    ActiveModel {
        seq: NotSet,
        id: Set(new_id(PAYMENT)),
        shop_id: Set(new.shop_id),
        product_id: Set(new.product_id.map(str::to_string)),
        plan_id: Set(new.plan_id.map(str::to_string)),
        subscription_id: Set(new.subscription_id.map(str::to_string)),
        customer_id: Set(new.customer_id.map(str::to_string)),
        amount: Set(new.amount),
        currency: Set(new.currency.to_string()),
        transaction_type: Set(new.transaction_type.as_str().to_string()),
        status: Set(PaymentStatus::Processing.as_str().to_string()),
        test: Set(new.test),
        card_token: Set(new.card.token.clone()),
        card_brand: Set(new.card.brand.clone()),
        card_last4: Set(new.card.last4.clone()),
        card_exp_month: Set(new.card.exp_month),
        card_exp_year: Set(new.card.exp_year),
        card_holder: Set(new.card.holder.clone()),
        acquirer_reference: Set(None),
        failure_code: Set(None),
        failure_message: Set(None),
        captured_at: Set(None),
        voided_at: Set(None),
        billing_key: Set(new.billing_key),
        created_at: Set(now),
        updated_at: Set(now),
    }
}

/// Stores many attempts in few statements.
pub async fn insert_rows(db: &impl ConnectionTrait, rows: Vec<ActiveModel>) -> Result<(), DbErr> {
    for chunk in rows.chunks(400) {
        Entity::insert_many(chunk.to_vec()).exec_without_returning(db).await?;
    }
    Ok(())
}

/// The engine's payments with these billing keys.
pub async fn find_by_billing_keys(db: &DatabaseConnection, keys: Vec<String>) -> Result<Vec<Model>, DbErr> {
    let mut found = Vec::new();
    for chunk in keys.chunks(500) {
        found.extend(Entity::find().filter(Column::BillingKey.is_in(chunk.to_vec())).all(db).await?);
    }
    Ok(found)
}

/// The status the acquirer's answer gives a payment (`capture`: the money is taken at once).
fn status_of(outcome: &Outcome, capture: bool) -> PaymentStatus {
    match outcome {
        Outcome::Approved { .. } if capture => PaymentStatus::Succeeded,
        Outcome::Approved { .. } => PaymentStatus::Authorized,
        Outcome::Declined { .. } => PaymentStatus::Failed,
        Outcome::Error { .. } => PaymentStatus::Error,
    }
}

/// Records how the acquirer answered a captured charge of the payment `id`; its new status.
pub async fn record_by_id(
    db: &impl ConnectionTrait,
    id: &str,
    outcome: &Outcome,
    now: DateTime<Utc>,
) -> Result<PaymentStatus, DbErr> {
    let now = super::now_millis(now);
    let mut update = Entity::update_many().col_expr(Column::UpdatedAt, Expr::value(now));
    update = match outcome {
        Outcome::Approved { reference } => update
            .col_expr(Column::AcquirerReference, Expr::value(Some(reference.clone())))
            .col_expr(Column::CapturedAt, Expr::value(Some(now))),
        Outcome::Declined { code, message } | Outcome::Error { code, message } => update
            .col_expr(Column::FailureCode, Expr::value(Some(code.to_string())))
            .col_expr(Column::FailureMessage, Expr::value(Some(message.to_string()))),
    };
    let status = status_of(outcome, true);
    update.col_expr(Column::Status, Expr::value(status.as_str())).filter(Column::Id.eq(id)).exec(db).await?;
    Ok(status)
}

/// Records how the acquirer answered a charge.
pub async fn record_outcome(
    db: &DatabaseConnection,
    payment: Model,
    outcome: &Outcome,
    now: DateTime<Utc>,
) -> Result<Model, DbErr> {
    let now = super::now_millis(now);
    let capture = payment.transaction_type == TransactionType::Payment.as_str();
    let mut row = payment.into_active_model();
    match outcome {
        Outcome::Approved { reference } => {
            row.acquirer_reference = Set(Some(reference.clone()));
            if capture {
                row.captured_at = Set(Some(now));
            }
        }
        Outcome::Declined { code, message } | Outcome::Error { code, message } => {
            row.failure_code = Set(Some(code.to_string()));
            row.failure_message = Set(Some(message.to_string()));
        }
    }
    let status = status_of(outcome, capture);
    row.status = Set(status.as_str().to_string());
    row.updated_at = Set(now);
    row.update(db).await
}

/// Moves the shop's payment from one status to another if, and only if, it is still in
/// `from`: of two concurrent captures, one wins. Returns whether it moved.
pub async fn transition(
    db: &DatabaseConnection,
    shop_id: i64,
    id: &str,
    from: PaymentStatus,
    to: PaymentStatus,
    now: DateTime<Utc>,
) -> Result<bool, DbErr> {
    let now = super::now_millis(now);
    let mut update = Entity::update_many()
        .col_expr(Column::Status, Expr::value(to.as_str()))
        .col_expr(Column::UpdatedAt, Expr::value(now));
    let never: Option<DateTime<Utc>> = None;
    update = match to {
        PaymentStatus::Succeeded => update.col_expr(Column::CapturedAt, Expr::value(Some(now))),
        PaymentStatus::Voided => update.col_expr(Column::VoidedAt, Expr::value(Some(now))),
        // Back to a held authorization (the acquirer refused): neither captured nor voided.
        PaymentStatus::Authorized => {
            update.col_expr(Column::CapturedAt, Expr::value(never)).col_expr(Column::VoidedAt, Expr::value(never))
        }
        _ => update,
    };
    let result = update
        .filter(Column::ShopId.eq(shop_id))
        .filter(Column::Id.eq(id))
        .filter(Column::Status.eq(from.as_str()))
        .exec(db)
        .await?;
    Ok(result.rows_affected == 1)
}
