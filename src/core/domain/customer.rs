//! Customers (spec 2.3): who pays, with the address rules of the card networks.

use std::net::IpAddr;

use serde_json::{Map, Value};
use validator::ValidateEmail;

use super::input::{Reader, msg};
use super::product::MAX_SHORT;
use super::{Errors, country, vat_id};

/// A valid customer's fields.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CustomerFields {
    pub first_name: Option<String>,
    pub last_name: Option<String>,
    pub address: Option<String>,
    pub city: Option<String>,
    pub country: Option<String>,
    pub zip: Option<String>,
    pub state: Option<String>,
    pub phone: Option<String>,
    /// The company they buy for, named on their invoices.
    pub company: Option<String>,
    /// Their VAT id, normalised for its country (vat_id.rs).
    pub vat_id: Option<String>,
    pub email: String,
    /// The address as given, in its canonical text form.
    pub ip: String,
    pub external_id: Option<String>,
}

impl CustomerFields {
    /// The fields as the audit trail records them (not the addresses: who to reach, not where).
    pub fn audited(&self) -> serde_json::Value {
        serde_json::json!({
            "email": self.email, "first_name": self.first_name, "last_name": self.last_name,
            "phone": self.phone, "country": self.country, "external_id": self.external_id,
            "company": self.company, "vat_id": self.vat_id,
        })
    }

    /// Validates a create request.
    pub fn parse(body: &Map<String, Value>) -> Result<Self, Errors> {
        let r = Reader::new(body);
        let mut e = Errors::default();
        let text = |field: &str, e: &mut Errors| r.string(field, MAX_SHORT, e);

        let first_name = text("first_name", &mut e);
        let last_name = text("last_name", &mut e);
        let address = text("address", &mut e);
        let city = text("city", &mut e);
        let phone = text("phone", &mut e);
        let external_id = r.identifier("external_id", MAX_SHORT, &mut e);

        let company = text("company", &mut e);
        let (country, zip, state) = read_region(&r, &mut e);
        let vat_id = read_vat_id(&r, country.as_deref(), &mut e);
        let (email, ip) = read_contact(&r, &mut e);
        e.into_result(|| CustomerFields {
            first_name,
            last_name,
            address,
            city,
            country,
            zip,
            state,
            phone,
            company,
            vat_id,
            email: email.unwrap_or_default(),
            ip: ip.unwrap_or_default(),
            external_id,
        })
    }
}

/// The country, the zip code and the state, each checked against the country.
fn read_region(r: &Reader, e: &mut Errors) -> (Option<String>, Option<String>, Option<String>) {
    let text = |field: &str, e: &mut Errors| r.string(field, MAX_SHORT, e);
    let country = text("country", e).filter(|c| {
        let ok = country::is_country(c);
        if !ok {
            e.add("country", "is not an ISO 3166-1 alpha-2 code");
        }
        ok
    });
    let zip = text("zip", e).filter(|z| {
        let ok = country.as_deref() != Some("US") || is_us_zip(z);
        if !ok {
            e.add("zip", "must be NNNNN or NNNNN-NNNN for the US");
        }
        ok
    });
    let state = text("state", e).filter(|s| match country.as_deref() {
        Some(c) if country::has_states(c) => {
            let ok = country::is_state_of(c, s);
            if !ok {
                e.add("state", msg::INVALID);
            }
            ok
        }
        _ => {
            e.add("state", "may be sent only when country is US or CA");
            false
        }
    });
    (country, zip, state)
}

/// A VAT id in the form of the customer's `country`, or without one, of the country its
/// prefix names (`FR1A123456789`).
pub fn read_vat_id(r: &Reader, country: Option<&str>, e: &mut Errors) -> Option<String> {
    let raw = r.string("vat_id", MAX_SHORT, e)?;
    vat_id::read(country, &raw).map_err(|m| e.add(&r.key("vat_id"), m)).ok()
}

/// The e-mail and IP address, both required.
fn read_contact(r: &Reader, e: &mut Errors) -> (Option<String>, Option<String>) {
    let text = |field: &str, e: &mut Errors| r.string(field, MAX_SHORT, e);
    let email = text("email", e).filter(|m| {
        let ok = m.validate_email();
        if !ok {
            e.add("email", msg::INVALID);
        }
        ok
    });
    e.require("email", email.is_none());
    let ip = text("ip", e).and_then(|raw| match raw.trim().parse::<IpAddr>() {
        Ok(ip) => Some(ip.to_string()),
        Err(_) => {
            e.add("ip", msg::INVALID);
            None
        }
    });
    e.require("ip", ip.is_none());
    (email, ip)
}

/// `NNNNN` or `NNNNN-NNNN`.
pub(super) fn is_us_zip(zip: &str) -> bool {
    let b = zip.as_bytes();
    let digits = |s: &[u8]| s.iter().all(u8::is_ascii_digit);
    match b.len() {
        5 => digits(b),
        10 => digits(&b[..5]) && b[5] == b'-' && digits(&b[6..]),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(body: Value) -> Result<CustomerFields, Errors> {
        CustomerFields::parse(body.as_object().unwrap())
    }

    #[test]
    fn email_and_ip_are_required_and_checked() {
        let e = parse(json!({})).unwrap_err();
        assert_eq!(e.get("email").unwrap(), ["can't be blank"]);
        assert_eq!(e.get("ip").unwrap(), ["can't be blank"]);
        let e = parse(json!({"email": "nobody", "ip": "300.1.1.1"})).unwrap_err();
        assert_eq!(e.get("email").unwrap(), ["is invalid"]);
        assert_eq!(e.get("ip").unwrap(), ["is invalid"]);
        let c = parse(json!({"email": "a@b.co", "ip": "2001:DB8::1"})).unwrap();
        assert_eq!(c.ip, "2001:db8::1");
    }

    #[test]
    fn us_zips_have_five_or_nine_digits() {
        let base = json!({"email": "a@b.co", "ip": "127.0.0.1", "country": "US"});
        for (zip, ok) in
            [("12345", true), ("12345-6789", true), ("1234", false), ("123456789", false), ("ABCDE", false)]
        {
            let mut body = base.clone();
            body["zip"] = json!(zip);
            assert_eq!(parse(body).is_ok(), ok, "{zip}");
        }
        let mut body = base.clone();
        body["country"] = json!("GB");
        body["zip"] = json!("SW1A 1AA");
        assert!(parse(body).is_ok());
    }

    #[test]
    fn states_only_for_us_and_canada() {
        let body = |country: &str, state: &str| json!({"email": "a@b.co", "ip": "127.0.0.1", "country": country, "state": state});
        assert!(parse(body("US", "NY")).is_ok());
        assert!(parse(body("CA", "ON")).is_ok());
        assert!(parse(body("US", "ZZ")).unwrap_err().has("state"));
        assert!(parse(body("DE", "BY")).unwrap_err().has("state"));
        assert!(parse(json!({"email": "a@b.co", "ip": "127.0.0.1", "state": "NY"})).unwrap_err().has("state"));
    }

    #[test]
    fn country_and_external_id_limits() {
        let e = parse(json!({"email": "a@b.co", "ip": "::1", "country": "USA", "external_id": "x".repeat(256)}))
            .unwrap_err();
        assert!(e.has("country"));
        assert_eq!(e.get("external_id").unwrap(), ["is too long (maximum is 255 characters)"]);
    }
}
