use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;
use chrono_tz::{Asia::Kolkata, Europe::Berlin, UTC};

use super::*;

fn at(s: &str) -> DateTime<Utc> {
    s.parse().unwrap()
}

fn local(tz: Tz, t: DateTime<Utc>) -> String {
    t.with_timezone(&tz).format("%Y-%m-%d %H:%M %Z").to_string()
}

fn monthly() -> Terms {
    Terms {
        amount: 990,
        interval: 1,
        unit: IntervalUnit::Month,
        trial: None,
        trial_as_first_payment: false,
        billing_cycles: None,
        attempts: 3,
        night: false,
    }
}

fn active(period: i64) -> Progress {
    Progress {
        state: State::Active,
        period,
        paid_cycles: period as i32,
        failed_attempts: 0,
        has_success: true,
        renew_at: None,
        active_to: None,
        cancel_at_period_end: false,
        pause_at_period_end: false,
        change_now: None,
        change_at_period_end: false,
    }
}

#[test]
fn months_from_the_31st_land_on_the_last_day_and_return() {
    let anchor = at("2026-01-31T09:00:00Z"); // 10:00 in Berlin
    let terms = monthly();
    let starts: Vec<String> = (0..5).map(|k| local(Berlin, terms.period_start(anchor, k, Berlin))).collect();
    assert_eq!(
        starts,
        [
            "2026-01-31 10:00 CET",
            "2026-02-28 10:00 CET",
            "2026-03-31 10:00 CEST",
            "2026-04-30 10:00 CEST",
            "2026-05-31 10:00 CEST"
        ]
    );
    let leap = terms.period_start(at("2028-01-31T12:00:00Z"), 1, UTC);
    assert_eq!(leap, at("2028-02-29T12:00:00Z"));
}

#[test]
fn days_and_months_keep_the_local_time_across_daylight_saving() {
    let daily = Terms { unit: IntervalUnit::Day, ..monthly() };
    let anchor = at("2026-03-28T08:30:00Z"); // 09:30 CET, the day before clocks go forward
    assert_eq!(local(Berlin, daily.period_start(anchor, 1, Berlin)), "2026-03-29 09:30 CEST");
    assert_eq!(daily.period_start(anchor, 1, Berlin) - anchor, Duration::hours(23));
    let autumn = at("2026-10-24T07:30:00Z"); // 09:30 CEST, the day before clocks go back
    assert_eq!(daily.period_start(autumn, 1, Berlin) - autumn, Duration::hours(25));
}

#[test]
fn hours_are_exact_across_daylight_saving() {
    let hourly = Terms { unit: IntervalUnit::Hour, interval: 24, ..monthly() };
    let anchor = at("2026-03-28T08:30:00Z");
    assert_eq!(hourly.period_start(anchor, 1, Berlin), at("2026-03-29T08:30:00Z"));
    assert_eq!(local(Berlin, hourly.period_start(anchor, 1, Berlin)), "2026-03-29 10:30 CEST");
}

#[test]
fn skipped_local_times_move_forward_and_repeated_ones_take_the_first() {
    let gap = NaiveDate::from_ymd_opt(2026, 3, 29).unwrap().and_hms_opt(2, 30, 0).unwrap();
    assert_eq!(resolve_local(Berlin, gap), at("2026-03-29T01:30:00Z"));
    assert_eq!(local(Berlin, resolve_local(Berlin, gap)), "2026-03-29 03:30 CEST");
    let twice = NaiveDate::from_ymd_opt(2026, 10, 25).unwrap().and_hms_opt(2, 30, 0).unwrap();
    assert_eq!(resolve_local(Berlin, twice), at("2026-10-25T00:30:00Z"));
}

#[test]
fn a_monthly_charge_at_02_30_on_the_day_clocks_go_forward_runs_at_03_30() {
    let anchor = at("2026-02-28T01:30:00Z"); // 02:30 CET
    assert_eq!(local(Berlin, monthly().period_start(anchor, 1, Berlin)), "2026-03-28 02:30 CET");
    let daily = Terms { unit: IntervalUnit::Day, ..monthly() };
    assert_eq!(local(Berlin, daily.period_start(anchor, 29, Berlin)), "2026-03-29 03:30 CEST");
}

#[test]
fn the_night_window_is_08_to_20_local() {
    for (t, expected) in [
        ("2026-06-10T05:59:00Z", "2026-06-10 08:00 CEST"), // 07:59
        ("2026-06-10T06:00:00Z", "2026-06-10 08:00 CEST"), // 08:00 stays
        ("2026-06-10T17:59:00Z", "2026-06-10 19:59 CEST"), // 19:59 stays
        ("2026-06-10T18:00:00Z", "2026-06-11 08:00 CEST"), // 20:00 waits
        ("2026-06-10T22:30:00Z", "2026-06-11 08:00 CEST"), // 00:30 waits for the same morning
    ] {
        assert_eq!(local(Berlin, outside_night(at(t), Berlin)), expected, "{t}");
    }
}

#[test]
fn declines_are_retried_the_next_day_at_03_00_or_08_00() {
    let now = at("2026-06-10T21:15:00Z"); // 23:15 in Berlin
    assert_eq!(local(Berlin, decline_retry_at(now, false, Berlin)), "2026-06-11 03:00 CEST");
    assert_eq!(local(Berlin, decline_retry_at(now, true, Berlin)), "2026-06-11 08:00 CEST");
    let after_midnight = at("2026-06-10T22:15:00Z"); // 00:15 on the 11th
    assert_eq!(local(Berlin, decline_retry_at(after_midnight, false, Berlin)), "2026-06-12 03:00 CEST");
}

#[test]
fn errors_are_retried_at_the_start_of_the_next_hour_skipping_the_night() {
    let now = at("2026-06-10T10:17:45Z");
    assert_eq!(error_retry_at(now, false, UTC), at("2026-06-10T11:00:00Z"));
    assert_eq!(error_retry_at(at("2026-06-10T11:00:00Z"), false, UTC), at("2026-06-10T12:00:00Z"));
    let evening = at("2026-06-10T17:20:00Z"); // 19:20 in Berlin
    assert_eq!(local(Berlin, error_retry_at(evening, false, Berlin)), "2026-06-10 20:00 CEST");
    assert_eq!(local(Berlin, error_retry_at(evening, true, Berlin)), "2026-06-11 08:00 CEST");
    // Kolkata is UTC+05:30: the next local hour starts at :30 UTC.
    assert_eq!(error_retry_at(at("2026-06-10T10:40:00Z"), false, Kolkata), at("2026-06-10T11:30:00Z"));
}

#[test]
fn a_decline_with_an_earlier_success_is_retried_until_the_attempts_are_used_up() {
    let terms = monthly();
    let anchor = at("2026-01-10T12:00:00Z");
    let now = at("2026-03-10T12:00:00Z");
    let first = after_charge(&terms, &active(2), Outcome::Declined, anchor, now, UTC);
    assert_eq!((first.state, first.failed_attempts), (State::FailedAttempt, 1));
    assert_eq!(first.renew_at, Some(at("2026-03-11T03:00:00Z")));
    assert_eq!(first.period, 2, "the retry is for the same period");
    let second = after_charge(&terms, &first, Outcome::Declined, anchor, at("2026-03-11T03:00:00Z"), UTC);
    assert_eq!((second.state, second.renew_at), (State::FailedAttempt, Some(at("2026-03-12T03:00:00Z"))));
    let third = after_charge(&terms, &second, Outcome::Declined, anchor, at("2026-03-12T03:00:00Z"), UTC);
    assert_eq!((third.state, third.renew_at, third.failed_attempts), (State::Failed, None, 3));

    let five = Terms { attempts: 5, ..terms };
    let mut p = active(2);
    for n in 1..=5 {
        p = after_charge(&five, &p, Outcome::Declined, anchor, now, UTC);
        assert_eq!(p.state, if n < 5 { State::FailedAttempt } else { State::Failed }, "attempt {n}");
    }
}

#[test]
fn processing_errors_are_retried_hourly_and_end_in_error() {
    let terms = monthly();
    let anchor = at("2026-01-10T12:00:00Z");
    let mut p = active(1);
    let mut now = at("2026-02-10T12:00:00Z");
    for n in 1..=3 {
        p = after_charge(&terms, &p, Outcome::Error, anchor, now, UTC);
        if n < 3 {
            assert_eq!(p.state, State::FailedAttempt);
            assert_eq!(p.renew_at, Some(now + Duration::hours(1)));
            now = p.renew_at.unwrap();
        }
    }
    assert_eq!((p.state, p.renew_at), (State::Error, None));
}

#[test]
fn a_success_after_a_retry_pays_the_period_and_resets_the_attempts() {
    let terms = monthly();
    let anchor = at("2026-01-10T12:00:00Z");
    let failed = after_charge(&terms, &active(1), Outcome::Declined, anchor, at("2026-02-10T12:00:00Z"), UTC);
    let paid = after_charge(&terms, &failed, Outcome::Succeeded, anchor, at("2026-02-11T03:00:00Z"), UTC);
    assert_eq!((paid.state, paid.failed_attempts, paid.period, paid.paid_cycles), (State::Active, 0, 2, 2));
    assert_eq!(paid.renew_at, Some(at("2026-03-10T12:00:00Z")), "the schedule does not move");
}

#[test]
fn without_an_earlier_success_nothing_is_retried() {
    let terms = monthly();
    let anchor = at("2026-01-10T12:00:00Z");
    let first = after_charge(&terms, &begin(&terms), Outcome::Declined, anchor, anchor, UTC);
    assert_eq!((first.state, first.renew_at), (State::Failed, None));
    let first = after_charge(&terms, &begin(&terms), Outcome::Error, anchor, anchor, UTC);
    assert_eq!(first.state, State::Error);
}

#[test]
fn a_trial_counts_as_an_earlier_success_only_with_as_first_payment() {
    let start = at("2026-01-01T10:00:00Z");
    for (as_first, expected) in [(true, State::FailedAttempt), (false, State::Failed)] {
        let terms = Terms { trial: Some((100, 7, IntervalUnit::Day)), trial_as_first_payment: as_first, ..monthly() };
        let anchor = terms.anchor(start, UTC);
        assert_eq!(anchor, at("2026-01-08T10:00:00Z"));
        let begun = begin(&terms);
        assert_eq!(due(&terms, &begun), Due::Charge { amount: 100, period: -1, attempt: 1 });
        let trial = after_charge(&terms, &begun, Outcome::Succeeded, anchor, start, UTC);
        assert_eq!((trial.state, trial.renew_at, trial.active_to), (State::Trial, Some(anchor), Some(anchor)));
        assert_eq!(due(&terms, &trial), Due::Charge { amount: 990, period: 0, attempt: 1 });
        let after = after_charge(&terms, &trial, Outcome::Declined, anchor, anchor, UTC);
        assert_eq!(after.state, expected, "as_first_payment {as_first}");
    }
}

#[test]
fn billing_cycles_end_the_subscription_when_the_last_paid_period_runs_out() {
    let terms = Terms { billing_cycles: Some(2), ..monthly() };
    let anchor = at("2026-01-10T12:00:00Z");
    let mut p = begin(&terms);
    for k in 0..2 {
        assert!(matches!(due(&terms, &p), Due::Charge { period, .. } if period == k));
        p = after_charge(&terms, &p, Outcome::Succeeded, anchor, terms.period_start(anchor, k, UTC), UTC);
    }
    assert_eq!(p.paid_cycles, 2);
    assert_eq!(p.renew_at, Some(at("2026-03-10T12:00:00Z")));
    assert_eq!(p.active_to, p.renew_at);
    assert_eq!(due(&terms, &p), Due::Expire);
    assert_eq!(expire(&p).state, State::Expired);
    assert_eq!(expire(&p).renew_at, None);
}

#[test]
fn a_charge_due_at_night_waits_for_morning_and_the_schedule_keeps_its_time() {
    let terms = Terms { night: true, unit: IntervalUnit::Day, ..monthly() };
    let anchor = at("2026-06-01T20:30:00Z"); // 22:30 in Berlin
    let p = after_charge(&terms, &begin(&terms), Outcome::Succeeded, anchor, anchor, Berlin);
    assert_eq!(local(Berlin, p.renew_at.unwrap()), "2026-06-03 08:00 CEST");
    assert_eq!(local(Berlin, p.active_to.unwrap()), "2026-06-02 22:30 CEST");
    let next = after_charge(&terms, &p, Outcome::Succeeded, anchor, p.renew_at.unwrap(), Berlin);
    assert_eq!(next.period, 2);
    assert_eq!(local(Berlin, next.active_to.unwrap()), "2026-06-03 22:30 CEST");
}

#[test]
fn an_hourly_plan_at_night_charges_again_in_the_morning_without_a_backlog() {
    let terms = Terms { night: true, unit: IntervalUnit::Hour, ..monthly() };
    let anchor = at("2026-06-01T16:30:00Z"); // 18:30 in Berlin
    let mut p = after_charge(&terms, &begin(&terms), Outcome::Succeeded, anchor, anchor, Berlin);
    let mut charged = vec![local(Berlin, anchor)];
    while charged.len() < 5 {
        let now = p.renew_at.unwrap();
        charged.push(local(Berlin, now));
        p = after_charge(&terms, &p, Outcome::Succeeded, anchor, now, Berlin);
    }
    assert_eq!(
        charged,
        [
            "2026-06-01 18:30 CEST",
            "2026-06-01 19:30 CEST",
            "2026-06-02 08:00 CEST",
            "2026-06-02 08:30 CEST",
            "2026-06-02 09:30 CEST"
        ]
    );
}

#[test]
fn after_downtime_the_missed_charge_is_made_once() {
    let terms = monthly();
    let anchor = at("2026-01-10T12:00:00Z");
    let back = at("2026-05-02T09:00:00Z"); // down since before the February charge
    let p = after_charge(&terms, &active(1), Outcome::Succeeded, anchor, back, UTC);
    assert_eq!(p.paid_cycles, 2, "one charge");
    assert_eq!(p.renew_at, Some(at("2026-05-10T12:00:00Z")), "then the next period on schedule");
}

#[test]
fn states_round_trip() {
    for s in ["redirecting", "trial", "active", "failed_attempt", "failed", "error", "canceled", "expired"] {
        assert_eq!(State::parse(s).unwrap().as_str(), s);
    }
    assert!(State::FailedAttempt.is_billing() && !State::Canceled.is_billing());
}

#[test]
fn a_subscriber_is_told_todays_charge_and_when_the_plan_is_charged_next() {
    let now = at("2026-01-31T10:00:00Z");
    assert_eq!(monthly().first_charges(now, UTC), (990, at("2026-02-28T10:00:00Z")));
    let trial = Terms { trial: Some((0, 14, IntervalUnit::Day)), ..monthly() };
    assert_eq!(trial.first_charges(now, UTC), (0, at("2026-02-14T10:00:00Z")));
    let hourly = Terms { unit: IntervalUnit::Hour, interval: 6, ..monthly() };
    assert_eq!(hourly.first_charges(now, Berlin), (990, at("2026-01-31T16:00:00Z")));
}

#[test]
fn a_renewal_the_bank_wants_the_customer_for_waits_for_them_and_their_charge_is_the_next_attempt() {
    let terms = monthly();
    let now = at("2026-03-01T10:00:00Z");
    let waiting = after_charge(&terms, &active(2), Outcome::NeedsCustomer, at("2026-01-01T10:00:00Z"), now, UTC);
    assert_eq!((waiting.state, waiting.renew_at, waiting.failed_attempts), (State::Redirecting, None, 1));
    assert_eq!(due(&terms, &waiting), Due::Charge { amount: 990, period: 2, attempt: 2 }, "a key of its own");
    let paid = after_charge(&terms, &waiting, Outcome::Succeeded, at("2026-01-01T10:00:00Z"), now, UTC);
    assert_eq!((paid.state, paid.period, paid.failed_attempts), (State::Active, 3, 0));
}

#[test]
fn a_pause_from_the_period_end_is_due_after_a_cancel_and_the_last_cycle() {
    let terms = Terms { billing_cycles: Some(2), ..monthly() };
    let marked = Progress { pause_at_period_end: true, ..active(1) };
    assert_eq!(due(&terms, &marked), Due::Pause);
    assert_eq!(due(&terms, &Progress { cancel_at_period_end: true, ..marked }), Due::Cancel);
    assert_eq!(due(&terms, &Progress { paid_cycles: 2, ..marked }), Due::Expire);
    let paused = pause(&marked, Some(at("2026-05-01T00:00:00Z")));
    assert_eq!(
        (paused.state, paused.renew_at, paused.pause_at_period_end),
        (State::Paused, Some(at("2026-05-01T00:00:00Z")), false)
    );
    assert_eq!(due(&terms, &paused), Due::Resume);
}

#[test]
fn a_resume_with_a_new_period_counts_afresh_from_then_and_never_reuses_an_attempted_period() {
    let terms = monthly();
    let anchor = Anchor::from(at("2026-01-31T09:00:00Z"));
    let now = at("2026-03-10T12:00:00Z");
    let paused = Progress { state: State::Paused, active_to: Some(at("2026-02-28T09:00:00Z")), ..active(1) };
    let (next, moved) = resume(&terms, &paused, anchor, ResumeBilling::NewPeriod, now, UTC);
    assert_eq!((next.state, next.period, next.renew_at), (State::Active, 1, Some(now)));
    assert_eq!(moved, Anchor { at: now, period: 1 });
    // Its retries had attempted period 1: the new period is 2.
    let retried = Progress { failed_attempts: 2, ..paused };
    let (next, moved) = resume(&terms, &retried, anchor, ResumeBilling::NewPeriod, now, UTC);
    assert_eq!((next.period, next.failed_attempts, moved.period), (2, 0, 2));
    // Paid on the new anchor, the next period starts a month after the resume.
    let paid = after_charge(&terms, &next, Outcome::Succeeded, moved, now, UTC);
    assert_eq!((paid.period, paid.active_to), (3, Some(at("2026-04-10T12:00:00Z"))));
}

#[test]
fn a_resume_on_the_old_schedule_skips_the_periods_of_the_pause() {
    let terms = monthly();
    let anchor = Anchor::from(at("2026-01-31T09:00:00Z"));
    let paused = Progress { state: State::Paused, active_to: Some(at("2026-02-28T09:00:00Z")), ..active(1) };
    // Before the paid period ended: its end is the next charge.
    let (next, _) = resume(&terms, &paused, anchor, ResumeBilling::Continue, at("2026-02-10T00:00:00Z"), UTC);
    assert_eq!((next.state, next.period, next.renew_at), (State::Active, 1, Some(at("2026-02-28T09:00:00Z"))));
    // Exactly at a period start: that period.
    let (next, _) = resume(&terms, &paused, anchor, ResumeBilling::Continue, at("2026-03-31T09:00:00Z"), UTC);
    assert_eq!((next.period, next.renew_at), (2, Some(at("2026-03-31T09:00:00Z"))));
    // Later: the first start after the resume.
    let (next, _) = resume(&terms, &paused, anchor, ResumeBilling::Continue, at("2026-03-31T09:00:01Z"), UTC);
    assert_eq!((next.period, next.renew_at), (3, Some(at("2026-04-30T09:00:00Z"))));
}
