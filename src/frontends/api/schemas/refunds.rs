//! Refunds: what `POST /payments/{id}/refund` and `GET /refunds` accept.

use super::*;

/// A refund of a payment that took money (`succeeded` or `partially_refunded`; 409 otherwise).
/// The body may be empty: then all that is left is refunded.
#[derive(ToSchema)]
#[schema(example = json!({"amount": 300, "reason": "damaged cover"}))]
pub struct RefundCreate {
    /// How much to give back, in minimal units; at most what is left to refund (422 above
    /// it). All that is left when absent.
    amount: Option<RefundAmount>,
    /// Why, kept for the merchant; surrounding spaces are trimmed.
    #[schema(max_length = 500, pattern = r"^[^\x00]*$")]
    reason: Option<String>,
}

/// `GET /refunds`.
#[derive(serde::Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RefundFilterParams {
    /// Page size, 1 to 1000.
    #[param(minimum = 1, maximum = 1000, default = 100)]
    limit: Option<u64>,
    /// The last id of the previous page (an id of this list, else 404); empty means the first.
    #[param(max_length = 64, pattern = r"^[A-Za-z0-9_]{0,64}$")]
    starting_after: Option<String>,
    /// Refunds of this payment (`pay_…`).
    payment: Option<String>,
    /// Same as `payment` (when both are given, the later one counts).
    payment_id: Option<String>,
}
