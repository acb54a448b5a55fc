//! A shop's revenue figures per day or month, in its time zone, made from its ledger's
//! movements summed by period (its days in the zone) and kind: MRR, paused MRR and
//! subscribers at each period's end, what moved them, and the rates made of those
//! (docs/revenue.md).

use chrono::{DateTime, Datelike, Days, Months, NaiveDate, TimeZone, Utc};
use chrono_tz::Tz;

use super::Kind;
use crate::domain::currency::Currency;
use crate::domain::errors::Errors;

/// How long each period of a series is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interval {
    Day,
    Month,
}

impl Interval {
    pub fn parse(word: &str) -> Option<Interval> {
        match word {
            "day" => Some(Interval::Day),
            "month" => Some(Interval::Month),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Interval::Day => "day",
            Interval::Month => "month",
        }
    }

    /// The first day of the period that holds `day`.
    fn start_of(self, day: NaiveDate) -> NaiveDate {
        match self {
            Interval::Day => day,
            Interval::Month => day.with_day(1).unwrap_or(day),
        }
    }

    /// The first day of the period after the one starting at `start`.
    fn next(self, start: NaiveDate) -> Option<NaiveDate> {
        match self {
            Interval::Day => start.checked_add_days(Days::new(1)),
            Interval::Month => start.checked_add_months(Months::new(1)),
        }
    }
}

/// The most periods one series answers.
pub const MOST_PERIODS: usize = 1_000;

/// What a series covers: the days from `from` to `to` (both counted) cut into periods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    pub from: NaiveDate,
    pub to: NaiveDate,
    pub interval: Interval,
}

impl Range {
    /// The range a query asks for (`from`, `to`: `YYYY-MM-DD`; `interval`: `day` or
    /// `month`), on `today`. Without `to`, it ends today; without `from`, it starts 12
    /// months (or 30 days) before its end's period ends. Each problem is named by its key.
    pub fn parse(
        from: Option<&str>,
        to: Option<&str>,
        interval: Option<&str>,
        today: NaiveDate,
    ) -> Result<Range, Errors> {
        let mut errors = Errors::default();
        let interval = match interval.map(Interval::parse) {
            None => Interval::Month,
            Some(Some(i)) => i,
            Some(None) => {
                errors.add("interval", "must be day or month");
                Interval::Month
            }
        };
        let mut date = |key: &str, value: Option<&str>| {
            let parsed = value.map(|v| NaiveDate::parse_from_str(v.trim(), "%Y-%m-%d"));
            match parsed {
                Some(Err(_)) => {
                    errors.add(key, "must be a date: YYYY-MM-DD");
                    None
                }
                Some(Ok(d)) if (1970..=9999).contains(&d.year()) => Some(d),
                Some(Ok(_)) => {
                    errors.add(key, "must be a date from 1970 to 9999");
                    None
                }
                None => None,
            }
        };
        let (from, to) = (date("from", from), date("to", to));
        let to = to.unwrap_or(today);
        let from = from.unwrap_or_else(|| {
            let back = match interval {
                Interval::Day => to.checked_sub_days(Days::new(29)),
                Interval::Month => interval.start_of(to).checked_sub_months(Months::new(11)),
            };
            back.unwrap_or(to)
        });
        if from > to {
            errors.add("from", "must not be after to");
        }
        let range = Range { from, to, interval };
        if errors.is_empty() && range.starts().len() > MOST_PERIODS {
            errors.add("from", format!("at most {MOST_PERIODS} periods of the interval at once"));
        }
        errors.into_result(|| range)
    }

    /// The first day of each period, the first one from `from` (cut at it).
    fn starts(&self) -> Vec<NaiveDate> {
        let mut starts = vec![self.from];
        let mut next = self.interval.next(self.interval.start_of(self.from));
        while let Some(start) = next.filter(|s| *s <= self.to) {
            if starts.len() > MOST_PERIODS {
                break;
            }
            starts.push(start);
            next = self.interval.next(start);
        }
        starts
    }

    /// The first day of each month of the range, the first one from `from`.
    pub fn month_starts(&self) -> Vec<NaiveDate> {
        Range { interval: Interval::Month, ..*self }.starts()
    }

    /// The instants each period covers in `tz`: from its first day's start until the next
    /// one's (the last one's until the start of the day after the range).
    pub fn bounds(&self, tz: Tz) -> Vec<(DateTime<Utc>, DateTime<Utc>)> {
        let starts: Vec<DateTime<Utc>> = self.starts().iter().map(|d| start_of_day(*d, tz)).collect();
        let (_, until) = self.instants(tz);
        starts.iter().enumerate().map(|(i, from)| (*from, starts.get(i + 1).copied().unwrap_or(until))).collect()
    }

    /// The instants the range covers in `tz`: from its first day's start, until the start of
    /// the day after its last.
    pub fn instants(&self, tz: Tz) -> (DateTime<Utc>, DateTime<Utc>) {
        let after = self.to.checked_add_days(Days::new(1)).unwrap_or(self.to);
        (start_of_day(self.from, tz), start_of_day(after, tz))
    }
}

/// What a query for figures asks: one currency (none is converted into another), live or
/// test, and the range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Query {
    pub currency: Currency,
    pub test: bool,
    pub range: Range,
}

impl Query {
    /// A query's `currency` (required), `test` (`true` or `false`, the default), `from`,
    /// `to` and `interval` (see [`Range::parse`]) on `today`; other keys are left to the
    /// caller. Each problem is named by its key.
    pub fn parse<K: AsRef<str>, V: AsRef<str>>(
        pairs: impl IntoIterator<Item = (K, V)>,
        today: NaiveDate,
    ) -> Result<Query, Errors> {
        let mut found: [Option<String>; 5] = Default::default();
        const KEYS: [&str; 5] = ["currency", "test", "from", "to", "interval"];
        for (key, value) in pairs {
            if let Some(i) = KEYS.iter().position(|k| *k == key.as_ref()) {
                found[i] = Some(value.as_ref().to_owned());
            }
        }
        let [currency, test, from, to, interval] = found;
        let range = Range::parse(from.as_deref(), to.as_deref(), interval.as_deref(), today);
        let mut errors = range.as_ref().err().cloned().unwrap_or_default();
        let code = currency.as_deref().map(|c| c.trim().to_ascii_uppercase());
        let currency = code.as_deref().and_then(crate::domain::currency::find);
        if currency.is_none() {
            let problem =
                if code.is_none() { "is required: figures are per currency" } else { "is not a known currency" };
            errors.add("currency", problem);
        }
        let test = match test.as_deref() {
            None | Some("false") => false,
            Some("true") => true,
            Some(_) => {
                errors.add("test", "must be true or false");
                false
            }
        };
        match (currency, range) {
            (Some(currency), Ok(range)) if errors.is_empty() => Ok(Query { currency, test, range }),
            _ => Err(errors),
        }
    }
}

/// When `day` starts in `tz` (its first instant, on a day that starts in a clock's gap).
pub fn start_of_day(day: NaiveDate, tz: Tz) -> DateTime<Utc> {
    let midnight = day.and_hms_opt(0, 0, 0).unwrap_or_default();
    let found = (0..=4)
        .find_map(|quarters| tz.from_local_datetime(&(midnight + chrono::Duration::minutes(15 * quarters))).earliest());
    found.map_or_else(|| Utc.from_utc_datetime(&midnight), |t| t.to_utc())
}

/// Movements summed: their change of MRR, of paused MRR and of subscribers, and how many
/// they are.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sums {
    pub mrr: i64,
    pub paused: i64,
    pub subscribers: i64,
    pub count: i64,
}

impl Sums {
    fn add(&mut self, other: Sums) {
        self.mrr = self.mrr.saturating_add(other.mrr);
        self.paused = self.paused.saturating_add(other.paused);
        self.subscribers = self.subscribers.saturating_add(other.subscribers);
        self.count = self.count.saturating_add(other.count);
    }
}

/// Movements summed per kind, in the order of [`Kind::ALL`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Moved([Sums; 7]);

impl Moved {
    pub fn add(&mut self, kind: Kind, sums: Sums) {
        self.0[index(kind)].add(sums);
    }

    pub fn of(&self, kind: Kind) -> Sums {
        self.0[index(kind)]
    }

    /// Each kind with its sums.
    pub fn kinds(&self) -> impl Iterator<Item = (Kind, Sums)> + '_ {
        Kind::ALL.iter().map(|&k| (k, self.of(k)))
    }

    fn total(&self) -> Sums {
        let mut all = Sums::default();
        self.0.iter().for_each(|s| all.add(*s));
        all
    }

    /// How the count of customers holding MRR or paused MRR changed: they come with `new`
    /// and `reactivation`, and leave with `churn`.
    fn holders(&self) -> i64 {
        self.of(Kind::New).count + self.of(Kind::Reactivation).count - self.of(Kind::Churn).count
    }
}

fn index(kind: Kind) -> usize {
    Kind::ALL.iter().position(|k| *k == kind).unwrap_or(0)
}

/// Where a shop's MRR stands at an instant.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Standing {
    pub mrr: i64,
    pub paused: i64,
    /// Customers with MRR.
    pub subscribers: i64,
    /// Customers with MRR or paused MRR.
    pub holders: i64,
}

impl Standing {
    /// Where everything before stands: the sums of all movements until then.
    pub fn after(moved: &Moved) -> Standing {
        let all = moved.total();
        Standing { mrr: all.mrr, paused: all.paused, subscribers: all.subscribers, holders: moved.holders() }
    }

    fn then(self, moved: &Moved) -> Standing {
        let all = moved.total();
        Standing {
            mrr: self.mrr.saturating_add(all.mrr),
            paused: self.paused.saturating_add(all.paused),
            subscribers: self.subscribers.saturating_add(all.subscribers),
            holders: self.holders.saturating_add(moved.holders()),
        }
    }
}

/// Trials due to end in a time: those paid (their first charge of the plan's price), and those
/// that ended unpaid. A trial still running, or still being retried, is in neither.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Trials {
    pub converted: i64,
    pub lost: i64,
}

impl Trials {
    fn add(&mut self, other: Trials) {
        self.converted = self.converted.saturating_add(other.converted);
        self.lost = self.lost.saturating_add(other.lost);
    }
}

/// One period of a series.
#[derive(Debug, Clone, PartialEq)]
pub struct Period {
    pub start: NaiveDate,
    /// Its last day.
    pub end: NaiveDate,
    /// As it started and as it ended.
    pub opening: Standing,
    pub closing: Standing,
    pub moved: Moved,
    /// The trials due to end in it.
    pub trials: Trials,
}

impl Period {
    /// MRR per customer with MRR at the period's end, rounded half away from zero; none
    /// without a customer.
    pub fn arpu(&self) -> Option<i64> {
        let Standing { mrr, subscribers, .. } = self.closing;
        (subscribers > 0)
            .then(|| (2 * i128::from(mrr) + i128::from(subscribers)) / (2 * i128::from(subscribers)))
            .and_then(|a| i64::try_from(a).ok())
    }

    /// The customers who churned ÷ the customers holding MRR (or paused MRR) at the start
    /// and those who came in the period; none when there were none.
    pub fn subscriber_churn_rate(&self) -> Option<f64> {
        let m = &self.moved;
        let exposed = self.opening.holders + m.of(Kind::New).count + m.of(Kind::Reactivation).count;
        ratio(m.of(Kind::Churn).count, exposed)
    }

    /// The trials due to end in the period that were paid ÷ those decided (paid or ended
    /// unpaid); none when none was decided.
    pub fn trial_conversion_rate(&self) -> Option<f64> {
        ratio(self.trials.converted, self.trials.converted.saturating_add(self.trials.lost))
    }

    /// The MRR churned and contracted in the period ÷ the MRR at its start; none without MRR
    /// at its start.
    pub fn revenue_churn_rate(&self) -> Option<f64> {
        let lost = -(self.moved.of(Kind::Churn).mrr + self.moved.of(Kind::Contraction).mrr);
        ratio(lost, self.opening.mrr)
    }
}

/// `part` ÷ `whole` to four decimals; none when `whole` is not more than zero.
pub fn ratio(part: i64, whole: i64) -> Option<f64> {
    (whole > 0).then(|| (part as f64 / whole as f64 * 10_000.0).round() / 10_000.0)
}

/// What the series of a range is made of: `before` sums every movement before the range,
/// `groups` the movements inside it by period (its place in [`Range::bounds`]) and kind,
/// `trials` the trials due to end inside it by period.
pub struct Made<'a> {
    pub before: &'a Moved,
    pub groups: &'a [(usize, Kind, Sums)],
    pub trials: &'a [(usize, Trials)],
}

/// The series of `range`.
pub fn series(range: &Range, made: Made) -> Vec<Period> {
    let starts = range.starts();
    let mut moved = vec![Moved::default(); starts.len()];
    for &(i, kind, sums) in made.groups {
        if let Some(m) = moved.get_mut(i) {
            m.add(kind, sums);
        }
    }
    let mut trials = vec![Trials::default(); starts.len()];
    for &(i, t) in made.trials {
        if let Some(sum) = trials.get_mut(i) {
            sum.add(t);
        }
    }
    let mut standing = Standing::after(made.before);
    let mut periods = Vec::with_capacity(starts.len());
    for (i, ((start, moved), trials)) in starts.iter().zip(moved).zip(trials).enumerate() {
        let end = starts.get(i + 1).and_then(|n| n.pred_opt()).unwrap_or(range.to).min(range.to);
        let closing = standing.then(&moved);
        periods.push(Period { start: *start, end, opening: standing, closing, moved, trials });
        standing = closing;
    }
    periods
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    fn sums(mrr: i64, subscribers: i64) -> Sums {
        Sums { mrr, paused: 0, subscribers, count: 1 }
    }

    #[test]
    fn a_range_defaults_to_twelve_months_or_thirty_days_and_names_its_problems() {
        let today = day(2026, 12, 6);
        let r = Range::parse(None, None, None, today).unwrap();
        assert_eq!((r.from, r.to, r.interval), (day(2026, 1, 1), today, Interval::Month));
        assert_eq!(r.starts().len(), 12);
        let r = Range::parse(None, Some("2026-03-31"), Some("day"), today).unwrap();
        assert_eq!((r.from, r.to), (day(2026, 3, 2), day(2026, 3, 31)));
        let r = Range::parse(Some("2026-01-15"), Some("2026-03-10"), None, today).unwrap();
        assert_eq!(r.starts(), vec![day(2026, 1, 15), day(2026, 2, 1), day(2026, 3, 1)]);
        let e = Range::parse(Some("2026-13-01"), Some("soon"), Some("week"), today).unwrap_err();
        assert!(e.has("from") && e.has("to") && e.has("interval"));
        assert!(Range::parse(Some("2026-02-01"), Some("2026-01-01"), None, today).unwrap_err().has("from"));
        assert!(Range::parse(Some("2000-01-01"), None, Some("day"), today).unwrap_err().has("from"));
        assert!(Range::parse(Some("1970-01-01"), None, None, today).is_ok(), "684 months");
        assert!(Range::parse(Some("1910-01-01"), Some("2000-01-01"), None, today).unwrap_err().has("from"));
        let far = Range::parse(Some("+10000-01-01"), Some("+10000-02-01"), None, today).unwrap_err();
        assert!(far.has("from") && far.has("to"), "years past 9999");
    }

    #[test]
    fn a_query_names_one_currency_and_its_mode() {
        let today = day(2026, 12, 6);
        let q = Query::parse([("currency", " eur "), ("test", "true"), ("interval", "day"), ("other", "x")], today)
            .unwrap();
        assert_eq!((q.currency.code, q.test, q.range.interval, q.range.to), ("EUR", true, Interval::Day, today));
        assert!(!Query::parse([("currency", "JPY")], today).unwrap().test, "live by default");
        let e = Query::parse([("test", "1"), ("to", "x")], today).unwrap_err();
        assert!(e.has("currency") && e.has("test") && e.has("to"));
        assert!(Query::parse([("currency", "EURO")], today).unwrap_err().has("currency"));
    }

    #[test]
    fn periods_are_bounded_by_their_days_in_the_shops_zone() {
        let tz: Tz = "Europe/Berlin".parse().unwrap();
        let range = Range::parse(Some("2026-01-15"), Some("2026-03-31"), None, day(2026, 12, 6)).unwrap();
        let at = |m, d, h| Utc.with_ymd_and_hms(2026, m, d, h, 0, 0).unwrap();
        assert_eq!(
            range.bounds(tz),
            vec![(at(1, 14, 23), at(1, 31, 23)), (at(1, 31, 23), at(2, 28, 23)), (at(2, 28, 23), at(3, 31, 22))],
            "the range's first day, then months; summer time from 29 March"
        );
    }

    #[test]
    fn movements_make_each_periods_figures() {
        let range = Range::parse(Some("2026-01-01"), Some("2026-03-31"), None, day(2026, 12, 6)).unwrap();
        let mut before = Moved::default();
        before.add(Kind::New, Sums { mrr: 1000, paused: 0, subscribers: 1, count: 1 });
        let groups =
            [(1, Kind::New, sums(500, 1)), (0, Kind::Expansion, sums(200, 0)), (2, Kind::Churn, sums(-1200, -1))];
        let trials = [(1, Trials { converted: 2, lost: 1 }), (1, Trials { converted: 1, lost: 0 })];
        let s = series(&range, Made { before: &before, groups: &groups, trials: &trials });
        assert_eq!(s.len(), 3);
        assert_eq!(s[1].trials, Trials { converted: 3, lost: 1 });
        assert_eq!((s[1].trial_conversion_rate(), s[0].trial_conversion_rate()), (Some(0.75), None));
        assert_eq!((s[0].start, s[0].end), (day(2026, 1, 1), day(2026, 1, 31)));
        assert_eq!((s[0].opening.mrr, s[0].closing.mrr, s[0].closing.subscribers), (1000, 1200, 1));
        assert_eq!(s[1].moved.of(Kind::New), sums(500, 1));
        assert_eq!((s[1].closing.mrr, s[1].closing.subscribers, s[1].closing.holders), (1700, 2, 2));
        assert_eq!(s[1].arpu(), Some(850));
        assert_eq!((s[2].closing.mrr, s[2].closing.subscribers), (500, 1));
        assert_eq!(s[2].subscriber_churn_rate(), Some(0.5));
        assert_eq!(s[2].revenue_churn_rate(), Some(0.7059), "1,200 of 1,700");
        assert_eq!(s[0].subscriber_churn_rate(), Some(0.0));
        assert_eq!(Period { opening: Standing::default(), ..s[0].clone() }.revenue_churn_rate(), None);
    }
}
