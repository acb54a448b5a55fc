//! Revenue for the dashboard's overview: money taken today, this month and per day, in the
//! shop's time zone, kept apart per currency (amounts of different currencies never add).

use chrono::{DateTime, Datelike, Days, NaiveDate, TimeZone, Utc};
use chrono_tz::Tz;

/// One successful payment: amount in minimal units, currency, when it was made.
pub type Taken<'a> = (i64, &'a str, DateTime<Utc>);

/// Totals per currency, largest first.
pub type Totals = Vec<(String, i64)>;

/// The overview's figures.
#[derive(Debug, PartialEq)]
pub struct Revenue {
    pub today: Totals,
    pub month: Totals,
    /// The currency the chart shows: the one with most payments over the days charted.
    pub chart_currency: Option<String>,
    /// One total per day of `chart_currency`, oldest first, ending today.
    pub daily: Vec<(NaiveDate, i64)>,
}

/// The first instant whose payments [`summarize`] counts at `now` for `days` days: the start
/// of the month or of the first charted day, whichever is earlier.
pub fn since(now: DateTime<Utc>, tz: Tz, days: u64) -> Option<DateTime<Utc>> {
    let today = now.with_timezone(&tz).date_naive();
    let first = first_day(today, days).min(today.with_day(1).unwrap_or(today));
    tz.from_local_datetime(&first.and_hms_opt(0, 0, 0)?).earliest().map(|t| t.to_utc())
}

fn first_day(today: NaiveDate, days: u64) -> NaiveDate {
    today.checked_sub_days(Days::new(days.saturating_sub(1))).unwrap_or(today)
}

/// Sums `payments` into today's, this month's and the last `days` days' revenue at `now`
/// in `tz`.
pub fn summarize<'a>(payments: impl IntoIterator<Item = Taken<'a>>, now: DateTime<Utc>, tz: Tz, days: u64) -> Revenue {
    let today = now.with_timezone(&tz).date_naive();
    let first_day = first_day(today, days);
    let (mut day_totals, mut month_totals, mut counts) = (Totals::new(), Totals::new(), Vec::<(String, u64)>::new());
    let mut per_day: Vec<(String, NaiveDate, i64)> = Vec::new();
    for (amount, currency, at) in payments {
        let date = at.with_timezone(&tz).date_naive();
        if date > today {
            continue;
        }
        if date == today {
            add(&mut day_totals, currency, amount);
        }
        if (date.year(), date.month()) == (today.year(), today.month()) {
            add(&mut month_totals, currency, amount);
        }
        if date >= first_day {
            add(&mut counts, currency, 1);
            match per_day.iter_mut().find(|(c, d, _)| c == currency && *d == date) {
                Some(entry) => entry.2 += amount,
                None => per_day.push((currency.to_string(), date, amount)),
            }
        }
    }
    let chart_currency = largest_first(counts).into_iter().next().map(|(c, _)| c);
    let daily = first_day
        .iter_days()
        .take_while(|d| *d <= today)
        .map(|d| {
            let total = per_day
                .iter()
                .filter(|(c, day, _)| Some(c) == chart_currency.as_ref() && *day == d)
                .map(|(_, _, a)| a)
                .sum();
            (d, total)
        })
        .collect();
    Revenue { today: largest_first(day_totals), month: largest_first(month_totals), chart_currency, daily }
}

fn add<T: std::ops::AddAssign + Copy>(totals: &mut Vec<(String, T)>, currency: &str, value: T) {
    match totals.iter_mut().find(|(c, _)| c == currency) {
        Some(entry) => entry.1 += value,
        None => totals.push((currency.to_string(), value)),
    }
}

fn largest_first<T: Ord + Copy>(mut totals: Vec<(String, T)>) -> Vec<(String, T)> {
    totals.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    totals
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn at(y: i32, m: u32, d: u32, h: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(y, m, d, h, 0, 0).unwrap()
    }

    #[test]
    fn today_and_this_month_are_counted_in_the_shops_zone_per_currency() {
        let tz: Tz = "Europe/Berlin".parse().unwrap();
        let now = at(2026, 11, 23, 12);
        let payments = [
            (990, "EUR", at(2026, 11, 23, 9)),
            (500, "USD", at(2026, 11, 23, 10)),
            // 23:30 UTC on the 22nd is 00:30 on the 23rd in Berlin.
            (100, "EUR", Utc.with_ymd_and_hms(2026, 11, 22, 23, 30, 0).unwrap()),
            (2000, "EUR", at(2026, 11, 2, 12)),
            (7000, "EUR", at(2026, 10, 31, 12)),
        ];
        let r = summarize(payments, now, tz, 30);
        assert_eq!(r.today, vec![("EUR".to_string(), 1090), ("USD".to_string(), 500)]);
        assert_eq!(r.month, vec![("EUR".to_string(), 3090), ("USD".to_string(), 500)]);
        assert_eq!(r.chart_currency.as_deref(), Some("EUR"));
        assert_eq!(r.daily.len(), 30);
        assert_eq!(r.daily.first().unwrap().0, NaiveDate::from_ymd_opt(2026, 10, 25).unwrap());
        assert_eq!(r.daily.last().unwrap(), &(NaiveDate::from_ymd_opt(2026, 11, 23).unwrap(), 1090));
        assert_eq!(r.daily.iter().map(|(_, a)| a).sum::<i64>(), 1090 + 2000 + 7000);
    }

    #[test]
    fn the_window_starts_at_the_earlier_of_the_month_and_the_charted_days() {
        let berlin: Tz = "Europe/Berlin".parse().unwrap();
        // Oct 25 00:00 in Berlin is still summer time (+02:00).
        assert_eq!(
            since(at(2026, 11, 23, 12), berlin, 30),
            Some(Utc.with_ymd_and_hms(2026, 10, 24, 22, 0, 0).unwrap())
        );
        assert_eq!(since(at(2026, 11, 30, 12), Tz::UTC, 7), Some(at(2026, 11, 1, 0)), "the month began earlier");
    }

    #[test]
    fn no_payments_give_an_empty_chart_of_zeros() {
        let r = summarize([], at(2026, 3, 1, 0), Tz::UTC, 30);
        assert!(r.today.is_empty() && r.month.is_empty() && r.chart_currency.is_none());
        assert!(r.daily.iter().all(|(_, a)| *a == 0) && r.daily.len() == 30);
    }
}
