//! Disputes: what `GET /disputes` and `POST /disputes/{id}` accept.

use super::*;

/// `GET /disputes`.
#[derive(serde::Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DisputeFilterParams {
    /// Page size, 1 to 1000.
    #[param(minimum = 1, maximum = 1000, default = 100)]
    limit: Option<u64>,
    /// The last id of the previous page (an id of this list, else 404); empty means the first.
    #[param(max_length = 64, pattern = r"^[A-Za-z0-9_]{0,64}$")]
    starting_after: Option<String>,
    /// Disputes in this status.
    #[param(value_type = Option<crate::domain::dispute::DisputeStatus>)]
    status: Option<String>,
    /// Disputes of this payment (`pay_…`).
    payment: Option<String>,
    /// Same as `payment` (when both are given, the later one counts).
    payment_id: Option<String>,
}

/// The merchant's answer to a dispute: evidence fields, submitted or staged.
#[derive(ToSchema)]
#[schema(example = json!({"evidence": {"product_description": "A signed first edition", "shipping_tracking_number": "RR123456785DE"}, "submit": true}))]
pub struct DisputeAnswer {
    /// Text by field; an empty text removes a field. All fields together hold at most
    /// 150,000 characters.
    evidence: Option<DisputeEvidence>,
    /// `true` (the default) submits the evidence: the dispute goes under review and takes
    /// no more. `false` only stages it.
    submit: Option<bool>,
}

/// A dispute's evidence fields, as text; no others are taken.
#[derive(serde::Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DisputeEvidence {
    #[schema(max_length = 150000, pattern = r"^[^\x00]*$", nullable = false)]
    access_activity_log: Option<String>,
    #[schema(max_length = 150000, pattern = r"^[^\x00]*$", nullable = false)]
    billing_address: Option<String>,
    #[schema(max_length = 150000, pattern = r"^[^\x00]*$", nullable = false)]
    cancellation_policy_disclosure: Option<String>,
    #[schema(max_length = 150000, pattern = r"^[^\x00]*$", nullable = false)]
    cancellation_rebuttal: Option<String>,
    #[schema(max_length = 150000, pattern = r"^[^\x00]*$", nullable = false)]
    customer_email_address: Option<String>,
    #[schema(max_length = 150000, pattern = r"^[^\x00]*$", nullable = false)]
    customer_name: Option<String>,
    #[schema(max_length = 150000, pattern = r"^[^\x00]*$", nullable = false)]
    customer_purchase_ip: Option<String>,
    #[schema(max_length = 150000, pattern = r"^[^\x00]*$", nullable = false)]
    duplicate_charge_explanation: Option<String>,
    #[schema(max_length = 150000, pattern = r"^[^\x00]*$", nullable = false)]
    duplicate_charge_id: Option<String>,
    #[schema(max_length = 150000, pattern = r"^[^\x00]*$", nullable = false)]
    product_description: Option<String>,
    #[schema(max_length = 150000, pattern = r"^[^\x00]*$", nullable = false)]
    refund_policy_disclosure: Option<String>,
    #[schema(max_length = 150000, pattern = r"^[^\x00]*$", nullable = false)]
    refund_refusal_explanation: Option<String>,
    #[schema(max_length = 150000, pattern = r"^[^\x00]*$", nullable = false)]
    service_date: Option<String>,
    #[schema(max_length = 150000, pattern = r"^[^\x00]*$", nullable = false)]
    shipping_address: Option<String>,
    #[schema(max_length = 150000, pattern = r"^[^\x00]*$", nullable = false)]
    shipping_carrier: Option<String>,
    #[schema(max_length = 150000, pattern = r"^[^\x00]*$", nullable = false)]
    shipping_date: Option<String>,
    #[schema(max_length = 150000, pattern = r"^[^\x00]*$", nullable = false)]
    shipping_tracking_number: Option<String>,
    #[schema(max_length = 150000, pattern = r"^[^\x00]*$", nullable = false)]
    uncategorized_text: Option<String>,
}
