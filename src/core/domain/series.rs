//! The number series of a shop's documents: one per kind and mode, each a prefix and the
//! number its next document takes.

use serde_json::{Map, Value};

use super::Errors;
use super::input::{Reader, msg};
use super::invoice::DocumentKind;

/// The longest prefix a series may have.
pub const MAX_PREFIX: usize = 20;
/// The highest number a series may be set to go on from.
pub const MAX_NUMBER: i64 = 999_999_999_999;

/// Every series, by its name in the API: the kind, `test_` before it for test mode's.
pub const NAMES: [(&str, DocumentKind, bool); 4] = [
    ("invoice", DocumentKind::Invoice, false),
    ("credit_note", DocumentKind::CreditNote, false),
    ("test_invoice", DocumentKind::Invoice, true),
    ("test_credit_note", DocumentKind::CreditNote, true),
];

/// The series a name in the API stands for.
pub fn named(name: &str) -> Option<(DocumentKind, bool)> {
    NAMES.iter().find(|(n, _, _)| *n == name).map(|&(_, kind, test)| (kind, test))
}

/// The name of a series in the API.
pub fn name_of(kind: DocumentKind, test: bool) -> &'static str {
    NAMES.iter().find(|&&(_, k, t)| (k, t) == (kind, test)).map_or("invoice", |(n, _, _)| n)
}

/// A change of a series: a new prefix, the number the next document takes, or both.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SeriesChange {
    pub prefix: Option<String>,
    pub next_number: Option<i64>,
}

impl SeriesChange {
    /// Reads `prefix` (at most 20 characters, none of them a control character, not ending
    /// with a digit; empty or `null` for none) and `next_number` (1 or more). Whether the number is above the last one issued
    /// is the database's to say.
    pub fn parse(body: &Map<String, Value>) -> Result<Self, Errors> {
        let r = Reader::new(body);
        let mut e = Errors::default();
        let prefix = match r.value("prefix") {
            None if r.sent("prefix") => Some(String::new()),
            None => None,
            Some(Value::String(p)) if p.chars().count() > MAX_PREFIX => {
                e.add("prefix", msg::too_long(MAX_PREFIX));
                None
            }
            Some(Value::String(p)) if p.chars().any(char::is_control) => {
                e.add("prefix", "must not contain control characters");
                None
            }
            // The number follows the prefix: `A-1` then 000001 would print as `A-1000001` does.
            Some(Value::String(p)) if p.ends_with(|c: char| c.is_ascii_digit()) => {
                e.add("prefix", "must not end with a digit");
                None
            }
            Some(Value::String(p)) => Some(p.clone()),
            Some(_) => {
                e.add("prefix", msg::NOT_A_STRING);
                None
            }
        };
        let next_number = r.integer_in("next_number", 1, MAX_NUMBER, &mut e);
        e.into_result(|| SeriesChange { prefix, next_number })
    }
}

/// Why a series' next number was refused: it must stay above the last number issued.
pub fn not_after(last_issued: i64) -> String {
    format!("must be greater than {last_issued}, the last number issued")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(body: Value) -> Result<SeriesChange, Errors> {
        SeriesChange::parse(body.as_object().unwrap())
    }

    #[test]
    fn a_change_reads_its_prefix_and_number() {
        assert_eq!(
            parse(json!({"prefix": "2027-", "next_number": 100})).unwrap(),
            SeriesChange { prefix: Some("2027-".into()), next_number: Some(100) }
        );
        assert_eq!(parse(json!({"prefix": ""})).unwrap().prefix.as_deref(), Some(""));
        assert_eq!(parse(json!({"prefix": null})).unwrap().prefix.as_deref(), Some(""));
        assert_eq!(parse(json!({})).unwrap(), SeriesChange::default());
        assert!(parse(json!({"prefix": "x".repeat(21)})).unwrap_err().has("prefix"));
        assert!(parse(json!({"prefix": "a\nb"})).unwrap_err().has("prefix"));
        assert!(parse(json!({"prefix": 7})).unwrap_err().has("prefix"));
        assert!(parse(json!({"prefix": "INV2027"})).unwrap_err().has("prefix"));
        assert!(parse(json!({"next_number": 0})).unwrap_err().has("next_number"));
        assert!(parse(json!({"next_number": 1.5})).unwrap_err().has("next_number"));
        assert_eq!(named("test_credit_note"), Some((DocumentKind::CreditNote, true)));
        assert_eq!(name_of(DocumentKind::Invoice, true), "test_invoice");
        assert_eq!(named("receipt"), None);
    }
}
