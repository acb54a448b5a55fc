//! The seller an invoice names: the shop's legal name, address, VAT id, company registration
//! number and the footer its invoices print. Set as a whole; what invoices still need is
//! named, so that the dashboard can say so before they start.

use serde_json::{Map, Value};

use super::Errors;
use super::country::is_country;
use super::input::{Reader, msg};
use super::tax::NOT_A_COUNTRY;
use super::vat_id;

/// The seller's details; every field may still be empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Seller {
    pub legal_name: Option<String>,
    pub address_line1: Option<String>,
    pub address_line2: Option<String>,
    pub city: Option<String>,
    pub postal_code: Option<String>,
    /// ISO 3166-1 alpha-2.
    pub country: Option<String>,
    /// In the form [`vat_id::normalize`] keeps.
    pub vat_id: Option<String>,
    pub registration_number: Option<String>,
    /// Printed at the foot of every invoice (bank details, a note of the seller's tax status).
    pub invoice_footer: Option<String>,
}

/// The fields, with their longest lengths, in the order forms and the audit trail show them.
pub const FIELDS: [(&str, usize); 9] = [
    ("legal_name", 200),
    ("address_line1", 200),
    ("address_line2", 200),
    ("city", 100),
    ("postal_code", 20),
    ("country", 2),
    ("vat_id", 20),
    ("registration_number", 100),
    ("invoice_footer", 1000),
];

/// What an invoice cannot be issued without.
pub const REQUIRED: [&str; 4] = ["legal_name", "address_line1", "city", "country"];

impl Seller {
    /// Reads the whole set of details: a field not sent, `null` or blank is empty.
    pub fn parse(body: &Map<String, Value>) -> Result<Self, Errors> {
        let r = Reader::new(body);
        let mut e = Errors::default();
        let mut read = |field: &str| {
            let max = FIELDS.iter().find(|(name, _)| *name == field).map_or(0, |(_, max)| *max);
            match r.value(field) {
                // Too long is too long, blank or not (the OpenAPI document's maxLength).
                Some(Value::String(s)) if s.chars().count() > max => {
                    e.add(field, msg::too_long(max));
                    None
                }
                _ => r.string(field, max, &mut e).map(|s| s.trim().to_owned()),
            }
        };
        let mut seller = Seller {
            legal_name: read("legal_name"),
            address_line1: read("address_line1"),
            address_line2: read("address_line2"),
            city: read("city"),
            postal_code: read("postal_code"),
            country: read("country"),
            vat_id: None,
            registration_number: read("registration_number"),
            invoice_footer: read("invoice_footer"),
        };
        // A VAT id is read as typed: only spaces make it blank, and its separators are
        // vat_id::SEPARATORS (no tabs or other white space).
        seller.vat_id = match r.value("vat_id") {
            Some(Value::String(s)) if s.chars().count() > 20 => {
                e.add("vat_id", msg::too_long(20));
                None
            }
            Some(Value::String(s)) if s.chars().all(|c| c == ' ') => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(_) => {
                e.add("vat_id", msg::NOT_A_STRING);
                None
            }
            None => None,
        };
        if seller.country.as_deref().is_some_and(|c| !is_country(c)) {
            e.add("country", NOT_A_COUNTRY);
        }
        if let Some(id) = seller.vat_id.take() {
            match seller.country.as_deref().filter(|c| is_country(c)) {
                Some(country) => match vat_id::normalize(country, &id) {
                    Ok(id) => seller.vat_id = Some(id),
                    Err(message) => e.add("vat_id", message),
                },
                None if !e.has("country") => e.add("country", "can't be blank when vat_id is given"),
                None => {}
            }
        }
        e.into_result(|| seller)
    }

    /// Each field by name, as [`FIELDS`] orders them.
    pub fn fields(&self) -> [(&'static str, Option<&str>); 9] {
        [
            ("legal_name", self.legal_name.as_deref()),
            ("address_line1", self.address_line1.as_deref()),
            ("address_line2", self.address_line2.as_deref()),
            ("city", self.city.as_deref()),
            ("postal_code", self.postal_code.as_deref()),
            ("country", self.country.as_deref()),
            ("vat_id", self.vat_id.as_deref()),
            ("registration_number", self.registration_number.as_deref()),
            ("invoice_footer", self.invoice_footer.as_deref()),
        ]
    }

    /// What invoices still need, by field name; empty once they can be issued.
    pub fn missing(&self) -> Vec<&'static str> {
        self.fields()
            .into_iter()
            .filter(|(name, value)| REQUIRED.contains(name) && value.is_none())
            .map(|(n, _)| n)
            .collect()
    }

    /// The details as the audit trail records them.
    pub fn audited(&self) -> Value {
        Value::Object(self.fields().into_iter().map(|(name, value)| (name.to_owned(), value.into())).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(body: Value) -> Result<Seller, Errors> {
        Seller::parse(body.as_object().unwrap())
    }

    #[test]
    fn details_are_read_whole_and_what_invoices_need_is_named() {
        let seller = parse(json!({
            "legal_name": " Corner Books GmbH ", "address_line1": "Hauptstraße 1", "city": "Berlin",
            "postal_code": "10115", "country": "DE", "vat_id": "de 123 456 789", "address_line2": " ",
        }))
        .unwrap();
        assert_eq!(seller.legal_name.as_deref(), Some("Corner Books GmbH"));
        assert_eq!((seller.country.as_deref(), seller.vat_id.as_deref()), (Some("DE"), Some("DE123456789")));
        assert_eq!(seller.address_line2, None);
        assert!(seller.missing().is_empty());
        assert_eq!(parse(json!({})).unwrap(), Seller::default());
        assert_eq!(Seller::default().missing(), REQUIRED);
        assert_eq!(
            parse(json!({"legal_name": "X", "city": null})).unwrap().missing(),
            ["address_line1", "city", "country"]
        );
        assert_eq!(seller.audited()["vat_id"], json!("DE123456789"));
        assert_eq!(seller.audited()["address_line2"], Value::Null);
    }

    #[test]
    fn a_vat_id_is_checked_for_the_sellers_country() {
        let e = parse(json!({"country": "DE", "vat_id": "FR1A123456789"})).unwrap_err();
        assert_eq!(e.get("vat_id"), Some(&["is not in the form of the country's VAT ids".to_string()][..]));
        let e = parse(json!({"vat_id": "DE123456789"})).unwrap_err();
        assert_eq!(e.get("country"), Some(&["can't be blank when vat_id is given".to_string()][..]));
        let e = parse(json!({"country": "XX", "vat_id": "DE123456789", "legal_name": "x".repeat(201)})).unwrap_err();
        assert_eq!(e.get("country"), Some(&[NOT_A_COUNTRY.to_string()][..]));
        assert_eq!(e.get("vat_id"), None);
        assert_eq!(e.get("legal_name"), Some(&["is too long (maximum is 200 characters)".to_string()][..]));
        let e = parse(json!({"vat_id": " ".repeat(21)})).unwrap_err();
        assert_eq!(e.get("vat_id"), Some(&["is too long (maximum is 20 characters)".to_string()][..]));
        let e = parse(json!({"country": "DE", "vat_id": "\tDE123456789"})).unwrap_err();
        assert_eq!(e.get("vat_id"), Some(&["is not a VAT id".to_string()][..]));
        assert_eq!(parse(json!({"vat_id": "   "})).unwrap().vat_id, None);
        let e = parse(json!({"city": 5})).unwrap_err();
        assert_eq!(e.get("city"), Some(&["must be a string".to_string()][..]));
    }
}
