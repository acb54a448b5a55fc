//! Revenue figures as the API returns them: a series of periods, each with MRR and its
//! movements (docs/revenue.md).

use serde::Serialize;
use utoipa::ToSchema;

use crate::domain::mrr::Kind;
use crate::domain::mrr::cohorts::{Cohort, Retention};
use crate::domain::mrr::figures::{Period, Query, Sums};

/// MRR, paused MRR and subscribers at the end of each period, with the rates of the period.
#[derive(Serialize, ToSchema)]
#[schema(as = RevenueMrr)]
pub struct MrrView {
    /// `revenue.mrr`.
    #[schema(example = "revenue.mrr")]
    object: &'static str,
    #[serde(flatten)]
    about: About,
    data: Vec<MrrPeriod>,
}

/// What each movement moved in each period.
#[derive(Serialize, ToSchema)]
#[schema(as = RevenueMovements)]
pub struct MovementsView {
    /// `revenue.movements`.
    #[schema(example = "revenue.movements")]
    object: &'static str,
    #[serde(flatten)]
    about: About,
    data: Vec<MovementsPeriod>,
}

/// What a series is of.
#[derive(Serialize, ToSchema)]
struct About {
    /// The currency (ISO 4217) of every amount.
    #[schema(example = "EUR")]
    currency: &'static str,
    /// Test subscriptions' figures, or live ones'.
    test: bool,
    /// `day` or `month`.
    #[schema(example = "month")]
    interval: &'static str,
    /// The first day counted, in the shop's time zone.
    #[schema(format = Date, example = "2026-01-01")]
    from: String,
    /// The last day counted.
    #[schema(format = Date, example = "2026-12-31")]
    to: String,
}

impl About {
    fn of(q: &Query) -> About {
        About {
            currency: q.currency.code,
            test: q.test,
            interval: q.range.interval.as_str(),
            from: q.range.from.to_string(),
            to: q.range.to.to_string(),
        }
    }
}

/// One period's MRR.
#[derive(Serialize, ToSchema)]
struct MrrPeriod {
    /// Its first day.
    #[schema(format = Date, example = "2026-03-01")]
    start: String,
    /// Its last day (the range's last day for the last period).
    #[schema(format = Date, example = "2026-03-31")]
    end: String,
    /// MRR at the end of its last day, in minimal units.
    #[schema(example = 129_000)]
    mrr: i64,
    /// MRR of paused subscriptions then.
    paused_mrr: i64,
    /// Customers with MRR then.
    #[schema(example = 130)]
    subscribers: i64,
    /// MRR per subscriber, rounded; `null` without subscribers.
    #[schema(example = 992)]
    arpu: Option<i64>,
    /// Customers who churned in the period ÷ those holding MRR or paused MRR at its start and
    /// those who came in it, to four decimals; `null` when there were none.
    #[schema(example = 0.0312)]
    subscriber_churn_rate: Option<f64>,
    /// MRR churned and contracted in the period ÷ MRR at its start; `null` without MRR at its
    /// start.
    #[schema(example = 0.0204)]
    revenue_churn_rate: Option<f64>,
    /// Trials due to end in the period that were paid; a trial still running or retried is
    /// counted once it is decided.
    #[schema(example = 12)]
    trials_converted: i64,
    /// Trials due to end in the period that ended unpaid: cancelled, or their first charge
    /// failed for good.
    #[schema(example = 4)]
    trials_lost: i64,
    /// `trials_converted` ÷ (`trials_converted` + `trials_lost`); `null` when both are 0.
    #[schema(example = 0.75)]
    trial_conversion_rate: Option<f64>,
}

/// One period's movements.
#[derive(Serialize, ToSchema)]
struct MovementsPeriod {
    #[schema(format = Date, example = "2026-03-01")]
    start: String,
    #[schema(format = Date, example = "2026-03-31")]
    end: String,
    /// MRR at the start of its first day, and at the end of its last: the start plus every
    /// movement's `mrr`.
    starting_mrr: i64,
    ending_mrr: i64,
    new: Moved,
    reactivation: Moved,
    expansion: Moved,
    contraction: Moved,
    churn: Moved,
    pause: Moved,
    resume: Moved,
}

/// The movements of one kind in a period.
#[derive(Serialize, ToSchema)]
#[schema(as = RevenueMoved)]
struct Moved {
    /// How many.
    count: i64,
    /// Their change of MRR, signed: churn, contraction and pause take MRR away.
    mrr: i64,
    /// Their change of paused MRR, signed.
    paused_mrr: i64,
}

impl From<Sums> for Moved {
    fn from(s: Sums) -> Self {
        Moved { count: s.count, mrr: s.mrr, paused_mrr: s.paused }
    }
}

impl MrrView {
    pub fn new(q: &Query, periods: &[Period]) -> MrrView {
        let data = periods
            .iter()
            .map(|p| MrrPeriod {
                start: p.start.to_string(),
                end: p.end.to_string(),
                mrr: p.closing.mrr,
                paused_mrr: p.closing.paused,
                subscribers: p.closing.subscribers,
                arpu: p.arpu(),
                subscriber_churn_rate: p.subscriber_churn_rate(),
                revenue_churn_rate: p.revenue_churn_rate(),
                trials_converted: p.trials.converted,
                trials_lost: p.trials.lost,
                trial_conversion_rate: p.trial_conversion_rate(),
            })
            .collect();
        MrrView { object: "revenue.mrr", about: About::of(q), data }
    }
}

impl MovementsView {
    pub fn new(q: &Query, periods: &[Period]) -> MovementsView {
        let data = periods
            .iter()
            .map(|p| {
                let of = |kind| Moved::from(p.moved.of(kind));
                MovementsPeriod {
                    start: p.start.to_string(),
                    end: p.end.to_string(),
                    starting_mrr: p.opening.mrr,
                    ending_mrr: p.closing.mrr,
                    new: of(Kind::New),
                    reactivation: of(Kind::Reactivation),
                    expansion: of(Kind::Expansion),
                    contraction: of(Kind::Contraction),
                    churn: of(Kind::Churn),
                    pause: of(Kind::Pause),
                    resume: of(Kind::Resume),
                }
            })
            .collect();
        MovementsView { object: "revenue.movements", about: About::of(q), data }
    }
}

/// Each month's revenue retention, and the cohorts of the range's months.
#[derive(Serialize, ToSchema)]
#[schema(as = RevenueCohorts)]
pub struct CohortsView {
    /// `revenue.cohorts`.
    #[schema(example = "revenue.cohorts")]
    object: &'static str,
    #[serde(flatten)]
    about: About,
    retention: Vec<RetentionMonth>,
    cohorts: Vec<CohortView>,
}

/// One month's retention, of the customers with MRR at its start.
#[derive(Serialize, ToSchema)]
struct RetentionMonth {
    #[schema(format = Date, example = "2026-03-01")]
    start: String,
    #[schema(format = Date, example = "2026-03-31")]
    end: String,
    /// The customers with MRR at its start.
    customers: i64,
    /// Their MRR at its start, and at its end.
    starting_mrr: i64,
    ending_mrr: i64,
    /// Their MRR at the end ÷ at the start, to four decimals; `null` without MRR at the start.
    #[schema(example = 1.0213)]
    net_revenue_retention: Option<f64>,
    /// What each kept of its starting MRR (none counts above it) ÷ their MRR at the start.
    #[schema(example = 0.9712)]
    gross_revenue_retention: Option<f64>,
}

/// The customers whose first paid charge fell in one month, followed month by month.
#[derive(Serialize, ToSchema)]
struct CohortView {
    /// The month (`YYYY-MM`).
    #[schema(example = "2026-03")]
    month: String,
    /// How many customers it holds.
    customers: i64,
    /// From its own month on: those of them with MRR at each month's end, and their MRR.
    months: Vec<CohortMonth>,
}

#[derive(Serialize, ToSchema)]
struct CohortMonth {
    #[schema(example = "2026-04")]
    month: String,
    subscribers: i64,
    mrr: i64,
}

impl CohortsView {
    pub fn new(q: &Query, retention: &[Retention], cohorts: &[Cohort]) -> CohortsView {
        let month = |d: chrono::NaiveDate| d.format("%Y-%m").to_string();
        CohortsView {
            object: "revenue.cohorts",
            about: About::of(q),
            retention: retention
                .iter()
                .map(|r| RetentionMonth {
                    start: r.start.to_string(),
                    end: r.end.to_string(),
                    customers: r.customers,
                    starting_mrr: r.starting_mrr,
                    ending_mrr: r.ending_mrr,
                    net_revenue_retention: r.net(),
                    gross_revenue_retention: r.gross(),
                })
                .collect(),
            cohorts: cohorts
                .iter()
                .map(|c| CohortView {
                    month: month(c.month),
                    customers: c.customers,
                    months: c
                        .months
                        .iter()
                        .map(|(m, subscribers, mrr)| CohortMonth {
                            month: month(*m),
                            subscribers: *subscribers,
                            mrr: *mrr,
                        })
                        .collect(),
                })
                .collect(),
        }
    }
}
