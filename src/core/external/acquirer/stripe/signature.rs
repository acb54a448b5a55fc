//! Stripe's webhook signatures: `Stripe-Signature: t=<unix time>,v1=<hex>[,v1=<hex>…]`, where
//! each `v1` is HMAC-SHA256 of `"<t>.<raw body>"` keyed with an endpoint's signing secret
//! (`whsec_…`, used as the text it is). While a secret is rolled Stripe sends one `v1` per
//! secret. A signature is taken when any `v1` matches any secret paydesk holds and `t` is
//! within the tolerance of now (a replayed old delivery is refused).

use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// How far a signature's time may be from now: Stripe's libraries' default.
pub const TOLERANCE_SECONDS: i64 = 300;

/// Why a delivery's signature was not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// No `t=` and `v1=` in the header.
    Malformed,
    /// No `v1` is the body's signature with a secret paydesk holds.
    NoMatch,
    /// Signed too long ago (or too far ahead): a replay.
    Stale,
}

/// Checks `header` (the `Stripe-Signature` header) over the raw `body` with any of `secrets`.
pub fn verify(header: &str, body: &[u8], secrets: &[String], now: DateTime<Utc>) -> Result<(), Refused> {
    let mut timestamp = None;
    let mut signatures = Vec::new();
    for part in header.split(',') {
        match part.trim().split_once('=') {
            Some(("t", t)) => timestamp = t.parse::<i64>().ok(),
            Some(("v1", hex)) => signatures.extend(decode_hex(hex)),
            _ => {}
        }
    }
    let Some(timestamp) = timestamp else { return Err(Refused::Malformed) };
    if signatures.is_empty() {
        return Err(Refused::Malformed);
    }
    let signed = secrets.iter().any(|secret| {
        signatures.iter().any(|signature| {
            let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes any key");
            mac.update(timestamp.to_string().as_bytes());
            mac.update(b".");
            mac.update(body);
            mac.verify_slice(signature).is_ok()
        })
    });
    if !signed {
        return Err(Refused::NoMatch);
    }
    if (now.timestamp() - timestamp).abs() > TOLERANCE_SECONDS {
        return Err(Refused::Stale);
    }
    Ok(())
}

/// The `Stripe-Signature` header Stripe would send for `body` at `at` with `secret` (tests,
/// and the doubles that play Stripe).
pub fn sign(body: &[u8], secret: &str, at: i64) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes any key");
    mac.update(format!("{at}.").as_bytes());
    mac.update(body);
    format!("t={at},v1={}", crate::domain::ids::hex(&mac.finalize().into_bytes()))
}

fn decode_hex(hex: &str) -> Option<Vec<u8>> {
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const BODY: &[u8] = br#"{"id":"evt_1","object":"event","type":"payment_intent.succeeded"}"#;

    fn secrets(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_signature_made_as_stripe_makes_it_verifies_within_the_tolerance() {
        let now = Utc::now();
        let header = sign(BODY, "whsec_test", now.timestamp());
        assert_eq!(verify(&header, BODY, &secrets(&["whsec_test"]), now), Ok(()));
        assert_eq!(verify(&header, b"{}", &secrets(&["whsec_test"]), now), Err(Refused::NoMatch));
        assert_eq!(verify(&header, BODY, &secrets(&["whsec_other"]), now), Err(Refused::NoMatch));
        let late = now + chrono::Duration::seconds(TOLERANCE_SECONDS + 1);
        assert_eq!(verify(&header, BODY, &secrets(&["whsec_test"]), late), Err(Refused::Stale));
        assert_eq!(verify("v1=00", BODY, &secrets(&["whsec_test"]), now), Err(Refused::Malformed));
        assert_eq!(verify("t=1,v0=00", BODY, &secrets(&["whsec_test"]), now), Err(Refused::Malformed));
    }

    #[test]
    fn a_rolled_secret_verifies_with_either_signature_and_either_secret() {
        let now = Utc::now();
        let t = now.timestamp();
        let old = sign(BODY, "whsec_old", t);
        let new = sign(BODY, "whsec_new", t);
        let both = format!("{old},v1={}", new.split_once("v1=").unwrap().1);
        assert_eq!(verify(&both, BODY, &secrets(&["whsec_new"]), now), Ok(()));
        assert_eq!(verify(&both, BODY, &secrets(&["whsec_old"]), now), Ok(()));
        assert_eq!(verify(&old, BODY, &secrets(&["whsec_new", "whsec_old"]), now), Ok(()));
    }

    #[test]
    fn stripes_documented_example_verifies() {
        // Stripe's "Verify signatures manually": the signed payload is `t.body`, HMAC-SHA256
        // keyed with the endpoint's secret, hex-encoded; computed here with Python's hmac.
        let body = br#"{"id": "evt_test_webhook", "object": "event"}"#;
        let header = "t=1492774577,v1=c137b1b62277d523cf8fed4dfbd0170a9a5b8a380e00cc3711d4bf0652f2ce7a";
        let at = DateTime::from_timestamp(1492774577, 0).unwrap();
        assert_eq!(verify(header, body, &secrets(&["whsec_test_secret"]), at), Ok(()));
    }
}
