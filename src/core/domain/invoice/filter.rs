//! Which documents a list shows.

use chrono::{DateTime, Utc};

use crate::domain::Errors;
use crate::domain::event::read_bound;

/// Which documents a list shows: `?customer=`, `?subscription=`, `?payment=`, `?invoice=`
/// (a credit note's), `?number=` (as printed, or its digits), and `?issued[gte]=` / `[gt]` /
/// `[lte]` / `[lt]` (RFC 3339 or Unix seconds).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DocumentFilter {
    pub customer: Option<String>,
    pub subscription: Option<String>,
    pub payment: Option<String>,
    pub invoice: Option<String>,
    pub number: Option<String>,
    /// From this moment on (inclusive).
    pub since: Option<DateTime<Utc>>,
    /// Before this moment (exclusive).
    pub until: Option<DateTime<Utc>>,
}

impl DocumentFilter {
    /// The filters among `pairs` (name, value); other names are ignored, and so is an empty
    /// value.
    pub fn parse<K: AsRef<str>, V: AsRef<str>>(pairs: impl IntoIterator<Item = (K, V)>) -> Result<Self, Errors> {
        let mut filter = DocumentFilter::default();
        let mut errors = Errors::default();
        for (key, value) in pairs {
            let (key, value) = (key.as_ref(), value.as_ref().trim());
            if read_bound("issued", (key, value), &mut filter.since, &mut filter.until, &mut errors) {
                continue;
            }
            let text = Some(value.to_owned()).filter(|v| !v.is_empty());
            match key.trim_end_matches("_id") {
                "customer" => filter.customer = text,
                "subscription" => filter.subscription = text,
                "payment" => filter.payment = text,
                "invoice" => filter.invoice = text,
                "number" => filter.number = text,
                _ => {}
            }
        }
        errors.into_result(|| filter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_read_ids_numbers_and_times() {
        let f = DocumentFilter::parse([("customer_id", "cst_1"), ("number", " INV-000002 "), ("issued[lt]", "60")])
            .unwrap();
        assert_eq!(f.customer.as_deref(), Some("cst_1"));
        assert_eq!(f.number.as_deref(), Some("INV-000002"));
        assert_eq!(f.until, DateTime::from_timestamp(60, 0));
        assert!(DocumentFilter::parse([("issued[gte]", "soon")]).unwrap_err().has("issued[gte]"));
    }
}
