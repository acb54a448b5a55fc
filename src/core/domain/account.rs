//! The dashboard's accounts: signing up, passwords, and a shop's settings.

use chrono_tz::Tz;
use serde_json::{Map, Value};
use validator::ValidateEmail;

use super::Errors;
use super::input::{Reader, msg};
use super::product::read_url;

/// Shortest password accepted (PCI DSS 8.3.6 asks for 12).
pub const MIN_PASSWORD: usize = 12;
/// Longest password accepted (argon2 takes any length; this bounds the work per login).
pub const MAX_PASSWORD: usize = 256;

/// A new shop with its first user.
#[derive(Debug)]
pub struct SignUp {
    pub shop_name: String,
    pub email: String,
    pub password: String,
}

impl SignUp {
    /// Checks the sign-up form: `shop_name`, `email`, `password`, `password_confirmation`.
    pub fn parse(body: &Map<String, Value>) -> Result<Self, Errors> {
        let r = Reader::new(body);
        let mut e = Errors::default();
        let shop_name = r.string("shop_name", 255, &mut e).filter(|n| !n.trim().is_empty());
        e.require("shop_name", shop_name.is_none());
        let email = email(&r, "email", &mut e);
        let password = new_password(&r, "password", &mut e);
        e.into_result(|| SignUp {
            shop_name: shop_name.unwrap_or_default().trim().to_string(),
            email: email.unwrap_or_default(),
            password: password.unwrap_or_default(),
        })
    }
}

/// An e-mail address as logins compare it: trimmed, lowercase.
pub fn normalise_email(raw: &str) -> String {
    raw.trim().to_lowercase()
}

/// A checked, normalised e-mail address: the login name.
pub fn email(r: &Reader, field: &str, e: &mut Errors) -> Option<String> {
    let email = r.string(field, 255, e).map(|m| normalise_email(&m)).filter(|m| !m.is_empty());
    e.require(field, email.is_none());
    email.filter(|m| {
        let ok = m.validate_email();
        if !ok {
            e.add(field, msg::INVALID);
        }
        ok
    })
}

/// A new password of `field`, which `{field}_confirmation` must repeat.
pub fn new_password(r: &Reader, field: &str, e: &mut Errors) -> Option<String> {
    let password = r.string(field, MAX_PASSWORD, e).filter(|p| !p.is_empty());
    e.require(field, password.is_none());
    let password = password.filter(|p| {
        let ok = p.chars().count() >= MIN_PASSWORD;
        if !ok {
            e.add(field, format!("is too short (minimum is {MIN_PASSWORD} characters)"));
        }
        ok
    })?;
    if is_common(&password) {
        e.add(field, "is one of the most common passwords: choose another");
        return None;
    }
    let confirmation = format!("{field}_confirmation");
    if r.string(&confirmation, MAX_PASSWORD, e).as_deref() != Some(password.as_str()) {
        e.add(&confirmation, "doesn't match Password");
        return None;
    }
    Some(password)
}

/// Common passwords long enough to pass the length rule, lowercased and sorted, shipped with
/// paydesk (see the file's header for where they come from).
const COMMON: &str = include_str!("common-passwords.txt");

/// Whether `password`, in any case, is among the common passwords.
pub fn is_common(password: &str) -> bool {
    static LIST: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();
    let list = LIST.get_or_init(|| COMMON.lines().filter(|l| !l.starts_with('#')).collect());
    list.binary_search(&password.to_lowercase().as_str()).is_ok()
}

/// What a merchant can change of the shop.
#[derive(Debug, PartialEq)]
pub struct ShopSettings {
    pub name: String,
    /// Where customers go after paying when the product has no return URL.
    pub url: Option<String>,
    /// The zone the dashboard shows times in (`None`: the system's).
    pub timezone: Option<String>,
}

impl ShopSettings {
    /// Checks the settings form: `name`, `url` (absolute http/https, optional),
    /// `timezone` (an IANA zone, optional).
    pub fn parse(body: &Map<String, Value>) -> Result<Self, Errors> {
        let r = Reader::new(body);
        let mut e = Errors::default();
        let name = r.string("name", 255, &mut e).map(|n| n.trim().to_string()).filter(|n| !n.is_empty());
        e.require("name", name.is_none());
        let url = read_url(&r, "url", &mut e);
        let timezone = r.string("timezone", 64, &mut e).map(|z| z.trim().to_string()).filter(|z| !z.is_empty());
        if timezone.as_deref().is_some_and(|z| z.parse::<Tz>().is_err()) {
            e.add("timezone", msg::NOT_INCLUDED);
        }
        e.into_result(|| ShopSettings { name: name.unwrap_or_default(), url, timezone })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn sign_up_needs_a_name_an_email_and_a_confirmed_long_password() {
        let e = SignUp::parse(&map(json!({}))).unwrap_err();
        assert_eq!(e.get("shop_name").unwrap(), ["can't be blank"]);
        assert_eq!(e.get("email").unwrap(), ["can't be blank"]);
        assert_eq!(e.get("password").unwrap(), ["can't be blank"]);
        let e = SignUp::parse(&map(json!({"shop_name": "Books", "email": "nope", "password": "short",
                                          "password_confirmation": "short"})))
        .unwrap_err();
        assert_eq!(e.get("email").unwrap(), ["is invalid"]);
        assert_eq!(e.get("password").unwrap(), ["is too short (minimum is 12 characters)"]);
        let e = SignUp::parse(&map(json!({"shop_name": "Books", "email": "a@b.co", "password": "QwertyQwerty",
                                          "password_confirmation": "QwertyQwerty"})))
        .unwrap_err();
        assert_eq!(e.get("password").unwrap(), ["is one of the most common passwords: choose another"]);
        let e = SignUp::parse(&map(json!({"shop_name": "Books", "email": "a@b.co", "password": "long enough!",
                                          "password_confirmation": "long enough?"})))
        .unwrap_err();
        assert_eq!(e.get("password_confirmation").unwrap(), ["doesn't match Password"]);
        let ok = SignUp::parse(&map(
            json!({"shop_name": " Books ", "email": " Ann@Example.COM", "password": "long enough!",
                                           "password_confirmation": "long enough!"}),
        ))
        .unwrap();
        assert_eq!((ok.shop_name.as_str(), ok.email.as_str()), ("Books", "ann@example.com"));
    }

    #[test]
    fn the_common_list_is_sorted_and_found_in_any_case() {
        let list: Vec<_> = COMMON.lines().filter(|l| !l.starts_with('#')).collect();
        assert!(list.len() > 40_000 && list.windows(2).all(|w| w[0] < w[1]));
        assert!(list.iter().all(|p| p.chars().count() >= MIN_PASSWORD && *p == p.to_lowercase()));
        for common in ["123qweasdzxc", "1Qaz2Wsx3Edc", "QWERTYUIOPASDFGHJKL"] {
            assert!(is_common(common), "{common}");
        }
        assert!(!is_common("correct horse battery"));
    }

    #[test]
    fn settings_take_a_url_and_a_known_zone_or_blanks() {
        let ok = ShopSettings::parse(&map(json!({"name": "Books"}))).unwrap();
        assert_eq!(ok, ShopSettings { name: "Books".into(), url: None, timezone: None });
        let e = ShopSettings::parse(&map(json!({"name": "", "url": "ftp://x", "timezone": "Mars/Base"}))).unwrap_err();
        assert_eq!(e.get("name").unwrap(), ["can't be blank"]);
        assert!(e.has("url"));
        assert_eq!(e.get("timezone").unwrap(), ["is not included in the list"]);
        let ok = ShopSettings::parse(&map(json!({"name": "B", "timezone": "Europe/Berlin"}))).unwrap();
        assert_eq!(ok.timezone.as_deref(), Some("Europe/Berlin"));
    }
}
