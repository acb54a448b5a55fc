//! Forms posted to the dashboard: every name with all its values (checkbox groups send a
//! name many times), turned into the JSON object the API's parsers read, so a form and an
//! API request meet the same rules and the same messages.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use serde_json::{Map, Value};

use super::Words;
use crate::domain::Errors;
use crate::domain::currency::{self, Currency};
use crate::domain::errors::humanize;
use crate::web::error::AppError;
use crate::web::state::AppState;

/// A posted `application/x-www-form-urlencoded` body.
#[derive(Debug, Default, Clone)]
pub struct PostedForm(pub Vec<(String, String)>);

impl FromRequest<AppState> for PostedForm {
    type Rejection = AppError;

    async fn from_request(req: Request, state: &AppState) -> Result<Self, AppError> {
        let body = Bytes::from_request(req, state).await.map_err(|_| AppError::PayloadTooLarge)?;
        Ok(PostedForm(url::form_urlencoded::parse(&body).into_owned().collect()))
    }
}

impl PostedForm {
    /// The first value of `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// Every value of `name`.
    pub fn all(&self, name: &str) -> Vec<&str> {
        self.0.iter().filter(|(k, _)| k == name).map(|(_, v)| v.as_str()).collect()
    }

    /// The form as a JSON object: text fields as strings (blank ones as `null`, which an
    /// update reads as "clear it"), each of `checkboxes` as true or false, each of `lists`
    /// as an array of its values.
    pub fn to_json(&self, checkboxes: &[&str], lists: &[&str]) -> Map<String, Value> {
        let mut map = Map::new();
        for (k, v) in &self.0 {
            if k != "csrf" && !checkboxes.contains(&k.as_str()) && !lists.contains(&k.as_str()) {
                let value = if v.trim().is_empty() { Value::Null } else { Value::String(v.clone()) };
                map.entry(k.clone()).or_insert(value);
            }
        }
        for name in checkboxes {
            map.insert(name.to_string(), Value::Bool(self.get(name).is_some()));
        }
        for name in lists {
            map.insert(name.to_string(), self.all(name).into_iter().map(|v| Value::String(v.into())).collect());
        }
        map
    }
}

/// Reads each of the `amounts` typed in the currency's units (`9.90`) as minimal units, the
/// API's way; what cannot be read is left as typed for the API's rules to name. An amount
/// like `1,000` (a thousand, or one?) is refused rather than guessed, and so is one with more
/// decimals than its currency has.
pub fn minor_units(body: &mut Map<String, Value>, amounts: &'static [&'static str], words: Words) -> TypedAmounts {
    let code = body.get("currency").and_then(Value::as_str).unwrap_or("").trim().to_uppercase();
    let currency = currency::find(&code);
    let mut refused = Errors::default();
    for key in amounts {
        if let Some(Value::String(raw)) = body.get_mut(*key) {
            *raw = currency::ungrouped(raw);
        }
        let Some(raw) = body.get(*key).and_then(Value::as_str) else { continue };
        if currency::is_ambiguous(raw, currency) {
            let message = words.f("“{}” is ambiguous: type 1000 for a thousand, or 1.00 for one", &[&raw.trim()]);
            refused.add(key, message);
        } else if let Some(c) = currency
            && let Some((_, fraction)) = raw.split_once([',', '.'])
            && fraction.bytes().all(|b| b.is_ascii_digit())
            && fraction.trim_end_matches('0').len() > c.exponent as usize
        {
            let message = match c.exponent {
                0 => words.f("{} has no decimals", &[&c.code]),
                _ => words.f("{} has at most {} digits after the decimal mark", &[&c.code, &c.exponent]),
            };
            refused.add(key, message);
        }
    }
    for key in amounts {
        if let Some(c) = currency
            && let Some(minor) = body.get(*key).and_then(Value::as_str).and_then(|raw| currency::parse_major(raw, c))
        {
            body.insert(key.to_string(), Value::from(minor));
        }
    }
    TypedAmounts { fields: amounts, refused, currency, words }
}

/// What a form's money fields were read as: the ones the form refused (ambiguous, too many
/// decimals), and the currency the others were read in.
pub struct TypedAmounts {
    fields: &'static [&'static str],
    refused: Errors,
    currency: Option<Currency>,
    words: Words,
}

impl TypedAmounts {
    /// The outcome of the API's rules with the form's own refusals laid over it (a field the
    /// form refused shows the form's message instead of the rules'), each bound the rules
    /// name in minimal units said as money (`must be at least €0.01`).
    pub fn refuse<T>(&self, parsed: Result<T, Errors>) -> Result<T, Errors> {
        let rules = match parsed {
            Ok(parsed) if self.refused.is_empty() => return Ok(parsed),
            Ok(_) => Errors::default(),
            Err(rules) => rules,
        };
        let mut errors = self.refused.clone();
        self.as_money(rules).for_each(|field, message| {
            if !self.refused.has(field) {
                errors.add(field, message);
            }
        });
        Err(errors)
    }

    /// `rules` with each bound in minimal units of a money field said as money.
    pub fn as_money(&self, rules: Errors) -> Errors {
        let mut said = Errors::default();
        rules.for_each(|field, message| said.add(field, self.said(field, message)));
        said
    }

    /// `message` of `field`, with a bound in minimal units of a money field said as money.
    fn said(&self, field: &str, message: &str) -> String {
        let (Some(currency), true) = (self.currency, self.fields.contains(&field)) else {
            return message.to_string();
        };
        let Some(start) = message.find(|c: char| c.is_ascii_digit()) else { return message.to_string() };
        let end = message[start..].find(|c: char| !c.is_ascii_digit()).map_or(message.len(), |e| start + e);
        let Ok(minor) = message[start..end].parse::<i64>() else { return message.to_string() };
        let money = self.words.money(minor, currency);
        match (&message[..start], &message[end..]) {
            ("must be greater than or equal to ", "") => self.words.f("must be at least {}", &[&money]),
            ("must be less than or equal to ", "") => self.words.f("must be at most {}", &[&money]),
            ("must be less than or equal to ", ", the amount left to refund") => {
                self.words.f("must be at most {}, the amount left to refund", &[&money])
            }
            _ => message.to_string(),
        }
    }
}

/// Without script, a ticked "unlimited" (or "never") box still sends the switched-off field
/// as typed: the box wins, and the field is not sent.
pub fn ticked_wins(body: &mut Map<String, Value>, pairs: &[(&str, &str)]) {
    for (checkbox, field) in pairs {
        if body.get(*checkbox) == Some(&Value::Bool(true)) {
            body.remove(*field);
        }
    }
}

/// Moves `section.field` keys into nested objects (`plan.amount` → `{"plan": {"amount"}}`),
/// the shape of the API's plan requests.
pub fn nest(flat: Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for (key, value) in flat {
        match key.split_once('.') {
            Some((section, field)) => {
                let entry = out.entry(section.to_string()).or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(inner) = entry {
                    inner.insert(field.to_string(), value);
                }
            }
            None => {
                out.insert(key, value);
            }
        }
    }
    out
}

/// A form being shown: the values to refill and the problems to show beside each field, in
/// the language of the user who sent it.
#[derive(Debug, Default)]
pub struct FormView {
    pub values: Vec<(String, String)>,
    pub errors: Errors,
    pub words: Words,
}

impl FormView {
    /// A form refilled from what was sent, with its problems told in `words`.
    pub fn sent(form: &PostedForm, errors: Errors, words: Words) -> Self {
        let values = form.0.iter().filter(|(k, _)| !k.contains("password") && k != "csrf").cloned().collect();
        FormView { values, errors, words }
    }

    /// A form filled with these values.
    pub fn filled(values: Vec<(&str, String)>) -> Self {
        FormView { values: values.into_iter().map(|(k, v)| (k.to_string(), v)).collect(), ..Default::default() }
    }

    /// `english` in the language of the form's problems.
    pub fn t(&self, english: &'static str) -> &'static str {
        self.words.t(english)
    }

    /// The value to show in `name`.
    pub fn value(&self, name: &str) -> &str {
        self.values.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str()).unwrap_or("")
    }

    /// Whether the checkbox `name` (with this `value`) is ticked.
    pub fn checked(&self, name: &str, value: &str) -> bool {
        self.values.iter().any(|(k, v)| k == name && v == value)
    }

    /// The problems of `name`, joined for display.
    pub fn error(&self, name: &str) -> String {
        let messages = self.errors.get(name).unwrap_or_default();
        messages.iter().map(|m| self.words.rule(m)).collect::<Vec<_>>().join(", ")
    }

    /// Whether `name` has a problem.
    pub fn bad(&self, name: &str) -> bool {
        self.errors.has(name)
    }

    /// The summary at the top of a refused form: each field with its first problem.
    pub fn message(&self) -> String {
        if self.words == Words::En {
            return self.errors.message();
        }
        let mut named: Vec<(String, String)> = Vec::new();
        self.errors.for_each(|field, message| {
            if !named.iter().any(|(f, _)| f == field) {
                let name = humanize(field);
                named.push((
                    field.to_string(),
                    format!("{}: {}", self.words.t_in("field", &name), self.words.rule(message)),
                ));
            }
        });
        let mut summary = String::new();
        for (_, said) in named {
            if !summary.is_empty() {
                // A message ending in an abbreviation ("… 4 шт.") ends its own sentence.
                summary.push_str(if summary.ends_with('.') { " " } else { ". " });
            }
            summary.push_str(&said);
        }
        summary
    }

    /// Whether the form was refused.
    pub fn has_errors(&self) -> bool {
        !self.errors.is_empty()
    }
}

/// A form's one-time id, for a hidden `once` field: what the form makes is named after it, so
/// the same form sent twice (a double click, a reload, a retrying proxy) makes one thing.
pub fn new_once() -> String {
    crate::domain::ids::random_hex(16)
}

/// The id of what a form with one-time id `once` makes: `prefix` and a digest of the shop,
/// the object it is made for and `once`, so no form can name another shop's or object's
/// thing; `None` when `once` is not one of [`new_once`]'s.
pub fn once_id(prefix: &str, shop_id: i64, object_id: &str, once: Option<&str>) -> Option<String> {
    let once = once.filter(|once| once.len() == 32 && once.bytes().all(|b| b.is_ascii_hexdigit()))?;
    Some(crate::domain::ids::derived_id(prefix, &format!("{shop_id}:{object_id}:{once}")))
}
