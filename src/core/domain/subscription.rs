//! `POST /subscriptions` as existing clients of this API family send it: the plan, the
//! customer (by id or inline), optionally the card, and the merchant's own references.

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use super::Errors;
use super::billing::State;
use super::card::{CardInput, RawCard};
use super::customer::CustomerFields;
use super::input::{Reader, msg};
use super::product::{MAX_SHORT, read_url};

/// Which subscriptions a list shows: `?state=&plan=&customer=` (or `plan_id=`,
/// `customer_id=`): each one given narrows the list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SubscriptionFilter {
    pub state: Option<State>,
    pub plan: Option<String>,
    pub customer: Option<String>,
}

impl SubscriptionFilter {
    /// The filters among `pairs` (name, value); other names are ignored.
    pub fn parse<K: AsRef<str>, V: AsRef<str>>(pairs: impl IntoIterator<Item = (K, V)>) -> Result<Self, Errors> {
        let mut filter = SubscriptionFilter::default();
        let mut errors = Errors::default();
        for (key, value) in pairs {
            let value = value.as_ref();
            match key.as_ref() {
                "state" => match State::parse(value) {
                    Some(state) => filter.state = Some(state),
                    None => errors.add("state", "is not included in the list"),
                },
                "plan" | "plan_id" => filter.plan = Some(value.to_string()),
                "customer" | "customer_id" => filter.customer = Some(value.to_string()),
                _ => {}
            }
        }
        errors.into_result(|| filter)
    }
}

/// Who subscribes.
#[derive(Debug)]
pub enum CustomerRef {
    Existing(String),
    New(Box<CustomerFields>),
}

/// A checked subscription request.
#[derive(Debug)]
pub struct SubscriptionRequest {
    pub plan_id: String,
    pub customer: CustomerRef,
    pub card: Option<CardInput>,
    pub return_url: Option<String>,
    pub notification_url: Option<String>,
    pub tracking_id: Option<String>,
    /// The merchant's `additional_data` object, kept as JSON text.
    pub additional_data: Option<String>,
    pub test_clock: Option<String>,
    /// The subscription's id when the asker chose it (a dashboard form's one-time id), so the
    /// same form sent twice starts one subscription. The API leaves it to paydesk.
    pub id: Option<String>,
}

impl SubscriptionRequest {
    /// Checks a request at `now` (for the card's expiry).
    pub fn parse(body: &Map<String, Value>, now: DateTime<Utc>) -> Result<Self, Errors> {
        let r = Reader::new(body);
        let mut e = Errors::default();

        let plan_id = match r.object("plan", "plan.", &mut e) {
            Some(plan) => plan.string("id", MAX_SHORT, &mut e),
            None => r.string("plan_id", MAX_SHORT, &mut e),
        };
        e.require(if r.value("plan").is_some() { "plan.id" } else { "plan_id" }, plan_id.is_none());

        let customer = read_customer(&r, &mut e);
        let card = read_card(&r, now, &mut e);
        let return_url = read_url(&r, "return_url", &mut e);
        let notification_url = read_url(&r, "notification_url", &mut e);
        let tracking_id = r.identifier("tracking_id", MAX_SHORT, &mut e);
        let additional_data = match r.value("additional_data") {
            Some(Value::Object(data)) => Some(Value::Object(data.clone()).to_string()),
            Some(_) => {
                e.add("additional_data", msg::NOT_AN_OBJECT);
                None
            }
            None => None,
        };
        let test_clock = r.string("test_clock", MAX_SHORT, &mut e);

        match (plan_id, customer) {
            (Some(plan_id), Some(customer)) if e.is_empty() => Ok(SubscriptionRequest {
                plan_id,
                customer,
                card,
                return_url,
                notification_url,
                tracking_id,
                additional_data,
                test_clock,
                id: None,
            }),
            _ => Err(e),
        }
    }
}

/// Who subscribes: an existing customer (`customer_id`, or `customer.id`) or a new one
/// described inline.
fn read_customer(r: &Reader, e: &mut Errors) -> Option<CustomerRef> {
    match (r.value("customer"), r.string("customer_id", MAX_SHORT, e)) {
        (Some(Value::Object(c)), _) => match c.get("id").and_then(Value::as_str) {
            Some(id) => Some(CustomerRef::Existing(id.to_string())),
            None => match CustomerFields::parse(c) {
                Ok(fields) => Some(CustomerRef::New(Box::new(fields))),
                Err(errors) => {
                    errors.for_each(|field, message| e.add(&format!("customer.{field}"), message));
                    None
                }
            },
        },
        (Some(_), _) => {
            e.add("customer", msg::NOT_AN_OBJECT);
            None
        }
        (None, Some(id)) => Some(CustomerRef::Existing(id)),
        (None, None) => {
            e.add("customer", msg::BLANK);
            None
        }
    }
}

/// The card, when one is sent: checked as a pay form checks it, its errors named `card.*`.
fn read_card(r: &Reader, now: DateTime<Utc>, e: &mut Errors) -> Option<CardInput> {
    r.object("card", "card.", e).and_then(|c| {
        // Numbers as digits or JSON integers, as card forms and libraries send them.
        let digits = |field: &str, e: &mut Errors| c.identifier(field, MAX_SHORT, e).unwrap_or_default();
        let (number, month, year) = (digits("number", e), digits("exp_month", e), digits("exp_year", e));
        let cvc = c.identifier("cvc", 8, e).or_else(|| c.identifier("verification_value", 8, e)).unwrap_or_default();
        let holder = c.string("holder", MAX_SHORT, e).unwrap_or_default();
        let raw = RawCard { number: &number, exp_month: &month, exp_year: &year, cvc: &cvc, holder: &holder };
        let mut card_errors = Errors::default();
        let card = CardInput::parse(raw, now, &mut card_errors);
        card_errors.for_each(|field, message| {
            let key = match field {
                "card_number" => "card.number",
                "card_expiry" => "card.exp_month",
                "card_cvc" => "card.cvc",
                _ => "card.holder",
            };
            e.add(key, message)
        });
        card
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(body: Value) -> Result<SubscriptionRequest, Errors> {
        SubscriptionRequest::parse(body.as_object().unwrap(), "2026-11-23T10:00:00Z".parse().unwrap())
    }

    #[test]
    fn plan_and_customer_by_id_in_either_shape() {
        let a = parse(json!({"plan": {"id": "pln_1"}, "customer": {"id": "cst_1"}})).unwrap();
        let b = parse(json!({"plan_id": "pln_1", "customer_id": "cst_1"})).unwrap();
        for r in [a, b] {
            assert_eq!(r.plan_id, "pln_1");
            assert!(matches!(r.customer, CustomerRef::Existing(ref id) if id == "cst_1"));
            assert!(r.card.is_none());
        }
    }

    #[test]
    fn an_inline_customer_follows_the_customer_rules() {
        let e = parse(json!({"plan": {"id": "pln_1"}, "customer": {"email": "x", "ip": "1.2.3.4"}})).unwrap_err();
        assert_eq!(e.get("customer.email").unwrap(), ["is invalid"]);
        let ok = parse(json!({"plan": {"id": "pln_1"}, "customer": {"email": "a@b.co", "ip": "1.2.3.4"}})).unwrap();
        assert!(matches!(ok.customer, CustomerRef::New(_)));
    }

    #[test]
    fn a_card_is_checked_and_missing_parts_are_named() {
        let card =
            json!({"number": "4200000000000000", "exp_month": 12, "exp_year": 2030, "cvc": "123", "holder": "Ann"});
        let ok = parse(json!({"plan_id": "pln_1", "customer_id": "c", "card": card})).unwrap();
        assert_eq!(ok.card.unwrap().last4(), "0000");
        let e =
            parse(json!({"plan_id": "pln_1", "customer_id": "c", "card": {"number": "4200000000000001"}})).unwrap_err();
        for f in ["card.number", "card.exp_month", "card.cvc", "card.holder"] {
            assert!(e.has(f), "{f}");
        }
        let e = parse(json!({})).unwrap_err();
        assert!(e.has("plan_id") && e.has("customer"));
    }
}
