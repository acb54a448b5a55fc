//! CSRF protection of the hosted forms by double submit: the page sets a random token in a
//! SameSite=Strict, HttpOnly cookie and in a hidden field; a submission counts only when
//! both agree. Needs no server-side state, so any instance can check any form.

use axum::http::{HeaderMap, HeaderValue, header::COOKIE};
use subtle::ConstantTimeEq;

use crate::domain::ids::random_hex;

const COOKIE_NAME: &str = "pd_csrf";

/// The token of this browser, and the `Set-Cookie` value when it needs a new one.
pub fn issue(headers: &HeaderMap, secure: bool) -> (String, Option<HeaderValue>) {
    if let Some(token) = from_cookie(headers) {
        return (token, None);
    }
    let token = random_hex(16);
    let secure = if secure { "; Secure" } else { "" };
    let cookie = format!("{COOKIE_NAME}={token}; Path=/; HttpOnly; SameSite=Strict{secure}");
    (token, HeaderValue::from_str(&cookie).ok())
}

/// Whether a submitted token matches the browser's cookie.
pub fn verify(headers: &HeaderMap, submitted: Option<&str>) -> bool {
    match (from_cookie(headers), submitted) {
        (Some(cookie), Some(form)) => cookie.as_bytes().ct_eq(form.as_bytes()).into(),
        _ => false,
    }
}

fn from_cookie(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, value)| *name == COOKIE_NAME && value.len() == 32 && value.bytes().all(|b| b.is_ascii_hexdigit()))
        .map(|(_, value)| value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_browser_keeps_its_token_and_only_it_verifies() {
        let (token, cookie) = issue(&HeaderMap::new(), true);
        let cookie = cookie.unwrap();
        assert!(cookie.to_str().unwrap().contains("HttpOnly; SameSite=Strict; Secure"));
        let mut headers = HeaderMap::new();
        headers.insert(COOKIE, HeaderValue::from_str(&format!("other=1; pd_csrf={token}")).unwrap());
        assert_eq!(issue(&headers, true), (token.clone(), None));
        assert!(verify(&headers, Some(&token)));
        assert!(!verify(&headers, Some("0".repeat(32).as_str())));
        assert!(!verify(&headers, None));
        assert!(!verify(&HeaderMap::new(), Some(&token)));
    }
}
