//! The dispute object: a cardholder's bank taking a payment back.

use serde::Serialize;
use utoipa::ToSchema;

use super::timestamp;
use crate::db::entities::{dispute_history, disputes};
use crate::domain::currency::Currency;
use crate::domain::dispute::{DisputeStage, DisputeStatus, DisputeStep, Evidence};

/// A dispute as the API returns it.
#[derive(Serialize, ToSchema)]
#[schema(as = Dispute)]
pub struct DisputeView {
    /// `dsp_…`.
    id: String,
    payment_id: String,
    subscription_id: Option<String>,
    customer_id: Option<String>,
    stage: DisputeStage,
    status: DisputeStatus,
    /// Why the cardholder disputes, in the processor's words: `fraudulent`,
    /// `product_not_received`, `duplicate`, `subscription_canceled`, `credit_not_processed`…
    reason: String,
    /// What is disputed, in minimal units.
    amount: i64,
    currency: Currency,
    /// The processor's dispute fee, in minimal units of `currency`; `null` when not known
    /// (no chargeback yet, or charged in another currency).
    fee: Option<i64>,
    /// What the dispute takes from the merchant now (amount and fee), after what a won
    /// dispute gave back.
    withdrawn_amount: i64,
    /// The last moment to answer with evidence; `null` when the processor gives none.
    #[schema(format = DateTime, example = "2026-11-29T23:59:59.000Z")]
    evidence_due_by: Option<String>,
    /// The evidence given so far, by field.
    #[schema(value_type = Object)]
    evidence: Evidence,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    evidence_submitted_at: Option<String>,
    /// Whether the merchant answers here (`evidence`, `close`) or in the processor's back
    /// office (bePaid has no way to answer through its API).
    responds_here: bool,
    /// What happened, oldest first.
    history: Vec<HistoryLine>,
    test: bool,
    shop_id: i64,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    closed_at: Option<String>,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    created_at: String,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    updated_at: String,
}

/// A line of a dispute's history: what happened, and where the dispute stood after it.
#[derive(Serialize, ToSchema)]
#[schema(as = DisputeHistoryLine)]
pub struct HistoryLine {
    step: DisputeStep,
    stage: DisputeStage,
    status: DisputeStatus,
    /// The money a `funds_withdrawn` or `funds_reinstated` step moved (amount and fee).
    amount: Option<i64>,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    at: String,
}

impl DisputeView {
    /// The dispute with its history; `responds_here` when its processor takes evidence.
    pub fn new(d: &disputes::Model, history: &[dispute_history::Model], responds_here: bool) -> Self {
        DisputeView {
            id: d.id.clone(),
            payment_id: d.payment_id.clone(),
            subscription_id: d.subscription_id.clone(),
            customer_id: d.customer_id.clone(),
            stage: d.stage,
            status: d.status,
            reason: d.reason.clone(),
            amount: d.amount,
            currency: d.currency,
            fee: d.fee,
            withdrawn_amount: d.withdrawn_amount + d.withdrawn_fee,
            evidence_due_by: d.evidence_due_by.map(timestamp),
            evidence: d.evidence(),
            evidence_submitted_at: d.evidence_submitted_at.map(timestamp),
            responds_here,
            history: history
                .iter()
                .map(|h| HistoryLine {
                    step: h.step,
                    stage: h.stage,
                    status: h.status,
                    amount: h.amount,
                    at: timestamp(h.at),
                })
                .collect(),
            test: d.test,
            shop_id: d.shop_id,
            closed_at: d.closed_at.map(timestamp),
            created_at: timestamp(d.created_at),
            updated_at: timestamp(d.updated_at),
        }
    }
}
