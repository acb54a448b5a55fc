//! Revenue for the dashboard's overview: money taken today, this month and per day, in the
//! shop's time zone, kept apart per currency (amounts of different currencies never add).

use chrono::{DateTime, Datelike, Days, NaiveDate, TimeZone, Utc};
use chrono_tz::Tz;

use super::currency::Currency;
use super::money::Money;

/// Money taken: how much, when (or from when, for a stretch shorter than any zone's offset
/// step, 15 minutes), and by how many payments.
pub type Taken = (Money, DateTime<Utc>, i64);

/// Totals per currency, largest first.
pub type Totals = Vec<Money>;

/// The overview's figures.
#[derive(Debug, PartialEq)]
pub struct Revenue {
    pub today: Totals,
    pub month: Totals,
    /// Every currency with revenue over the days charted, the one with most payments first,
    /// each with one total per day, oldest first, ending today.
    pub daily: Vec<(Currency, Vec<(NaiveDate, i64)>)>,
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
pub fn summarize(payments: impl IntoIterator<Item = Taken>, now: DateTime<Utc>, tz: Tz, days: u64) -> Revenue {
    let today = now.with_timezone(&tz).date_naive();
    let first_day = first_day(today, days);
    let (mut day_totals, mut month_totals) = (Vec::new(), Vec::new());
    let mut counts = Vec::<(Currency, i64)>::new();
    let mut per_day: Vec<(Currency, NaiveDate, i64)> = Vec::new();
    for (Money { amount, currency }, at, taken_by) in payments {
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
            add(&mut counts, currency, taken_by);
            match per_day.iter_mut().find(|(c, d, _)| *c == currency && *d == date) {
                Some(entry) => entry.2 = entry.2.saturating_add(amount),
                None => per_day.push((currency, date, amount)),
            }
        }
    }
    let of = |currency: Currency| {
        let days = first_day.iter_days().take_while(|d| *d <= today);
        let totals = days.map(|d| {
            let on_day = per_day.iter().filter(|(c, day, _)| *c == currency && *day == d);
            (d, on_day.fold(0i64, |sum, (_, _, a)| sum.saturating_add(*a)))
        });
        totals.collect::<Vec<_>>()
    };
    let daily = largest_first(counts)
        .into_iter()
        .map(|(c, _)| (c, of(c)))
        .filter(|(_, days)| days.iter().any(|(_, amount)| *amount != 0))
        .collect();
    let money =
        |totals: Vec<(Currency, i64)>| largest_first(totals).into_iter().map(|(c, a)| Money::new(a, c)).collect();
    Revenue { today: money(day_totals), month: money(month_totals), daily }
}

/// Adds `value` to the total of `currency` (sums stop at the largest amount, never wrap).
fn add(totals: &mut Vec<(Currency, i64)>, currency: Currency, value: i64) {
    match totals.iter_mut().find(|(c, _)| *c == currency) {
        Some(entry) => entry.1 = entry.1.saturating_add(value),
        None => totals.push((currency, value)),
    }
}

fn largest_first(mut totals: Vec<(Currency, i64)>) -> Vec<(Currency, i64)> {
    totals.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.code.cmp(b.0.code)));
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
        let m = |amount, code| Money::of(amount, code).unwrap();
        let payments = [
            (m(990, "EUR"), at(2026, 11, 23, 9), 1),
            (m(500, "USD"), at(2026, 11, 23, 10), 1),
            // 23:30 UTC on the 22nd is 00:30 on the 23rd in Berlin.
            (m(100, "EUR"), Utc.with_ymd_and_hms(2026, 11, 22, 23, 30, 0).unwrap(), 1),
            (m(2000, "EUR"), at(2026, 11, 2, 12), 1),
            (m(7000, "EUR"), at(2026, 10, 31, 12), 1),
        ];
        let r = summarize(payments, now, tz, 30);
        assert_eq!(r.today, vec![m(1090, "EUR"), m(500, "USD")]);
        assert_eq!(r.month, vec![m(3090, "EUR"), m(500, "USD")]);
        let codes: Vec<&str> = r.daily.iter().map(|(c, _)| c.code).collect();
        assert_eq!(codes, ["EUR", "USD"], "every currency with revenue, most payments first");
        let eur = &r.daily[0].1;
        assert_eq!(eur.len(), 30);
        assert_eq!(eur.first().unwrap().0, NaiveDate::from_ymd_opt(2026, 10, 25).unwrap());
        assert_eq!(eur.last().unwrap(), &(NaiveDate::from_ymd_opt(2026, 11, 23).unwrap(), 1090));
        assert_eq!(eur.iter().map(|(_, a)| a).sum::<i64>(), 1090 + 2000 + 7000);
        assert_eq!(r.daily[1].1.iter().map(|(_, a)| a).sum::<i64>(), 500);
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
    fn no_payments_give_no_chart() {
        let r = summarize([], at(2026, 3, 1, 0), Tz::UTC, 30);
        assert!(r.today.is_empty() && r.month.is_empty() && r.daily.is_empty());
    }
}
