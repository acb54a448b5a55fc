//! When a subscription is charged, and what follows each charge: spec 3.2 and the billing
//! time rules of design.md, as pure functions of (terms, progress, outcome, now, zone).
//!
//! - A plan's periods start at its *anchor* (the end of the trial, else the start) and follow
//!   every `interval` `unit`s: hours exactly; days and months at the anchor's local time of
//!   day in the system zone, months from the 31st on the last day of shorter months and back
//!   on the 31st after (each period is counted from the anchor, never from the previous one).
//! - A local time that does not exist (the hour skipped when clocks go forward) moves forward
//!   by the gap; a local time that happens twice (clocks go back) is the earlier one.
//! - With `prevent_payments_at_night`, a charge due outside 08:00–20:00 local waits for 08:00.
//! - A declined charge with an earlier success is retried the next day at 03:00 (08:00 with
//!   the night flag); a processing error with an earlier success at the start of each
//!   following hour (skipping the night with the flag); without an earlier success there is
//!   no retry. When `number_payment_attempts` failures are used up, the subscription ends
//!   (`failed` after declines, `error` after processing errors).
//! - A charge that had to wait (night, retries, downtime) pays the period it was due for; the
//!   next charge is the next period start after it, so no period is charged twice and a
//!   backlog is never charged all at once.
//! - A paused subscription is charged nothing and retried never. Resumed with a new period,
//!   its periods are counted afresh from the resume (its *anchor* moves there) and the first
//!   is charged at once; resumed on its old schedule, its next charge is the first period of
//!   that schedule starting at or after both the resume and the end of what was paid.

use chrono::{DateTime, Days, Duration, Months, NaiveDateTime, NaiveTime, TimeZone, Timelike, Utc};
use chrono_tz::Tz;

use super::plan::PlanFields;
use super::vocab::{IntervalUnit, words};

/// Night ends at 08:00 and starts at 20:00, local time.
const DAY_STARTS: u32 = 8;
const NIGHT_STARTS: u32 = 20;
const DECLINE_RETRY_HOUR: u32 = 3;

/// `t + d`, held at the ends of the representable range instead of overflowing.
fn plus(t: DateTime<Utc>, d: Duration) -> DateTime<Utc> {
    t.checked_add_signed(d).unwrap_or(if d < Duration::zero() {
        DateTime::<Utc>::MIN_UTC
    } else {
        DateTime::<Utc>::MAX_UTC
    })
}

/// The local date `days` after `date`, held at the end of the range.
fn date_plus(date: chrono::NaiveDate, days: u64) -> chrono::NaiveDate {
    date.checked_add_days(Days::new(days)).unwrap_or(chrono::NaiveDate::MAX)
}

/// The instant of a local wall time in `tz`: a skipped time moves forward by the gap, a
/// repeated time is the earlier of the two.
pub fn resolve_local(tz: Tz, local: NaiveDateTime) -> DateTime<Utc> {
    match tz.from_local_datetime(&local).earliest() {
        Some(t) => t.with_timezone(&Utc),
        None => {
            // In a gap: read the wall time with the offset in force before it. The gap may
            // be a whole day (Kiritimati crossed the date line), so the offset is read a
            // day and a half before, where no other change of offset lies.
            let before = plus(local.and_utc(), -Duration::hours(36));
            let offset = tz.offset_from_utc_datetime(&before.naive_utc());
            plus(local.and_utc(), -Duration::seconds(chrono::Offset::fix(&offset).local_minus_utc().into()))
        }
    }
}

/// `t`, or 08:00 local when `t` is at night (before 08:00 the same day, from 20:00 the next).
pub fn outside_night(t: DateTime<Utc>, tz: Tz) -> DateTime<Utc> {
    let local = t.with_timezone(&tz).naive_local();
    let morning = |days: u64| {
        let date = date_plus(local.date(), days);
        resolve_local(tz, date.and_time(NaiveTime::from_hms_opt(DAY_STARTS, 0, 0).unwrap()))
    };
    match local.hour() {
        h if h < DAY_STARTS => morning(0),
        h if h >= NIGHT_STARTS => morning(1),
        _ => t,
    }
}

/// After a decline: the next day at 03:00 local, or 08:00 with the night flag.
pub fn decline_retry_at(now: DateTime<Utc>, night: bool, tz: Tz) -> DateTime<Utc> {
    let hour = if night { DAY_STARTS } else { DECLINE_RETRY_HOUR };
    let date = date_plus(now.with_timezone(&tz).date_naive(), 1);
    resolve_local(tz, date.and_time(NaiveTime::from_hms_opt(hour, 0, 0).unwrap()))
}

/// After a processing error: the start of the next hour (of local time, for zones with
/// half-hour offsets), at 08:00 if that is at night and the night flag is set.
pub fn error_retry_at(now: DateTime<Utc>, night: bool, tz: Tz) -> DateTime<Utc> {
    let local = now.with_timezone(&tz);
    let into_hour = Duration::minutes(local.minute().into())
        + Duration::seconds(local.second().into())
        + Duration::nanoseconds(local.nanosecond().into());
    let next = plus(plus(now, -into_hour), Duration::hours(1));
    if night { outside_night(next, tz) } else { next }
}

/// Adds `n` units to `from`: hours exactly, days and months at the same local time.
pub fn add_interval(from: DateTime<Utc>, n: i64, unit: IntervalUnit, tz: Tz) -> DateTime<Utc> {
    // Nothing to add is `from` itself, also when its local time happens twice (read back,
    // that time would be the earlier of the two).
    if n <= 0 && unit != IntervalUnit::Hour {
        return from;
    }
    let local = from.with_timezone(&tz).naive_local();
    let moved = match unit {
        IntervalUnit::Hour => return plus(from, Duration::try_hours(n).unwrap_or(Duration::MAX)),
        IntervalUnit::Day => local.checked_add_days(Days::new(n.max(0) as u64)),
        IntervalUnit::Month => local.checked_add_months(Months::new(n.clamp(0, u32::MAX.into()) as u32)),
    };
    resolve_local(tz, moved.unwrap_or(NaiveDateTime::MAX))
}

/// The charging terms of a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Terms {
    pub amount: i64,
    pub interval: i32,
    pub unit: IntervalUnit,
    /// Amount and length of the trial.
    pub trial: Option<(i64, i32, IntervalUnit)>,
    pub trial_as_first_payment: bool,
    /// `None` when infinite.
    pub billing_cycles: Option<i32>,
    pub attempts: i32,
    pub night: bool,
}

impl From<&PlanFields> for Terms {
    fn from(p: &PlanFields) -> Self {
        Terms {
            amount: p.amount,
            interval: p.interval,
            unit: p.interval_unit,
            trial: p.trial.map(|t| (t.amount, t.interval, t.interval_unit)),
            trial_as_first_payment: p.trial_as_first_payment,
            billing_cycles: if p.infinite { None } else { p.billing_cycles },
            attempts: p.number_payment_attempts,
            night: p.prevent_payments_at_night,
        }
    }
}

/// Where a subscription's periods are counted from: period `period` starts `at` (period 0,
/// unless a resume counted its periods afresh from then).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Anchor {
    pub at: DateTime<Utc>,
    pub period: i64,
}

impl From<DateTime<Utc>> for Anchor {
    fn from(at: DateTime<Utc>) -> Self {
        Anchor { at, period: 0 }
    }
}

impl Terms {
    /// Where the plan's periods are counted from: the end of the trial, else `start`.
    pub fn anchor(&self, start: DateTime<Utc>, tz: Tz) -> DateTime<Utc> {
        match self.trial {
            Some((_, n, unit)) => add_interval(start, n.into(), unit, tz),
            None => start,
        }
    }

    /// The start of plan period `k` (0 is the first).
    pub fn period_start(&self, anchor: DateTime<Utc>, k: i64, tz: Tz) -> DateTime<Utc> {
        add_interval(anchor, k.saturating_mul(i64::from(self.interval)), self.unit, tz)
    }

    /// What a customer subscribing at `now` is charged: the amount today (the trial's, else
    /// the plan's), and when the plan's amount is charged next.
    pub fn first_charges(&self, now: DateTime<Utc>, tz: Tz) -> (i64, DateTime<Utc>) {
        let anchor = self.anchor(now, tz);
        let (today, next) = match self.trial {
            Some((amount, _, _)) => (amount, anchor),
            None => (self.amount, self.period_start(anchor, 1, tz)),
        };
        (today, if self.night { outside_night(next, tz) } else { next })
    }

    /// The start of period `k` of a subscription counted from `anchor`.
    pub fn start_of(&self, anchor: Anchor, k: i64, tz: Tz) -> DateTime<Utc> {
        self.period_start(anchor.at, k.saturating_sub(anchor.period), tz)
    }

    /// The first period after `k` of a subscription counted from `anchor` that starts after `t`.
    pub fn next_after(&self, anchor: Anchor, k: i64, t: DateTime<Utc>, tz: Tz) -> i64 {
        self.next_period_after(anchor.at, k.saturating_sub(anchor.period), t, tz).saturating_add(anchor.period)
    }

    /// The first period after `k` that starts after `t`.
    pub fn next_period_after(&self, anchor: DateTime<Utc>, k: i64, t: DateTime<Utc>, tz: Tz) -> i64 {
        let mut next = k.saturating_add(1);
        if self.unit == IntervalUnit::Hour {
            let hours = (t - anchor).num_hours() / i64::from(self.interval);
            next = next.max(hours);
        }
        while self.period_start(anchor, next, tz) <= t && t < DateTime::<Utc>::MAX_UTC {
            next += 1;
        }
        next
    }
}

words! {
    /// Where a subscription stands (the `state` of the API).
    State {
        Active = "active", Trial = "trial", FailedAttempt = "failed_attempt", Redirecting = "redirecting",
        Failed = "failed", Error = "error", Canceled = "canceled", Expired = "expired", Paused = "paused",
    }
}

words! {
    /// How a paused subscription goes on when it resumes (`resume_billing` of the API).
    ResumeBilling {
        NewPeriod = "new_period", Continue = "continue",
    }
}

impl State {
    /// The states the engine still has work for.
    pub const BILLING: [State; 3] = [State::Trial, State::Active, State::FailedAttempt];

    /// The states whose `renew_at` the engine acts on: a charge, a retry, an end, or (paused)
    /// the resume.
    pub const SCHEDULED: [State; 4] = [State::Trial, State::Active, State::FailedAttempt, State::Paused];

    /// The states that have not ended: waiting for the card, billing, paused.
    pub const OPEN: [State; 5] = [State::Redirecting, State::Trial, State::Active, State::FailedAttempt, State::Paused];

    /// The states a merchant can pause now: a trial, a paid period, retries.
    pub const PAUSABLE: [State; 3] = State::BILLING;

    /// Whether the engine still has work for it.
    pub fn is_billing(self) -> bool {
        State::BILLING.contains(&self)
    }

    /// Whether it is over (failed, error, canceled, expired): nothing can change it any more.
    pub fn has_ended(self) -> bool {
        !self.is_billing() && !matches!(self, State::Redirecting | State::Paused)
    }
}

/// Where a subscription's billing stands between charges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub state: State,
    /// The plan period the next charge pays for; `-1` while the trial is due.
    pub period: i64,
    pub paid_cycles: i32,
    /// Failed attempts at the current period.
    pub failed_attempts: i32,
    /// An earlier successful charge that allows retries (spec 3.2).
    pub has_success: bool,
    /// When the engine acts next: a charge, a retry, or the end.
    pub renew_at: Option<DateTime<Utc>>,
    /// Until when the customer has paid (the end of the trial or of the last paid period).
    pub active_to: Option<DateTime<Utc>>,
    /// The merchant cancelled it for the end of the paid period: it ends then, uncharged.
    pub cancel_at_period_end: bool,
    /// The merchant paused it from the end of the paid period: it pauses then, uncharged.
    pub pause_at_period_end: bool,
    /// A change to another plan asked now, waiting for its charge of this amount.
    pub change_now: Option<i64>,
    /// A change to another plan when the trial or paid period ends.
    pub change_at_period_end: bool,
}

/// What a charge attempt ended in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Succeeded,
    Declined,
    Error,
    /// The bank wants the customer to confirm this charge (3-D Secure on a renewal): no retry
    /// can succeed without them.
    NeedsCustomer,
}

/// What the engine must do when a subscription is due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Due {
    /// Charge `amount` for `period` (`-1`: the trial); `attempt` counts from 1.
    Charge { amount: i64, period: i64, attempt: i32 },
    /// `billing_cycles` are paid: the subscription ends.
    Expire,
    /// The paid period a merchant cancelled it at the end of is over: it ends, uncharged.
    Cancel,
    /// The paid period a merchant paused it from the end of is over: it pauses, uncharged.
    Pause,
    /// A paused subscription's resume date has come.
    Resume,
    /// A change to another plan asked now: charge the prorated `amount` under the change's key.
    Prorate { amount: i64 },
    /// The trial or paid period ended with a change to another plan pending: the plan changes,
    /// and its price is charged next.
    ChangePlan,
}

/// Why a subscription that ran out of attempts ended: its first payment never went through,
/// or the retries of a later one were used up.
pub fn end_reason(progress: &Progress) -> Option<&'static str> {
    match progress.state {
        State::Failed | State::Error if !progress.has_success => Some("first payment failed"),
        State::Failed | State::Error => Some("payment attempts exhausted"),
        _ => None,
    }
}

/// The key of a subscription's charge: unique per period and attempt, and the acquirer's
/// idempotency key, so a charge is made once whatever is retried.
pub fn charge_key(subscription_id: &str, period: i64, attempt: i32) -> String {
    format!("{subscription_id}:{period}:{attempt}")
}

/// The key a card saved on the processor's page for a started subscription is recorded
/// under (its zero-amount payment): once, never a charge's.
pub fn card_update_key(subscription_id: &str, payment_id: &str) -> String {
    format!("{subscription_id}:card:{payment_id}")
}

/// The key of the charge of a plan change asked now (`change_id` names the change): once.
pub fn change_key(subscription_id: &str, change_id: &str) -> String {
    format!("{subscription_id}:change:{change_id}")
}

/// The key that sets aside a page paid for a charge the subscription no longer waits for:
/// no charge of it ever takes that payment.
pub fn stray_key(subscription_id: &str, payment_id: &str) -> String {
    format!("{subscription_id}:stray:{payment_id}")
}

/// Whether a payment's billing key marks a card saved rather than a charge.
pub fn is_card_update_key(key: &str) -> bool {
    key.contains(":card:")
}

/// The period (`-1`: the trial) and attempt (from 1) a charge key names.
pub fn charge_of_key(key: &str) -> Option<(i64, i32)> {
    let mut parts = key.rsplitn(3, ':');
    let attempt = parts.next()?.parse().ok()?;
    let period = parts.next()?.parse().ok()?;
    parts.next()?;
    Some((period, attempt))
}

/// A new subscription, before its first (customer-present) charge.
pub fn begin(terms: &Terms) -> Progress {
    Progress {
        state: State::Redirecting,
        period: if terms.trial.is_some() { -1 } else { 0 },
        paid_cycles: 0,
        failed_attempts: 0,
        has_success: false,
        renew_at: None,
        active_to: None,
        cancel_at_period_end: false,
        pause_at_period_end: false,
        change_now: None,
        change_at_period_end: false,
    }
}

/// What is due for a subscription in `progress`.
pub fn due(terms: &Terms, progress: &Progress) -> Due {
    if progress.state == State::Paused {
        return Due::Resume;
    }
    if let Some(amount) = progress.change_now {
        return Due::Prorate { amount };
    }
    if progress.cancel_at_period_end {
        return Due::Cancel;
    }
    if terms.billing_cycles.is_some_and(|cycles| progress.paid_cycles >= cycles) {
        return Due::Expire;
    }
    if progress.pause_at_period_end {
        return Due::Pause;
    }
    if progress.change_at_period_end {
        return Due::ChangePlan;
    }
    let amount = match (progress.period, terms.trial) {
        (-1, Some((trial_amount, _, _))) => trial_amount,
        _ => terms.amount,
    };
    Due::Charge { amount, period: progress.period, attempt: progress.failed_attempts + 1 }
}

/// The progress after the charge of `progress.period` ended in `outcome` at `now`; `anchor`
/// is where the subscription's periods are counted from.
pub fn after_charge(
    terms: &Terms,
    progress: &Progress,
    outcome: Outcome,
    anchor: impl Into<Anchor>,
    now: DateTime<Utc>,
    tz: Tz,
) -> Progress {
    let anchor = anchor.into();
    let night = |t: DateTime<Utc>| if terms.night { outside_night(t, tz) } else { t };
    let mut next = *progress;
    match outcome {
        Outcome::Succeeded if progress.period < 0 => {
            next.state = State::Trial;
            next.period = 0;
            next.has_success = terms.trial_as_first_payment;
            next.failed_attempts = 0;
            next.active_to = Some(anchor.at);
            next.renew_at = Some(night(anchor.at.max(now)));
        }
        Outcome::Succeeded => {
            let following = terms.next_after(anchor, progress.period, now, tz);
            let ends = terms.start_of(anchor, following, tz);
            next.state = State::Active;
            next.period = following;
            next.paid_cycles += 1;
            next.has_success = true;
            next.failed_attempts = 0;
            next.active_to = Some(ends);
            let finished = terms.billing_cycles.is_some_and(|c| next.paid_cycles >= c);
            next.renew_at = Some(if finished { ends } else { night(ends) });
        }
        Outcome::NeedsCustomer => {
            // The attempt counts; the subscription waits, with its card link, until the
            // customer comes back to confirm a charge (or the merchant cancels it).
            next.failed_attempts += 1;
            next.state = State::Redirecting;
            next.renew_at = None;
        }
        Outcome::Declined | Outcome::Error => {
            next.failed_attempts += 1;
            let retry = progress.has_success && next.failed_attempts < terms.attempts;
            next.state = match (retry, outcome) {
                (true, _) => State::FailedAttempt,
                (false, Outcome::Declined) => State::Failed,
                (false, _) => State::Error,
            };
            next.renew_at = retry.then(|| match outcome {
                Outcome::Declined => decline_retry_at(now, terms.night, tz),
                _ => error_retry_at(now, terms.night, tz),
            });
        }
    }
    next
}

/// The progress after `billing_cycles` are all paid and the last period has run out.
pub fn expire(progress: &Progress) -> Progress {
    Progress { state: State::Expired, renew_at: None, ..*progress }
}

/// The progress of a subscription paused (now, or as its paid period ended), to resume at
/// `resume_at` if given: nothing is charged or retried meanwhile. Its failed attempts are
/// kept until it resumes (the period they were at is never charged again).
pub fn pause(progress: &Progress, resume_at: Option<DateTime<Utc>>) -> Progress {
    Progress { state: State::Paused, renew_at: resume_at, pause_at_period_end: false, ..*progress }
}

/// The progress and anchor of a paused subscription resumed at `now`:
///
/// - a new period: its periods are counted afresh from `now`, and the first is due at once
///   (the rest of a period paused in the middle of is not credited);
/// - its old schedule: the next charge is the first period of the old schedule starting at
///   or after both `now` and the end of what was paid; periods that began while it was
///   paused are never charged.
///
/// Either way the next period is one never attempted before (its charge keys are new), and
/// it is in its trial again if it resumes before its trial's end on the old schedule.
pub fn resume(
    terms: &Terms,
    progress: &Progress,
    anchor: Anchor,
    billing: ResumeBilling,
    now: DateTime<Utc>,
    tz: Tz,
) -> (Progress, Anchor) {
    let night = |t: DateTime<Utc>| if terms.night { outside_night(t, tz) } else { t };
    // A period attempted before the pause is never charged again under the same keys.
    let fresh = progress.period.max(0) + i64::from(progress.failed_attempts > 0);
    let mut next = Progress { failed_attempts: 0, pause_at_period_end: false, ..*progress };
    match billing {
        ResumeBilling::NewPeriod => {
            let anchor = Anchor { at: now, period: fresh };
            next.state = State::Active;
            next.period = fresh;
            next.renew_at = Some(night(now));
            (next, anchor)
        }
        ResumeBilling::Continue => {
            let from = progress.active_to.map_or(now, |paid| paid.max(now));
            let mut k = fresh;
            if terms.start_of(anchor, k, tz) < from {
                k = terms.next_after(anchor, k, from, tz);
                // `next_after` is the first start after `from`; one starting at it is as good.
                if k > fresh && terms.start_of(anchor, k - 1, tz) >= from {
                    k -= 1;
                }
            }
            let in_trial = terms.trial.is_some() && progress.paid_cycles == 0 && k == 0 && now < anchor.at;
            next.state = if in_trial { State::Trial } else { State::Active };
            next.period = k;
            next.renew_at = Some(night(terms.start_of(anchor, k, tz)));
            (next, anchor)
        }
    }
}

#[cfg(test)]
mod tests;
