//! Payments whose end is not known yet. A processor's answer can be lost (a timeout, a 5xx,
//! a dropped connection), it can ask paydesk to wait (429), or the customer must first
//! authenticate (3-D Secure). Such a payment stays `processing` and is looked up by
//! paydesk's own reference, again and again with growing pauses, never charged anew.

use chrono::{DateTime, TimeDelta, Utc};

/// The first pause before a lost answer is looked up.
pub const FIRST_PAUSE: TimeDelta = TimeDelta::minutes(1);
/// The longest pause between two lookups.
pub const LONGEST_PAUSE: TimeDelta = TimeDelta::hours(6);
/// How long a customer has to authenticate (3-D Secure) before the payment expires and a
/// finite product's unit goes back on sale.
pub const AUTHENTICATION_WINDOW: TimeDelta = TimeDelta::hours(1);

/// When a payment first asked at `asked` and not settled by `now` is looked up next: after
/// a pause as long as it has waited so far, between [`FIRST_PAUSE`] and [`LONGEST_PAUSE`]
/// (1, 2, 4, 8 … minutes, then every 6 hours).
pub fn next_lookup(asked: DateTime<Utc>, now: DateTime<Utc>) -> DateTime<Utc> {
    now + (now - asked).clamp(FIRST_PAUSE, LONGEST_PAUSE)
}

/// Whether a payment waiting for its customer since `asked` has expired at `now`.
pub fn authentication_expired(asked: DateTime<Utc>, now: DateTime<Utc>) -> bool {
    now - asked >= AUTHENTICATION_WINDOW
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(minutes: i64) -> DateTime<Utc> {
        "2026-11-25T10:00:00Z".parse::<DateTime<Utc>>().unwrap() + TimeDelta::minutes(minutes)
    }

    #[test]
    fn lookups_back_off_from_a_minute_to_six_hours() {
        let mut now = at(0);
        let mut pauses = Vec::new();
        for _ in 0..12 {
            let next = next_lookup(at(0), now);
            pauses.push((next - now).num_minutes());
            now = next;
        }
        assert_eq!(pauses, [1, 1, 2, 4, 8, 16, 32, 64, 128, 256, 360, 360]);
    }

    #[test]
    fn a_customer_has_an_hour_to_authenticate() {
        assert!(!authentication_expired(at(0), at(59)));
        assert!(authentication_expired(at(0), at(60)));
    }
}
