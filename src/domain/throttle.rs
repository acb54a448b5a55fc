//! Slowing down password guessing: after too many failed logins for one e-mail address in a
//! window of time, further attempts are refused until the window has passed.

use std::collections::HashMap;

use chrono::{DateTime, Duration, Utc};

/// Failed attempts allowed per window.
pub const MAX_FAILURES: u32 = 10;
/// The window.
pub const WINDOW: Duration = Duration::minutes(15);
/// Addresses tracked at most; the oldest windows are dropped beyond it.
const MAX_TRACKED: usize = 100_000;

/// Failures per key (a normalised e-mail address) since the start of their window.
#[derive(Debug, Default)]
pub struct Throttle {
    failures: HashMap<String, (u32, DateTime<Utc>)>,
}

impl Throttle {
    /// Whether `key` may try now; `Err` carries when it may try again.
    pub fn allow(&mut self, key: &str, now: DateTime<Utc>) -> Result<(), DateTime<Utc>> {
        match self.failures.get(key) {
            Some((_, since)) if *since + WINDOW <= now => {
                self.failures.remove(key);
                Ok(())
            }
            Some((count, since)) if *count >= MAX_FAILURES => Err(*since + WINDOW),
            _ => Ok(()),
        }
    }

    /// Counts a failed attempt of `key`.
    pub fn failed(&mut self, key: &str, now: DateTime<Utc>) {
        if self.failures.len() >= MAX_TRACKED {
            self.failures.retain(|_, (_, since)| *since + WINDOW > now);
        }
        let entry = self.failures.entry(key.to_string()).or_insert((0, now));
        if entry.1 + WINDOW <= now {
            *entry = (0, now);
        }
        entry.0 += 1;
    }

    /// Forgets `key`'s failures after a successful login.
    pub fn succeeded(&mut self, key: &str) {
        self.failures.remove(key);
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    #[test]
    fn ten_failures_lock_the_address_for_the_rest_of_the_window() {
        let start = Utc.with_ymd_and_hms(2026, 11, 23, 12, 0, 0).unwrap();
        let mut t = Throttle::default();
        for i in 0..MAX_FAILURES {
            assert_eq!(t.allow("ann@example.com", start), Ok(()), "attempt {i}");
            t.failed("ann@example.com", start + Duration::seconds(i as i64));
        }
        assert_eq!(t.allow("ann@example.com", start + Duration::minutes(5)), Err(start + WINDOW));
        assert_eq!(t.allow("bob@example.com", start + Duration::minutes(5)), Ok(()), "others are not affected");
        assert_eq!(t.allow("ann@example.com", start + WINDOW), Ok(()), "the window passed");
        t.failed("ann@example.com", start + WINDOW);
        assert_eq!(t.allow("ann@example.com", start + WINDOW), Ok(()), "a new window");
        t.succeeded("ann@example.com");
        assert!(t.failures.is_empty());
    }
}
