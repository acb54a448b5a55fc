//! Public ids: a prefix and 16 random lowercase hex characters (`prd_ed27b047d3ccd1a6`).

/// Product ids.
pub const PRODUCT: &str = "prd_";
/// Plan ids.
pub const PLAN: &str = "pln_";
/// Customer ids.
pub const CUSTOMER: &str = "cst_";
/// Payment ids.
pub const PAYMENT: &str = "pay_";
/// Webhook endpoint ids.
pub const WEBHOOK_ENDPOINT: &str = "we_";
/// Webhook delivery ids (Standard Webhooks' `webhook-id`).
pub const DELIVERY: &str = "msg_";
/// Refund ids.
pub const REFUND: &str = "rfd_";
/// Dispute ids.
pub const DISPUTE: &str = "dsp_";
/// Subscription ids.
pub const SUBSCRIPTION: &str = "sbs_";
/// Subscription timeline event ids.
pub const EVENT: &str = "evt_";
/// Dashboard user ids.
pub const USER: &str = "usr_";
/// Test clock ids.
pub const TEST_CLOCK: &str = "clk_";
/// A subscriber mail.
pub const MAIL: &str = "mail_";
/// Coupon ids.
pub const COUPON: &str = "cpn_";
/// Tax rate ids.
pub const TAX_RATE: &str = "txr_";
/// Invoice ids.
pub const INVOICE: &str = "inv_";
/// Credit note ids.
pub const CREDIT_NOTE: &str = "cn_";
/// Audit trail records.
pub const AUDIT_EVENT: &str = "aud_";
/// API keys.
pub const API_KEY: &str = "key_";

/// A new random id with the given prefix.
pub fn new_id(prefix: &str) -> String {
    format!("{prefix}{}", random_hex(8))
}

/// A new id with the given prefix that sorts after those made before `now`: the
/// milliseconds since 1970 (12 hex digits), then 8 random bytes. Rows keyed by it are added
/// at the end of their index, where the page written last is, rather than one page each
/// anywhere in it (an audit record's id: a seal of 50 wrote ~45 pages of that index).
pub fn ordered_id(prefix: &str, now: chrono::DateTime<chrono::Utc>) -> String {
    format!("{prefix}{:012x}{}", now.timestamp_millis().max(0), random_hex(8))
}

/// Whether `id` could be an id of ours at all (letters, digits and `_`, at most 64
/// characters): anything else is answered as unknown without asking the database.
pub fn plausible(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// What is stored of a one-time link's token: its SHA-256, as lowercase hex.
pub fn hash_token(token: &str) -> String {
    use sha2::{Digest, Sha256};
    hex(&Sha256::digest(token.as_bytes()))
}

/// An id with the given prefix derived from `seed` (the first 8 bytes of its SHA-256, as
/// lowercase hex): the same seed always names the same thing, so what it names is made once.
pub fn derived_id(prefix: &str, seed: &str) -> String {
    use sha2::{Digest, Sha256};
    format!("{prefix}{}", hex(&Sha256::digest(seed.as_bytes())[..8]))
}

/// `bytes` random bytes from the operating system's generator, as lowercase hex.
pub fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    getrandom::getrandom(&mut buf).expect("the operating system's random generator");
    hex(&buf)
}

/// `bytes` as lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    bytes.iter().flat_map(|b| [DIGITS[usize::from(b >> 4)] as char, DIGITS[usize::from(b & 15)] as char]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_is_lowercase_two_digits_a_byte() {
        assert_eq!(hex(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
        assert_eq!(hex(&[]), "");
    }

    #[test]
    fn ordered_ids_sort_by_their_time_and_are_plausible() {
        let at = |ms| chrono::DateTime::from_timestamp_millis(ms).unwrap();
        let (a, b) = (ordered_id(AUDIT_EVENT, at(1_764_900_000_000)), ordered_id(AUDIT_EVENT, at(1_764_900_000_001)));
        assert!(a < b && plausible(&a), "{a} {b}");
        assert_eq!(a.len(), "aud_".len() + 12 + 16);
        assert!(a.starts_with("aud_019aec3cd100"), "{a}");
    }

    #[test]
    fn ids_have_prefix_and_sixteen_hex_characters() {
        let id = new_id(PRODUCT);
        assert_eq!(id.len(), 20);
        assert!(id.starts_with("prd_"));
        assert!(id[4..].bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
        assert_ne!(new_id(PRODUCT), id);
    }
}
