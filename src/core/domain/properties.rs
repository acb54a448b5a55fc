//! Property tests of the parsers and the billing schedule: for any input, not only the
//! cases the unit tests name.

use chrono::{DateTime, Datelike, Duration, FixedOffset, NaiveDate, TimeZone, Timelike, Utc};
use chrono_tz::Tz;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::billing::{Terms, add_interval, decline_retry_at, error_retry_at, outside_night};
use super::currency::{self, CURRENCIES, Currency, parse_major};
use super::errors::Errors;
use super::input::Reader;
use super::money::Money;
use super::product::parse_zoned_time;
use super::vocab::IntervalUnit;

/// Zones with daylight saving in either hemisphere, half- and quarter-hour offsets, a
/// half-hour DST shift, and offsets far from UTC.
const ZONES: &[Tz] = &[
    Tz::UTC,
    Tz::Europe__Berlin,
    Tz::America__New_York,
    Tz::America__St_Johns,
    Tz::Australia__Adelaide,
    Tz::Australia__Lord_Howe,
    Tz::Asia__Kolkata,
    Tz::Asia__Kathmandu,
    Tz::Pacific__Chatham,
    Tz::Pacific__Kiritimati,
    Tz::America__Santiago,
    Tz::Europe__Moscow,
];

fn zone() -> impl Strategy<Value = Tz> {
    proptest::sample::select(ZONES)
}

fn currency() -> impl Strategy<Value = Currency> {
    proptest::sample::select(CURRENCIES)
}

/// A moment from 1990 to 2090, to the second.
fn moment() -> impl Strategy<Value = DateTime<Utc>> {
    (631_152_000i64..3_786_825_600).prop_map(|s| Utc.timestamp_opt(s, 0).unwrap())
}

fn unit() -> impl Strategy<Value = IntervalUnit> {
    proptest::sample::select(IntervalUnit::ALL)
}

fn terms(interval: i32, unit: IntervalUnit, night: bool) -> Terms {
    Terms {
        amount: 100,
        interval,
        unit,
        trial: None,
        trial_as_first_payment: false,
        billing_cycles: None,
        attempts: 3,
        night,
    }
}

fn read_integer(value: Value) -> (Option<i64>, Errors) {
    let mut map = Map::new();
    map.insert("n".into(), value);
    let mut errors = Errors::default();
    let read = Reader::new(&map).integer("n", &mut errors);
    (read, errors)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    /// An amount written in major units, as pages show it, reads back as the same minimal
    /// units, with a decimal point or a decimal comma (except three decimals after a comma,
    /// `1,000`, which could be a thousand and is refused).
    #[test]
    fn amounts_in_major_units_read_back(amount in 0i64..1_000_000_000_000, currency in currency()) {
        let major = Money::new(amount, currency).major();
        prop_assert_eq!(parse_major(&major, currency), Some(amount));
        if currency.exponent > 0 && currency.exponent != 3 {
            prop_assert_eq!(parse_major(&major.replace('.', ","), currency), Some(amount));
        }
    }

    /// Any text either reads as a non-negative amount or is refused; nothing panics.
    #[test]
    fn any_text_is_an_amount_or_refused(raw in "\\PC{0,24}", currency in currency()) {
        if let Some(amount) = parse_major(&raw, currency) {
            prop_assert!(amount >= 0);
        }
    }

    /// Integers sent as JSON numbers or digit strings read as themselves; other text and
    /// fractions are refused with a message, never a panic.
    #[test]
    fn integers_read_as_numbers_or_digit_strings(n in any::<i64>(), raw in "\\PC{0,24}") {
        prop_assert_eq!(read_integer(json!(n)).0, Some(n));
        prop_assert_eq!(read_integer(json!(n.to_string())).0, Some(n));
        let (read, errors) = read_integer(json!(raw.clone()));
        prop_assert!(read.is_some() == errors.is_empty(), "{raw:?}: a value or an error");
        // Past 2^52 a double has no halves: n + 0.5 is a whole number there.
        if n.unsigned_abs() < 1 << 52 {
            let (read, errors) = read_integer(json!(n as f64 + 0.5));
            prop_assert!(read.is_none() && !errors.is_empty());
        }
    }

    /// Every known code is found and is three capital letters; any other text is not a currency.
    #[test]
    fn currencies_are_their_codes(code in "[A-Za-z]{0,4}") {
        match currency::find(&code) {
            Some(found) => {
                prop_assert_eq!(found.code, code.as_str());
                prop_assert!(currency::is_alpha3(&code));
            }
            None => prop_assert!(!CURRENCIES.iter().any(|c| c.code == code)),
        }
    }

    /// A time with any offset from -14:00 to +14:00 (to the minute) reads as its instant.
    #[test]
    fn zoned_times_read_as_their_instant(t in moment(), minutes in -14 * 60i32..=14 * 60) {
        let offset = FixedOffset::east_opt(minutes * 60).unwrap();
        let written = t.with_timezone(&offset).format("%Y-%m-%dT%H:%M:%S%:z").to_string();
        prop_assert_eq!(parse_zoned_time(&written), Some(t), "{}", written);
    }

    /// Any text is a zoned time or refused; nothing panics.
    #[test]
    fn any_text_is_a_zoned_time_or_refused(raw in "\\PC{0,30}") {
        let _ = parse_zoned_time(&raw);
    }

    /// Periods only move forward: each starts after the one before.
    #[test]
    fn each_period_starts_after_the_last(anchor in moment(), tz in zone(), interval in 1i32..=12, unit in unit()) {
        let terms = terms(interval, unit, false);
        let mut last = terms.period_start(anchor, 0, tz);
        prop_assert_eq!(last, anchor);
        for k in 1..=30 {
            let start = terms.period_start(anchor, k, tz);
            prop_assert!(start > last, "period {k}: {start} after {last}");
            last = start;
        }
    }

    /// Hours are exact; days and months keep the anchor's local time of day (unless that
    /// time does not exist that day, when clocks go forward), and months keep its day of
    /// the month, clamped to the month's last day.
    #[test]
    fn periods_keep_local_time_and_clamp_month_ends(anchor in moment(), tz in zone(), interval in 1i32..=12, unit in unit()) {
        let terms = terms(interval, unit, false);
        let local = anchor.with_timezone(&tz).naive_local();
        for k in 1..=24i64 {
            let start = terms.period_start(anchor, k, tz);
            if unit == IntervalUnit::Hour {
                prop_assert_eq!(start - anchor, Duration::hours(k * i64::from(interval)));
                continue;
            }
            let here = start.with_timezone(&tz).naive_local();
            let expected_date = match unit {
                IntervalUnit::Day => local.date() + Duration::days(k * i64::from(interval)),
                _ => {
                    let months = local.year() * 12 + local.month0() as i32 + (k as i32) * interval;
                    let (year, month0) = (months.div_euclid(12), months.rem_euclid(12) as u32);
                    let last = last_day(year, month0 + 1);
                    NaiveDate::from_ymd_opt(year, month0 + 1, local.day().min(last)).unwrap()
                }
            };
            let wanted = expected_date.and_time(local.time());
            if tz.from_local_datetime(&wanted).earliest().is_some() {
                prop_assert_eq!(here, wanted, "period {}", k);
            } else {
                // Skipped by the clocks: moved forward by the gap (an hour or less, or a whole
                // day where a zone once moved across the date line).
                prop_assert!(here > wanted && here - wanted <= Duration::hours(24), "{} for {}", here, wanted);
            }
        }
    }

    /// The next charge is always after the one just made.
    #[test]
    fn the_next_charge_is_after_the_last(anchor in moment(), tz in zone(), interval in 1i32..=12, unit in unit(),
                                         k in 0i64..50, late in 0i64..(400 * 24 * 3600)) {
        let terms = terms(interval, unit, false);
        let charged_at = terms.period_start(anchor, k, tz) + Duration::seconds(late);
        let next = terms.next_period_after(anchor, k, charged_at, tz);
        prop_assert!(next > k);
        prop_assert!(terms.period_start(anchor, next, tz) > charged_at);
        prop_assert!(next == k + 1 || terms.period_start(anchor, next - 1, tz) <= charged_at, "no period skipped needlessly");
    }

    /// With the night flag a charge never lands between 20:00 and 08:00 local, and waiting
    /// for the morning never moves it backwards or by more than a night.
    #[test]
    fn nothing_is_charged_at_night_with_the_flag(t in moment(), tz in zone()) {
        let moved = outside_night(t, tz);
        prop_assert!(moved >= t && moved - t <= Duration::hours(13));
        let hour = moved.with_timezone(&tz).hour();
        prop_assert!((8..20).contains(&hour), "{} local hour {}", moved, hour);
        prop_assert!(moved == t || moved.with_timezone(&tz).minute() == 0);
    }

    /// Retries come after the failure: a decline the next day (03:00, 08:00 with the flag),
    /// an error at the next hour (skipping the night with the flag).
    #[test]
    fn retries_come_after_the_failure(t in moment(), tz in zone(), night in any::<bool>()) {
        let decline = decline_retry_at(t, night, tz);
        prop_assert!(decline > t && decline - t <= Duration::hours(48));
        let local = decline.with_timezone(&tz);
        prop_assert!(local.date_naive() > t.with_timezone(&tz).date_naive());
        let error = error_retry_at(t, night, tz);
        let longest = Duration::hours(if night { 14 } else { 1 });
        prop_assert!(error > t && error - t <= longest, "{} after {}", error, t);
        if night {
            prop_assert!((8..20).contains(&error.with_timezone(&tz).hour()));
            prop_assert!((8..20).contains(&local.hour()));
        }
    }

    /// Adding no time changes nothing; adding more never goes back.
    #[test]
    fn adding_intervals_is_monotone(t in moment(), tz in zone(), unit in unit(), a in 0i64..500, b in 0i64..500) {
        let (small, large) = (a.min(b), a.max(b));
        prop_assert!(add_interval(t, small, unit, tz) <= add_interval(t, large, unit, tz));
    }
}

fn last_day(year: i32, month: u32) -> u32 {
    let next =
        if month == 12 { NaiveDate::from_ymd_opt(year + 1, 1, 1) } else { NaiveDate::from_ymd_opt(year, month + 1, 1) };
    next.unwrap().pred_opt().unwrap().day()
}
