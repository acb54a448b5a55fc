//! Tax rates and the tax of an invoice's line. A rate is kept in ten-thousandths of a percent
//! (19 % is 190,000), so four decimals are exact. The tax of a line is worked out on its whole
//! amount in minimal units and rounded once, half away from zero (docs/invoices.md).

use serde_json::{Map, Value};

use super::Errors;
use super::country::is_country;
use super::input::{Reader, msg};
use super::vocab::words;

/// 100 % in a rate's units.
pub const WHOLE: i64 = 1_000_000;
const MAX_NAME: usize = 100;
const MAX_REASON: usize = 255;

words! {
    /// What a rate is, in EN 16931's terms: `standard` (S, a rate above 0), `zero_rated` (Z),
    /// `exempt` (E, with the reason printed on the invoice). A reverse charge (AE) is not a
    /// rate: it follows from the buyer (vat_id.rs).
    TaxCategory { Standard = "standard", ZeroRated = "zero_rated", Exempt = "exempt" }
}

words! {
    /// Whether a product's or plan's price holds its tax (`inclusive`, what the customer pays
    /// whoever they are) or has it added (`exclusive`, the price before tax).
    TaxBehavior { Inclusive = "inclusive", Exclusive = "exclusive" }
}

/// How a product or plan is taxed: the shop's rate (`txr_…`, none for untaxed sales) and
/// whether its price holds the tax.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Taxing {
    pub rate_id: Option<String>,
    pub behavior: TaxBehavior,
}

impl Default for Taxing {
    /// Untaxed, and a price that holds whatever tax there is.
    fn default() -> Self {
        Taxing { rate_id: None, behavior: TaxBehavior::Inclusive }
    }
}

impl Taxing {
    /// Reads `tax_rate_id` (`null` or empty: untaxed) and `tax_behavior` over what is set;
    /// whether the rate is the shop's is for the caller to check.
    pub fn read(&mut self, r: &Reader, e: &mut Errors) {
        if r.sent("tax_rate_id") {
            self.rate_id = r.string("tax_rate_id", MAX_NAME, e);
        }
        if let Some(behavior) = r.choice("tax_behavior", TaxBehavior::parse, e) {
            self.behavior = behavior;
        }
    }

    /// The fields as the audit trail records them.
    pub fn audited(&self, into: &mut Value) {
        into["tax_rate_id"] = self.rate_id.clone().into();
        into["tax_behavior"] = self.behavior.as_str().into();
    }
}

/// A rate as a charge is taxed at: its percentage and category.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    pub percentage: i64,
    pub category: TaxCategory,
}

/// What a charge of `price` (after its discount) comes to at `rate` with `behavior`: the
/// amount charged and the tax it holds. A reverse-charged sale (the buyer accounts for the
/// tax) carries none: an exclusive price is then charged as it is, an inclusive one too (the
/// buyer pays the price the page showed). Only a standard rate is reverse-charged; a
/// zero-rated or exempt sale stays what it is. `None` when the amount would not fit.
pub fn charged(price: i64, rate: Rate, behavior: TaxBehavior, reverse_charged: bool) -> Option<(i64, i64)> {
    let percentage = if reverses(rate, reverse_charged) { 0 } else { rate.percentage };
    let line = line_amounts(1, price, 0, percentage, behavior == TaxBehavior::Inclusive)?;
    Some((line.gross, line.tax))
}

/// The tax a charge was made with, kept on its payment as it was charged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChargeTax {
    pub rate_id: String,
    pub behavior: TaxBehavior,
    /// The tax the charged amount holds.
    pub amount: i64,
    /// The buyer accounts for the tax (the amount holds none).
    pub reverse_charge: bool,
}

/// A charge of `price` (after its discount) taxed as `taxing` says, at `rate` (the rate it
/// names, as stored; `None` with no rate): what is charged and its tax. `None` when the amount
/// would not fit.
pub fn charge(
    price: i64,
    taxing: &Taxing,
    rate: Option<Rate>,
    reverse_charged: bool,
) -> Option<(i64, Option<ChargeTax>)> {
    let (Some(rate_id), Some(rate)) = (&taxing.rate_id, rate.filter(|_| price != 0)) else {
        return Some((price, None));
    };
    let (amount, tax) = charged(price, rate, taxing.behavior, reverse_charged)?;
    let reverse_charge = reverses(rate, reverse_charged);
    Some((amount, Some(ChargeTax { rate_id: rate_id.clone(), behavior: taxing.behavior, amount: tax, reverse_charge })))
}

/// Whether a sale at `rate` to a buyer the reverse charge applies to is reverse-charged.
pub fn reverses(rate: Rate, reverse_charged: bool) -> bool {
    reverse_charged && rate.category == TaxCategory::Standard
}

/// A new tax rate, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaxRateFields {
    pub name: String,
    /// In ten-thousandths of a percent.
    pub percentage: i64,
    pub category: TaxCategory,
    /// ISO 3166-1 alpha-2, where the rate applies.
    pub country: Option<String>,
    /// Why a sale is exempt, printed on its invoices; only for `exempt`.
    pub exemption_reason: Option<String>,
}

impl TaxRateFields {
    /// Reads a create request: `name`, `percentage` (0 to 100, at most four decimals),
    /// `category` (`standard` unless given), and optionally `country` and, for `exempt`, the
    /// `exemption_reason` it needs.
    pub fn parse(body: &Map<String, Value>) -> Result<Self, Errors> {
        let r = Reader::new(body);
        let mut e = Errors::default();
        let name = r.string("name", MAX_NAME, &mut e).map(|n| n.trim().to_owned());
        e.require("name", name.is_none() && !e.has("name"));
        let category = r.choice("category", TaxCategory::parse, &mut e).unwrap_or(TaxCategory::Standard);
        let percentage = percentage(&r, "percentage", &mut e);
        match (category, percentage) {
            (TaxCategory::Standard, None) if !e.has("percentage") => e.add("percentage", msg::BLANK),
            (TaxCategory::Standard, Some(0)) => e.add("percentage", "must be greater than 0 for a standard rate"),
            (TaxCategory::ZeroRated, Some(p)) if p != 0 => e.add("percentage", "must be 0 for a zero-rated rate"),
            (TaxCategory::Exempt, Some(p)) if p != 0 => e.add("percentage", "must be 0 for an exempt rate"),
            _ => {}
        }
        let country = r.string("country", 2, &mut e);
        if country.as_deref().is_some_and(|c| !is_country(c)) {
            e.add("country", NOT_A_COUNTRY);
        }
        let reason = r.string("exemption_reason", MAX_REASON, &mut e).map(|n| n.trim().to_owned());
        match category {
            TaxCategory::Exempt => e.require("exemption_reason", reason.is_none() && !e.has("exemption_reason")),
            _ if r.value("exemption_reason").is_some() => {
                e.add("exemption_reason", "must not be sent unless the category is exempt")
            }
            _ => {}
        }
        e.into_result(|| TaxRateFields {
            name: name.unwrap_or_default(),
            percentage: percentage.unwrap_or(0),
            category,
            country,
            exemption_reason: reason,
        })
    }

    /// The fields as the audit trail records them.
    pub fn audited(&self) -> Value {
        serde_json::json!({
            "name": self.name, "percentage": format_percentage(self.percentage), "category": self.category.as_str(),
            "country": self.country, "exemption_reason": self.exemption_reason,
        })
    }
}

/// A percentage from 0 to 100 with at most four decimals, sent as a JSON number or as its
/// digits in a string, in ten-thousandths of a percent.
fn percentage(r: &Reader, field: &str, e: &mut Errors) -> Option<i64> {
    let read = match r.value(field)? {
        // A JSON number is a binary fraction: it is read as the four-decimal number nearest
        // it (7.7 is 7.7), and one above 0 as at least 0.0001.
        Value::Number(n) => match n.as_f64().unwrap_or(f64::NAN) {
            f if f < 0.0 => Err(NEGATIVE),
            f if f > 100.0 => Err(OVER_100),
            f if f > 0.0 => Ok(((f * 10_000.0).round() as i64).max(1)),
            0.0 => Ok(0),
            _ => Err(msg::NOT_A_NUMBER),
        },
        Value::String(s) => parse_percentage(s.trim_matches(SPACES)),
        _ => Err(msg::NOT_A_NUMBER),
    };
    read.map_err(|m| e.add(&r.key(field), m)).ok()
}

/// What a percentage's digits may be surrounded by (the OpenAPI document's `[ \t\n\r]`).
const SPACES: [char; 4] = [' ', '\t', '\n', '\r'];

/// As customers' countries say it.
pub const NOT_A_COUNTRY: &str = "is not an ISO 3166-1 alpha-2 code";
const NEGATIVE: &str = "must be greater than or equal to 0";
const OVER_100: &str = "must be less than or equal to 100";
const DECIMALS: &str = "may have at most 4 decimals";

/// `"19"`, `"7.7"` or `"5.5000"` in ten-thousandths of a percent, from 0 to 100.
pub fn parse_percentage(text: &str) -> Result<i64, &'static str> {
    if text.starts_with('-') {
        return Err(NEGATIVE);
    }
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !digits(whole) || !digits(fraction) || (text.contains('.') && fraction.is_empty()) {
        return Err(msg::NOT_A_NUMBER);
    }
    if fraction.len() > 4 {
        return Err(DECIMALS);
    }
    let whole: i64 = whole.parse().map_err(|_| OVER_100)?;
    let units = whole.checked_mul(10_000).ok_or(OVER_100)? + format!("{fraction:0<4}").parse::<i64>().unwrap_or(0);
    if units > WHOLE { Err(OVER_100) } else { Ok(units) }
}

/// A rate's units as the percentage people write: `19`, `7.7`, `0.0001`.
pub fn format_percentage(units: i64) -> String {
    let (whole, fraction) = (units / 10_000, units % 10_000);
    if fraction == 0 {
        whole.to_string()
    } else {
        format!("{whole}.{}", format!("{fraction:04}").trim_end_matches('0'))
    }
}

/// A line's amounts, in the currency's minimal units: `net + tax = gross`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineAmounts {
    pub net: i64,
    pub tax: i64,
    pub gross: i64,
}

/// `n / d` rounded half away from zero (`d > 0`).
pub(crate) fn round_div(n: i128, d: i128) -> i128 {
    let (q, r) = (n / d, n % d);
    if 2 * r.abs() >= d { q + n.signum() } else { q }
}

/// The amounts of a line of `quantity` × `unit_amount` less `discount`, taxed at `rate`
/// (ten-thousandths of a percent). With `inclusive`, the price holds the tax: the line's
/// gross is that amount and its tax is `gross × rate ÷ (100 % + rate)`; otherwise its net is
/// that amount and its tax is `net × rate`. Each tax is rounded once, half away from zero.
/// `None` when an amount would not fit in 64 bits.
pub fn line_amounts(quantity: i64, unit_amount: i64, discount: i64, rate: i64, inclusive: bool) -> Option<LineAmounts> {
    let amount = quantity.checked_mul(unit_amount)?.checked_sub(discount)?;
    let (amount_wide, rate) = (i128::from(amount), i128::from(rate));
    if inclusive {
        let tax = i64::try_from(round_div(amount_wide * rate, i128::from(WHOLE) + rate)).ok()?;
        Some(LineAmounts { net: amount.checked_sub(tax)?, tax, gross: amount })
    } else {
        let tax = i64::try_from(round_div(amount_wide * rate, i128::from(WHOLE))).ok()?;
        Some(LineAmounts { net: amount, tax, gross: amount.checked_add(tax)? })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(body: Value) -> Result<TaxRateFields, Errors> {
        TaxRateFields::parse(body.as_object().unwrap())
    }

    #[test]
    fn percentages_are_exact_to_four_decimals() {
        assert_eq!(parse_percentage("19"), Ok(190_000));
        assert_eq!(parse_percentage("7.7"), Ok(77_000));
        assert_eq!(parse_percentage("5.5000"), Ok(55_000));
        assert_eq!(parse_percentage("5.50000"), Err("may have at most 4 decimals"));
        assert_eq!(parse_percentage("0.0001"), Ok(1));
        assert_eq!(parse_percentage("100"), Ok(1_000_000));
        assert_eq!(parse_percentage("0"), Ok(0));
        assert_eq!(parse_percentage("100.0001"), Err("must be less than or equal to 100"));
        assert_eq!(parse_percentage("99999999999999999999"), Err("must be less than or equal to 100"));
        assert_eq!(parse_percentage("1.23456"), Err("may have at most 4 decimals"));
        assert_eq!(parse_percentage("-1"), Err("must be greater than or equal to 0"));
        for bad in ["", "1e2", "1.", ".5", "abc", "1,5", "1.2.3"] {
            assert_eq!(parse_percentage(bad), Err(msg::NOT_A_NUMBER), "{bad}");
        }
        for units in [0, 1, 55_000, 77_000, 190_000, 1_000_000, 123_456] {
            assert_eq!(parse_percentage(&format_percentage(units)), Ok(units));
        }
        assert_eq!(format_percentage(77_000), "7.7");
        assert_eq!(format_percentage(1), "0.0001");
    }

    #[test]
    fn a_rate_is_read_with_every_problem_named() {
        let rate = parse(json!({"name": " VAT ", "percentage": 19, "country": "DE"})).unwrap();
        assert_eq!(
            rate,
            TaxRateFields {
                name: "VAT".into(),
                percentage: 190_000,
                category: TaxCategory::Standard,
                country: Some("DE".into()),
                exemption_reason: None,
            }
        );
        assert_eq!(parse(json!({"name": "VAT", "percentage": "7.7"})).unwrap().percentage, 77_000);
        assert_eq!(parse(json!({"name": "VAT", "percentage": 7.7})).unwrap().percentage, 77_000);
        assert_eq!(parse(json!({"name": "VAT", "percentage": 0.1 + 0.2})).unwrap().percentage, 3_000);
        assert_eq!(parse(json!({"name": "VAT", "percentage": 19.12346})).unwrap().percentage, 191_235);
        assert_eq!(
            parse(json!({"name": "VAT", "percentage": 0.00001})).unwrap().percentage,
            1,
            "above 0 stays above 0"
        );
        assert_eq!(parse(json!({"name": "VAT", "percentage": 100})).unwrap().percentage, WHOLE);
        assert_eq!(parse(json!({"name": "VAT", "percentage": " 7.5\n"})).unwrap().percentage, 75_000);
        let e = parse(json!({"name": "Z", "category": "zero_rated", "percentage": 1e-11})).unwrap_err();
        assert_eq!(e.get("percentage"), Some(&["must be 0 for a zero-rated rate".to_string()][..]));
        for (sent, message) in [
            (json!("0.00001"), "may have at most 4 decimals"),
            (json!("\u{1c}19"), "is not a number"),
            (json!(-2.5), "must be greater than or equal to 0"),
            (json!(100.00004), "must be less than or equal to 100"),
            (json!(1e300), "must be less than or equal to 100"),
        ] {
            let e = parse(json!({"name": "VAT", "percentage": sent})).unwrap_err();
            assert_eq!(e.get("percentage"), Some(&[message.to_string()][..]), "{sent}");
        }
        let exempt = parse(json!({"name": "Exempt", "category": "exempt", "exemption_reason": "Art. 132"})).unwrap();
        assert_eq!((exempt.percentage, exempt.exemption_reason.as_deref()), (0, Some("Art. 132")));

        let e = parse(json!({"percentage": 101, "country": "XX", "category": "reduced"})).unwrap_err();
        assert_eq!(e.get("name"), Some(&["can't be blank".to_string()][..]));
        assert_eq!(e.get("percentage"), Some(&["must be less than or equal to 100".to_string()][..]));
        assert_eq!(e.get("country"), Some(&[NOT_A_COUNTRY.to_string()][..]));
        assert_eq!(e.get("category"), Some(&["is not included in the list".to_string()][..]));
        let e = parse(json!({"name": "VAT"})).unwrap_err();
        assert_eq!(e.get("percentage"), Some(&["can't be blank".to_string()][..]));
        let e = parse(json!({"name": "VAT", "percentage": 0})).unwrap_err();
        assert_eq!(e.get("percentage"), Some(&["must be greater than 0 for a standard rate".to_string()][..]));
        let e = parse(json!({"name": "Z", "category": "zero_rated", "percentage": 5})).unwrap_err();
        assert_eq!(e.get("percentage"), Some(&["must be 0 for a zero-rated rate".to_string()][..]));
        let e =
            parse(json!({"name": "E", "category": "exempt", "percentage": 1, "exemption_reason": "x"})).unwrap_err();
        assert_eq!(e.get("percentage"), Some(&["must be 0 for an exempt rate".to_string()][..]));
        let e = parse(json!({"name": "E", "category": "exempt"})).unwrap_err();
        assert_eq!(e.get("exemption_reason"), Some(&["can't be blank".to_string()][..]));
        for reason in [json!("no"), json!(" ")] {
            let e = parse(json!({"name": "S", "percentage": 20, "exemption_reason": reason})).unwrap_err();
            assert_eq!(
                e.get("exemption_reason"),
                Some(&["must not be sent unless the category is exempt".to_string()][..])
            );
        }
        let e = parse(json!({"name": "S", "percentage": 20, "country": "de"})).unwrap_err();
        assert_eq!(e.get("country"), Some(&[NOT_A_COUNTRY.to_string()][..]));
        let e = parse(json!({"name": "S", "percentage": true})).unwrap_err();
        assert_eq!(e.get("percentage"), Some(&["is not a number".to_string()][..]));
    }

    #[test]
    fn the_worked_examples_of_the_docs() {
        // €100.00 at 19 %, the price without tax.
        assert_eq!(
            line_amounts(1, 10_000, 0, 190_000, false),
            Some(LineAmounts { net: 10_000, tax: 1_900, gross: 11_900 })
        );
        // €9.99 at 19 %, the price with tax: 9.99 × 19 ÷ 119 = 1.595… → 1.60.
        assert_eq!(line_amounts(1, 999, 0, 190_000, true), Some(LineAmounts { net: 839, tax: 160, gross: 999 }));
        // Three at €0.35 at 7.7 % without tax: 1.05 × 7.7 % = 0.08085 → 0.08.
        assert_eq!(line_amounts(3, 35, 0, 77_000, false), Some(LineAmounts { net: 105, tax: 8, gross: 113 }));
        // ¥1,000 (no minor units) at 10 %, with tax: 1000 × 10 ÷ 110 = 90.9… → 91.
        assert_eq!(line_amounts(1, 1_000, 0, 100_000, true), Some(LineAmounts { net: 909, tax: 91, gross: 1_000 }));
        // €12.90 less a €2.90 discount at 20 %, without tax.
        assert_eq!(
            line_amounts(1, 1_290, 290, 200_000, false),
            Some(LineAmounts { net: 1_000, tax: 200, gross: 1_200 })
        );
        // Half a cent rounds away from zero, both ways: 0.25 × 10 % = 0.025.
        assert_eq!(line_amounts(1, 25, 0, 100_000, false).unwrap().tax, 3);
        assert_eq!(line_amounts(1, -25, 0, 100_000, false).unwrap().tax, -3);
        // A reverse charge or an exempt sale: 0 %.
        assert_eq!(line_amounts(1, 999, 0, 0, true), Some(LineAmounts { net: 999, tax: 0, gross: 999 }));
    }

    #[test]
    fn amounts_that_do_not_fit_are_refused_not_wrapped() {
        assert_eq!(line_amounts(i64::MAX, 2, 0, 190_000, false), None);
        assert_eq!(line_amounts(1, i64::MAX, 0, 1_000_000, false), None);
        assert_eq!(line_amounts(1, i64::MIN, 1, 0, false), None);
        assert!(line_amounts(1, i64::MAX, 0, 1_000_000, true).is_some());
    }

    proptest::proptest! {
        #[test]
        fn a_lines_parts_add_up_and_its_tax_is_within_half_a_unit(
            quantity in 1i64..1_000, unit in 0i64..10_000_000, rate in 0i64..=WHOLE, inclusive: bool,
        ) {
            let line = line_amounts(quantity, unit, 0, rate, inclusive).unwrap();
            proptest::prop_assert_eq!(line.net + line.tax, line.gross);
            // The exact tax, times the divisor, against the rounded one.
            let (base, divisor) = if inclusive { (line.gross, WHOLE + rate) } else { (line.net, WHOLE) };
            let exact = i128::from(base) * i128::from(rate);
            proptest::prop_assert!((i128::from(line.tax) * i128::from(divisor) - exact).abs() * 2 <= i128::from(divisor));
        }
    }
}
