//! Card details as a customer types them: checked before any charge (length, Luhn, expiry,
//! CVC). The number and CVC live only in a [`CardInput`] for the length of one request; its
//! `Debug` never prints them, and only the brand, last four digits and expiry are kept.

use std::borrow::Cow;

use chrono::{DateTime, Datelike, Utc};

use super::Errors;
use super::input::msg;
use super::vocab::words;

words! {
    /// What a simulated card does; the words of `POST /subscriptions/{id}/test_card_outcome`.
    Behaviour {
        Succeeds = "succeeds", Declined = "declined", InsufficientFunds = "insufficient_funds",
        ProcessingError = "processing_error",
        // Succeeds while the customer is present, declines when billed later.
        SucceedsThenDeclines = "succeeds_then_declines",
        // Charges succeed; every refund of them fails.
        RefundFails = "refund_fails",
    }
}

words! {
    /// What the simulated processor's card network does some minutes after a test card
    /// paid: open a dispute (a chargeback), open an inquiry, or send an early fraud warning.
    NetworkEvent { Dispute = "dispute", Inquiry = "inquiry", FraudWarning = "warning" }
}

/// What the simulated card network does after a payment with the card `token`: its
/// tokens carry it after the charge behaviour's word (`tok_sim_ok.dispute_…`).
pub fn network_of(token: &str) -> Option<NetworkEvent> {
    let word = token.strip_prefix("tok_sim_")?.split('_').next()?;
    NetworkEvent::parse(word.split_once('.')?.1)
}

/// A stored card: the acquirer's token and what may be shown. Never the number or CVC.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CardRef {
    pub token: String,
    pub brand: String,
    pub last4: String,
    pub exp_month: i32,
    pub exp_year: i32,
    pub holder: String,
    /// What identifies the card whatever its token (a new one each time it is entered):
    /// its processor's fingerprint, prefixed with the processor (`sim_`, `stripe_`, `bepaid_`).
    pub fingerprint: Option<String>,
}

/// How a charge, capture, void or refund ended, as far as is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Done; the acquirer's reference for later capture or void.
    Approved { reference: String },
    /// The issuer said no (`card_declined`, `insufficient_funds`, ...).
    Declined { code: &'static str, message: Cow<'static, str> },
    /// The charge could not be processed; trying again later may work.
    Error { code: &'static str, message: Cow<'static, str> },
    /// Not finished, or not known: the acquirer's answer was lost (a timeout, a 5xx, a
    /// dropped connection), it asked to wait (429), or the customer must authenticate at
    /// `redirect_url` (3-D Secure). Settled later under the same key, never charged anew.
    Pending { reference: Option<String>, redirect_url: Option<String> },
}

impl Outcome {
    /// An answer that is not known yet.
    pub fn unknown() -> Outcome {
        Outcome::Pending { reference: None, redirect_url: None }
    }
}

/// What the customer typed, checked. Never stored, never logged.
pub struct CardInput {
    number: String,
    cvc: String,
    pub exp_month: u32,
    pub exp_year: i32,
    pub holder: String,
}

impl std::fmt::Debug for CardInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CardInput")
            .field("brand", &self.brand())
            .field("last4", &self.last4())
            .field("exp_month", &self.exp_month)
            .field("exp_year", &self.exp_year)
            .finish_non_exhaustive()
    }
}

/// Raw card fields of a form, by name.
pub struct RawCard<'a> {
    pub number: &'a str,
    pub exp_month: &'a str,
    pub exp_year: &'a str,
    pub cvc: &'a str,
    pub holder: &'a str,
}

impl CardInput {
    /// Checks a card as typed at `now`; errors are keyed `card_number`, `card_expiry`,
    /// `card_cvc`, `card_holder`.
    pub fn parse(raw: RawCard, now: DateTime<Utc>, errors: &mut Errors) -> Option<CardInput> {
        let number: String = raw.number.chars().filter(|c| !matches!(c, ' ' | '-')).collect();
        if number.is_empty() {
            errors.add("card_number", msg::BLANK);
        } else if !(12..=19).contains(&number.len()) || !number.bytes().all(|b| b.is_ascii_digit()) || !luhn(&number) {
            errors.add("card_number", "is not a valid card number");
        }

        let month = raw.exp_month.trim().parse::<u32>().ok().filter(|m| (1..=12).contains(m));
        let year = raw.exp_year.trim().parse::<i32>().ok().map(|y| if y < 100 { 2000 + y } else { y });
        match (month, year) {
            (Some(m), Some(y)) if (y, m) < (now.year(), now.month()) => errors.add("card_expiry", "is in the past"),
            (Some(_), Some(y)) if y > now.year() + 25 => errors.add("card_expiry", msg::INVALID),
            (Some(_), Some(_)) => {}
            _ if raw.exp_month.trim().is_empty() || raw.exp_year.trim().is_empty() => {
                errors.add("card_expiry", msg::BLANK)
            }
            _ => errors.add("card_expiry", msg::INVALID),
        }

        let cvc = raw.cvc.trim();
        if cvc.is_empty() {
            errors.add("card_cvc", msg::BLANK);
        } else if !(3..=4).contains(&cvc.len()) || !cvc.bytes().all(|b| b.is_ascii_digit()) {
            errors.add("card_cvc", "must be 3 or 4 digits");
        }

        let holder = raw.holder.trim();
        if holder.is_empty() {
            errors.add("card_holder", msg::BLANK);
        } else if holder.chars().count() > 100 {
            errors.add("card_holder", msg::too_long(100));
        }

        let ok = ["card_number", "card_expiry", "card_cvc", "card_holder"].iter().all(|f| !errors.has(f));
        ok.then(|| CardInput {
            number,
            cvc: cvc.to_string(),
            exp_month: month.unwrap_or(1),
            exp_year: year.unwrap_or(2000),
            holder: holder.to_string(),
        })
    }

    /// The full number, for the acquirer only.
    pub fn number(&self) -> &str {
        &self.number
    }

    /// The CVC, for the acquirer only.
    pub fn cvc(&self) -> &str {
        &self.cvc
    }

    /// The last four digits, which may be shown and stored.
    pub fn last4(&self) -> &str {
        &self.number[self.number.len() - 4..]
    }

    /// The card network, from the number's prefix.
    pub fn brand(&self) -> &'static str {
        brand(&self.number)
    }
}

/// The Luhn checksum of a string of digits.
pub fn luhn(digits: &str) -> bool {
    let sum: u32 = digits
        .bytes()
        .rev()
        .enumerate()
        .map(|(i, b)| {
            let d = u32::from(b - b'0');
            if i % 2 == 1 { if d * 2 > 9 { d * 2 - 9 } else { d * 2 } } else { d }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// The card network of a number, by its issuer prefix.
pub fn brand(number: &str) -> &'static str {
    let prefix = |n: usize| number.get(..n).and_then(|p| p.parse::<u32>().ok()).unwrap_or(0);
    match (prefix(1), prefix(2), prefix(4)) {
        (4, _, _) => "visa",
        (_, 51..=55, _) | (_, _, 2221..=2720) => "mastercard",
        (_, _, 2200..=2204) => "mir",
        (_, 34 | 37, _) => "amex",
        (_, 65, _) | (_, _, 6011) => "discover",
        (_, 35, _) => "jcb",
        (_, 62, _) => "unionpay",
        _ => "card",
    }
}

/// A card network's name as people write it (`Visa`, `Mastercard`), for pages; the API keeps
/// the code (`visa`).
pub fn brand_name(brand: &str) -> &str {
    match brand {
        "visa" => "Visa",
        "mastercard" => "Mastercard",
        "mir" => "Mir",
        "amex" => "American Express",
        "discover" => "Discover",
        "jcb" => "JCB",
        "unionpay" => "UnionPay",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> DateTime<Utc> {
        "2026-11-23T10:00:00Z".parse().unwrap()
    }

    fn raw<'a>(number: &'a str, month: &'a str, year: &'a str, cvc: &'a str) -> RawCard<'a> {
        RawCard { number, exp_month: month, exp_year: year, cvc, holder: "Ann Lee" }
    }

    #[test]
    fn a_good_card_keeps_only_what_may_be_shown() {
        let mut e = Errors::default();
        let card = CardInput::parse(raw("4200 0000 0000 0000", "11", "26", "123"), now(), &mut e).unwrap();
        assert!(e.is_empty());
        assert_eq!((card.brand(), card.last4(), card.exp_year), ("visa", "0000", 2026));
        let shown = format!("{card:?}");
        assert!(!shown.contains("4200000000000000") && !shown.contains("123"), "{shown}");
    }

    #[test]
    fn bad_numbers_expiries_and_cvcs_are_refused_before_any_charge() {
        for (r, field) in [
            (raw("4200000000000001", "12", "2030", "123"), "card_number"),
            (raw("42", "12", "2030", "123"), "card_number"),
            (raw("4200000000000000", "10", "2026", "123"), "card_expiry"),
            (raw("4200000000000000", "13", "2030", "123"), "card_expiry"),
            (raw("4200000000000000", "", "", "123"), "card_expiry"),
            (raw("4200000000000000", "12", "2030", "12"), "card_cvc"),
            (raw("4200000000000000", "12", "2030", "abc"), "card_cvc"),
        ] {
            let mut e = Errors::default();
            assert!(CardInput::parse(r, now(), &mut e).is_none());
            assert!(e.has(field), "{field}: {e:?}");
        }
    }

    #[test]
    fn brands_by_prefix() {
        assert_eq!(brand("5555555555554444"), "mastercard");
        assert_eq!(brand("2221000000000009"), "mastercard");
        assert_eq!(brand("378282246310005"), "amex");
        assert_eq!(brand("2200000000000004"), "mir");
        assert_eq!(brand("6011111111111117"), "discover");
    }
}
