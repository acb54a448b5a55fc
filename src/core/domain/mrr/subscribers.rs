//! MRR per subscriber per month (the export of docs/revenue.md): each customer's MRR at the
//! end of each month of a range, from the customer's movements.

use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;

use super::figures::{Interval, Range};

/// A range cut into months in a time zone: each month's first day (the first one from the
/// range's first day) and the instant it ends (the next one's start, the last one's the
/// range's end).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Months {
    pub starts: Vec<NaiveDate>,
    pub ends: Vec<DateTime<Utc>>,
}

impl Months {
    pub fn of(range: &Range, tz: Tz) -> Months {
        let by_month = Range { interval: Interval::Month, ..*range };
        Months { starts: range.month_starts(), ends: by_month.bounds(tz).into_iter().map(|(_, end)| end).collect() }
    }

    /// A customer's MRR at each month's end, from its movements `(when, change of MRR)` in the
    /// order they happened.
    pub fn at_ends(&self, moved: &[(DateTime<Utc>, i64)]) -> Vec<i64> {
        let mut mrr = 0i64;
        let mut read = moved.iter().peekable();
        self.ends
            .iter()
            .map(|end| {
                while let Some((_, change)) = read.next_if(|(at, _)| at < end) {
                    mrr = mrr.saturating_add(*change);
                }
                mrr
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    #[test]
    fn a_customers_mrr_is_read_at_each_months_end_in_the_shops_zone() {
        let tz: Tz = "Europe/Berlin".parse().unwrap();
        let today = NaiveDate::from_ymd_opt(2026, 12, 6).unwrap();
        let range = Range::parse(Some("2026-01-15"), Some("2026-03-10"), None, today).unwrap();
        let months = Months::of(&range, tz);
        assert_eq!(months.starts.len(), 3);
        assert_eq!(months.ends[0], Utc.with_ymd_and_hms(2026, 1, 31, 23, 0, 0).unwrap());
        assert_eq!(months.ends[2], Utc.with_ymd_and_hms(2026, 3, 10, 23, 0, 0).unwrap(), "the range's end");
        let at = |m, d, h| Utc.with_ymd_and_hms(2026, m, d, h, 0, 0).unwrap();
        let moved = [
            (at(1, 2, 9), 1000),
            // 23:30 UTC on 31 January is February in Berlin.
            (Utc.with_ymd_and_hms(2026, 1, 31, 23, 30, 0).unwrap(), 500),
            (at(3, 20, 9), -1500),
        ];
        assert_eq!(months.at_ends(&moved), vec![1000, 1500, 1500]);
        assert_eq!(months.at_ends(&[]), vec![0, 0, 0]);
    }
}
