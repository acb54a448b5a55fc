//! Retention and cohorts, month by month: each customer's MRR at each month's end, made from
//! the ledger's movements in the order they happened (docs/revenue.md).

use std::collections::HashMap;

use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;

use super::Kind;
use super::figures::{Range, ratio};
use super::subscribers::Months;

/// One month's revenue retention: of the customers with MRR at its start, their MRR then and
/// at its end, and what they kept of it (each no more than they started with).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retention {
    pub start: NaiveDate,
    pub end: NaiveDate,
    pub customers: i64,
    pub starting_mrr: i64,
    pub ending_mrr: i64,
    pub kept_mrr: i64,
}

impl Retention {
    /// Net revenue retention: their MRR at the end ÷ at the start.
    pub fn net(&self) -> Option<f64> {
        ratio(self.ending_mrr, self.starting_mrr)
    }

    /// Gross revenue retention: what they kept ÷ their MRR at the start; never above 1.
    pub fn gross(&self) -> Option<f64> {
        ratio(self.kept_mrr, self.starting_mrr)
    }
}

/// The customers whose first paid charge (their `new` movement) fell in one month, and how
/// many of them held MRR, and how much, at the end of that month and each month after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cohort {
    pub month: NaiveDate,
    pub customers: i64,
    /// From the cohort's own month on: each month's first day, subscribers and MRR at its end.
    pub months: Vec<(NaiveDate, i64, i64)>,
}

/// Where one customer stands while the movements are read.
#[derive(Default)]
struct Customer {
    /// The month of its `new` movement, as the place of its cohort in the range's months.
    cohort: Option<usize>,
    mrr: i64,
    at_start: i64,
}

/// Reads a ledger's movements in the order they happened and answers each month's
/// retention and the cohorts of the range's months. `range` is cut into months (its first
/// one may start on a later day than the 1st, its last end before the month does).
pub struct Reader {
    tz: Tz,
    /// Each month's first day, and the instant each month ends (the next one's start).
    starts: Vec<NaiveDate>,
    ends: Vec<DateTime<Utc>>,
    /// The instant the range starts.
    from: DateTime<Utc>,
    /// The month being read: `None` before the range starts.
    month: Option<usize>,
    customers: HashMap<String, Customer>,
    retention: Vec<Retention>,
    cohorts: Vec<Cohort>,
}

impl Reader {
    pub fn new(range: &Range, tz: Tz) -> Reader {
        let Months { starts, ends } = Months::of(range, tz);
        let (from, _) = range.instants(tz);
        let cohorts = starts
            .iter()
            .enumerate()
            .map(|(i, s)| Cohort { month: *s, customers: 0, months: starts[i..].iter().map(|m| (*m, 0, 0)).collect() })
            .collect();
        Reader { tz, starts, ends, from, month: None, customers: HashMap::new(), retention: Vec::new(), cohorts }
    }

    /// Reads one movement of `customer`, at `at` (no earlier than the one read before).
    pub fn read(&mut self, customer: &str, at: DateTime<Utc>, kind: Kind, mrr: i64) {
        self.reach(at);
        let cohort = match (kind, self.month) {
            (Kind::New, Some(_)) => self.month_of(at),
            _ => None,
        };
        let c = self.customers.entry(customer.to_owned()).or_default();
        c.mrr = c.mrr.saturating_add(mrr);
        if let Some(i) = cohort.filter(|_| c.cohort.is_none()) {
            c.cohort = Some(i);
            self.cohorts[i].customers += 1;
        }
    }

    /// The month (its place in the range) that holds `at`.
    fn month_of(&self, at: DateTime<Utc>) -> Option<usize> {
        let day = at.with_timezone(&self.tz).date_naive();
        let i = self.starts.partition_point(|s| *s <= day).checked_sub(1)?;
        (at < self.ends[i]).then_some(i)
    }

    /// Closes every month that ended by `at`, and opens the range at its start.
    fn reach(&mut self, at: DateTime<Utc>) {
        if self.month.is_none() && at >= self.from {
            self.open();
        }
        while let Some(i) = self.month.filter(|i| *i < self.ends.len() && at >= self.ends[*i]) {
            self.close(i);
            self.month = Some(i + 1);
        }
    }

    fn open(&mut self) {
        for c in self.customers.values_mut() {
            c.at_start = c.mrr;
        }
        self.month = Some(0);
    }

    /// The end of month `i`: its retention, and its cell of each cohort.
    fn close(&mut self, i: usize) {
        let end = self.starts.get(i + 1).and_then(|d| d.pred_opt()).unwrap_or(self.starts[i]);
        let mut r = Retention { start: self.starts[i], end, customers: 0, starting_mrr: 0, ending_mrr: 0, kept_mrr: 0 };
        for c in self.customers.values_mut() {
            if c.at_start > 0 {
                r.customers += 1;
                r.starting_mrr = r.starting_mrr.saturating_add(c.at_start);
                r.ending_mrr = r.ending_mrr.saturating_add(c.mrr.max(0));
                r.kept_mrr = r.kept_mrr.saturating_add(c.mrr.clamp(0, c.at_start));
            }
            if let Some(cell) = c.cohort.and_then(|k| self.cohorts[k].months.get_mut(i.checked_sub(k)?)) {
                cell.1 += i64::from(c.mrr > 0);
                cell.2 = cell.2.saturating_add(c.mrr.max(0));
            }
            c.at_start = c.mrr;
        }
        self.retention.push(r);
    }

    /// The retention of each month of the range and its cohorts, once every movement before
    /// the range's end is read.
    pub fn finish(mut self, last_day: NaiveDate) -> (Vec<Retention>, Vec<Cohort>) {
        self.reach(DateTime::<Utc>::MAX_UTC);
        if let Some(last) = self.retention.last_mut() {
            last.end = last_day;
        }
        (self.retention, self.cohorts)
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn day(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    fn at(m: u32, d: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, m, d, 12, 0, 0).unwrap()
    }

    #[test]
    fn customers_are_followed_month_by_month_from_their_first_paid_month() {
        let range = Range::parse(Some("2026-02-01"), Some("2026-04-30"), None, day(2026, 12, 6)).unwrap();
        let mut r = Reader::new(&range, chrono_tz::UTC);
        // Ann came in December, before the range; Bob in February, Cy in March.
        r.read("ann", Utc.with_ymd_and_hms(2025, 12, 5, 0, 0, 0).unwrap(), Kind::New, 1000);
        r.read("bob", at(2, 3), Kind::New, 500);
        r.read("ann", at(2, 10), Kind::Expansion, 500);
        r.read("cy", at(3, 1), Kind::New, 300);
        r.read("bob", at(3, 20), Kind::Churn, -500);
        r.read("ann", at(4, 2), Kind::Contraction, -1200);
        r.read("bob", at(4, 9), Kind::Reactivation, 800);
        r.read("dan", at(5, 1), Kind::New, 999);
        let (retention, cohorts) = r.finish(day(2026, 4, 30));
        let kept: Vec<(i64, i64, i64, i64)> =
            retention.iter().map(|r| (r.customers, r.starting_mrr, r.ending_mrr, r.kept_mrr)).collect();
        assert_eq!(kept, vec![(1, 1000, 1500, 1000), (2, 2000, 1500, 1500), (2, 1800, 600, 600)]);
        assert_eq!((retention[0].net(), retention[0].gross()), (Some(1.5), Some(1.0)));
        assert_eq!((retention[2].start, retention[2].end), (day(2026, 4, 1), day(2026, 4, 30)));
        assert_eq!(cohorts.len(), 3);
        assert_eq!((cohorts[0].month, cohorts[0].customers), (day(2026, 2, 1), 1));
        assert_eq!(
            cohorts[0].months,
            vec![(day(2026, 2, 1), 1, 500), (day(2026, 3, 1), 0, 0), (day(2026, 4, 1), 1, 800)],
            "Bob churned in March and came back in April"
        );
        assert_eq!(cohorts[1].months, vec![(day(2026, 3, 1), 1, 300), (day(2026, 4, 1), 1, 300)]);
        assert_eq!((cohorts[2].customers, cohorts[2].months.clone()), (0, vec![(day(2026, 4, 1), 0, 0)]));
    }
}
