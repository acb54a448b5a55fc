//! Revenue figures: what `GET /revenue/mrr`, `/revenue/movements`, `/revenue/cohorts` and
//! `/revenue/subscribers` accept.

use super::*;

/// The figures asked for: one currency and mode, over a range of days cut into periods.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RevenueParams {
    /// The currency (ISO 4217) of the subscriptions counted; required, as no currency is
    /// converted into another.
    currency: Currency,
    /// `true` for test subscriptions' figures; live ones' by default.
    test: Option<bool>,
    /// The first day (`YYYY-MM-DD`, in the shop's time zone, from 1970 to 9999; not after
    /// `to`). By default 12 months back (the
    /// first of the month), or 30 days with `interval=day`.
    #[param(format = Date, example = "2026-01-01", pattern = r"^(19[7-9][0-9]|[2-9][0-9]{3})-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$")]
    from: Option<String>,
    /// The last day; today by default.
    #[param(format = Date, example = "2026-12-31", pattern = r"^(19[7-9][0-9]|[2-9][0-9]{3})-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$")]
    to: Option<String>,
    /// `month` (the default) or `day`: at most 1000 periods at once. Cohorts and MRR per
    /// subscriber are by month only.
    #[param(example = "month", pattern = "^(month|day)$")]
    interval: Option<String>,
}
