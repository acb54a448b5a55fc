//! Coupons: a percent or an amount off a subscription's plan periods, once, for N periods or
//! forever, with an optional last day to redeem, a most number of redemptions and the plans
//! they apply to. What a discount takes off a charge, and which charges it applies to, are
//! pure functions here.

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use super::Errors;
use super::currency::Currency;
use super::input::Reader;
use super::product::read_currency;
use super::vocab::words;

/// The longest code, name and list of plans.
const MAX_CODE: usize = 64;
const MAX_NAME: usize = 255;
const MAX_PLANS: usize = 100;
const MAX_PERIODS: i64 = 1000;
const MAX_REDEMPTIONS: i64 = 1_000_000_000;
/// The largest amount off, as the largest amount of a product or plan.
const MAX_AMOUNT: i64 = 1_000_000_000_000;

words! {
    /// For how many of a subscription's plan periods a coupon takes its discount.
    CouponDuration { Once = "once", Repeating = "repeating", Forever = "forever" }
}

/// What a coupon takes off: a percent (1–100) or an amount in a currency's minimal units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Off {
    Percent(i32),
    Amount(i64, Currency),
}

/// A new coupon, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CouponFields {
    /// What customers type: letters, digits, `-` and `_`, kept in capitals (codes are read
    /// case-insensitively).
    pub code: String,
    pub name: Option<String>,
    pub off: Off,
    pub duration: CouponDuration,
    /// For `repeating`: how many plan periods.
    pub duration_in_periods: Option<i32>,
    pub redeem_by: Option<DateTime<Utc>>,
    pub max_redemptions: Option<i32>,
    /// The plans it applies to; empty for every plan.
    pub plans: Vec<String>,
    pub test: bool,
}

/// A code as stored: trimmed, in capitals.
pub fn normalize_code(code: &str) -> String {
    code.trim().to_uppercase()
}

impl CouponFields {
    /// The fields as the audit trail records them.
    pub fn audited(&self) -> serde_json::Value {
        let (percent_off, amount_off, currency) = match self.off {
            Off::Percent(p) => (Some(p), None, None),
            Off::Amount(a, c) => (None, Some(a), Some(c.code)),
        };
        serde_json::json!({
            "code": self.code, "name": self.name, "percent_off": percent_off, "amount_off": amount_off,
            "currency": currency, "duration": self.duration.as_str(), "duration_in_periods": self.duration_in_periods,
            "max_redemptions": self.max_redemptions, "plans": self.plans, "test": self.test,
        })
    }

    /// Reads a create request: `code`, `percent_off` or `amount_off` with `currency`,
    /// `duration` (`once`, `repeating` with `duration_in_periods`, `forever`), and optionally
    /// `name`, `redeem_by`, `max_redemptions`, `plans`, `test`.
    pub fn parse(
        body: &Map<String, Value>,
        redeem_by: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
    ) -> Result<Self, Errors> {
        let r = Reader::new(body);
        let mut e = Errors::default();
        let code = r.string("code", MAX_CODE, &mut e).map(|c| normalize_code(&c));
        e.require("code", code.as_deref().is_none_or(str::is_empty));
        if let Some(code) = code.as_deref().filter(|c| !c.is_empty())
            && !code.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            e.add("code", "may hold only letters, digits, - and _");
        }
        let name = r.string("name", MAX_NAME, &mut e).filter(|n| !n.trim().is_empty());
        let percent = r.integer_in("percent_off", 1, 100, &mut e);
        let amount = r.integer_in("amount_off", 1, MAX_AMOUNT, &mut e);
        let currency = if r.value("currency").is_some() { read_currency(&r, "currency", &mut e) } else { None };
        let off = match (percent, amount, currency) {
            (Some(p), None, None) => Some(Off::Percent(p as i32)),
            (None, Some(a), Some(c)) => Some(Off::Amount(a, c)),
            (None, Some(_), None) => {
                e.require("currency", !e.has("currency"));
                None
            }
            (Some(_), _, _) if r.value("amount_off").is_some() => {
                e.add("amount_off", "must be blank when percent_off is given");
                None
            }
            (Some(_), None, Some(_)) => {
                e.add("currency", "must be blank when percent_off is given");
                None
            }
            _ => {
                if !e.has("percent_off") && !e.has("amount_off") {
                    e.add("percent_off", "can't be blank unless amount_off is given");
                }
                None
            }
        };
        let duration = r.choice("duration", CouponDuration::parse, &mut e).unwrap_or(CouponDuration::Once);
        let periods = r.integer_in("duration_in_periods", 1, MAX_PERIODS, &mut e);
        match duration {
            CouponDuration::Repeating => {
                e.require("duration_in_periods", periods.is_none() && !e.has("duration_in_periods"))
            }
            _ if periods.is_some() => e.add("duration_in_periods", "must be blank unless duration is repeating"),
            _ => {}
        }
        if redeem_by.is_some_and(|at| at <= now) {
            e.add("redeem_by", "must be in the future");
        }
        let max_redemptions = r.integer_in("max_redemptions", 1, MAX_REDEMPTIONS, &mut e).map(|m| m as i32);
        let mut plans = r.strings("plans", &mut e).unwrap_or_default();
        plans.sort();
        plans.dedup();
        if plans.len() > MAX_PLANS {
            e.add("plans", format!("may name at most {MAX_PLANS} plans"));
        }
        let test = r.boolean("test", &mut e).unwrap_or(false);
        e.into_result(|| CouponFields {
            code: code.unwrap_or_default(),
            name,
            off: off.unwrap_or(Off::Percent(1)),
            duration,
            duration_in_periods: periods.filter(|_| duration == CouponDuration::Repeating).map(|p| p as i32),
            redeem_by,
            max_redemptions,
            plans,
            test,
        })
    }

    /// For how many plan periods its discount lasts; `None` for ever.
    pub fn periods(&self) -> Option<i32> {
        periods_of(self.duration, self.duration_in_periods)
    }
}

/// For how many plan periods a discount of `duration` lasts; `None` for ever.
pub fn periods_of(duration: CouponDuration, repeating: Option<i32>) -> Option<i32> {
    match duration {
        CouponDuration::Once => Some(1),
        CouponDuration::Repeating => Some(repeating.unwrap_or(1)),
        CouponDuration::Forever => None,
    }
}

/// What `off` takes off a charge of `amount`: a percent rounded half up to minimal units, an
/// amount at most the charge.
pub fn discount(amount: i64, off: Off) -> i64 {
    match off {
        Off::Percent(p) => {
            let taken = (i128::from(amount) * i128::from(p) * 2 + 100) / 200;
            i64::try_from(taken).unwrap_or(amount).min(amount)
        }
        Off::Amount(a, _) => a.min(amount),
    }
}

/// Whether a discount applied when `from` plan periods were paid, lasting `periods` (`None`:
/// for ever), still applies to the charge of a plan period after `paid` were paid.
pub fn applies(paid: i32, from: i32, periods: Option<i32>) -> bool {
    periods.is_none_or(|n| paid.saturating_sub(from) < n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(body: Value) -> Result<CouponFields, Errors> {
        CouponFields::parse(body.as_object().unwrap(), None, Utc::now())
    }

    #[test]
    fn percents_round_half_up_and_amounts_never_exceed_the_charge() {
        assert_eq!(discount(990, Off::Percent(25)), 248); // 247.5
        assert_eq!(discount(990, Off::Percent(100)), 990);
        assert_eq!(discount(1, Off::Percent(50)), 1);
        let eur = crate::domain::currency::find("EUR").unwrap();
        assert_eq!(discount(990, Off::Amount(500, eur)), 500);
        assert_eq!(discount(300, Off::Amount(500, eur)), 300);
        assert_eq!(discount(i64::MAX, Off::Percent(100)), i64::MAX);
    }

    #[test]
    fn a_discount_lasts_its_periods_from_when_it_was_applied() {
        assert!(applies(0, 0, Some(1)) && !applies(1, 0, Some(1)));
        assert!(applies(4, 2, Some(3)) && !applies(5, 2, Some(3)));
        assert!(applies(1000, 0, None));
    }

    #[test]
    fn a_coupon_is_a_percent_or_an_amount_in_a_currency() {
        let c =
            parse(json!({"code": " spring-25 ", "percent_off": 25, "duration": "repeating", "duration_in_periods": 3}))
                .unwrap();
        assert_eq!((c.code.as_str(), c.off, c.periods()), ("SPRING-25", Off::Percent(25), Some(3)));
        let c = parse(json!({"code": "FIVE", "amount_off": 500, "currency": "EUR", "duration": "forever"})).unwrap();
        assert_eq!(c.periods(), None);
        for (body, field) in [
            (json!({"percent_off": 10}), "code"),
            (json!({"code": "a b", "percent_off": 10}), "code"),
            (json!({"code": "X"}), "percent_off"),
            (json!({"code": "X", "percent_off": 0}), "percent_off"),
            (json!({"code": "X", "percent_off": 101}), "percent_off"),
            (json!({"code": "X", "amount_off": 5}), "currency"),
            (json!({"code": "X", "percent_off": 5, "amount_off": 5, "currency": "EUR"}), "amount_off"),
            (json!({"code": "X", "percent_off": 5, "duration": "repeating"}), "duration_in_periods"),
            (json!({"code": "X", "percent_off": 5, "duration_in_periods": 2}), "duration_in_periods"),
            (json!({"code": "X", "percent_off": 5, "max_redemptions": 0}), "max_redemptions"),
        ] {
            let errors = parse(body.clone()).unwrap_err();
            assert!(errors.has(field), "{body}: {}", errors.message());
        }
    }
}
