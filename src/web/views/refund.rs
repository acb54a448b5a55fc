//! The refund object.

use serde::Serialize;
use utoipa::ToSchema;

use super::timestamp;
use crate::db::entities::refunds;
use crate::domain::currency::Currency;
use crate::domain::vocab::RefundStatus;

/// A refund as the API returns it.
#[derive(Serialize, ToSchema)]
#[schema(as = Refund)]
pub struct RefundView {
    id: String,
    payment_id: String,
    status: RefundStatus,
    amount: i64,
    currency: Currency,
    reason: Option<String>,
    failure_code: Option<String>,
    failure_message: Option<String>,
    test: bool,
    shop_id: i64,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    created_at: String,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    updated_at: String,
}

impl From<&refunds::Model> for RefundView {
    fn from(r: &refunds::Model) -> Self {
        RefundView {
            id: r.id.clone(),
            payment_id: r.payment_id.clone(),
            status: r.status,
            amount: r.amount,
            currency: r.currency,
            reason: r.reason.clone(),
            failure_code: r.failure_code.clone(),
            failure_message: r.failure_message.clone(),
            test: r.test,
            shop_id: r.shop_id,
            created_at: timestamp(r.created_at),
            updated_at: timestamp(r.updated_at),
        }
    }
}
