//! CSRF protection of the hosted forms by double submit: the page sets a random token in a
//! SameSite=Strict, HttpOnly cookie and in a hidden field; a submission counts only when
//! both agree. Needs no server-side state, so any instance can check any form.
//!
//! Pages are compressed, so a token is never written into one as it is: each page carries it
//! [`mask`]ed with a fresh random pad (BREACH cannot guess at bytes that change every time).

use axum::http::{HeaderMap, HeaderValue, header::COOKIE};
use subtle::ConstantTimeEq;

use crate::domain::ids::{hex, random_hex};

const COOKIE_NAME: &str = "pd_csrf";

/// The token of this browser, and the `Set-Cookie` value when it needs a new one.
pub fn issue(headers: &HeaderMap, secure: bool) -> (String, Option<HeaderValue>) {
    if let Some(token) = from_cookie(headers) {
        return (mask(&token), None);
    }
    let token = random_hex(16);
    let secure = if secure { "; Secure" } else { "" };
    let cookie = format!("{COOKIE_NAME}={token}; Path=/; HttpOnly; SameSite=Strict{secure}");
    (mask(&token), HeaderValue::from_str(&cookie).ok())
}

/// Whether a submitted token matches the browser's cookie.
pub fn verify(headers: &HeaderMap, submitted: Option<&str>) -> bool {
    match (from_cookie(headers), submitted) {
        (Some(cookie), Some(form)) => same(&cookie, form),
        _ => false,
    }
}

/// Whether a token sent with a form (masked, or as it is) is `token`.
pub fn same(token: &str, sent: &str) -> bool {
    unmask(sent).is_some_and(|sent| sent.as_bytes().ct_eq(token.as_bytes()).into())
}

/// The token (hex) as a page carries it: a random pad, then the token XOR the pad, in hex.
pub fn mask(token: &str) -> String {
    let Some(bytes) = from_hex(token) else { return token.to_string() };
    let pad = from_hex(&random_hex(bytes.len())).unwrap_or_default();
    let masked: Vec<u8> = bytes.iter().zip(&pad).map(|(b, p)| b ^ p).collect();
    format!("{}{}", hex(&pad), hex(&masked))
}

/// The token a page carried: a masked one unmasked, or one sent as it is.
fn unmask(sent: &str) -> Option<String> {
    let bytes = from_hex(sent)?;
    match bytes.len() {
        16 => Some(sent.to_ascii_lowercase()),
        32 => {
            let (pad, masked) = bytes.split_at(16);
            Some(hex(&masked.iter().zip(pad).map(|(m, p)| m ^ p).collect::<Vec<u8>>()))
        }
        _ => None,
    }
}

fn from_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok()).collect()
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
        let (masked, cookie) = issue(&HeaderMap::new(), true);
        let cookie = cookie.unwrap();
        assert!(cookie.to_str().unwrap().contains("HttpOnly; SameSite=Strict; Secure"));
        let token = cookie.to_str().unwrap().split(';').next().unwrap().trim_start_matches("pd_csrf=").to_string();
        let mut headers = HeaderMap::new();
        headers.insert(COOKIE, HeaderValue::from_str(&format!("other=1; pd_csrf={token}")).unwrap());
        let (again, none) = issue(&headers, true);
        assert!(none.is_none(), "the browser keeps its token");
        assert_ne!(again, masked, "each page carries it masked afresh");
        assert!(verify(&headers, Some(&masked)) && verify(&headers, Some(&again)));
        assert!(verify(&headers, Some(&token)), "as it is, too");
        assert!(!verify(&headers, Some("0".repeat(32).as_str())));
        assert!(!verify(&headers, None));
        assert!(!verify(&HeaderMap::new(), Some(&token)));
        let mut tampered = masked.clone().into_bytes();
        tampered[63] = if tampered[63] == b'0' { b'1' } else { b'0' };
        assert!(!verify(&headers, Some(std::str::from_utf8(&tampered).unwrap())));
        assert!(!verify(&headers, Some("zz")));
    }
}
