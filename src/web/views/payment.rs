//! The payment object: one attempt to pay, whatever its outcome.

use serde::Serialize;
use utoipa::ToSchema;

use super::timestamp;
use crate::db::entities::payments;
use crate::domain::billing::charge_of_key;
use crate::domain::currency::Currency;
use crate::domain::dispute::DisputeStatus;
use crate::domain::vocab::{PaymentStatus, TransactionType};

/// A payment as the API returns it.
#[derive(Serialize, ToSchema)]
#[schema(as = Payment)]
pub struct PaymentView {
    id: String,
    status: PaymentStatus,
    amount: i64,
    currency: Currency,
    transaction_type: TransactionType,
    test: bool,
    product_id: Option<String>,
    plan_id: Option<String>,
    subscription_id: Option<String>,
    customer_id: Option<String>,
    /// The card it was paid with; `null` while it is not known (typed on the processor's
    /// page, and not gone through).
    card: Option<CardView>,
    failure_code: Option<String>,
    failure_message: Option<String>,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    captured_at: Option<String>,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    voided_at: Option<String>,
    /// What refunds gave back, in minimal units.
    refunded_amount: i64,
    /// For a subscription's charge: which period it pays and which attempt it is.
    billing: Option<ChargeOfPeriod>,
    /// The coupon that took `amount` off this charge (`amount` above is what was charged).
    discount: Option<PaymentDiscount>,
    /// The tax `amount` holds, as it was charged; `null` for an untaxed charge.
    tax: Option<PaymentTax>,
    /// What disputes (chargebacks) took back and keep, in minimal units: 0 when none did,
    /// or a won dispute gave it back.
    disputed_amount: i64,
    /// Its dispute, if the cardholder disputed it.
    dispute: Option<PaymentDispute>,
    /// An early fraud warning the card's bank sent about it, if any.
    early_fraud_warning: Option<FraudWarning>,
    shop_id: i64,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    created_at: String,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    updated_at: String,
}

/// What a coupon took off a charge.
#[derive(Serialize, ToSchema)]
pub struct PaymentDiscount {
    coupon: String,
    amount: i64,
}

/// The tax a charge was made with.
#[derive(Serialize, ToSchema)]
pub struct PaymentTax {
    /// The shop's rate (`txr_…`).
    rate: String,
    /// Whether the price held the tax or had it added.
    behavior: crate::domain::tax::TaxBehavior,
    /// The tax `amount` holds, in minimal units: 0 when reverse-charged.
    amount: i64,
    /// The buyer accounts for the tax (an EU business in another member state).
    reverse_charge: bool,
}

/// A payment's dispute, in short (the whole of it is at `GET /disputes/{id}`).
#[derive(Serialize, ToSchema)]
pub struct PaymentDispute {
    /// `dsp_…`.
    id: String,
    status: DisputeStatus,
}

/// An early fraud warning: the card's bank reported the payment as fraud, which often
/// becomes a dispute unless the payment is refunded.
#[derive(Serialize, ToSchema)]
pub struct FraudWarning {
    /// What kind of fraud: `made_with_stolen_card`, `unauthorized_use_of_card`,
    /// `card_never_received`, `made_with_lost_card`, `fraudulent_card_application`,
    /// `made_with_counterfeit_card`, `misc`.
    fraud_type: String,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    created_at: String,
}

/// Which period of its subscription a charge pays, and which attempt at it it is.
#[derive(Serialize, ToSchema)]
pub struct ChargeOfPeriod {
    /// Whether it is the trial's charge.
    trial: bool,
    /// The plan period it pays, counted from 1; `null` for the trial.
    period: Option<i64>,
    /// The attempt at this period's charge, counted from 1 (retries after a decline or an
    /// error count up).
    attempt: i32,
}

impl ChargeOfPeriod {
    fn of_key(key: &str) -> Option<Self> {
        let (period, attempt) = charge_of_key(key)?;
        Some(ChargeOfPeriod { trial: period < 0, period: (period >= 0).then_some(period + 1), attempt })
    }
}

/// What is kept of a card: never its number or CVC.
#[derive(Serialize, ToSchema)]
#[schema(as = PaymentCard)]
pub struct CardView {
    brand: String,
    last_4: String,
    exp_month: i32,
    exp_year: i32,
    holder: String,
}

impl From<&payments::Model> for PaymentView {
    fn from(p: &payments::Model) -> Self {
        PaymentView {
            id: p.id.clone(),
            status: p.status,
            amount: p.amount,
            currency: p.currency,
            transaction_type: p.transaction_type,
            test: p.test,
            product_id: p.product_id.clone(),
            plan_id: p.plan_id.clone(),
            subscription_id: p.subscription_id.clone(),
            customer_id: p.customer_id.clone(),
            card: (!p.card_last4.is_empty()).then(|| CardView {
                brand: p.card_brand.clone(),
                last_4: p.card_last4.clone(),
                exp_month: p.card_exp_month,
                exp_year: p.card_exp_year,
                holder: p.card_holder.clone(),
            }),
            failure_code: p.failure_code.clone(),
            failure_message: p.failure_message.clone(),
            captured_at: p.captured_at.map(timestamp),
            voided_at: p.voided_at.map(timestamp),
            refunded_amount: p.refunded_amount,
            billing: p.billing_key.as_deref().and_then(ChargeOfPeriod::of_key),
            discount: p
                .coupon_id
                .as_ref()
                .filter(|_| p.discount_amount > 0)
                .map(|c| PaymentDiscount { coupon: c.clone(), amount: p.discount_amount }),
            tax: p.tax_rate_id.clone().map(|rate| PaymentTax {
                rate,
                behavior: p.tax_behavior.unwrap_or(crate::domain::tax::TaxBehavior::Inclusive),
                amount: p.tax_amount,
                reverse_charge: p.reverse_charge,
            }),
            disputed_amount: p.disputed_amount,
            dispute: p.dispute_id.clone().zip(p.dispute_status).map(|(id, status)| PaymentDispute { id, status }),
            early_fraud_warning: p
                .fraud_warning
                .clone()
                .zip(p.fraud_warned_at)
                .map(|(fraud_type, at)| FraudWarning { fraud_type, created_at: timestamp(at) }),
            shop_id: p.shop_id,
            created_at: timestamp(p.created_at),
            updated_at: timestamp(p.updated_at),
        }
    }
}
