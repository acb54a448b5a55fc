//! Moving a subscription to another plan of the same currency, as pure functions of (terms,
//! progress, time, zone):
//!
//! - **now**: the unused part of the paid period is credited at the old plan's price and the
//!   rest of the period charged at the new plan's, both prorated to the second:
//!   `credit = round(old × rest ÷ length)`, `charge = round(new × rest ÷ length)`, where
//!   `length` is the paid period's length in seconds and `rest` the seconds from the change to
//!   its end, rounded half up to minimal units; `amount_due = charge − credit` is charged at
//!   once. With another interval (or nothing paid left) the new plan's first period starts at
//!   the change instead and `charge` is its whole price. A change that would leave a credit
//!   (`amount_due < 0`) is made at the period end instead. In a trial, nothing is prorated:
//!   the plan changes and the trial runs to its end.
//! - **at the period end**: nothing is charged now; when the trial or paid period ends the
//!   new plan's price is charged (its periods start then if its interval differs).

use chrono::{DateTime, Utc};
use chrono_tz::Tz;

use super::billing::{Anchor, Progress, State, Terms, add_interval, outside_night};
use super::vocab::words;

words! {
    /// When a plan change takes effect (`at` of the API).
    ChangeAt { Now = "now", PeriodEnd = "period_end" }
}

/// What a change asked now charges and how the subscription goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Proration {
    /// The unused part of the paid period, at the old plan's price.
    pub credit: i64,
    /// The rest of the period (or the new plan's first period), at the new plan's price.
    pub charge: i64,
    /// What is charged at once: `charge − credit` (never below 0).
    pub amount_due: i64,
    /// Whether the new plan's periods start at the change (another interval, or nothing paid left).
    pub restarts: bool,
    /// Until when the subscription is paid once the change is charged.
    pub period_end: DateTime<Utc>,
    /// When the new plan's price is charged next.
    pub next_charge_at: DateTime<Utc>,
}

/// Why a change cannot be made now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Not in a trial or a paid period (retries, waiting for its card, paused, ended).
    NotRunning,
    /// The cheaper plan would leave this much credit: change at the period end instead.
    WouldCredit(i64),
}

/// `amount × part ÷ whole`, rounded half up (amounts and seconds are never negative here).
fn prorated(amount: i64, part: i64, whole: i64) -> i64 {
    if whole <= 0 {
        return 0;
    }
    let (amount, part, whole) = (i128::from(amount), i128::from(part.clamp(0, whole)), i128::from(whole));
    i64::try_from((2 * amount * part + whole) / (2 * whole)).unwrap_or(i64::MAX)
}

/// Whether two plans bill on the same cycle (the same interval and unit).
pub fn same_cycle(old: &Terms, new: &Terms) -> bool {
    old.interval == new.interval && old.unit == new.unit
}

/// What moving from `old` to `new` at `at` charges, for a subscription in `progress` counted
/// from `anchor`.
pub fn prorate(
    old: &Terms,
    new: &Terms,
    progress: &Progress,
    anchor: Anchor,
    at: DateTime<Utc>,
    tz: Tz,
) -> Result<Proration, Refusal> {
    let night = |t: DateTime<Utc>| if new.night { outside_night(t, tz) } else { t };
    match progress.state {
        State::Trial => {
            // The trial runs to its end on the new plan, and the new plan's price is charged then.
            let end = progress.active_to.unwrap_or(anchor.at);
            return Ok(Proration {
                credit: 0,
                charge: 0,
                amount_due: 0,
                restarts: false,
                period_end: end,
                next_charge_at: night(end.max(at)),
            });
        }
        State::Active => {}
        _ => return Err(Refusal::NotRunning),
    }
    let paid_end = progress.active_to.unwrap_or(at);
    let paid_start = old.start_of(anchor, (progress.period - 1).max(anchor.period), tz).min(paid_end);
    let (rest, length) = ((paid_end - at).num_seconds().max(0), (paid_end - paid_start).num_seconds());
    let credit = if rest > 0 { prorated(old.amount, rest, length) } else { 0 };
    let restarts = !same_cycle(old, new) || rest <= 0;
    let (charge, period_end) = match restarts {
        true => (new.amount, add_interval(at, new.interval.into(), new.unit, tz)),
        false => (prorated(new.amount, rest, length), paid_end),
    };
    let amount_due = charge - credit;
    if amount_due < 0 {
        return Err(Refusal::WouldCredit(-amount_due));
    }
    Ok(Proration { credit, charge, amount_due, restarts, period_end, next_charge_at: night(period_end) })
}

/// The progress and anchor once a change made at `at` is paid (or charged nothing): with a
/// new cycle, the new plan's first period starts at `at` and is paid; else the paid period
/// keeps its end.
pub fn after_change(progress: &Progress, anchor: Anchor, p: &Proration, at: DateTime<Utc>) -> (Progress, Anchor) {
    let mut next = Progress { change_now: None, change_at_period_end: false, ..*progress };
    next.renew_at = Some(p.next_charge_at);
    if !p.restarts {
        return (next, anchor);
    }
    // The new plan's first period is `progress.period` (never attempted: the subscription
    // was in a paid period), paid by this change.
    let anchor = Anchor { at, period: progress.period };
    next.period = progress.period + 1;
    next.paid_cycles += 1;
    next.active_to = Some(p.period_end);
    (next, anchor)
}

/// The anchor a subscription's periods count from once a change at the period end takes
/// effect as period `progress.period` begins: where that period starts if the new plan's
/// cycle differs, else the same.
pub fn anchor_at_period_end(old: &Terms, new: &Terms, progress: &Progress, anchor: Anchor, tz: Tz) -> Anchor {
    if same_cycle(old, new) {
        return anchor;
    }
    Anchor { at: old.start_of(anchor, progress.period, tz), period: progress.period }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::vocab::IntervalUnit;
    use chrono_tz::UTC;

    fn at(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    fn monthly(amount: i64) -> Terms {
        Terms {
            amount,
            interval: 1,
            unit: IntervalUnit::Month,
            trial: None,
            trial_as_first_payment: false,
            billing_cycles: None,
            attempts: 3,
            night: false,
        }
    }

    fn paid_march() -> Progress {
        Progress {
            state: State::Active,
            period: 3,
            paid_cycles: 3,
            failed_attempts: 0,
            has_success: true,
            renew_at: Some(at("2026-04-01T00:00:00Z")),
            active_to: Some(at("2026-04-01T00:00:00Z")),
            cancel_at_period_end: false,
            pause_at_period_end: false,
            change_now: None,
            change_at_period_end: false,
        }
    }

    #[test]
    fn an_upgrade_mid_period_credits_the_rest_and_charges_the_rest_at_the_new_price() {
        let anchor = Anchor::from(at("2026-01-01T00:00:00Z"));
        // March has 31 days; 10 days and 12 hours are left at the change.
        let p = prorate(&monthly(990), &monthly(2990), &paid_march(), anchor, at("2026-03-21T12:00:00Z"), UTC).unwrap();
        // 990 × 907200 / 2678400 = 335.32…; 2990 × the same = 1012.74…
        assert_eq!((p.credit, p.charge, p.amount_due), (335, 1013, 678));
        assert_eq!((p.restarts, p.period_end), (false, at("2026-04-01T00:00:00Z")));
        let (next, same) = after_change(&paid_march(), anchor, &p, at("2026-03-21T12:00:00Z"));
        assert_eq!((next.period, next.paid_cycles, same), (3, 3, anchor));
    }

    #[test]
    fn another_interval_starts_the_new_plan_at_the_change() {
        let anchor = Anchor::from(at("2026-01-01T00:00:00Z"));
        let yearly = Terms { amount: 9900, interval: 12, ..monthly(0) };
        let now = at("2026-03-16T12:00:00Z");
        let p = prorate(&monthly(990), &yearly, &paid_march(), anchor, now, UTC).unwrap();
        assert_eq!((p.credit, p.charge, p.amount_due, p.restarts), (495, 9900, 9405, true));
        assert_eq!(p.period_end, at("2027-03-16T12:00:00Z"));
        let (next, moved) = after_change(&paid_march(), anchor, &p, now);
        assert_eq!(moved, Anchor { at: now, period: 3 });
        assert_eq!((next.period, next.paid_cycles, next.active_to), (4, 4, Some(p.period_end)));
        assert_eq!(yearly.start_of(moved, next.period, UTC), p.period_end);
    }

    #[test]
    fn a_cheaper_plan_now_would_leave_a_credit_and_is_refused() {
        let anchor = Anchor::from(at("2026-01-01T00:00:00Z"));
        let refused = prorate(&monthly(2990), &monthly(990), &paid_march(), anchor, at("2026-03-21T12:00:00Z"), UTC);
        assert_eq!(refused, Err(Refusal::WouldCredit(678)));
        let retrying = Progress { state: State::FailedAttempt, ..paid_march() };
        assert_eq!(
            prorate(&monthly(990), &monthly(2990), &retrying, anchor, at("2026-04-02T00:00:00Z"), UTC),
            Err(Refusal::NotRunning)
        );
    }

    #[test]
    fn rounding_is_half_up_and_never_overflows() {
        assert_eq!(prorated(1, 1, 2), 1);
        assert_eq!(prorated(3, 1, 2), 2);
        assert_eq!(prorated(i64::MAX, 1, 1), i64::MAX);
        assert_eq!(prorated(1000, 5, 0), 0);
    }
}
