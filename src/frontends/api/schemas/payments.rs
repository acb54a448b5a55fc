//! Payments: what `GET /payments` accepts.

use super::*;

/// `GET /payments`: each filter given narrows the list. Ids are compared as sent; an unknown
/// id gives an empty page. When a name is repeated the last value counts.
#[derive(serde::Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PaymentFilterParams {
    /// Page size, 1 to 1000.
    #[param(minimum = 1, maximum = 1000, default = 100)]
    limit: Option<u64>,
    /// The last id of the previous page (an id of this list, else 404); empty means the first.
    #[param(max_length = 64, pattern = r"^[A-Za-z0-9_]{0,64}$")]
    starting_after: Option<String>,
    /// Payments of this product (`prd_…`).
    product: Option<String>,
    /// Same as `product`.
    product_id: Option<String>,
    /// Payments of this plan (`pln_…`).
    plan: Option<String>,
    /// Same as `plan`.
    plan_id: Option<String>,
    /// Payments of this subscription (`sbs_…`).
    subscription: Option<String>,
    /// Same as `subscription`.
    subscription_id: Option<String>,
    /// Payments of this customer (`cst_…`).
    customer: Option<String>,
    /// Same as `customer`.
    customer_id: Option<String>,
    /// Payments in this status.
    #[param(value_type = Option<PaymentStatus>, inline)]
    status: Option<String>,
}
