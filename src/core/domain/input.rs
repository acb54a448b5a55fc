//! Reading fields out of a JSON object, collecting every problem instead of stopping at the
//! first. Clients of this API family send numbers as digit strings, so both are accepted.

use serde_json::{Map, Value};

use super::Errors;

/// Messages shared by every resource.
pub mod msg {
    pub const BLANK: &str = "can't be blank";
    pub const INVALID: &str = "is invalid";
    pub const NOT_A_NUMBER: &str = "is not a number";
    pub const NOT_AN_INTEGER: &str = "must be an integer";
    pub const NOT_INCLUDED: &str = "is not included in the list";
    pub const NOT_A_STRING: &str = "must be a string";
    pub const NOT_A_BOOLEAN: &str = "must be true or false";
    pub const NOT_AN_OBJECT: &str = "must be an object";
    pub const MUST_BE_BLANK: &str = "must be blank";

    /// "is too long (maximum is N characters)".
    pub fn too_long(max: usize) -> String {
        format!("is too long (maximum is {max} characters)")
    }
    /// "must be greater than or equal to N".
    pub fn at_least(min: i64) -> String {
        format!("must be greater than or equal to {min}")
    }
    /// "must be less than or equal to N".
    pub fn at_most(max: i64) -> String {
        format!("must be less than or equal to {max}")
    }
}

/// A JSON object being read; `prefix` names nested objects in error keys (`plan.`).
#[derive(Clone, Copy)]
pub struct Reader<'a> {
    map: &'a Map<String, Value>,
    prefix: &'a str,
}

impl<'a> Reader<'a> {
    /// Reads the top-level object of a request.
    pub fn new(map: &'a Map<String, Value>) -> Self {
        Reader { map, prefix: "" }
    }

    /// Reads a nested object whose error keys start with `prefix`.
    pub fn nested(map: &'a Map<String, Value>, prefix: &'a str) -> Self {
        Reader { map, prefix }
    }

    /// The error key of a field: `plan.interval` inside `plan`.
    pub fn key(&self, field: &str) -> String {
        format!("{}{}", self.prefix, field)
    }

    /// The raw value, `None` when absent or `null`.
    pub fn value(&self, field: &str) -> Option<&'a Value> {
        self.map.get(field).filter(|v| !v.is_null())
    }

    /// Whether the field was sent at all, even as `null` (an update clears it then).
    pub fn sent(&self, field: &str) -> bool {
        self.map.contains_key(field)
    }

    /// A string; blank strings read as absent. Longer than `max` characters is an error.
    pub fn string(&self, field: &str, max: usize, errors: &mut Errors) -> Option<String> {
        match self.value(field)? {
            Value::String(s) if s.trim().is_empty() => None,
            Value::String(s) if s.chars().count() > max => {
                errors.add(&self.key(field), msg::too_long(max));
                None
            }
            Value::String(s) => Some(s.clone()),
            _ => {
                errors.add(&self.key(field), msg::NOT_A_STRING);
                None
            }
        }
    }

    /// A reference in another system: a string as [`Reader::string`] reads it, or a whole
    /// number kept as its digits (merchants' ids are often numbers).
    pub fn identifier(&self, field: &str, max: usize, errors: &mut Errors) -> Option<String> {
        match self.value(field)? {
            // Within ±(2^53 - 1), which every JSON reader keeps exactly.
            Value::Number(n) if whole_number(n).is_some_and(|i| i.unsigned_abs() <= SAFE_INTEGER) => {
                whole_number(n).map(|i| i.to_string())
            }
            _ => self.string(field, max, errors),
        }
    }

    /// An integer given as a JSON integer or a string of digits (optionally signed).
    pub fn integer(&self, field: &str, errors: &mut Errors) -> Option<i64> {
        let parsed = match self.value(field)? {
            Value::Number(n) => match whole_number(n) {
                Some(i) => Ok(i),
                None if n.as_f64().is_some_and(|f| f.fract() != 0.0) => Err(msg::NOT_AN_INTEGER),
                None => Err(msg::NOT_A_NUMBER),
            },
            Value::String(s) => parse_integer(s.trim()),
            _ => Err(msg::NOT_A_NUMBER),
        };
        parsed.map_err(|m| errors.add(&self.key(field), m)).ok()
    }

    /// An integer within `min..=max`.
    pub fn integer_in(&self, field: &str, min: i64, max: i64, errors: &mut Errors) -> Option<i64> {
        let value = self.integer(field, errors)?;
        if value < min {
            errors.add(&self.key(field), msg::at_least(min));
            None
        } else if value > max {
            errors.add(&self.key(field), msg::at_most(max));
            None
        } else {
            Some(value)
        }
    }

    /// A boolean; the strings "true" and "false" are accepted too.
    pub fn boolean(&self, field: &str, errors: &mut Errors) -> Option<bool> {
        match self.value(field)? {
            Value::Bool(b) => Some(*b),
            Value::String(s) if s == "true" => Some(true),
            Value::String(s) if s == "false" => Some(false),
            _ => {
                errors.add(&self.key(field), msg::NOT_A_BOOLEAN);
                None
            }
        }
    }

    /// One of a fixed set of words, parsed by `parse`.
    pub fn choice<T>(&self, field: &str, parse: fn(&str) -> Option<T>, errors: &mut Errors) -> Option<T> {
        match self.value(field)? {
            Value::String(s) => {
                let found = parse(s);
                if found.is_none() {
                    errors.add(&self.key(field), msg::NOT_INCLUDED);
                }
                found
            }
            _ => {
                errors.add(&self.key(field), msg::NOT_INCLUDED);
                None
            }
        }
    }

    /// A nested object, read with this field's name as prefix.
    pub fn object(&self, field: &'a str, prefix: &'a str, errors: &mut Errors) -> Option<Reader<'a>> {
        match self.value(field)? {
            Value::Object(map) => Some(Reader { map, prefix }),
            _ => {
                errors.add(&self.key(field), msg::NOT_AN_OBJECT);
                None
            }
        }
    }

    /// An array of strings.
    pub fn strings(&self, field: &str, errors: &mut Errors) -> Option<Vec<String>> {
        match self.value(field)? {
            Value::Array(items) => {
                let strings: Option<Vec<String>> = items.iter().map(|v| v.as_str().map(str::to_string)).collect();
                if strings.is_none() {
                    errors.add(&self.key(field), msg::INVALID);
                }
                strings
            }
            _ => {
                errors.add(&self.key(field), msg::INVALID);
                None
            }
        }
    }
}

fn parse_integer(s: &str) -> Result<i64, &'static str> {
    let digits = s.strip_prefix('-').unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(msg::NOT_A_NUMBER);
    }
    // Too many digits for any amount: the range check names the limit.
    s.parse().or(Ok(if s.starts_with('-') { i64::MIN } else { i64::MAX }))
}

/// The largest integer every JSON reader keeps exactly (2^53 - 1).
pub const SAFE_INTEGER: u64 = 9_007_199_254_740_991;

/// A JSON number that is a whole number: an integer, or one written with a fraction (`12.0`,
/// an integer as JSON Schema reads it) within ±2^53.
pub fn whole_number(n: &serde_json::Number) -> Option<i64> {
    n.as_i64().or_else(|| n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() <= SAFE_INTEGER as f64).map(|f| f as i64))
}

/// Whether the database can store this text: PostgreSQL refuses the NUL character.
pub fn storable(text: &str) -> bool {
    !text.contains('\0')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read<T>(body: Value, f: impl FnOnce(Reader, &mut Errors) -> T) -> (T, Errors) {
        let map = body.as_object().unwrap().clone();
        let mut errors = Errors::default();
        let out = f(Reader::new(&map), &mut errors);
        (out, errors)
    }

    #[test]
    fn integers_come_as_numbers_or_digit_strings() {
        for body in [json!({"a": 990}), json!({"a": "990"}), json!({"a": " 990 "})] {
            let (v, e) = read(body, |r, e| r.integer("a", e));
            assert_eq!(v, Some(990));
            assert!(e.is_empty());
        }
    }

    #[test]
    fn non_integers_are_named() {
        for (body, message) in [
            (json!({"a": "9.90"}), msg::NOT_A_NUMBER),
            (json!({"a": "ten"}), msg::NOT_A_NUMBER),
            (json!({"a": 9.5}), msg::NOT_AN_INTEGER),
            (json!({"a": true}), msg::NOT_A_NUMBER),
            (json!({"a": [1]}), msg::NOT_A_NUMBER),
        ] {
            let (v, e) = read(body, |r, e| r.integer("a", e));
            assert_eq!(v, None);
            assert_eq!(e.get("a").unwrap(), [message.to_string()]);
        }
    }

    #[test]
    fn huge_numbers_fail_the_range_check_instead_of_overflowing() {
        let (v, e) = read(json!({"a": "99999999999999999999999"}), |r, e| r.integer_in("a", 1, 100, e));
        assert_eq!(v, None);
        assert_eq!(e.get("a").unwrap(), ["must be less than or equal to 100".to_string()]);
    }

    #[test]
    fn blank_strings_read_as_absent_and_long_ones_are_refused() {
        let (v, e) = read(json!({"a": "  ", "b": "xyz"}), |r, e| (r.string("a", 5, e), r.string("b", 2, e)));
        assert_eq!(v, (None, None));
        assert_eq!(e.get("b").unwrap(), ["is too long (maximum is 2 characters)".to_string()]);
    }

    #[test]
    fn nested_errors_carry_the_prefix() {
        let (_, e) = read(json!({"plan": {"interval": "x"}}), |r, e| {
            let plan = r.object("plan", "plan.", e).unwrap();
            plan.integer("interval", e)
        });
        assert!(e.has("plan.interval"));
    }
}
