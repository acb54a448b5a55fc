//! Dashboard sessions as their user sees them: how long a shop lets them sit unused, and
//! which browser on which system each one is.

/// The idle times an owner may choose, in minutes. The first is PCI DSS's (8.2.8): a longer
/// one takes the shop outside that requirement, which the settings page says.
pub const IDLE_MINUTES: [i32; 6] = [15, 30, 60, 120, 240, 480];

/// The idle time PCI DSS 8.2.8 asks for, in minutes.
pub const PCI_IDLE_MINUTES: i32 = IDLE_MINUTES[0];

/// The longest idle time a shop may choose, in minutes.
pub const LONGEST_IDLE_MINUTES: i32 = IDLE_MINUTES[IDLE_MINUTES.len() - 1];

/// How long a session lives at most, however busy (NIST SP 800-63B asks to sign in again
/// every 12 hours at this level).
pub const LIFETIME: chrono::Duration = chrono::Duration::hours(12);

/// Why a session signed in at `signed_in` and last used at `seen` has ended by `now`, if it
/// has: unused longer than `idle_minutes`, or older than [`LIFETIME`].
pub fn ended(
    signed_in: chrono::DateTime<chrono::Utc>,
    seen: chrono::DateTime<chrono::Utc>,
    idle_minutes: i32,
    now: chrono::DateTime<chrono::Utc>,
) -> Option<&'static str> {
    if now - seen > chrono::Duration::minutes(i64::from(idle_minutes)) {
        Some("unused")
    } else if now - signed_in > LIFETIME {
        Some("lifetime")
    } else {
        None
    }
}

/// `typed` as one of the idle times a shop may choose.
pub fn idle_minutes(typed: &str) -> Option<i32> {
    typed.trim().parse().ok().filter(|m| IDLE_MINUTES.contains(m))
}

/// The browser and system a `User-Agent` names, as a person would say them ("Firefox on
/// Linux"); what it does not name is left out, and nothing at all is `None`.
pub fn device(user_agent: &str) -> Option<String> {
    // Order matters: Edge and Opera also say Chrome, Chrome also says Safari.
    const BROWSERS: [(&str, &str); 7] = [
        ("Edg/", "Edge"),
        ("OPR/", "Opera"),
        ("YaBrowser/", "Yandex Browser"),
        ("Firefox/", "Firefox"),
        ("Chrome/", "Chrome"),
        ("Chromium/", "Chromium"),
        ("Safari/", "Safari"),
    ];
    const SYSTEMS: [(&str, &str); 7] = [
        ("Android", "Android"),
        ("iPhone", "iOS"),
        ("iPad", "iPadOS"),
        ("Windows", "Windows"),
        ("Mac OS X", "macOS"),
        ("CrOS", "ChromeOS"),
        ("Linux", "Linux"),
    ];
    let find = |list: &[(&str, &'static str)]| list.iter().find(|(mark, _)| user_agent.contains(mark)).map(|p| p.1);
    match (find(&BROWSERS), find(&SYSTEMS)) {
        (Some(browser), Some(system)) => Some(format!("{browser} · {system}")),
        (Some(one), None) | (None, Some(one)) => Some(one.to_string()),
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_are_named_as_people_say_them() {
        let chrome =
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36";
        assert_eq!(device(chrome).as_deref(), Some("Chrome · Linux"));
        let edge = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/120.0 Safari/537.36 Edg/120.0";
        assert_eq!(device(edge).as_deref(), Some("Edge · Windows"));
        let safari = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Version/17.0 Mobile/15E148 Safari/604.1";
        assert_eq!(device(safari).as_deref(), Some("Safari · iOS"));
        assert_eq!(device("curl/8.5.0"), None);
    }

    #[test]
    fn a_session_ends_unused_or_old() {
        let at = chrono::DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let minutes = chrono::Duration::minutes;
        assert_eq!(ended(at, at + minutes(10), 15, at + minutes(25)), None);
        assert_eq!(ended(at, at + minutes(10), 15, at + minutes(26)), Some("unused"));
        assert_eq!(ended(at, at + minutes(700), 60, at + minutes(721)), Some("lifetime"));
    }

    #[test]
    fn only_the_offered_idle_times_are_read() {
        assert_eq!(idle_minutes(" 60 "), Some(60));
        assert_eq!(idle_minutes("61"), None);
        assert_eq!(idle_minutes("-15"), None);
        assert_eq!(idle_minutes("99999999999999"), None);
    }
}
