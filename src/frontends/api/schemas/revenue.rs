//! Revenue figures: what `GET /revenue/mrr` and `GET /revenue/movements` accept.

use super::*;

/// The figures asked for: one currency and mode, over a range of days cut into periods.
#[derive(serde::Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RevenueParams {
    /// The currency (ISO 4217) of the subscriptions counted; required, as no currency is
    /// converted into another.
    #[param(example = "EUR")]
    currency: String,
    /// `true` for test subscriptions' figures; live ones' by default.
    test: Option<bool>,
    /// The first day (`YYYY-MM-DD`, in the shop's time zone). By default 12 months back (the
    /// first of the month), or 30 days with `interval=day`.
    #[param(format = Date, example = "2026-01-01")]
    from: Option<String>,
    /// The last day; today by default.
    #[param(format = Date, example = "2026-12-31")]
    to: Option<String>,
    /// `month` (the default) or `day`: at most 1000 periods at once.
    #[param(example = "month")]
    interval: Option<String>,
}
