//! A buyer's details as a merchant corrects them, for an invoice issued again.

use serde_json::{Map, Value};

use super::Party;
use crate::domain::Errors;
use crate::domain::country::is_country;
use crate::domain::input::{Reader, msg};
use crate::domain::product::MAX_SHORT;
use crate::domain::tax::NOT_A_COUNTRY;
use crate::domain::vat_id;

/// Reads `buyer`: `name` (required), `company`, `address_line1`, `address_line2`, `city`,
/// `postal_code`, `region`, `country` (ISO 3166-1 alpha-2), `vat_id` (in its country's form, or
/// its prefix's) and `email`; each at most 255 characters.
pub fn parse_buyer(body: &Map<String, Value>) -> Result<Party, Errors> {
    let mut e = Errors::default();
    let empty = Map::new();
    let r = Reader::new(body);
    let buyer = match r.object("buyer", "buyer.", &mut e) {
        Some(b) => b,
        None => {
            e.require("buyer", !e.has("buyer"));
            Reader::nested(&empty, "buyer.")
        }
    };
    let text = |field: &str, e: &mut Errors| buyer.string(field, MAX_SHORT, e).map(|t| t.trim().to_owned());
    let name = text("name", &mut e);
    if name.is_none() && !e.has("buyer.name") && !e.has("buyer") {
        e.add("buyer.name", msg::BLANK);
    }
    let country = text("country", &mut e).filter(|c| {
        let ok = is_country(c);
        if !ok {
            e.add("buyer.country", NOT_A_COUNTRY);
        }
        ok
    });
    let vat_id = text("vat_id", &mut e)
        .and_then(|raw| vat_id::read(country.as_deref(), &raw).map_err(|m| e.add("buyer.vat_id", m)).ok());
    // Without a country, the buyer is in the country of their VAT id.
    let country = country.or_else(|| vat_id.as_deref().and_then(vat_id::country_of).map(str::to_owned));
    let party = Party {
        name: name.unwrap_or_default(),
        company: text("company", &mut e),
        address_line1: text("address_line1", &mut e),
        address_line2: text("address_line2", &mut e),
        city: text("city", &mut e),
        postal_code: text("postal_code", &mut e),
        region: text("region", &mut e),
        country,
        vat_id,
        registration_number: None,
        email: text("email", &mut e),
    };
    e.into_result(|| party)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(body: Value) -> Result<Party, Errors> {
        parse_buyer(body.as_object().unwrap())
    }

    #[test]
    fn a_buyer_needs_a_name_and_a_vat_id_in_its_countrys_form() {
        let p = parse(json!({"buyer": {"name": " Anna ", "company": "Lumière SARL", "country": "FR", "vat_id": "fr 1a 123456789"}})).unwrap();
        assert_eq!((p.name.as_str(), p.vat_id.as_deref()), ("Anna", Some("FR1A123456789")));
        let e = parse(json!({})).unwrap_err();
        assert_eq!(e.get("buyer"), Some(&["can't be blank".to_string()][..]));
        let e = parse(json!({"buyer": {"country": "XX", "vat_id": "DE123"}})).unwrap_err();
        assert_eq!(e.get("buyer.name"), Some(&["can't be blank".to_string()][..]));
        assert_eq!(e.get("buyer.country"), Some(&[NOT_A_COUNTRY.to_string()][..]));
        assert!(e.has("buyer.vat_id"));
        let e = parse(json!({"buyer": "Anna"})).unwrap_err();
        assert!(e.has("buyer"));
    }
}
