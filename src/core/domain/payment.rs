//! Which payments a list shows: the filters of `GET /payments` and the dashboard's list.

use chrono::{DateTime, Days, NaiveDate, TimeZone, Utc};
use chrono_tz::Tz;

use super::Errors;
use super::currency::{self, CURRENCIES};
use super::vocab::PaymentStatus;

/// `?product=&plan=&subscription=&customer=&status=` (or `product_id=` and so on): each one
/// given narrows the list to payments with that value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PaymentFilter {
    pub product: Option<String>,
    pub plan: Option<String>,
    pub subscription: Option<String>,
    pub customer: Option<String>,
    pub status: Option<PaymentStatus>,
}

impl PaymentFilter {
    /// The filters among `pairs` (name, value); other names are ignored.
    pub fn parse<K: AsRef<str>, V: AsRef<str>>(pairs: impl IntoIterator<Item = (K, V)>) -> Result<Self, Errors> {
        let mut filter = PaymentFilter::default();
        let mut errors = Errors::default();
        for (key, value) in pairs {
            let value = value.as_ref();
            let slot = match key.as_ref().trim_end_matches("_id") {
                "product" => &mut filter.product,
                "plan" => &mut filter.plan,
                "subscription" => &mut filter.subscription,
                "customer" => &mut filter.customer,
                "status" => {
                    match PaymentStatus::parse(value) {
                        Some(status) => filter.status = Some(status),
                        None => errors.add("status", "is not included in the list"),
                    }
                    continue;
                }
                _ => continue,
            };
            *slot = Some(value.to_string());
        }
        errors.into_result(|| filter)
    }
}

/// The dashboard's search of payments: the filters, test or live, a span of days, and what
/// was typed in the search box.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PaymentSearch {
    pub filter: PaymentFilter,
    /// `Some(true)`: test payments only; `Some(false)`: live only.
    pub test: Option<bool>,
    /// Payments made at or after this moment (the start of the first day asked for).
    pub from: Option<DateTime<Utc>>,
    /// Payments made before this moment (the end of the last day asked for).
    pub until: Option<DateTime<Utc>>,
    pub terms: Option<SearchTerms>,
}

/// What a search box's text may mean: a payment id, a card's last four digits, an amount,
/// or part of a customer's e-mail or name or of the name on the card. A payment matches if
/// any of the meanings does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchTerms {
    /// The text, lowercased, to find within e-mails and names.
    pub text: String,
    pub id: Option<String>,
    pub last4: Option<String>,
    /// The amount typed, in minimal units, for each currency exponent it can be read in.
    pub amounts: Vec<(u32, i64)>,
}

impl SearchTerms {
    /// Reads what was typed; `None` for blank.
    pub fn read(q: &str) -> Option<SearchTerms> {
        let q = q.trim();
        if q.is_empty() {
            return None;
        }
        let digits = q.len() == 4 && q.bytes().all(|b| b.is_ascii_digit());
        // "€9.90", "9.90 EUR": the number without its currency's sign or code.
        let mut typed = q.trim_matches(|ch: char| !ch.is_alphanumeric() && ch != ',' && ch != '.');
        let upper = typed.to_ascii_uppercase();
        for code in currency::codes() {
            if upper.starts_with(code) {
                typed = typed[code.len()..].trim();
                break;
            }
            if upper.ends_with(code) {
                typed = typed[..typed.len() - code.len()].trim();
                break;
            }
        }
        let mut amounts: Vec<(u32, i64)> = Vec::new();
        for reading in amount_readings(typed) {
            for c in CURRENCIES {
                if let Some(minor) = currency::parse_major(&reading, *c)
                    && !amounts.contains(&(c.exponent, minor))
                {
                    amounts.push((c.exponent, minor));
                }
            }
        }
        Some(SearchTerms {
            text: q.to_lowercase(),
            id: q.starts_with("pay_").then(|| q.to_string()),
            last4: digits.then(|| q.to_string()),
            amounts,
        })
    }
}

/// The plain numbers an amount typed in a search box may mean, however its digits are
/// grouped: "1 500,00", "1,500.00" and "1.500,00" all mean 1500.00; "1,500" means a thousand
/// five hundred to some and one and a half to others, so both are looked for.
fn amount_readings(typed: &str) -> Vec<String> {
    let plain = currency::ungrouped(typed);
    match plain.split_once([',', '.']) {
        Some((whole, fraction)) if fraction.len() == 3 => {
            // "1.500" as one and a half, written so no currency takes it for a thousand.
            let decimals = fraction.trim_end_matches('0');
            let small = if decimals.is_empty() { whole.to_string() } else { format!("{whole}.{decimals}") };
            vec![small, format!("{whole}{fraction}")]
        }
        _ => vec![plain],
    }
}

impl PaymentSearch {
    /// The search of a dashboard query: `pairs` of the list's form; days are read in `tz`.
    pub fn parse<K: AsRef<str>, V: AsRef<str>>(
        pairs: impl IntoIterator<Item = (K, V)> + Clone,
        tz: Tz,
    ) -> Result<Self, Errors> {
        let mut errors = Errors::default();
        let filter = PaymentFilter::parse(pairs.clone()).unwrap_or_else(|e| {
            e.for_each(|f, m| errors.add(f, m));
            PaymentFilter::default()
        });
        let mut search = PaymentSearch { filter, ..Default::default() };
        for (key, value) in pairs {
            let value = value.as_ref().trim();
            match key.as_ref() {
                "mode" => match value {
                    "test" => search.test = Some(true),
                    "live" => search.test = Some(false),
                    "" | "all" => {}
                    _ => errors.add("mode", "is not included in the list"),
                },
                "from" => match day_start(value, tz, 0) {
                    Some(at) => search.from = Some(at),
                    None => errors.add("from", "must be a date (YYYY-MM-DD)"),
                },
                "to" => match day_start(value, tz, 1) {
                    Some(at) => search.until = Some(at),
                    None => errors.add("to", "must be a date (YYYY-MM-DD)"),
                },
                "q" => search.terms = SearchTerms::read(value),
                _ => {}
            }
        }
        errors.into_result(|| search)
    }
}

/// The start of the day `days` after the date `raw` in `tz`.
fn day_start(raw: &str, tz: Tz, days: u64) -> Option<DateTime<Utc>> {
    let day = NaiveDate::parse_from_str(raw, "%Y-%m-%d").ok()?.checked_add_days(Days::new(days))?;
    let at = tz.from_local_datetime(&day.and_hms_opt(0, 0, 0)?).earliest()?;
    Some(at.with_timezone(&Utc))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_box_reads_ids_last_digits_amounts_and_text() {
        let t = SearchTerms::read(" 4242 ").unwrap();
        assert_eq!(t.last4.as_deref(), Some("4242"));
        assert!(t.amounts.contains(&(2, 424_200)) && t.amounts.contains(&(0, 4242)));
        let t = SearchTerms::read("9.90").unwrap();
        assert_eq!((t.last4, t.amounts.clone()), (None, vec![(2, 990), (3, 9900)]));
        assert_eq!(SearchTerms::read("€9,90").unwrap().amounts[0], (2, 990));
        assert_eq!(SearchTerms::read("9.90 EUR").unwrap().amounts[0], (2, 990));
        assert_eq!(SearchTerms::read("usd 12").unwrap().amounts[0], (2, 1200));
        for grouped in ["1 500,00 €", "1\u{202f}500,00", "€1,500.00", "1.500,00"] {
            assert_eq!(SearchTerms::read(grouped).unwrap().amounts[0], (2, 150_000), "{grouped}");
        }
        let both = SearchTerms::read("1,500").unwrap().amounts;
        assert!(both.contains(&(2, 150)) && both.contains(&(2, 150_000)), "{both:?}");
        let t = SearchTerms::read("pay_ab12").unwrap();
        assert_eq!((t.id.as_deref(), t.amounts.is_empty()), (Some("pay_ab12"), true));
        assert_eq!(SearchTerms::read("Ann@Example").unwrap().text, "ann@example");
        assert_eq!(SearchTerms::read("  "), None);
    }

    #[test]
    fn days_are_read_in_the_shops_zone() {
        let s = PaymentSearch::parse(
            [("from", "2026-11-01"), ("to", "2026-11-30"), ("mode", "live"), ("status", "succeeded")],
            chrono_tz::Europe::Berlin,
        )
        .unwrap();
        assert_eq!(s.from, Some("2026-10-31T23:00:00Z".parse().unwrap()));
        assert_eq!(s.until, Some("2026-11-30T23:00:00Z".parse().unwrap()));
        assert_eq!((s.test, s.filter.status), (Some(false), Some(PaymentStatus::Succeeded)));
        let e = PaymentSearch::parse([("from", "yesterday"), ("mode", "both")], chrono_tz::UTC).unwrap_err();
        assert!(e.has("from") && e.has("mode"));
    }

    #[test]
    fn filters_are_read_by_name() {
        let f = PaymentFilter::parse([("product_id", "prd_1"), ("status", "failed"), ("other", "x")]).unwrap();
        assert_eq!(f.product.as_deref(), Some("prd_1"));
        assert_eq!(f.status, Some(PaymentStatus::Failed));
        assert_eq!(f.plan, None);
        let e = PaymentFilter::parse([("status", "paid")]).unwrap_err();
        assert_eq!(e.message(), "Status is not included in the list");
    }
}
