//! A page's payment that went through after paydesk ended it: the customer finished their
//! bank's check (3-D Secure), or paid on the processor's page, after the hour, and the
//! processor charged the card. The money was taken, so it is recorded as paid, never dropped:
//! it keeps what it paid for when that can still be had (a product's unit), and is otherwise
//! refunded (an authorization voided) at once, with its events either way.

use super::*;

/// A payment looked up again after paydesk ended it.
#[derive(Debug)]
pub struct Late {
    /// The payment as it then stands.
    pub payment: payments::Model,
    /// It went through, and what it paid for could no longer be had: its money goes back.
    pub give_back: bool,
}

/// Looks up a payment paydesk ended at the hour (or when its customer left the processor's
/// page) and records it as paid if its processor says it went through after all, keeping
/// what it paid for if that can still be had. Anything else is left as it is.
pub async fn late_success(state: &AppState, payment: payments::Model, now: DateTime<Utc>) -> Result<Late, AppError> {
    let ended_here = payment.status == PaymentStatus::Failed
        && payment.failure_code.as_deref().is_some_and(|code| db::payments::ENDED_BY_PAYDESK.contains(&code));
    let unchanged = |payment| Ok(Late { payment, give_back: false });
    if !ended_here {
        return unchanged(payment);
    }
    let Some(acquirer) = Acquirers::default().of(state, payment.shop_id, payment.test).await? else {
        return unchanged(payment);
    };
    let (outcome, card) = match &payment.checkout_token {
        Some(token) => acquirer.hosted_outcome(token).await,
        None => {
            let description = description_of(state, &payment).await?;
            let first = charge_of(&payment, &description, None, now);
            let request =
                ChargeRequest { again: true, if_unsent: IfUnsent::Wait, first_sent: Some(payment.created_at), ..first };
            (acquirer.charge(&payment.card(), request).await, None)
        }
    };
    let ChargeOutcome::Approved { reference } = outcome else { return unchanged(payment) };
    let at = time_of_payment(state, &payment, now).await?;
    let capture = payment.transaction_type == TransactionType::Payment;
    let txn = crate::db::begin(&state.db).await?;
    if !db::payments::revive(&txn, &payment.id, &reference, capture, card.as_ref(), at).await? {
        // Recorded by another notification or lookup a moment before.
        txn.rollback().await?;
        return unchanged(db::find_public::<payments::Entity>(&state.db, &payment.id).await?.unwrap_or(payment));
    }
    let kept = match &payment.product_id {
        Some(product_id) => still_sold(&txn, product_id, at).await?,
        // A plan's page: its subscription was left when the payment ended.
        None => false,
    };
    let mut paid = db::find_public::<payments::Entity>(&txn, &payment.id).await?.unwrap_or(payment);
    if kept && let Some(named) = name_customer(&txn, &paid, at).await? {
        paid = named;
    }
    if let Some(kind) = EventType::of_charge(paid.status) {
        events::record(&txn, &state.config, vec![events::payment(kind, &paid)]).await?;
    }
    crate::services::invoices::issue_for_payments(&txn, &state.config, &[&paid], at).await?;
    txn.commit().await?;
    tracing::warn!(payment = %paid.id, kept, "a payment went through after it had ended");
    Ok(Late { payment: paid, give_back: !kept })
}

/// In `txn`: whether the product can still be had, its unit taken again if it is finite.
async fn still_sold(txn: &impl ConnectionTrait, product_id: &str, now: DateTime<Utc>) -> Result<bool, DbErr> {
    let Some(product) = db::find_public::<products::Entity>(txn, product_id).await? else { return Ok(false) };
    if product.archived_at.is_some() || product.expired_at.is_some_and(|end| end <= now) {
        return Ok(false);
    }
    Ok(product.infinite || db::products::reserve_unit(txn, product_id).await?)
}
