//! Request bodies of coupons and discounts.

use utoipa::ToSchema;

use super::*;

/// A new coupon: `percent_off`, or `amount_off` with `currency`.
#[derive(ToSchema)]
#[schema(example = json!({"code": "SPRING25", "percent_off": 25, "duration": "repeating", "duration_in_periods": 3}))]
pub struct CouponCreate {
    /// Letters, digits, `-` and `_` (kept in capitals; read in any case); unique per shop and mode.
    #[schema(min_length = 1, max_length = 64, pattern = "^\\s*[A-Za-z0-9_-]+\\s*$")]
    code: String,
    #[schema(max_length = 255, pattern = r"^[^\x00]*$")]
    name: Option<String>,
    /// 1 to 100.
    #[schema(minimum = 1, maximum = 100)]
    percent_off: Option<i64>,
    /// In the currency's minimal units.
    #[schema(minimum = 1, maximum = 1_000_000_000_000_i64)]
    amount_off: Option<i64>,
    /// With `amount_off`: ISO 4217.
    #[schema(example = "EUR", pattern = "^[A-Z]{3}$")]
    currency: Option<String>,
    /// `once` (default), `repeating` or `forever`.
    #[schema(value_type = Option<String>, example = "repeating", pattern = "^(once|repeating|forever)$")]
    duration: Option<String>,
    /// With `repeating`: how many plan periods (1–1000).
    #[schema(minimum = 1, maximum = 1000)]
    duration_in_periods: Option<i64>,
    /// Redeemable until then (in the future).
    redeem_by: Option<TimeInput>,
    #[schema(minimum = 1, maximum = 1_000_000_000)]
    max_redemptions: Option<i64>,
    /// Plans of the shop it applies to (default: every plan).
    plans: Option<Vec<String>>,
    test: Option<FlexibleBoolean>,
    // `percent_off`, or `amount_off` with `currency`.
    #[serde(flatten)]
    #[schema(schema_with = coupon_rules)]
    rules: Value,
}

/// CouponCreate: `percent_off`, or `amount_off` with `currency`; never both.
fn coupon_rules() -> OneOfBuilder {
    OneOfBuilder::new()
        .item(
            ObjectBuilder::new()
                .title(Some("A percent off"))
                .property("percent_off", given_number())
                .required("percent_off")
                .property("amount_off", absent())
                .property("currency", absent()),
        )
        .item(
            ObjectBuilder::new()
                .title(Some("An amount off"))
                .property("amount_off", given_number())
                .required("amount_off")
                .property("currency", given(Type::String))
                .required("currency")
                .property("percent_off", absent()),
        )
        .description(Some("`percent_off`, or `amount_off` with `currency`: one of them, never both."))
}

/// Giving a subscription a coupon's discount.
#[derive(ToSchema)]
#[schema(example = json!({"coupon": "SPRING25"}))]
pub struct DiscountApply {
    /// The coupon's code (any case) or id.
    #[schema(min_length = 1, max_length = 255, pattern = r"^[^\x00]*\S[^\x00]*$")]
    coupon: String,
}
