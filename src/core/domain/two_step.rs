//! Two-step login: time-based one-time codes (RFC 6238: HMAC-SHA1, 6 digits, 30-second steps,
//! one step either side accepted) from an authenticator app, and single-use recovery codes
//! for a lost device. The HOTP arithmetic is `totp-rs`'s; what is decided here is which step
//! a code belongs to, so that each code works once.

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};
use totp_rs::{Algorithm, TOTP};

/// Seconds per code.
pub const STEP: u64 = 30;
/// Digits per code.
pub const DIGITS: usize = 6;
/// Bytes of a new secret (160 bits, as RFC 4226 recommends).
pub const SECRET_BYTES: usize = 20;
/// Recovery codes made at a time.
pub const RECOVERY_CODES: usize = 10;
/// What authenticator apps list the account under.
pub const ISSUER: &str = "paydesk";

/// What a user typed at the second step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Code {
    /// Six digits from the authenticator (spaces dropped).
    Totp(String),
    /// A recovery code, normalised: lowercase, no spaces or dashes.
    Recovery(String),
}

impl Code {
    /// What `typed` is: six digits are an authenticator's code, anything else of a recovery
    /// code's length a recovery code; `None` for neither.
    pub fn parse(typed: &str) -> Option<Code> {
        let kept: String = typed.chars().filter(|c| !c.is_whitespace() && *c != '-').collect();
        if kept.len() == DIGITS && kept.bytes().all(|b| b.is_ascii_digit()) {
            return Some(Code::Totp(kept));
        }
        let kept = kept.to_ascii_lowercase();
        (kept.len() == 10 && kept.bytes().all(|b| RECOVERY_ALPHABET.contains(&b))).then_some(Code::Recovery(kept))
    }
}

fn totp(secret: &[u8], email: &str) -> TOTP {
    TOTP::new_unchecked(Algorithm::SHA1, DIGITS, 1, STEP, secret.to_vec(), Some(ISSUER.into()), email.into())
}

/// The time step of `code` for `secret` at `now`: the current step, the one before or the one
/// after, whichever the code was made for; `None` when it matches none of them.
pub fn matching_step(secret: &[u8], code: &str, now: DateTime<Utc>) -> Option<i64> {
    let totp = totp(secret, "");
    let current = u64::try_from(now.timestamp()).ok()? / STEP;
    [current.checked_sub(1), Some(current), Some(current + 1)].into_iter().flatten().find_map(|step| {
        let made = totp.generate(step * STEP);
        let same = made.len() == code.len() && made.bytes().zip(code.bytes()).fold(0u8, |d, (a, b)| d | (a ^ b)) == 0;
        same.then(|| i64::try_from(step).ok()).flatten()
    })
}

/// The code `secret` makes at `at` (for tests and the enrolment's example).
pub fn code_at(secret: &[u8], at: DateTime<Utc>) -> String {
    totp(secret, "").generate(u64::try_from(at.timestamp()).unwrap_or(0))
}

/// The `otpauth://` link an authenticator app reads from the QR code.
pub fn otpauth_url(secret: &[u8], email: &str) -> String {
    totp(secret, email).get_url()
}

/// The secret as a person types it into an authenticator: base32 in groups of four.
pub fn typed_secret(secret: &[u8]) -> String {
    let encoded = totp(secret, "").get_secret_base32();
    encoded.as_bytes().chunks(4).map(|c| String::from_utf8_lossy(c).into_owned()).collect::<Vec<_>>().join(" ")
}

/// Letters and digits of recovery codes: no 0/o, 1/l/i to misread.
const RECOVERY_ALPHABET: &[u8] = b"abcdefghjkmnpqrstuvwxyz23456789";

/// A new recovery code from ten random bytes (about 49 bits), shown as `xxxxx-xxxxx`.
pub fn recovery_code(random: [u8; 10]) -> String {
    let letters: String =
        random.iter().map(|b| RECOVERY_ALPHABET[usize::from(*b) % RECOVERY_ALPHABET.len()] as char).collect();
    format!("{}-{}", &letters[..5], &letters[5..])
}

/// What is kept of a user's recovery code: the SHA-256 of their id and the normalised code.
pub fn recovery_digest(user_id: &str, normalised: &str) -> String {
    super::ids::hex(&Sha256::digest(format!("{user_id}:{normalised}").as_bytes()))
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    /// RFC 6238's SHA-1 secret and its test vectors, cut to six digits.
    const RFC_SECRET: &[u8] = b"12345678901234567890";

    #[test]
    fn codes_are_rfc_6238s() {
        for (t, code) in
            [(59, "287082"), (1_111_111_109, "081804"), (1_234_567_890, "005924"), (2_000_000_000, "279037")]
        {
            assert_eq!(code_at(RFC_SECRET, Utc.timestamp_opt(t, 0).unwrap()), code, "{t}");
        }
    }

    #[test]
    fn a_code_matches_its_step_and_the_steps_beside_it_only() {
        let at = Utc.timestamp_opt(1_111_111_109, 0).unwrap();
        let step = 1_111_111_109 / 30;
        assert_eq!(matching_step(RFC_SECRET, "081804", at), Some(step));
        assert_eq!(matching_step(RFC_SECRET, "081804", at + chrono::Duration::seconds(30)), Some(step));
        assert_eq!(matching_step(RFC_SECRET, "081804", at - chrono::Duration::seconds(30)), Some(step));
        assert_eq!(matching_step(RFC_SECRET, "081804", at + chrono::Duration::seconds(61)), None, "stale");
        assert_eq!(matching_step(RFC_SECRET, "081805", at), None);
        assert_eq!(matching_step(RFC_SECRET, "81804", at), None);
    }

    #[test]
    fn what_is_typed_is_read_as_a_code_or_a_recovery_code() {
        assert_eq!(Code::parse(" 081 804 "), Some(Code::Totp("081804".into())));
        assert_eq!(Code::parse("ABCDE-fghjk"), Some(Code::Recovery("abcdefghjk".into())));
        assert_eq!(Code::parse("abcde fghjk"), Some(Code::Recovery("abcdefghjk".into())));
        assert_eq!(Code::parse("12345"), None);
        assert_eq!(Code::parse("abcde-fghj0"), None, "0 is never in a recovery code");
        let code = recovery_code([0, 1, 2, 3, 4, 250, 251, 252, 253, 254]);
        assert_eq!(code.len(), 11);
        assert!(matches!(Code::parse(&code), Some(Code::Recovery(_))));
        assert_ne!(recovery_digest("usr_a", "abcdefghjk"), recovery_digest("usr_b", "abcdefghjk"));
    }

    #[test]
    fn the_link_and_the_typed_secret_carry_the_same_secret() {
        let url = otpauth_url(RFC_SECRET, "ann@example.com");
        assert_eq!(
            url,
            "otpauth://totp/paydesk:ann%40example.com?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=paydesk"
        );
        assert_eq!(typed_secret(RFC_SECRET), "GEZD GNBV GY3T QOJQ GEZD GNBV GY3T QOJQ");
    }
}
