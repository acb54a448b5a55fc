//! Recording how a charge ended: each answer once, only while the payment still waits for
//! it (a late answer never overwrites), with the card the processor's page took and a
//! capture's own reference.

use super::*;

/// The failure codes of payments paydesk ended itself while the customer might still pay
/// (the hour of the bank's check or the processor's page ran out; the customer left the page).
pub const ENDED_BY_PAYDESK: [&str; 2] = ["payment_expired", "payment_canceled"];

/// How long after paydesk ended such a payment it looks it up once more.
pub const LOOK_AGAIN_AFTER: chrono::Duration = chrono::Duration::hours(6);

/// The status the acquirer's answer gives a payment (`capture`: the money is taken at once);
/// `None` while it is not known.
pub(super) fn status_of(outcome: &Outcome, capture: bool) -> Option<PaymentStatus> {
    match outcome {
        Outcome::Approved { .. } if capture => Some(PaymentStatus::Succeeded),
        Outcome::Approved { .. } => Some(PaymentStatus::Authorized),
        Outcome::Declined { .. } => Some(PaymentStatus::Failed),
        Outcome::Error { .. } => Some(PaymentStatus::Error),
        Outcome::Pending { .. } => None,
    }
}

/// Records the acquirer's answer to the payment `id` (the billing engine's: captured at
/// once) if it still waits for one; answers its status as the answer leaves it
/// (`processing` while the answer is not known). `asked` is when it was first asked.
pub async fn record_by_id(
    db: &impl ConnectionTrait,
    id: &str,
    outcome: &Outcome,
    asked: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<PaymentStatus, DbErr> {
    answer(db, id, outcome, true, asked, now).await?;
    Ok(status_of(outcome, true).unwrap_or(PaymentStatus::Processing))
}

/// Records how the acquirer answered a charge, if the payment is still waiting for its
/// answer (a request and the sweeper of interrupted payments may both have asked); answers
/// the payment as stored, and whether this call recorded an end (an answer not known yet
/// only moves the next lookup).
pub async fn record_outcome(
    db: &impl ConnectionTrait,
    payment: Model,
    outcome: &Outcome,
    now: DateTime<Utc>,
) -> Result<(Model, bool), DbErr> {
    let capture = payment.transaction_type == TransactionType::Payment;
    let ended = answer(db, &payment.id, outcome, capture, payment.created_at, now).await?;
    let stored = Entity::find().filter(Column::Id.eq(payment.id.as_str())).one(db).await?;
    Ok((stored.ok_or(DbErr::RecordNotFound(payment.id))?, ended))
}

/// Writes an answer to a payment still `processing`; whether it ended the payment.
pub(super) async fn answer(
    db: &impl ConnectionTrait,
    id: &str,
    outcome: &Outcome,
    capture: bool,
    asked: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<bool, DbErr> {
    let now = crate::db::now_millis(now);
    let mut update = Entity::update_many().col_expr(Column::UpdatedAt, Expr::value(now));
    match outcome {
        Outcome::Approved { reference } => {
            update = update.col_expr(Column::AcquirerReference, Expr::value(Some(reference.clone())));
            if capture {
                update = update.col_expr(Column::CapturedAt, Expr::value(Some(now)));
            }
        }
        Outcome::Declined { code, message } | Outcome::Error { code, message } => {
            update = update
                .col_expr(Column::FailureCode, Expr::value(Some(code.to_string())))
                .col_expr(Column::FailureMessage, Expr::value(Some(message.to_string())));
            // Ended by paydesk while the customer might still pay: looked up once more later.
            if ENDED_BY_PAYDESK.contains(code) {
                let later = crate::db::now_millis(now + LOOK_AGAIN_AFTER);
                update = update.col_expr(Column::RecheckAt, Expr::value(Some(later)));
            }
        }
        Outcome::Pending { reference, redirect_url } => {
            let next = crate::domain::pending::next_lookup(asked, now);
            update = update.col_expr(Column::RecheckAt, Expr::value(Some(crate::db::now_millis(next))));
            if let Some(reference) = reference {
                update = update.col_expr(Column::AcquirerReference, Expr::value(Some(reference.clone())));
            }
            if let Some(url) = redirect_url {
                update = update.col_expr(Column::ActionUrl, Expr::value(Some(url.clone())));
            }
        }
    }
    let status = status_of(outcome, capture);
    if let Some(status) = status {
        let none: Option<String> = None;
        update = update
            .col_expr(Column::Status, Expr::value(status.as_str()))
            .col_expr(Column::ActionUrl, Expr::value(none));
    }
    // Only a payment still waiting for its answer takes one: a late answer never overwrites.
    let result = update.filter(Column::Id.eq(id)).filter(Column::Status.eq(PaymentStatus::Processing)).exec(db).await?;
    Ok(status.is_some() && result.rows_affected == 1)
}

/// The card a payment made on the processor's page was made with, once it is known.
pub async fn set_card(db: &impl ConnectionTrait, id: &str, card: &CardRef) -> Result<(), DbErr> {
    Entity::update_many()
        .col_expr(Column::CardToken, Expr::value(card.token.clone()))
        .col_expr(Column::CardBrand, Expr::value(card.brand.clone()))
        .col_expr(Column::CardLast4, Expr::value(card.last4.clone()))
        .col_expr(Column::CardExpMonth, Expr::value(card.exp_month))
        .col_expr(Column::CardExpYear, Expr::value(card.exp_year))
        .col_expr(Column::CardHolder, Expr::value(card.holder.clone()))
        .col_expr(Column::CardFingerprint, Expr::value(card.fingerprint.clone()))
        .filter(Column::Id.eq(id))
        .filter(Column::Status.eq(PaymentStatus::Processing))
        .exec(db)
        .await?;
    Ok(())
}

/// Keeps the processor's reference of a captured payment's capture (refunds name it).
pub async fn set_capture_reference(db: &impl ConnectionTrait, id: &str, reference: &str) -> Result<(), DbErr> {
    Entity::update_many()
        .col_expr(Column::CaptureReference, Expr::value(reference))
        .filter(Column::Id.eq(id))
        .filter(Column::Status.eq(PaymentStatus::Succeeded))
        .exec(db)
        .await?;
    Ok(())
}

/// Records an early fraud warning of `fraud_type` about the payment, once: whether this call
/// recorded it.
pub async fn warn_fraud(
    db: &impl ConnectionTrait,
    id: &str,
    fraud_type: &str,
    now: DateTime<Utc>,
) -> Result<bool, DbErr> {
    let now = crate::db::now_millis(now);
    let warned = Entity::update_many()
        .col_expr(Column::FraudWarning, Expr::value(Some(fraud_type.to_string())))
        .col_expr(Column::FraudWarnedAt, Expr::value(Some(now)))
        .col_expr(Column::UpdatedAt, Expr::value(now))
        .filter(Column::Id.eq(id))
        .filter(Column::FraudWarnedAt.is_null())
        .exec(db)
        .await?;
    Ok(warned.rows_affected == 1)
}

/// Records that a payment paydesk ended (failed `payment_expired` or `payment_canceled`) went
/// through after all, with the processor's `reference` and the card its page took: succeeded
/// (held, without `capture`), once. Whether this call recorded it.
pub async fn revive(
    db: &impl ConnectionTrait,
    id: &str,
    reference: &str,
    capture: bool,
    card: Option<&CardRef>,
    now: DateTime<Utc>,
) -> Result<bool, DbErr> {
    let now = crate::db::now_millis(now);
    let none: Option<String> = None;
    let status = if capture { PaymentStatus::Succeeded } else { PaymentStatus::Authorized };
    let mut update = Entity::update_many()
        .col_expr(Column::Status, Expr::value(status.as_str()))
        .col_expr(Column::AcquirerReference, Expr::value(Some(reference.to_string())))
        .col_expr(Column::FailureCode, Expr::value(none.clone()))
        .col_expr(Column::FailureMessage, Expr::value(none))
        .col_expr(Column::UpdatedAt, Expr::value(now));
    if capture {
        update = update.col_expr(Column::CapturedAt, Expr::value(Some(now)));
    }
    if let Some(card) = card {
        update = update
            .col_expr(Column::CardToken, Expr::value(card.token.clone()))
            .col_expr(Column::CardBrand, Expr::value(card.brand.clone()))
            .col_expr(Column::CardLast4, Expr::value(card.last4.clone()))
            .col_expr(Column::CardExpMonth, Expr::value(card.exp_month))
            .col_expr(Column::CardExpYear, Expr::value(card.exp_year))
            .col_expr(Column::CardHolder, Expr::value(card.holder.clone()))
            .col_expr(Column::CardFingerprint, Expr::value(card.fingerprint.clone()));
    }
    let revived = update
        .filter(Column::Id.eq(id))
        .filter(Column::Status.eq(PaymentStatus::Failed))
        .filter(Column::FailureCode.is_in(ENDED_BY_PAYDESK))
        .exec(db)
        .await?;
    Ok(revived.rows_affected == 1)
}

/// Payments paydesk ended while the customer might still pay, due for their one more lookup
/// at `now`.
pub async fn ended_due(db: &impl ConnectionTrait, now: DateTime<Utc>, limit: u64) -> Result<Vec<Model>, DbErr> {
    use sea_orm::QuerySelect;
    Entity::find()
        .filter(Column::Status.eq(PaymentStatus::Failed))
        .filter(Column::RecheckAt.lte(crate::db::now_millis(now)))
        .filter(Column::FailureCode.is_in(ENDED_BY_PAYDESK))
        .limit(limit)
        .all(db)
        .await
}

/// Takes an ended payment's one more lookup (due at `was`): whether this call took it.
pub async fn take_look(db: &impl ConnectionTrait, id: &str, was: DateTime<Utc>) -> Result<bool, DbErr> {
    let none: Option<DateTime<Utc>> = None;
    let taken = Entity::update_many()
        .col_expr(Column::RecheckAt, Expr::value(none))
        .filter(Column::Id.eq(id))
        .filter(Column::RecheckAt.eq(was))
        .exec(db)
        .await?;
    Ok(taken.rows_affected == 1)
}
