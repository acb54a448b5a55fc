//! Money: an amount in minimal units of one currency. Amounts of different currencies never
//! add, and sums never overflow silently.

use super::currency::{self, Currency};

/// An amount in the currency's minimal units (`990` EUR is 9.90 €).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Money {
    pub amount: i64,
    pub currency: Currency,
}

/// `minor` units written in major units with a decimal point and no code, to `exponent`
/// decimals: `major_units(990, 2)` is `9.90`, `major_units(500, 0)` is `500`.
pub fn major_units(minor: i64, exponent: u32) -> String {
    if exponent == 0 {
        return minor.to_string();
    }
    let scale = 10u64.pow(exponent);
    let sign = if minor < 0 { "-" } else { "" };
    let abs = minor.unsigned_abs();
    format!("{sign}{}.{:0width$}", abs / scale, abs % scale, width = exponent as usize)
}

impl Money {
    /// `amount` minimal units of `currency`.
    pub fn new(amount: i64, currency: Currency) -> Money {
        Money { amount, currency }
    }

    /// `amount` of the currency with this code, if it is one.
    pub fn of(amount: i64, code: &str) -> Option<Money> {
        currency::find(code).map(|c| Money::new(amount, c))
    }

    /// The amount in major units with a decimal point and no code: `9.90`, `500` (JPY).
    pub fn major(&self) -> String {
        major_units(self.amount, self.currency.exponent)
    }

    /// The amount and code as a page shows them: `9.90 EUR`, or `9,90 EUR` where the
    /// language writes a decimal comma.
    pub fn display(&self, decimal_comma: bool) -> String {
        let number = self.major();
        let number = if decimal_comma { number.replace('.', ",") } else { number };
        format!("{number} {}", self.currency.code)
    }

    /// The sum of two amounts of one currency; `None` for two currencies or an overflow.
    pub fn checked_add(self, other: Money) -> Option<Money> {
        (self.currency == other.currency).then_some(())?;
        self.amount.checked_add(other.amount).map(|amount| Money::new(amount, self.currency))
    }
}

/// How a page shows an amount in a currency paydesk may no longer know: the amount in
/// minimal units and the stored code.
pub fn display(amount: i64, code: &str, decimal_comma: bool) -> String {
    match Money::of(amount, code) {
        Some(money) => money.display(decimal_comma),
        None => format!("{amount} {code}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_read_in_major_units() {
        assert_eq!(Money::of(990, "EUR").unwrap().major(), "9.90");
        assert_eq!(Money::of(5, "USD").unwrap().major(), "0.05");
        assert_eq!(Money::of(-5, "USD").unwrap().major(), "-0.05");
        assert_eq!(Money::of(500, "JPY").unwrap().major(), "500");
        assert_eq!(Money::of(1234, "KWD").unwrap().major(), "1.234");
        assert_eq!(Money::of(990, "EUR").unwrap().display(true), "9,90 EUR");
        assert_eq!(display(12, "XXX", false), "12 XXX");
    }

    #[test]
    fn only_one_currency_adds_and_never_overflows() {
        let eur = Money::of(i64::MAX, "EUR").unwrap();
        assert_eq!(eur.checked_add(Money::of(1, "EUR").unwrap()), None);
        assert_eq!(Money::of(1, "EUR").unwrap().checked_add(Money::of(1, "USD").unwrap()), None);
        assert_eq!(Money::of(1, "EUR").unwrap().checked_add(Money::of(2, "EUR").unwrap()), Money::of(3, "EUR"));
    }
}
