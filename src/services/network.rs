//! The simulated processor's card network: what its test cards do after they paid, as a
//! real card's bank would, some minutes later (at a test clock's step for a subscription on
//! one). A dispute card's payment is disputed as fraud, an inquiry card's is asked about, a
//! warning card's gets an early fraud warning; a dispute is decided a little after the
//! merchant's evidence, and one left unanswered is escalated or lost at its due date.
//!
//! Each step is applied through [`crate::services::disputes`], like a real processor's
//! report, and is safe to repeat: a run that stops midway is finished by the next.

use chrono::{DateTime, Utc};

use crate::db::entities::{disputes, payments};
use crate::db::{self};
use crate::domain::card::{NetworkEvent, network_of};
use crate::domain::dispute::{DisputeStatus, simulated};
use crate::services::disputes as report;
use crate::web::error::AppError;
use crate::web::state::AppState;

/// How many payments and disputes one run looks at, at most.
const BATCH: u64 = 200;

/// How long a payment not settled yet (processing, or held) waits before the network looks
/// at it again.
const UNSETTLED_WAIT: chrono::Duration = chrono::Duration::hours(1);

/// The fraud type a warning card's warning gives.
const FRAUD_TYPE: &str = "made_with_stolen_card";

/// Runs what is due on the network by `now`: in real time (`clock` none), or on one test
/// clock. Answers how many payments and disputes it acted on.
pub async fn run(state: &AppState, clock: Option<&str>, now: DateTime<Utc>) -> Result<usize, AppError> {
    let (payments, disputes) = db::disputes::network_due(&state.db, clock, now, BATCH).await?;
    let done = payments.len() + disputes.len();
    for payment in payments {
        after_payment(state, payment, now).await?;
    }
    for dispute in disputes {
        after_dispute(state, dispute, now).await?;
    }
    Ok(done)
}

/// What a test card does once its payment took the money.
async fn after_payment(state: &AppState, payment: payments::Model, now: DateTime<Utc>) -> Result<(), AppError> {
    let was = payment.network_at;
    let next = match payment.status {
        status if status.is_taken() => None,
        crate::domain::vocab::PaymentStatus::Processing | crate::domain::vocab::PaymentStatus::Authorized => {
            Some(now + UNSETTLED_WAIT)
        }
        // Failed or voided: nothing was taken, nothing to dispute.
        _ => {
            db::disputes::set_payment_network_at(&state.db, &payment.id, was, None).await?;
            return Ok(());
        }
    };
    if next.is_none() {
        let left = payment.amount - payment.refunded_amount - payment.refunding_amount;
        let fee = simulated::fee(payment.currency.exponent);
        let reference = format!("sim_dp_{}", payment.id);
        match network_of(&payment.card_token) {
            Some(NetworkEvent::Dispute) if left > 0 => {
                let seen = simulated::opened(reference, false, "fraudulent", left, fee, now);
                report::report(state, &payment, &seen, now).await?;
            }
            Some(NetworkEvent::Inquiry) if left > 0 => {
                let seen = simulated::opened(reference, true, "fraudulent", left, fee, now);
                report::report(state, &payment, &seen, now).await?;
            }
            Some(NetworkEvent::FraudWarning) => report::fraud_warning(state, &payment, FRAUD_TYPE, true, now).await?,
            _ => {}
        }
    }
    db::disputes::set_payment_network_at(&state.db, &payment.id, was, next).await?;
    Ok(())
}

/// The bank's next step on a simulated dispute: its decision once answered, escalation or
/// loss once its due date passed unanswered.
async fn after_dispute(state: &AppState, dispute: disputes::Model, now: DateTime<Utc>) -> Result<(), AppError> {
    let Some(payment) = db::find_public::<payments::Entity>(&state.db, &dispute.payment_id).await? else {
        db::disputes::set_network_at(&state.db, &dispute.id, None).await?;
        return Ok(());
    };
    let before = dispute.seen();
    let due = dispute.evidence_due_by.is_some_and(|due| due <= now);
    let seen = match dispute.status {
        DisputeStatus::UnderReview => Some(simulated::decided(&before, &dispute.evidence())),
        DisputeStatus::NeedsResponse if due => {
            Some(simulated::unanswered(&before, simulated::fee(payment.currency.exponent), now))
        }
        _ => None,
    };
    let stored = match &seen {
        Some(seen) => report::report(state, &payment, seen, now).await?,
        None => dispute,
    };
    // An escalated inquiry is due again; anything else needs the network no more.
    let next = match stored.status {
        DisputeStatus::NeedsResponse => stored.evidence_due_by.filter(|due| *due > now),
        _ => None,
    };
    db::disputes::set_network_at(&state.db, &stored.id, next).await?;
    Ok(())
}
