//! ISO 4217 currencies in circulation, with their minor units (digits after the point).
//! Funds codes, precious metals and the test code are not currencies a card is charged in,
//! and currencies withdrawn from circulation (HRK, ANG, SLL, ZWL, BGN) are refused too.

/// A currency a product or plan can be priced in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Currency {
    /// The alpha-3 code, `EUR`.
    pub code: &'static str,
    /// Digits of the minor unit: 2 for EUR (cents), 0 for JPY, 3 for KWD.
    pub exponent: u32,
}

const fn c(code: &'static str, exponent: u32) -> Currency {
    Currency { code, exponent }
}

/// Every accepted currency, sorted by code.
pub const CURRENCIES: &[Currency] = &[
    c("AED", 2),
    c("AFN", 2),
    c("ALL", 2),
    c("AMD", 2),
    c("AOA", 2),
    c("ARS", 2),
    c("AUD", 2),
    c("AWG", 2),
    c("AZN", 2),
    c("BAM", 2),
    c("BBD", 2),
    c("BDT", 2),
    c("BHD", 3),
    c("BIF", 0),
    c("BMD", 2),
    c("BND", 2),
    c("BOB", 2),
    c("BRL", 2),
    c("BSD", 2),
    c("BTN", 2),
    c("BWP", 2),
    c("BYN", 2),
    c("BZD", 2),
    c("CAD", 2),
    c("CDF", 2),
    c("CHF", 2),
    c("CLP", 0),
    c("CNY", 2),
    c("COP", 2),
    c("CRC", 2),
    c("CUP", 2),
    c("CVE", 2),
    c("CZK", 2),
    c("DJF", 0),
    c("DKK", 2),
    c("DOP", 2),
    c("DZD", 2),
    c("EGP", 2),
    c("ERN", 2),
    c("ETB", 2),
    c("EUR", 2),
    c("FJD", 2),
    c("FKP", 2),
    c("GBP", 2),
    c("GEL", 2),
    c("GHS", 2),
    c("GIP", 2),
    c("GMD", 2),
    c("GNF", 0),
    c("GTQ", 2),
    c("GYD", 2),
    c("HKD", 2),
    c("HNL", 2),
    c("HTG", 2),
    c("HUF", 2),
    c("IDR", 2),
    c("ILS", 2),
    c("INR", 2),
    c("IQD", 3),
    c("IRR", 2),
    c("ISK", 0),
    c("JMD", 2),
    c("JOD", 3),
    c("JPY", 0),
    c("KES", 2),
    c("KGS", 2),
    c("KHR", 2),
    c("KMF", 0),
    c("KPW", 2),
    c("KRW", 0),
    c("KWD", 3),
    c("KYD", 2),
    c("KZT", 2),
    c("LAK", 2),
    c("LBP", 2),
    c("LKR", 2),
    c("LRD", 2),
    c("LSL", 2),
    c("LYD", 3),
    c("MAD", 2),
    c("MDL", 2),
    c("MGA", 2),
    c("MKD", 2),
    c("MMK", 2),
    c("MNT", 2),
    c("MOP", 2),
    c("MRU", 2),
    c("MUR", 2),
    c("MVR", 2),
    c("MWK", 2),
    c("MXN", 2),
    c("MYR", 2),
    c("MZN", 2),
    c("NAD", 2),
    c("NGN", 2),
    c("NIO", 2),
    c("NOK", 2),
    c("NPR", 2),
    c("NZD", 2),
    c("OMR", 3),
    c("PAB", 2),
    c("PEN", 2),
    c("PGK", 2),
    c("PHP", 2),
    c("PKR", 2),
    c("PLN", 2),
    c("PYG", 0),
    c("QAR", 2),
    c("RON", 2),
    c("RSD", 2),
    c("RUB", 2),
    c("RWF", 0),
    c("SAR", 2),
    c("SBD", 2),
    c("SCR", 2),
    c("SDG", 2),
    c("SEK", 2),
    c("SGD", 2),
    c("SHP", 2),
    c("SLE", 2),
    c("SOS", 2),
    c("SRD", 2),
    c("SSP", 2),
    c("STN", 2),
    c("SVC", 2),
    c("SYP", 2),
    c("SZL", 2),
    c("THB", 2),
    c("TJS", 2),
    c("TMT", 2),
    c("TND", 3),
    c("TOP", 2),
    c("TRY", 2),
    c("TTD", 2),
    c("TWD", 2),
    c("TZS", 2),
    c("UAH", 2),
    c("UGX", 0),
    c("USD", 2),
    c("UYU", 2),
    c("UZS", 2),
    c("VED", 2),
    c("VES", 2),
    c("VND", 0),
    c("VUV", 0),
    c("WST", 2),
    c("XAF", 0),
    c("XCD", 2),
    c("XCG", 2),
    c("XOF", 0),
    c("XPF", 0),
    c("YER", 2),
    c("ZAR", 2),
    c("ZMW", 2),
    c("ZWG", 2),
];

/// The currency with this code, if it is accepted.
pub fn find(code: &str) -> Option<Currency> {
    CURRENCIES.binary_search_by(|c| c.code.cmp(code)).ok().map(|i| CURRENCIES[i])
}

impl std::fmt::Display for Currency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.code)
    }
}

impl serde::Serialize for Currency {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.code)
    }
}

/// In the OpenAPI document: an ISO 4217 alpha-3 code of [`CURRENCIES`].
impl utoipa::PartialSchema for Currency {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::schema::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .enum_values(Some(CURRENCIES.iter().map(|c| c.code)))
            .description(Some("ISO 4217 alpha-3 currency code, upper case"))
            .examples(["EUR"])
            .into()
    }
}

impl utoipa::ToSchema for Currency {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("Currency")
    }
}

// Stored as its code. A stored code that is not in the table is an error when the row is
// read, never a guess.
impl From<Currency> for sea_orm::Value {
    fn from(currency: Currency) -> Self {
        currency.code.to_string().into()
    }
}

impl sea_orm::TryGetable for Currency {
    fn try_get_by<I: sea_orm::ColIdx>(res: &sea_orm::QueryResult, index: I) -> Result<Self, sea_orm::TryGetError> {
        let code = String::try_get_by(res, index)?;
        find(&code)
            .ok_or_else(|| sea_orm::TryGetError::DbErr(sea_orm::DbErr::Type(format!("unknown currency {code:?}"))))
    }
}

impl sea_orm::sea_query::ValueType for Currency {
    fn try_from(value: sea_orm::Value) -> Result<Self, sea_orm::sea_query::ValueTypeErr> {
        let code = <String as sea_orm::sea_query::ValueType>::try_from(value)?;
        find(&code).ok_or(sea_orm::sea_query::ValueTypeErr)
    }

    fn type_name() -> String {
        "Currency".to_string()
    }

    fn array_type() -> sea_orm::sea_query::ArrayType {
        sea_orm::sea_query::ArrayType::String
    }

    fn column_type() -> sea_orm::sea_query::ColumnType {
        sea_orm::sea_query::ColumnType::Text
    }
}

impl sea_orm::sea_query::Nullable for Currency {
    fn null() -> sea_orm::Value {
        sea_orm::Value::String(None)
    }
}

/// Every code of the table, in order (for pickers).
pub fn codes() -> &'static [&'static str] {
    static CODES: std::sync::LazyLock<Vec<&'static str>> =
        std::sync::LazyLock::new(|| CURRENCIES.iter().map(|c| c.code).collect());
    &CODES
}

/// Whether a code has the shape of an alpha-3 code: three capital Latin letters.
pub fn is_alpha3(code: &str) -> bool {
    code.len() == 3 && code.bytes().all(|b| b.is_ascii_uppercase())
}

/// Reads a decimal amount in major units (`9.90`, `9,9`, `12`) as minimal units of
/// `currency` (`990`); `None` when it is not such a number or has too many decimals.
pub fn parse_major(raw: &str, currency: Currency) -> Option<i64> {
    // `1,000` could be a thousand or one: refused rather than guessed.
    if is_ambiguous(raw, Some(currency)) {
        return None;
    }
    // A currency without decimals reads `1,000` and `1.000.000` only as grouped digits.
    let raw = match currency.exponent == 0 && in_groups_of_three(raw.trim()) {
        true => raw.trim().replace([',', '.'], ""),
        false => raw.trim().replace(',', "."),
    };
    let (major, minor) = raw.split_once('.').unwrap_or((&raw, "0"));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(major) || !digits(minor) || minor.trim_end_matches('0').len() > currency.exponent as usize {
        return None;
    }
    let scale = 10i64.pow(currency.exponent);
    let minor = minor.trim_end_matches('0');
    let minor_value: i64 = format!("{minor:0<width$}", width = currency.exponent as usize).parse().unwrap_or(0);
    major.parse::<i64>().ok()?.checked_mul(scale)?.checked_add(minor_value)
}

/// An amount as typed with its digit grouping taken out: spaces go (`1 234,50`), and where both
/// a point and a comma appear the last one is the decimal mark (`1,234.50`, `1.234,50`). A lone
/// comma or point is left for [`parse_major`] and [`is_ambiguous`] to read.
pub fn ungrouped(raw: &str) -> String {
    let compact: String = raw.trim().chars().filter(|ch| !matches!(ch, ' ' | '\u{a0}' | '\u{202f}' | '\'')).collect();
    if !(compact.contains('.') && compact.contains(',')) {
        return compact;
    }
    let point = compact.rfind(['.', ',']).unwrap_or(0);
    let whole: String = compact[..point].chars().filter(|ch| !matches!(ch, '.' | ',')).collect();
    format!("{whole}.{}", &compact[point + 1..])
}

/// Whether an amount could be read two ways: `1,000` and `1.000` are a thousand to some and
/// one to others (but `1.000` of a three-decimal currency is one, and `0,001` is no thousand).
pub fn is_ambiguous(raw: &str, currency: Option<Currency>) -> bool {
    let raw = raw.trim();
    let Some(at) = raw.find([',', '.']) else { return false };
    let (whole, fraction) = (&raw[..at], &raw[at + 1..]);
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    let a_group = (1..=3).contains(&whole.len()) && !whole.starts_with('0') && digits(whole);
    let three_decimals = raw[at..].starts_with('.') && currency.is_some_and(|c| c.exponent == 3);
    let no_decimals = currency.is_some_and(|c| c.exponent == 0);
    a_group && fraction.len() == 3 && digits(fraction) && !three_decimals && !no_decimals
}

/// Whether `raw` is digits grouped by threes with commas or points: `1,000`, `1.000.000`.
fn in_groups_of_three(raw: &str) -> bool {
    let mut groups = raw.split([',', '.']);
    let first = groups.next().unwrap_or("");
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let rest: Vec<&str> = groups.collect();
    !rest.is_empty() && digits(first) && first.len() <= 3 && rest.iter().all(|g| g.len() == 3 && digits(g))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn major_units_are_read_into_minor_units() {
        let eur = find("EUR").unwrap();
        assert_eq!(parse_major("9.90", eur), Some(990));
        assert_eq!(parse_major("9,9", eur), Some(990));
        assert_eq!(parse_major(" 12 ", eur), Some(1200));
        assert_eq!(parse_major("0.05", eur), Some(5));
        assert_eq!(parse_major("0.050", eur), Some(5));
        assert_eq!(parse_major("500", find("JPY").unwrap()), Some(500));
        assert_eq!(parse_major("1.234", find("KWD").unwrap()), Some(1234));
        for (grouped, plain) in
            [("1 234,50", "1234,50"), ("1,234.50", "1234.50"), ("1.234,50", "1234.50"), ("1,000", "1,000")]
        {
            assert_eq!(ungrouped(grouped), plain);
        }
        for bad in ["9.999", "1.5", "abc", "", "-1", "1e3", "1.", ".5", "1,000", "1.000", "9.900", "0,001", "1.000,50"]
        {
            let currency = if bad == "1.5" { find("JPY").unwrap() } else { eur };
            assert_eq!(parse_major(bad, currency), None, "{bad}");
        }
    }

    #[test]
    fn an_amount_that_could_be_a_thousand_is_ambiguous() {
        let (eur, kwd) = (find("EUR"), find("KWD"));
        for two_ways in ["1,000", "1.000", "12,345", "999.000"] {
            assert!(is_ambiguous(two_ways, eur), "{two_ways}");
        }
        for one_way in ["0,001", "0.500", "1000,000", "1,00", "1.5", "9.99", "1234"] {
            assert!(!is_ambiguous(one_way, eur), "{one_way}");
        }
        assert!(!is_ambiguous("1.000", kwd) && is_ambiguous("1,000", kwd), "a point is a three-decimal currency's own");
        let jpy = find("JPY").unwrap();
        assert!(!is_ambiguous("1,000", Some(jpy)), "a currency without decimals has only thousands");
        assert_eq!(
            (parse_major("1,000", jpy), parse_major("1.000.000", jpy), parse_major("1,5", jpy)),
            (Some(1000), Some(1_000_000), None)
        );
    }

    #[test]
    fn table_is_sorted_for_binary_search() {
        assert!(CURRENCIES.windows(2).all(|w| w[0].code < w[1].code));
    }

    #[test]
    fn known_and_unknown_codes() {
        assert_eq!(find("EUR").unwrap().exponent, 2);
        assert_eq!(find("JPY").unwrap().exponent, 0);
        assert_eq!(find("KWD").unwrap().exponent, 3);
        for unknown in ["ABC", "HRK", "XAU", "XTS", "eur"] {
            assert_eq!(find(unknown), None, "{unknown}");
        }
    }

    #[test]
    fn alpha3_shape() {
        assert!(is_alpha3("ABC"));
        for bad in ["EU", "EURO", "eur", "E1R", ""] {
            assert!(!is_alpha3(bad), "{bad}");
        }
    }
}
