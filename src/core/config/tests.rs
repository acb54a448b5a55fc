//! The settings as read from the environment and flags.

use super::*;

fn args() -> ConfigArgs {
    ConfigArgs::default()
}

#[test]
fn the_client_is_the_peer_unless_a_trusted_proxy_names_it() {
    let proxies = TrustedProxies::parse("10.0.0.0/8, 192.168.1.7,fd00::/8").unwrap();
    let ip = |s: &str| s.parse::<IpAddr>().unwrap();
    let client = |peer: &str, lists: &[&str]| proxies.client(ip(peer), lists.iter().copied());
    assert_eq!(client("203.0.113.5", &["198.51.100.1"]), ip("203.0.113.5"), "an untrusted peer is the client");
    assert_eq!(client("10.1.2.3", &["198.51.100.1"]), ip("198.51.100.1"));
    // A client's own X-Forwarded-For is not believed: the last untrusted hop is the client.
    assert_eq!(client("10.1.2.3", &["1.1.1.1, 198.51.100.1, 192.168.1.7"]), ip("198.51.100.1"));
    assert_eq!(client("10.1.2.3", &["1.1.1.1", "198.51.100.1"]), ip("198.51.100.1"), "several header lines");
    assert_eq!(client("::ffff:10.0.0.1", &["198.51.100.1"]), ip("198.51.100.1"), "IPv4 mapped into IPv6");
    assert_eq!(client("fd00::1", &["2001:db8::5"]), ip("2001:db8::5"));
    assert_eq!(client("10.1.2.3", &["not-an-address"]), ip("10.1.2.3"), "garbage stops the walk");
    assert_eq!(client("10.1.2.3", &["\u{fffd}, 198.51.100.1"]), ip("198.51.100.1"), "after unreadable bytes");
    assert_eq!(client("10.1.2.3", &["198.51.100.1:5678"]), ip("198.51.100.1"), "with a port");
    assert_eq!(client("10.1.2.3", &["[2001:db8::5]:443"]), ip("2001:db8::5"));
    assert_eq!(client("10.1.2.3", &["[2001:db8::6]"]), ip("2001:db8::6"));
    let mapped = TrustedProxies::parse("::ffff:10.0.0.0/104").unwrap();
    assert!(mapped.contains(ip("10.9.9.9")) && !mapped.contains(ip("11.0.0.1")));
    assert_eq!(client("10.1.2.3", &[]), ip("10.1.2.3"));
    assert!(!proxies.contains(ip("11.0.0.1")) && !proxies.contains(ip("192.168.1.8")));
    assert!(TrustedProxies::parse("").unwrap().0.is_empty());
    assert!(TrustedProxies::parse("0.0.0.0/0").unwrap().contains(ip("8.8.8.8")));
    for bad in ["10.0.0.0/33", "fd00::/129", "example.com", "10.0.0.0/x"] {
        assert!(TrustedProxies::parse(bad).is_none(), "{bad}");
    }
}

#[test]
fn mail_from_an_address_without_a_domain_is_warned_of() {
    let smtp = || Some("smtp://127.0.0.1:2525".to_string());
    let c = Config::from_args(&ConfigArgs { smtp_url: smtp(), ..args() }).unwrap();
    assert_eq!(c.mail_from, "no-reply@localhost.localdomain", "the default base URL is an IP address");
    assert!(c.sender_problem().is_some());
    let named = ConfigArgs { smtp_url: smtp(), mail_from: Some("shop@mail.example".into()), ..args() };
    assert_eq!(Config::from_args(&named).unwrap().sender_problem(), None);
    let hosted = ConfigArgs { smtp_url: smtp(), base_url: Some("https://pay.example.com".into()), ..args() };
    let c = Config::from_args(&hosted).unwrap();
    assert_eq!((c.mail_from.as_str(), c.sender_problem()), ("no-reply@pay.example.com", None));
    assert_eq!(Config::from_args(&args()).unwrap().sender_problem(), None, "no mail, no problem");
}

#[test]
fn defaults_serve_sqlite_on_localhost() {
    let c = Config::from_args(&args()).unwrap();
    assert_eq!(c.database_url, DEFAULT_DATABASE_URL);
    assert_eq!(c.base_url, "http://127.0.0.1:3000");
    assert_eq!(c.checkout_url, c.base_url);
    assert_eq!(c.timezone, chrono_tz::UTC);
    assert!(c.scheduler);
}

#[test]
fn bad_values_are_refused_with_one_line() {
    for (set, needle) in [
        (ConfigArgs { listen: Some("nowhere".into()), ..args() }, "PAYDESK_LISTEN"),
        (ConfigArgs { timezone: Some("Mars/Base".into()), ..args() }, "PAYDESK_TIMEZONE"),
        (ConfigArgs { scheduler: Some("maybe".into()), ..args() }, "PAYDESK_SCHEDULER"),
        (ConfigArgs { signup: Some("yes".into()), ..args() }, "PAYDESK_SIGNUP"),
        (ConfigArgs { base_url: Some("ftp://x".into()), ..args() }, "PAYDESK_BASE_URL"),
        (ConfigArgs { checkout_url: Some("/relative".into()), ..args() }, "PAYDESK_CHECKOUT_URL"),
        (ConfigArgs { database_url: Some("mysql://x".into()), ..args() }, "DATABASE_URL"),
        (ConfigArgs { audit_retention_days: Some("30".into()), ..args() }, "PAYDESK_AUDIT_RETENTION_DAYS"),
    ] {
        let err = Config::from_args(&set).unwrap_err().to_string();
        assert!(err.starts_with(needle), "{err}");
        assert!(!err.contains('\n'), "{err}");
    }
}

#[test]
fn the_key_encryption_key_is_given_kept_beside_sqlite_or_required() {
    let c = Config::from_args(&args()).unwrap();
    assert_eq!(c.kek, KekSource::File("paydesk.db.kek".into()));
    let memory = ConfigArgs { database_url: Some("sqlite::memory:".into()), ..args() };
    assert_eq!(Config::from_args(&memory).unwrap().kek, KekSource::Ephemeral);
    let pg = ConfigArgs { database_url: Some("postgres://u@h/db".into()), ..args() };
    let err = Config::from_args(&pg).unwrap_err().to_string();
    assert!(err.starts_with("PAYDESK_KEY_ENCRYPTION_KEY") && err.contains("required with PostgreSQL"), "{err}");
    let given = "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=";
    let pg = ConfigArgs { key_encryption_key: Some(given.into()), ..pg };
    assert!(matches!(Config::from_args(&pg).unwrap().kek, KekSource::Given(k) if k[0] == 1 && k[31] == 32));
    let short = ConfigArgs { key_encryption_key: Some("c2hvcnQ=".into()), ..args() };
    let err = Config::from_args(&short).unwrap_err().to_string();
    assert!(!err.contains("c2hvcnQ"), "the value is never echoed: {err}");
}

#[test]
fn base_urls_lose_their_trailing_slash() {
    let c = Config::from_args(&ConfigArgs { base_url: Some("https://pay.example.com/".into()), ..args() }).unwrap();
    assert_eq!(c.base_url, "https://pay.example.com");
    assert_eq!(c.checkout_url, "https://pay.example.com");
}

#[test]
fn the_audit_trail_is_kept_a_year_unless_told_otherwise() {
    assert_eq!(Config::from_args(&args()).unwrap().audit_kept, chrono::TimeDelta::days(365));
    let longer = ConfigArgs { audit_retention_days: Some("730".into()), ..args() };
    assert_eq!(Config::from_args(&longer).unwrap().audit_kept, chrono::TimeDelta::days(730));
}
