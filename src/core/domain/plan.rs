//! Subscription plans (spec 2.2): how much, how often, and the trial before it.

use serde_json::{Map, Value};

use super::Errors;
use super::currency::Currency;
use super::input::Reader;
use super::product::{MAX_AMOUNT, MAX_SHORT, read_currency, read_visible_fields};
use super::tax::Taxing;
use super::vocab::{IntervalUnit, Language, VisibleField};

/// Longest interval, in its unit.
pub const MAX_INTERVAL: i64 = 1000;
/// Most failed attempts before a subscription is cancelled.
pub const MAX_ATTEMPTS: i64 = 100;
/// Most billing cycles of a finite plan.
pub const MAX_CYCLES: i64 = 100_000;

/// A trial period: charged once, `interval` `unit`s before the plan's own charges start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trial {
    pub amount: i64,
    pub interval: i32,
    pub interval_unit: IntervalUnit,
}

/// A valid plan's fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanFields {
    pub title: String,
    pub currency: Currency,
    pub language: Language,
    pub amount: i64,
    pub interval: i32,
    pub interval_unit: IntervalUnit,
    pub trial: Option<Trial>,
    pub trial_as_first_payment: bool,
    pub infinite: bool,
    /// `None` exactly when `infinite`.
    pub billing_cycles: Option<i32>,
    pub number_payment_attempts: i32,
    pub prevent_payments_at_night: bool,
    pub test: bool,
    pub taxing: Taxing,
    /// What its page asks for: always the e-mail (a subscriber is reached by it), first.
    pub visible_fields: Vec<VisibleField>,
}

impl PlanFields {
    /// The fields as the audit trail records them.
    pub fn audited(&self) -> Value {
        serde_json::json!({
            "title": self.title, "currency": self.currency.code, "amount": self.amount,
            "interval": self.interval, "interval_unit": self.interval_unit.as_str(),
            "trial_amount": self.trial.map(|t| t.amount), "trial_interval": self.trial.map(|t| t.interval),
            "billing_cycles": self.billing_cycles, "test": self.test,
            "tax_rate_id": self.taxing.rate_id, "tax_behavior": self.taxing.behavior.as_str(),
            "visible_fields": self.visible_fields.iter().map(|f| f.as_str()).collect::<Vec<_>>(),
        })
    }

    /// Validates a create request.
    pub fn parse(body: &Map<String, Value>) -> Result<Self, Errors> {
        let r = Reader::new(body);
        let mut e = Errors::default();

        let title = r.string("title", MAX_SHORT, &mut e);
        e.require("title", title.is_none());
        let currency = read_currency(&r, "currency", &mut e);
        e.require("currency", currency.is_none());
        let language = r.choice("language", Language::parse, &mut e).unwrap_or_default();
        let test = r.boolean("test", &mut e).unwrap_or(false);

        // A missing `plan` section reads as an empty one: each of its fields is then named.
        let empty = Map::new();
        let plan = r.object("plan", "plan.", &mut e).unwrap_or(Reader::nested(&empty, "plan."));
        let amount = plan.integer_in("amount", 1, MAX_AMOUNT, &mut e);
        e.require("plan.amount", amount.is_none());
        let interval = plan.integer_in("interval", 1, MAX_INTERVAL, &mut e);
        e.require("plan.interval", interval.is_none());
        let interval_unit = plan.choice("interval_unit", IntervalUnit::parse, &mut e);
        e.require("plan.interval_unit", interval_unit.is_none());

        let trial_section = r.object("trial", "trial.", &mut e);
        let (trial, trial_as_first_payment) = match trial_section {
            Some(t) => read_trial(&t, interval_unit, &mut e),
            None => (None, false),
        };

        let infinite = r.boolean("infinite", &mut e).unwrap_or(true);
        let billing_cycles = if infinite { None } else { r.integer_in("billing_cycles", 1, MAX_CYCLES, &mut e) };
        e.require("billing_cycles", !infinite && billing_cycles.is_none());
        let number_payment_attempts = r.integer_in("number_payment_attempts", 1, MAX_ATTEMPTS, &mut e).unwrap_or(3);
        let prevent_payments_at_night = r.boolean("prevent_payments_at_night", &mut e).unwrap_or(false);
        let mut taxing = Taxing::default();
        taxing.read(&r, &mut e);
        let visible_fields = read_plan_fields(&r, &mut e).unwrap_or_else(|| vec![VisibleField::Email]);

        // Missing only with an error recorded above.
        let Some(currency) = currency else { return Err(e) };
        e.into_result(|| PlanFields {
            title: title.unwrap_or_default(),
            currency,
            language,
            amount: amount.unwrap_or_default(),
            interval: interval.unwrap_or_default() as i32,
            interval_unit: interval_unit.unwrap_or(IntervalUnit::Month),
            trial,
            trial_as_first_payment,
            infinite,
            billing_cycles: billing_cycles.map(|c| c as i32),
            number_payment_attempts: number_payment_attempts as i32,
            prevent_payments_at_night,
            test,
            taxing,
            visible_fields,
        })
    }
}

/// The trial section: amount and interval only together; the unit defaults to the plan's.
fn read_trial(t: &Reader, plan_unit: Option<IntervalUnit>, e: &mut Errors) -> (Option<Trial>, bool) {
    let amount = t.integer_in("amount", 0, MAX_AMOUNT, e);
    let interval = t.integer_in("interval", 1, MAX_INTERVAL, e);
    let unit = t.choice("interval_unit", IntervalUnit::parse, e);
    let as_first_payment = t.boolean("as_first_payment", e).unwrap_or(false);
    let amount_sent = t.value("amount").is_some();
    let interval_sent = t.value("interval").is_some();
    e.require("trial.amount", interval_sent && !amount_sent);
    e.require("trial.interval", amount_sent && !interval_sent);
    let trial = match (amount, interval, unit.or(plan_unit)) {
        (Some(amount), Some(interval), Some(interval_unit)) => {
            Some(Trial { amount, interval: interval as i32, interval_unit })
        }
        _ => None,
    };
    (trial, as_first_payment)
}

/// A plan page's fields: the e-mail first, then what the merchant chose.
fn read_plan_fields(r: &Reader, e: &mut Errors) -> Option<Vec<VisibleField>> {
    let names = r.strings("visible_fields", e)?;
    let mut fields = vec![VisibleField::Email];
    fields.extend(read_visible_fields(&names, e).into_iter().filter(|f| *f != VisibleField::Email));
    Some(fields)
}

/// What of a plan may change once it exists: its title, its page's language and fields, and
/// the rate its charges are taxed at (a rate the law changes applies to the charges made from
/// then on). Its price, whether the price holds the tax, schedule, trial, limits and mode are
/// what running subscriptions agreed to, so they stay; a new plan is the way to offer other
/// terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanEdit {
    pub title: String,
    pub language: Language,
    pub tax_rate_id: Option<String>,
    pub visible_fields: Vec<VisibleField>,
}

impl PlanEdit {
    /// Checks an edit with the create request's rules and messages.
    pub fn parse(body: &Map<String, Value>) -> Result<PlanEdit, Errors> {
        let r = Reader::new(body);
        let mut e = Errors::default();
        let title = r.string("title", MAX_SHORT, &mut e);
        e.require("title", title.is_none());
        let language = r.choice("language", Language::parse, &mut e).unwrap_or_default();
        let tax_rate_id = r.string("tax_rate_id", MAX_SHORT, &mut e);
        let visible_fields = read_plan_fields(&r, &mut e).unwrap_or_else(|| vec![VisibleField::Email]);
        e.into_result(|| PlanEdit { title: title.unwrap_or_default(), language, tax_rate_id, visible_fields })
    }

    /// Checks an API change of `current`: `title`, `language`, both or neither; what is not
    /// sent (or sent as null) stays.
    pub fn parse_change(body: &Map<String, Value>, current: &PlanFields) -> Result<PlanEdit, Errors> {
        let r = Reader::new(body);
        let mut e = Errors::default();
        // A field left out, or sent as null, stays as it is.
        let given = |field: &str| body.get(field).is_some_and(|v| !v.is_null());
        let title = if given("title") { r.string("title", MAX_SHORT, &mut e) } else { Some(current.title.clone()) };
        e.require("title", title.is_none());
        let language =
            if given("language") { r.choice("language", Language::parse, &mut e) } else { Some(current.language) };
        e.require("language", language.is_none());
        let tax_rate_id = if r.sent("tax_rate_id") {
            r.string("tax_rate_id", MAX_SHORT, &mut e)
        } else {
            current.taxing.rate_id.clone()
        };
        let visible_fields = read_plan_fields(&r, &mut e).unwrap_or_else(|| current.visible_fields.clone());
        e.into_result(|| PlanEdit {
            title: title.unwrap_or_default(),
            language: language.unwrap_or_default(),
            tax_rate_id,
            visible_fields,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(body: Value) -> Result<PlanFields, Errors> {
        PlanFields::parse(body.as_object().unwrap())
    }

    fn valid() -> Value {
        json!({"title": "Gold", "currency": "EUR", "plan": {"amount": 990, "interval": 1, "interval_unit": "month"}})
    }

    #[test]
    fn defaults_follow_the_spec() {
        let p = parse(valid()).unwrap();
        assert_eq!(p.number_payment_attempts, 3);
        assert!(p.infinite && !p.prevent_payments_at_night && !p.test && !p.trial_as_first_payment);
        assert_eq!((p.trial, p.billing_cycles, p.language), (None, None, Language::En));
    }

    #[test]
    fn blank_title_and_bad_currency_give_the_spec_body() {
        let e = parse(json!({"title": "", "currency": "EURO",
            "plan": {"amount": 990, "interval": 1, "interval_unit": "month"}}))
        .unwrap_err();
        assert_eq!(e.message(), "Title can't be blank. Currency is not in alpha-3 format");
        assert_eq!(e.get("currency").unwrap(), ["is not in alpha-3 format", "is an unknown code"]);
    }

    #[test]
    fn a_missing_plan_section_names_its_fields() {
        let e = parse(json!({"title": "Gold", "currency": "EUR"})).unwrap_err();
        for f in ["plan.amount", "plan.interval", "plan.interval_unit"] {
            assert_eq!(e.get(f).unwrap(), ["can't be blank"], "{f}");
        }
    }

    #[test]
    fn trial_amount_and_interval_come_together() {
        let mut body = valid();
        body["trial"] = json!({"amount": 100});
        assert_eq!(parse(body.clone()).unwrap_err().get("trial.interval").unwrap(), ["can't be blank"]);
        body["trial"] = json!({"interval": 7, "interval_unit": "day"});
        assert_eq!(parse(body.clone()).unwrap_err().get("trial.amount").unwrap(), ["can't be blank"]);
        body["trial"] = json!({"amount": 0, "interval": 7, "interval_unit": "day", "as_first_payment": true});
        let p = parse(body).unwrap();
        assert_eq!(p.trial, Some(Trial { amount: 0, interval: 7, interval_unit: IntervalUnit::Day }));
        assert!(p.trial_as_first_payment);
    }

    #[test]
    fn intervals_attempts_and_units_are_bounded() {
        let mut body = valid();
        body["plan"]["interval"] = json!(0);
        body["plan"]["interval_unit"] = json!("week");
        body["number_payment_attempts"] = json!(0);
        let e = parse(body).unwrap_err();
        assert_eq!(e.get("plan.interval").unwrap(), ["must be greater than or equal to 1"]);
        assert_eq!(e.get("plan.interval_unit").unwrap(), ["is not included in the list"]);
        assert_eq!(e.get("number_payment_attempts").unwrap(), ["must be greater than or equal to 1"]);
    }

    #[test]
    fn billing_cycles_count_only_for_finite_plans() {
        let mut body = valid();
        body["billing_cycles"] = json!("abc");
        assert_eq!(parse(body.clone()).unwrap().billing_cycles, None);
        body["infinite"] = json!(false);
        assert!(parse(body.clone()).unwrap_err().has("billing_cycles"));
        body["billing_cycles"] = json!(12);
        assert_eq!(parse(body).unwrap().billing_cycles, Some(12));
    }
}
