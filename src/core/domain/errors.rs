//! Validation errors in the shape of spec section 7: field name to a list of messages.

use serde::Serialize;
use serde::ser::SerializeMap;

/// Problems found per field, in the order they were found.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Errors(Vec<(String, Vec<String>)>);

impl Errors {
    /// The errors of one problem of one field.
    pub fn one(field: &str, message: impl Into<String>) -> Self {
        let mut errors = Errors::default();
        errors.add(field, message);
        errors
    }

    /// Records one problem for a field (nested fields are keyed `plan.interval`).
    pub fn add(&mut self, field: &str, message: impl Into<String>) {
        let message = message.into();
        match self.0.iter_mut().find(|(f, _)| f == field) {
            Some((_, messages)) if messages.contains(&message) => {}
            Some((_, messages)) => messages.push(message),
            None => self.0.push((field.to_string(), vec![message])),
        }
    }

    /// Records "can't be blank" when a required field is `missing` and has no other problem.
    pub fn require(&mut self, field: &str, missing: bool) {
        if missing && !self.has(field) {
            self.add(field, super::input::msg::BLANK);
        }
    }

    /// Whether a field already has a problem (later rules then stay quiet about it).
    pub fn has(&self, field: &str) -> bool {
        self.0.iter().any(|(f, _)| f == field)
    }

    /// True when nothing was found.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `Ok(value)` when nothing was found, else the errors.
    pub fn into_result<T>(self, value: impl FnOnce() -> T) -> Result<T, Errors> {
        if self.is_empty() { Ok(value()) } else { Err(self) }
    }

    /// The messages of one field.
    pub fn get(&self, field: &str) -> Option<&[String]> {
        self.0.iter().find(|(f, _)| f == field).map(|(_, m)| m.as_slice())
    }

    /// Visits every problem, field by field.
    pub fn for_each(&self, mut f: impl FnMut(&str, &str)) {
        for (field, messages) in &self.0 {
            for message in messages {
                f(field, message);
            }
        }
    }

    /// The summary of spec section 7: each field's name, humanized, with its first problem,
    /// joined by ". " (`Title can't be blank. Currency is not in alpha-3 format`).
    pub fn message(&self) -> String {
        self.0
            .iter()
            .map(|(field, messages)| format!("{} {}", humanize(field), messages[0]))
            .collect::<Vec<_>>()
            .join(". ")
    }
}

impl Serialize for Errors {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (field, messages) in &self.0 {
            map.serialize_entry(field, messages)?;
        }
        map.end()
    }
}

/// `plan.interval_unit` → `Plan interval unit`, as Rails' `humanize` reads a key.
pub fn humanize(field: &str) -> String {
    let words = field.replace(['.', '_'], " ");
    let mut chars = words.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_names_each_field_with_its_first_problem() {
        let mut e = Errors::default();
        e.add("title", "can't be blank");
        e.add("currency", "is not in alpha-3 format");
        e.add("currency", "is an unknown code");
        assert_eq!(e.message(), "Title can't be blank. Currency is not in alpha-3 format");
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"title":["can't be blank"],"currency":["is not in alpha-3 format","is an unknown code"]}"#
        );
    }

    #[test]
    fn nested_keys_read_as_words() {
        assert_eq!(humanize("plan.interval_unit"), "Plan interval unit");
        assert_eq!(humanize("ip"), "Ip");
    }

    #[test]
    fn the_same_problem_is_listed_once() {
        let mut e = Errors::default();
        e.add("ip", "is invalid");
        e.add("ip", "is invalid");
        assert_eq!(e.get("ip").unwrap().len(), 1);
    }
}
