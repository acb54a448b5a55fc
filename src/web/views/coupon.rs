//! The coupon object.

use serde::Serialize;
use utoipa::ToSchema;

use super::timestamp;
use crate::db::entities::coupons;
use crate::domain::coupon::CouponDuration;

/// A coupon as the API returns it.
#[derive(Serialize, ToSchema)]
#[schema(as = Coupon)]
pub struct CouponView {
    id: String,
    /// `coupon`.
    #[schema(example = "coupon")]
    object: &'static str,
    /// What customers type (in capitals; read in any case).
    code: String,
    name: Option<String>,
    percent_off: Option<i32>,
    amount_off: Option<i64>,
    currency: Option<String>,
    #[schema(value_type = String, example = "repeating")]
    duration: CouponDuration,
    duration_in_periods: Option<i32>,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    redeem_by: Option<String>,
    max_redemptions: Option<i32>,
    times_redeemed: i32,
    /// The plans it applies to; empty for every plan.
    plans: Vec<String>,
    test: bool,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    archived_at: Option<String>,
    shop_id: i64,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    created_at: String,
}

impl From<&coupons::Model> for CouponView {
    fn from(c: &coupons::Model) -> Self {
        CouponView {
            id: c.id.clone(),
            object: "coupon",
            code: c.code.clone(),
            name: c.name.clone(),
            percent_off: c.percent_off,
            amount_off: c.amount_off,
            currency: c.currency.map(|c| c.code.to_string()),
            duration: c.duration,
            duration_in_periods: c.duration_in_periods,
            redeem_by: c.redeem_by.map(timestamp),
            max_redemptions: c.max_redemptions,
            times_redeemed: c.times_redeemed,
            plans: c.plan_ids().into_iter().map(str::to_string).collect(),
            test: c.test,
            archived_at: c.archived_at.map(timestamp),
            shop_id: c.shop_id,
            created_at: timestamp(c.created_at),
        }
    }
}
