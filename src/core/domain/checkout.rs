//! What a customer submits on a hosted page: the customer-data fields the merchant asked
//! for (all required) and, when cards are typed on paydesk's page, a card. Pure: the form
//! comes in as a map, time as an argument.

use std::collections::HashMap;

use chrono::{DateTime, NaiveDate, Utc};
use validator::ValidateEmail;

use super::card::{CardInput, RawCard};
use super::customer::CustomerFields;
use super::input::msg;
use super::vocab::VisibleField;
use super::{Errors, country};

/// A checked submission.
#[derive(Debug)]
pub struct Checkout {
    /// The asked-for fields, by field, as typed (trimmed).
    pub details: Vec<(VisibleField, String)>,
    /// The card, when the page asked for one (else the processor's page takes it).
    pub card: Option<CardInput>,
}

impl Checkout {
    /// Checks a form that asked for `fields` and, if `card`, a card.
    pub fn parse(
        fields: &[VisibleField],
        form: &HashMap<String, String>,
        card: bool,
        now: DateTime<Utc>,
    ) -> Result<Checkout, Errors> {
        let mut e = Errors::default();
        let get = |name: &str| form.get(name).map(|v| v.trim()).unwrap_or("");
        let country_asked = fields.contains(&VisibleField::Country);
        let mut details = Vec::new();
        for &field in fields {
            let value = get(field.as_str());
            // A state is asked only of countries that have states; elsewhere it is not kept.
            if field == VisibleField::State
                && country_asked
                && !country::has_states(&get("country").to_ascii_uppercase())
            {
                continue;
            }
            if value.is_empty() && field.optional() {
                continue;
            }
            if value.is_empty() {
                e.add(field.as_str(), msg::BLANK);
            } else if value.chars().count() > 255 {
                e.add(field.as_str(), msg::too_long(255));
            } else if let Some(problem) = check(field, value, get("country"), fields, now) {
                e.add(field.as_str(), problem);
            } else if field == VisibleField::VatId {
                let country = country_asked.then(|| get("country").to_ascii_uppercase());
                match super::vat_id::read(country.as_deref().filter(|c| !c.is_empty()), value) {
                    Ok(id) => details.push((field, id)),
                    Err(problem) => e.add(field.as_str(), problem),
                }
            } else {
                details.push((field, value.to_string()));
            }
        }
        if !card {
            return e.into_result(|| Checkout { details, card: None });
        }
        let raw = RawCard {
            number: get("card_number"),
            exp_month: get("card_exp_month"),
            exp_year: get("card_exp_year"),
            cvc: get("card_cvc"),
            holder: get("card_holder"),
        };
        let card = CardInput::parse(raw, now, &mut e);
        match card {
            Some(card) if e.is_empty() => Ok(Checkout { details, card: Some(card) }),
            _ => Err(e),
        }
    }

    /// The value typed for a field, if it was asked for.
    pub fn detail(&self, field: VisibleField) -> Option<&str> {
        self.details.iter().find(|(f, _)| *f == field).map(|(_, v)| v.as_str())
    }

    /// The customer the details make, paying from `ip`; none without an e-mail.
    pub fn customer(&self, ip: &str) -> Option<CustomerFields> {
        customer_fields(&self.details, ip)
    }

    /// The details and `ip`, kept with a payment whose end comes later (JSON).
    pub fn details_json(&self, ip: &str) -> String {
        let mut kept: serde_json::Map<String, serde_json::Value> =
            self.details.iter().map(|(f, v)| (f.as_str().to_string(), v.clone().into())).collect();
        kept.insert("ip".into(), ip.into());
        serde_json::Value::Object(kept).to_string()
    }
}

/// The customer that details kept by [`Checkout::details_json`] make; none without an e-mail.
pub fn customer_from_json(kept: &str) -> Option<CustomerFields> {
    let kept: HashMap<String, String> = serde_json::from_str(kept).ok()?;
    let ip = kept.get("ip").cloned().unwrap_or_default();
    let details: Vec<(VisibleField, String)> =
        kept.into_iter().filter_map(|(k, v)| Some((VisibleField::parse(&k)?, v))).collect();
    customer_fields(&details, &ip)
}

/// The customer that `details` make, paying from `ip`; none without an e-mail.
fn customer_fields(details: &[(VisibleField, String)], ip: &str) -> Option<CustomerFields> {
    let get = |field| details.iter().find(|(f, _)| *f == field).map(|(_, v)| v.clone());
    let upper = |field| get(field).map(|v: String| v.to_ascii_uppercase());
    Some(CustomerFields {
        first_name: get(VisibleField::FirstName),
        last_name: get(VisibleField::LastName),
        address: get(VisibleField::Address),
        city: get(VisibleField::City),
        country: upper(VisibleField::Country),
        zip: get(VisibleField::Zip),
        state: upper(VisibleField::State),
        phone: get(VisibleField::Phone),
        company: get(VisibleField::Company),
        vat_id: get(VisibleField::VatId),
        email: get(VisibleField::Email)?,
        ip: ip.to_string(),
        external_id: None,
    })
}

/// The problem with one field's value, if any (the customer rules of spec 2.3).
fn check(
    field: VisibleField,
    value: &str,
    country: &str,
    asked: &[VisibleField],
    now: DateTime<Utc>,
) -> Option<&'static str> {
    let country_asked = asked.contains(&VisibleField::Country);
    let ok = match field {
        VisibleField::Email => value.validate_email(),
        VisibleField::Country => country::is_country(&value.to_ascii_uppercase()),
        VisibleField::Zip if country_asked && country.eq_ignore_ascii_case("US") => {
            return us_zip_problem(value);
        }
        VisibleField::State if country_asked => {
            country::is_state_of(&country.to_ascii_uppercase(), &value.to_ascii_uppercase())
        }
        VisibleField::State => value.len() == 2 && value.chars().all(|c| c.is_ascii_alphabetic()),
        VisibleField::Phone => {
            let digits = value.chars().filter(char::is_ascii_digit).count();
            (5..=20).contains(&digits) && value.chars().all(|c| c.is_ascii_digit() || " +-().".contains(c))
        }
        VisibleField::BirthDate => {
            return match NaiveDate::parse_from_str(value, "%Y-%m-%d") {
                Ok(d) if d < now.date_naive() && chrono::Datelike::year(&d) > 1900 => None,
                _ => Some("must be a date in the past (YYYY-MM-DD)"),
            };
        }
        _ => true,
    };
    (!ok).then_some(msg::INVALID)
}

fn us_zip_problem(zip: &str) -> Option<&'static str> {
    (!super::customer::is_us_zip(zip)).then_some("must be NNNNN or NNNNN-NNNN for the US")
}

/// Where a paid customer is sent: the merchant's `return_url` with `payment_id`, `status`,
/// and, when the shop's secret key is known, `timestamp` (Unix seconds) and `signature`:
/// lowercase hex of HMAC-SHA256, keyed with the secret key, over
/// `payment_id={id}&status={status}&timestamp={timestamp}`. A merchant's site checks the
/// signature (and that the timestamp is recent) to trust the outcome without an API call.
pub fn signed_return(
    url: &str,
    payment_id: &str,
    status: &str,
    secret: Option<&str>,
    now: DateTime<Utc>,
) -> Option<String> {
    let mut url = url::Url::parse(url).ok()?;
    {
        let mut query = url.query_pairs_mut();
        query.append_pair("payment_id", payment_id).append_pair("status", status);
        if let Some(secret) = secret {
            let timestamp = now.timestamp();
            query
                .append_pair("timestamp", &timestamp.to_string())
                .append_pair("signature", &return_signature(secret, payment_id, status, timestamp));
        }
    }
    Some(url.to_string())
}

/// The `signature` of a return: see [`signed_return`].
pub fn return_signature(secret: &str, payment_id: &str, status: &str, timestamp: i64) -> String {
    use hmac::{Hmac, Mac};
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes any key");
    mac.update(format!("payment_id={payment_id}&status={status}&timestamp={timestamp}").as_bytes());
    super::ids::hex(&mac.finalize().into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> DateTime<Utc> {
        "2026-11-23T10:00:00Z".parse().unwrap()
    }

    fn form(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        let card = [
            ("card_number", "4200000000000000"),
            ("card_exp_month", "12"),
            ("card_exp_year", "30"),
            ("card_cvc", "123"),
            ("card_holder", "Ann Lee"),
        ];
        card.iter().chain(pairs).map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn asked_fields_are_required_and_others_ignored() {
        let asked = [VisibleField::Email, VisibleField::Phone];
        let e = Checkout::parse(&asked, &form(&[("first_name", "Ann")]), true, now()).unwrap_err();
        assert_eq!(e.get("email").unwrap(), ["can't be blank"]);
        assert_eq!(e.get("phone").unwrap(), ["can't be blank"]);
        let ok = Checkout::parse(&asked, &form(&[("email", "a@b.co"), ("phone", "+1 (518) 555-0100")]), true, now())
            .unwrap();
        assert_eq!(ok.detail(VisibleField::Email), Some("a@b.co"));
        assert_eq!(ok.detail(VisibleField::FirstName), None);
    }

    #[test]
    fn customer_rules_apply_to_the_page_too() {
        let asked = [
            VisibleField::Email,
            VisibleField::Country,
            VisibleField::Zip,
            VisibleField::State,
            VisibleField::BirthDate,
        ];
        let bad =
            form(&[("email", "nope"), ("country", "ZZ"), ("zip", "x"), ("state", "NY"), ("birth_date", "2030-01-01")]);
        let e = Checkout::parse(&asked, &bad, true, now()).unwrap_err();
        for f in ["email", "country", "birth_date"] {
            assert!(e.has(f), "{f}");
        }
        let us = form(&[
            ("email", "a@b.co"),
            ("country", "US"),
            ("zip", "1234"),
            ("state", "NY"),
            ("birth_date", "1990-05-01"),
        ]);
        let e = Checkout::parse(&asked, &us, true, now()).unwrap_err();
        assert_eq!(e.get("zip").unwrap(), ["must be NNNNN or NNNNN-NNNN for the US"]);
    }

    #[test]
    fn a_state_is_asked_only_of_countries_that_have_states() {
        let asked = [VisibleField::Country, VisibleField::State, VisibleField::Zip];
        let japan = Checkout::parse(&asked, &form(&[("country", "JP"), ("zip", "100-0001")]), true, now()).unwrap();
        assert_eq!(japan.detail(VisibleField::State), None);
        let typed = Checkout::parse(&asked, &form(&[("country", "JP"), ("state", "Tokyo"), ("zip", "1")]), true, now());
        assert_eq!(typed.unwrap().detail(VisibleField::State), None, "a state typed for Japan is not kept");
        let e = Checkout::parse(&asked, &form(&[("country", "US"), ("zip", "12207")]), true, now()).unwrap_err();
        assert_eq!(e.get("state").unwrap(), ["can't be blank"]);
        let e = Checkout::parse(&asked, &form(&[("country", "CA"), ("state", "NY"), ("zip", "K1A 0B1")]), true, now());
        assert_eq!(e.unwrap_err().get("state").unwrap(), ["is invalid"]);
        let ok = Checkout::parse(&asked, &form(&[("country", "CA"), ("state", "qc"), ("zip", "K1A 0B1")]), true, now());
        assert_eq!(ok.unwrap().detail(VisibleField::State), Some("qc"));
    }

    #[test]
    fn without_a_card_the_details_are_kept_for_the_customer_made_later() {
        let asked = [VisibleField::Email, VisibleField::Country];
        let ok = Checkout::parse(&asked, &form(&[("email", "a@b.co"), ("country", "de")]), false, now()).unwrap();
        assert!(ok.card.is_none());
        let kept = ok.details_json("192.0.2.7");
        let customer = customer_from_json(&kept).unwrap();
        assert_eq!(
            (customer.email.as_str(), customer.country.as_deref(), customer.ip.as_str()),
            ("a@b.co", Some("DE"), "192.0.2.7")
        );
        assert!(customer_from_json("{}").is_none(), "no e-mail, no customer");
    }

    #[test]
    fn card_problems_are_reported_with_the_fields() {
        let mut f = form(&[]);
        f.insert("card_number".into(), "4200000000000001".into());
        let e = Checkout::parse(&[], &f, true, now()).unwrap_err();
        assert!(e.has("card_number"));
    }

    #[test]
    fn a_return_carries_the_outcome_signed_with_the_shops_secret() {
        let now: DateTime<Utc> = "2026-11-24T12:00:00Z".parse().unwrap();
        let to =
            signed_return("https://shop.example/thanks?order=7", "pay_1", "succeeded", Some("sk_secret"), now).unwrap();
        let url = url::Url::parse(&to).unwrap();
        let q: HashMap<String, String> = url.query_pairs().into_owned().collect();
        assert_eq!((q["order"].as_str(), q["payment_id"].as_str(), q["status"].as_str()), ("7", "pay_1", "succeeded"));
        assert_eq!(q["timestamp"], "1795521600");
        // Computed independently: printf 'payment_id=pay_1&status=succeeded&timestamp=1795521600'
        //   | openssl dgst -sha256 -hmac sk_secret
        assert_eq!(q["signature"], "5dc63fdc8fdfd78eaa871ac1cad22b3cf3a21d78c81cced78606cc0f62271c9a");
        assert_ne!(q["signature"], return_signature("sk_other", "pay_1", "succeeded", 1_795_521_600));
        let unsigned = signed_return("https://shop.example/thanks", "pay_1", "failed", None, now).unwrap();
        assert_eq!(unsigned, "https://shop.example/thanks?payment_id=pay_1&status=failed");
    }
}
