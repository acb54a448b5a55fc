//! Monthly recurring revenue (docs/revenue.md): what a subscription brings in a month, where
//! it counts (MRR, paused MRR, or nowhere), and the movement a change of it makes for its
//! customer.

pub mod cohorts;
pub mod figures;
pub mod subscribers;

use super::billing::State;
use super::vocab::{IntervalUnit, words};

/// A month's share of the calendar: 365.25 ÷ 12 = 30.4375 days, as 1461/48 of a day.
const MONTH_IN_DAYS: (i128, i128) = (1461, 48);

/// What a price charged every `interval` `unit`s brings in a month, in the same minimal units,
/// rounded half away from zero.
pub fn monthly(amount: i64, interval: i32, unit: IntervalUnit) -> i64 {
    let interval = i128::from(interval.max(1));
    let (days, per) = MONTH_IN_DAYS;
    let (num, den) = match unit {
        IntervalUnit::Month => (1, interval),
        IntervalUnit::Day => (days, per * interval),
        IntervalUnit::Hour => (days * 24, per * interval),
    };
    let scaled = i128::from(amount) * num;
    let rounded = (2 * scaled + scaled.signum() * den) / (2 * den);
    i64::try_from(rounded).unwrap_or(if amount < 0 { i64::MIN } else { i64::MAX })
}

/// Where a subscription's MRR counts: `(mrr, paused)`, at most one of them not zero.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Standing {
    pub mrr: i64,
    pub paused: i64,
}

impl Standing {
    /// A subscription in `state`, with `paid` plan periods paid, whose MRR is `monthly`.
    ///
    /// A trial counts once its first period of the plan's price is paid; a failed renewal
    /// while it is retried, and one waiting for the customer's bank, still count.
    pub fn of(state: State, paid: i32, monthly: i64) -> Standing {
        let in_mrr = Standing { mrr: monthly, paused: 0 };
        match state {
            State::Active | State::FailedAttempt | State::Redirecting if paid > 0 => in_mrr,
            State::Paused if paid > 0 => Standing { mrr: 0, paused: monthly },
            _ => Standing::default(),
        }
    }

    fn holds(self) -> i64 {
        self.mrr.saturating_add(self.paused)
    }
}

words! {
    /// What moved a customer's MRR.
    Kind {
        New = "new", Reactivation = "reactivation", Expansion = "expansion", Contraction = "contraction",
        Churn = "churn", Pause = "pause", Resume = "resume",
    }
}

/// A customer's MRR and paused MRR (in one currency and mode) before a change, and whether
/// it ever held any.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Customer {
    pub held: Standing,
    pub ever: bool,
}

/// A change of one subscription's standing, as its customer's movement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Movement {
    pub kind: Kind,
    pub mrr: i64,
    pub paused: i64,
    /// How the count of customers with MRR changes: -1, 0 or 1.
    pub subscribers: i64,
}

/// The movement a subscription's change from `before` to `after` makes for `customer`;
/// `None` when its standing did not change.
pub fn movement(customer: Customer, before: Standing, after: Standing) -> Option<Movement> {
    let (mrr, paused) = (after.mrr - before.mrr, after.paused - before.paused);
    if (mrr, paused) == (0, 0) {
        return None;
    }
    let held = customer.held;
    let then = Standing { mrr: held.mrr + mrr, paused: held.paused + paused };
    let kind = if before.paused == 0 && after.paused > 0 && after.mrr == 0 && before.mrr > 0 {
        Kind::Pause
    } else if before.paused > 0 && after.paused == 0 && after.mrr > 0 {
        Kind::Resume
    } else if held.holds() == 0 && then.holds() > 0 {
        if customer.ever { Kind::Reactivation } else { Kind::New }
    } else if then.holds() == 0 {
        Kind::Churn
    } else if mrr + paused > 0 {
        Kind::Expansion
    } else {
        Kind::Contraction
    };
    let subscribers = i64::from(then.mrr > 0) - i64::from(held.mrr > 0);
    Some(Movement { kind, mrr, paused, subscribers })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_are_normalised_to_a_month_of_the_calendar() {
        assert_eq!(monthly(10_000, 12, IntervalUnit::Month), 833);
        assert_eq!(monthly(990, 1, IntervalUnit::Month), 990);
        assert_eq!(monthly(1_000, 3, IntervalUnit::Month), 333);
        assert_eq!(monthly(1_000, 7, IntervalUnit::Day), 4_348);
        assert_eq!(monthly(100, 1, IntervalUnit::Day), 3_044);
        assert_eq!(monthly(10, 1, IntervalUnit::Hour), 7_305);
        assert_eq!(monthly(5, 2, IntervalUnit::Month), 3, "half away from zero");
        assert_eq!(monthly(0, 1, IntervalUnit::Month), 0);
        assert_eq!(monthly(i64::MAX, 1, IntervalUnit::Hour), i64::MAX, "no overflow");
    }

    #[test]
    fn trials_count_from_their_first_paid_period_and_retries_until_the_last() {
        assert_eq!(Standing::of(State::Trial, 0, 990), Standing::default());
        assert_eq!(Standing::of(State::Redirecting, 0, 990), Standing::default());
        assert_eq!(Standing::of(State::FailedAttempt, 0, 990), Standing::default(), "a trial's conversion retried");
        assert_eq!(Standing::of(State::Active, 1, 990), Standing { mrr: 990, paused: 0 });
        assert_eq!(Standing::of(State::Active, 0, 990), Standing::default(), "a paused trial resumed, not paid yet");
        assert_eq!(Standing::of(State::FailedAttempt, 3, 990), Standing { mrr: 990, paused: 0 });
        assert_eq!(Standing::of(State::Redirecting, 3, 990), Standing { mrr: 990, paused: 0 });
        assert_eq!(Standing::of(State::Paused, 3, 990), Standing { mrr: 0, paused: 990 });
        assert_eq!(Standing::of(State::Paused, 0, 990), Standing::default(), "a paused trial");
        for ended in [State::Failed, State::Error, State::Canceled, State::Expired] {
            assert_eq!(Standing::of(ended, 3, 990), Standing::default());
        }
    }

    fn held(mrr: i64, paused: i64, ever: bool) -> Customer {
        Customer { held: Standing { mrr, paused }, ever }
    }

    fn at(mrr: i64, paused: i64) -> Standing {
        Standing { mrr, paused }
    }

    #[test]
    fn a_customers_movements_follow_its_mrr() {
        let kind = |c, b, a| movement(c, b, a).map(|m| m.kind);
        assert_eq!(kind(held(0, 0, false), at(0, 0), at(990, 0)), Some(Kind::New));
        assert_eq!(kind(held(0, 0, true), at(0, 0), at(990, 0)), Some(Kind::Reactivation));
        assert_eq!(kind(held(990, 0, true), at(0, 0), at(500, 0)), Some(Kind::Expansion), "a second subscription");
        assert_eq!(kind(held(990, 0, true), at(990, 0), at(1_990, 0)), Some(Kind::Expansion));
        assert_eq!(kind(held(990, 0, true), at(990, 0), at(792, 0)), Some(Kind::Contraction));
        assert_eq!(kind(held(990, 0, true), at(990, 0), at(0, 0)), Some(Kind::Churn));
        assert_eq!(kind(held(1_490, 0, true), at(990, 0), at(0, 0)), Some(Kind::Contraction), "another one stays");
        assert_eq!(kind(held(990, 0, true), at(990, 0), at(0, 990)), Some(Kind::Pause));
        assert_eq!(kind(held(0, 990, true), at(0, 990), at(990, 0)), Some(Kind::Resume));
        assert_eq!(kind(held(0, 990, true), at(0, 990), at(0, 0)), Some(Kind::Churn), "a paused one ends");
        assert_eq!(kind(held(990, 0, true), at(990, 0), at(990, 0)), None);
    }

    #[test]
    fn subscribers_are_counted_by_their_mrr() {
        let count = |c, b, a| movement(c, b, a).map(|m| m.subscribers);
        assert_eq!(count(held(0, 0, false), at(0, 0), at(990, 0)), Some(1));
        assert_eq!(count(held(990, 0, true), at(0, 0), at(500, 0)), Some(0));
        assert_eq!(count(held(990, 0, true), at(990, 0), at(0, 990)), Some(-1), "paused: not a subscriber with MRR");
        assert_eq!(count(held(0, 990, true), at(0, 990), at(0, 0)), Some(0), "already out");
        let m = movement(held(990, 0, true), at(990, 0), at(0, 990)).unwrap();
        assert_eq!((m.mrr, m.paused), (-990, 990));
    }
}
