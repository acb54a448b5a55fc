//! Slowing down guessing: after too many failures for one key (an account at an address, an
//! address, a pay link at an address) within a window of time, further attempts wait until
//! the oldest counted failure has left the window. The failures themselves are kept in the
//! database (`db::throttle`), so every instance counts the same ones.

use chrono::{DateTime, Duration, Utc};

/// How many failures a window allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    /// What the failures are counted under (the key's namespace).
    pub scope: &'static str,
    pub max: usize,
    pub window: Duration,
}

/// Wrong passwords for one account from one address.
pub const LOGIN_ACCOUNT: Limit = Limit { scope: "login", max: 10, window: Duration::minutes(15) };
/// Wrong passwords for one account, wherever they come from: the tenth within a day locks
/// the account for [`LOCKED_FOR`] (PCI DSS 8.3.4) and mails its user the link that opens it.
pub const LOCKOUT: Limit = Limit { scope: "lockout", max: 10, window: Duration::hours(24) };
/// How long a locked account stays locked unless its link opens it.
pub const LOCKED_FOR: Duration = Duration::minutes(30);
/// Wrong passwords from one address, whatever the account.
pub const LOGIN_ADDRESS: Limit = Limit { scope: "login_address", max: 50, window: Duration::minutes(15) };
/// Wrong codes of two-step login for one user, wherever they come from.
pub const TWO_STEP: Limit = Limit { scope: "two_step", max: 10, window: Duration::minutes(15) };
/// Wrong passwords or codes given again by a signed-in user before a sensitive change.
pub const REAUTH: Limit = Limit { scope: "reauth", max: 10, window: Duration::minutes(15) };
/// Declined cards on one pay link from one address (card testing).
pub const DECLINES: Limit = Limit { scope: "declines", max: 5, window: Duration::minutes(10) };
/// Links to the subscriber page asked for one e-mail address, or from one address.
pub const PORTAL_LINKS: Limit = Limit { scope: "portal_links", max: 5, window: Duration::hours(1) };
/// Wrong API credentials from one address.
pub const API_AUTH: Limit = Limit { scope: "api_auth", max: 30, window: Duration::minutes(10) };

impl Limit {
    /// How long `key` must wait at `now`, given its failures in the window (newest first, at
    /// most `max` of them); `None` when it may try now.
    pub fn wait(&self, recent: &[DateTime<Utc>], now: DateTime<Utc>) -> Option<Duration> {
        let oldest_counted = *recent.get(self.max.checked_sub(1)?)?;
        let until = oldest_counted + self.window;
        (until > now).then(|| until - now)
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    #[test]
    fn the_limit_waits_until_the_oldest_counted_failure_leaves_the_window() {
        let start = Utc.with_ymd_and_hms(2026, 11, 23, 12, 0, 0).unwrap();
        let failures: Vec<_> = (0..10).rev().map(|i| start + Duration::seconds(i)).collect();
        assert_eq!(LOGIN_ACCOUNT.wait(&failures[1..], start + Duration::minutes(1)), None, "nine are allowed");
        let later = start + Duration::minutes(5);
        assert_eq!(LOGIN_ACCOUNT.wait(&failures, later), Some(Duration::minutes(10)));
        assert_eq!(LOGIN_ACCOUNT.wait(&failures, start + Duration::minutes(15)), None, "the window passed");
        assert_eq!(DECLINES.wait(&failures[..5], later), Some(Duration::minutes(5) + Duration::seconds(5)));
    }
}
