//! Forms posted to the dashboard: every name with all its values (checkbox groups send a
//! name many times), turned into the JSON object the API's parsers read, so a form and an
//! API request meet the same rules and the same messages.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use serde_json::{Map, Value};

use super::Words;
use crate::domain::Errors;
use crate::domain::errors::humanize;
use crate::error::AppError;
use crate::state::AppState;

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
/// like `1,000` (a thousand, or one?) is refused rather than guessed: the returned errors,
/// told in `words`.
pub fn minor_units(body: &mut Map<String, Value>, amounts: &[&str], words: Words) -> Errors {
    let mut ambiguous = Errors::default();
    for key in amounts {
        if let Some(raw) = body.get(*key).and_then(Value::as_str)
            && crate::domain::currency::is_ambiguous(raw)
        {
            let message = words.f("“{}” is ambiguous: type 1000 for a thousand, or 1.00 for one", &[&raw.trim()]);
            ambiguous.add(key, message);
        }
    }
    let code = body.get("currency").and_then(Value::as_str).unwrap_or("").trim().to_uppercase();
    let Some(currency) = crate::domain::currency::find(&code) else { return ambiguous };
    for key in amounts {
        if let Some(minor) =
            body.get(*key).and_then(Value::as_str).and_then(|raw| crate::domain::currency::parse_major(raw, currency))
        {
            body.insert(key.to_string(), Value::from(minor));
        }
    }
    ambiguous
}

/// The outcome of the API's rules with the form's own refusals laid over it: a field the form
/// refused shows the form's message instead of the rules'.
pub fn refused_also<T>(parsed: Result<T, Errors>, by_form: Errors) -> Result<T, Errors> {
    if by_form.is_empty() {
        return parsed;
    }
    let mut errors = by_form.clone();
    if let Err(rules) = parsed {
        rules.for_each(|field, message| {
            if !by_form.has(field) {
                errors.add(field, message);
            }
        });
    }
    Err(errors)
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
                named.push((field.to_string(), format!("{}: {}", self.words.t_data(&name), self.words.rule(message))));
            }
        });
        named.into_iter().map(|(_, said)| said).collect::<Vec<_>>().join(". ")
    }

    /// Whether the form was refused.
    pub fn has_errors(&self) -> bool {
        !self.errors.is_empty()
    }
}
