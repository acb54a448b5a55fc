//! Products (spec 2.1): the rules for creating one and for changing some of its fields.

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

use super::Errors;
use super::currency::{self, Currency};
use super::input::{Reader, msg};
use super::tax::Taxing;
use super::vocab::{Language, TransactionType, VisibleField};

/// Highest amount in minimal units (ten digits before a two-digit fraction).
pub const MAX_AMOUNT: i64 = 999_999_999_999;
/// Highest quantity a product can offer.
pub const MAX_QUANTITY: i64 = 1_000_000_000;
/// Longest name, title, or short text field.
pub const MAX_SHORT: usize = 255;
/// Longest description.
pub const MAX_DESCRIPTION: usize = 10_000;
/// Longest URL.
pub const MAX_URL: usize = 2048;

/// A valid product's fields, as the merchant set them.
#[derive(Debug, Clone, PartialEq)]
pub struct ProductFields {
    pub name: String,
    pub description: String,
    pub currency: Currency,
    pub amount: i64,
    /// `None` exactly when `infinite`.
    pub quantity: Option<i64>,
    pub infinite: bool,
    pub visible_fields: Vec<VisibleField>,
    pub test: bool,
    pub immortal: bool,
    /// `None` exactly when `immortal`.
    pub expired_at: Option<DateTime<Utc>>,
    pub return_url: Option<String>,
    /// Where notifications of this product's payments go (else the shop's default).
    pub notification_url: Option<String>,
    pub language: Language,
    pub transaction_type: TransactionType,
    pub taxing: Taxing,
}

impl ProductFields {
    /// The fields as the audit trail records them.
    pub fn audited(&self) -> serde_json::Value {
        let mut audited = serde_json::json!({
            "name": self.name, "description": self.description, "currency": self.currency.code,
            "amount": self.amount, "quantity": self.quantity, "infinite": self.infinite, "test": self.test,
            "expired_at": self.expired_at.map(|t| t.to_rfc3339()), "return_url": self.return_url,
            "notification_url": self.notification_url, "language": self.language.as_str(),
            "transaction_type": self.transaction_type.as_str(),
        });
        self.taxing.audited(&mut audited);
        audited
    }
}

/// The fields while a request is applied to them: required ones may still be missing.
#[derive(Default)]
struct Draft {
    name: Option<String>,
    description: Option<String>,
    currency: Option<Currency>,
    amount: Option<i64>,
    quantity: Option<i64>,
    infinite: bool,
    visible_fields: Vec<VisibleField>,
    test: bool,
    immortal: bool,
    expired_at: Option<DateTime<Utc>>,
    return_url: Option<String>,
    notification_url: Option<String>,
    language: Language,
    transaction_type: Option<TransactionType>,
    taxing: Taxing,
}

impl From<&ProductFields> for Draft {
    fn from(p: &ProductFields) -> Self {
        Draft {
            name: Some(p.name.clone()),
            description: Some(p.description.clone()),
            currency: Some(p.currency),
            amount: Some(p.amount),
            quantity: p.quantity,
            infinite: p.infinite,
            visible_fields: p.visible_fields.clone(),
            test: p.test,
            immortal: p.immortal,
            expired_at: p.expired_at,
            return_url: p.return_url.clone(),
            notification_url: p.notification_url.clone(),
            language: p.language,
            transaction_type: Some(p.transaction_type),
            taxing: p.taxing.clone(),
        }
    }
}

impl Draft {
    /// What is sold, described, and for how much.
    fn read_price(&mut self, r: &Reader, e: &mut Errors) {
        if r.sent("name") {
            self.name = r.string("name", MAX_SHORT, e);
        }
        e.require("name", self.name.is_none());
        if r.sent("description") {
            self.description = r.string("description", MAX_DESCRIPTION, e);
        }
        e.require("description", self.description.is_none());
        if r.sent("currency") {
            self.currency = read_currency(r, "currency", e);
        }
        e.require("currency", self.currency.is_none());
        if r.sent("amount") {
            self.amount = r.integer_in("amount", 1, MAX_AMOUNT, e);
        }
        e.require("amount", self.amount.is_none());
    }

    /// How many are left: a quantity, or none for an infinite product.
    fn read_stock(&mut self, r: &Reader, e: &mut Errors) {
        set(&mut self.infinite, r.boolean("infinite", e));
        let quantity_sent = r.value("quantity").is_some();
        if r.sent("quantity") {
            self.quantity = r.integer_in("quantity", 0, MAX_QUANTITY, e);
        }
        if self.infinite {
            if quantity_sent && !e.has("quantity") {
                e.add("quantity", msg::MUST_BE_BLANK);
            }
            self.quantity = None;
        }
        e.require("quantity", !self.infinite && self.quantity.is_none());
    }

    /// What the pay page asks for, whether it is a test, until when it sells, and where the
    /// customer goes after paying.
    fn read_page(&mut self, r: &Reader, e: &mut Errors) {
        if let Some(fields) = r.strings("visible_fields", e) {
            self.visible_fields = read_visible_fields(&fields, e);
        } else if r.sent("visible_fields") && !e.has("visible_fields") {
            self.visible_fields.clear();
        }
        set(&mut self.test, r.boolean("test", e));
        set(&mut self.immortal, r.boolean("immortal", e));
        if r.sent("expired_at") {
            self.expired_at = read_expired_at(r, e);
        }
        if self.immortal {
            self.expired_at = None;
        }
        e.require("expired_at", !self.immortal && self.expired_at.is_none());
        if r.sent("return_url") {
            self.return_url = read_url(r, "return_url", e);
        }
        if r.sent("notification_url") {
            self.notification_url = read_url(r, "notification_url", e);
        }
    }

    /// The product, when nothing was wrong.
    fn finish(self, e: Errors) -> Result<ProductFields, Errors> {
        // Missing only with an error recorded above.
        let Some(currency) = self.currency else { return Err(e) };
        e.into_result(|| ProductFields {
            name: self.name.unwrap_or_default(),
            description: self.description.unwrap_or_default(),
            currency,
            amount: self.amount.unwrap_or_default(),
            quantity: self.quantity,
            infinite: self.infinite,
            visible_fields: self.visible_fields,
            test: self.test,
            immortal: self.immortal,
            expired_at: self.expired_at,
            return_url: self.return_url,
            notification_url: self.notification_url,
            language: self.language,
            transaction_type: self.transaction_type.unwrap_or(TransactionType::Payment),
            taxing: self.taxing,
        })
    }
}

impl ProductFields {
    /// Validates a create request (`current` is `None`) or applies an update to the
    /// `current` fields: only the fields sent change, and the result obeys every rule.
    pub fn parse(body: &Map<String, Value>, current: Option<&ProductFields>, shop_id: i64) -> Result<Self, Errors> {
        let r = Reader::new(body);
        let mut e = Errors::default();
        let mut d = current.map(Draft::from).unwrap_or_default();
        // Each step reads its fields in the order the errors are listed.
        d.read_price(&r, &mut e);
        d.read_stock(&r, &mut e);
        d.read_page(&r, &mut e);
        if let Some(sent) = r.integer("shop_id", &mut e)
            && sent != shop_id
        {
            e.add("shop_id", "does not match the authenticated shop");
        }
        set(&mut d.language, r.choice("language", Language::parse, &mut e));
        if let Some(t) = r.choice("transaction_type", TransactionType::parse, &mut e) {
            d.transaction_type = Some(t);
        }
        d.taxing.read(&r, &mut e);
        d.finish(e)
    }

    /// Whether the product can still be paid at `now` (not past `expired_at`).
    pub fn is_expired(&self, now: DateTime<Utc>) -> bool {
        !self.immortal && self.expired_at.is_some_and(|at| at <= now)
    }

    /// Whether no unit is left to sell.
    pub fn is_sold_out(&self) -> bool {
        !self.infinite && self.quantity.unwrap_or(0) <= 0
    }
}

fn set<T>(slot: &mut T, value: Option<T>) {
    if let Some(v) = value {
        *slot = v;
    }
}

/// An ISO 4217 code: the shape and the table are checked separately, as spec 7 shows.
pub fn read_currency(r: &Reader, field: &str, e: &mut Errors) -> Option<Currency> {
    let code = r.string(field, MAX_SHORT, e)?;
    let key = r.key(field);
    if !currency::is_alpha3(&code) {
        e.add(&key, "is not in alpha-3 format");
    }
    let found = currency::find(&code);
    if found.is_none() {
        e.add(&key, "is an unknown code");
    }
    found
}

/// An absolute http or https URL, in the normalised form it is stored, returned and sent
/// to (`http:shop.example` is `http://shop.example/`): what the merchant sees is where the
/// customer goes.
pub fn read_url(r: &Reader, field: &str, e: &mut Errors) -> Option<String> {
    let raw = r.string(field, MAX_URL, e)?;
    let normalised = normalise_url(&raw);
    if normalised.is_none() {
        e.add(&r.key(field), "is not an absolute http or https URL");
    }
    normalised
}

/// `raw` as an absolute http or https URL in its normalised form; `None` when it is not one.
pub fn normalise_url(raw: &str) -> Option<String> {
    match url::Url::parse(raw) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() => Some(u.to_string()),
        _ => None,
    }
}

pub(crate) fn read_visible_fields(names: &[String], e: &mut Errors) -> Vec<VisibleField> {
    let mut fields = Vec::new();
    for name in names {
        match VisibleField::parse(name) {
            Some(f) if !fields.contains(&f) => fields.push(f),
            Some(_) => {}
            None => e.add("visible_fields", msg::NOT_INCLUDED),
        }
    }
    fields
}

/// `YYYY-MM-DDThh:mm:ss±hh:mm`, exactly (spec 2.1).
fn read_expired_at(r: &Reader, e: &mut Errors) -> Option<DateTime<Utc>> {
    let raw = r.string("expired_at", MAX_SHORT, e)?;
    match parse_zoned_time(&raw) {
        Some(t) => Some(t),
        None => {
            e.add("expired_at", "must be in the format YYYY-MM-DDThh:mm:ss+hh:mm");
            None
        }
    }
}

/// Parses `2026-12-31T23:59:59+03:00` (no fraction, an explicit offset) to UTC.
pub fn parse_zoned_time(raw: &str) -> Option<DateTime<Utc>> {
    let b = raw.as_bytes();
    let shape = b.len() == 25
        && [4, 7].iter().all(|&i| b[i] == b'-')
        && b[10] == b'T'
        && [13, 16, 22].iter().all(|&i| b[i] == b':')
        && matches!(b[19], b'+' | b'-');
    if !shape {
        return None;
    }
    DateTime::parse_from_str(raw, "%Y-%m-%dT%H:%M:%S%:z").ok().map(|t| t.with_timezone(&Utc))
}

/// Stores visible fields as their words separated by commas.
pub fn visible_fields_to_db(fields: &[VisibleField]) -> String {
    fields.iter().map(|f| f.as_str()).collect::<Vec<_>>().join(",")
}

/// Reads visible fields back from the database.
pub fn visible_fields_from_db(stored: &str) -> Vec<VisibleField> {
    stored.split(',').filter_map(VisibleField::parse).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(body: Value) -> Result<ProductFields, Errors> {
        ProductFields::parse(body.as_object().unwrap(), None, 7)
    }

    fn valid() -> Value {
        json!({"name": "Book", "description": "A book", "currency": "EUR", "amount": "990",
               "quantity": "5", "expired_at": "2030-01-01T00:00:00+03:00"})
    }

    fn with(mut body: Value, key: &str, value: Value) -> Value {
        body[key] = value;
        body
    }

    fn errors_of(body: Value) -> Errors {
        parse(body).unwrap_err()
    }

    #[test]
    fn a_full_request_parses_with_defaults() {
        let p = parse(valid()).unwrap();
        assert_eq!(p.amount, 990);
        assert_eq!(p.quantity, Some(5));
        assert_eq!(p.language, Language::En);
        assert_eq!(p.transaction_type, TransactionType::Payment);
        assert_eq!(p.expired_at.unwrap().to_rfc3339(), "2029-12-31T21:00:00+00:00");
    }

    #[test]
    fn an_empty_body_names_every_required_field() {
        let e = errors_of(json!({}));
        for f in ["name", "description", "currency", "amount", "quantity", "expired_at"] {
            assert_eq!(e.get(f).unwrap(), ["can't be blank".to_string()], "{f}");
        }
    }

    #[test]
    fn currency_shape_and_table_are_separate_problems() {
        let e = errors_of(with(valid(), "currency", json!("EURO")));
        assert_eq!(e.get("currency").unwrap(), ["is not in alpha-3 format", "is an unknown code"]);
        let e = errors_of(with(valid(), "currency", json!("ABC")));
        assert_eq!(e.get("currency").unwrap(), ["is an unknown code"]);
    }

    #[test]
    fn infinite_products_take_no_quantity() {
        let body = with(with(valid(), "infinite", json!(true)), "quantity", Value::Null);
        assert_eq!(parse(body).unwrap().quantity, None);
        let e = errors_of(with(valid(), "infinite", json!(true)));
        assert_eq!(e.get("quantity").unwrap(), ["must be blank"]);
    }

    #[test]
    fn immortal_products_need_no_expiry_and_others_need_the_exact_format() {
        let body = with(with(valid(), "immortal", json!(true)), "expired_at", Value::Null);
        assert_eq!(parse(body).unwrap().expired_at, None);
        for bad in [
            "2030-01-01T00:00:00Z",
            "2030-01-01 00:00:00+03:00",
            "2030-01-01T00:00:00.5+03:00",
            "2030-13-01T00:00:00+03:00",
            "2030-01-01T00:00:00+0300",
            "tomorrow",
        ] {
            let e = errors_of(with(valid(), "expired_at", json!(bad)));
            assert!(e.has("expired_at"), "{bad}");
        }
    }

    #[test]
    fn amounts_and_quantities_are_checked() {
        for (field, value, message) in [
            ("amount", json!("0"), "must be greater than or equal to 1"),
            ("amount", json!("-5"), "must be greater than or equal to 1"),
            ("amount", json!("9.90"), "is not a number"),
            ("quantity", json!(-1), "must be greater than or equal to 0"),
        ] {
            let e = errors_of(with(valid(), field, value));
            assert_eq!(e.get(field).unwrap(), [message.to_string()]);
        }
    }

    #[test]
    fn words_outside_their_lists_are_refused() {
        for (field, value) in [
            ("visible_fields", json!(["email", "shoe_size"])),
            ("language", json!("xx")),
            ("transaction_type", json!("refund")),
        ] {
            let e = errors_of(with(valid(), field, value));
            assert_eq!(e.get(field).unwrap(), ["is not included in the list"], "{field}");
        }
    }

    #[test]
    fn urls_are_kept_in_their_normalised_form() {
        for (typed, kept) in [
            ("http:evil.example", "http://evil.example/"),
            ("HTTPS://Shop.Example:443/a/../thanks?o=1", "https://shop.example/thanks?o=1"),
            ("https://shop.example", "https://shop.example/"),
            ("https://shop.example/é", "https://shop.example/%C3%A9"),
        ] {
            let ok = parse(with(valid(), "return_url", json!(typed))).unwrap();
            assert_eq!(ok.return_url.as_deref(), Some(kept), "{typed}");
        }
        // The limit is on what is sent; the normalised form may be longer.
        let long = format!("https://shop.example/{}", "é".repeat(1000));
        let ok = parse(with(valid(), "return_url", json!(long))).unwrap();
        assert_eq!(ok.return_url.unwrap().len(), "https://shop.example/".len() + 6000);
    }

    #[test]
    fn return_url_must_be_absolute_http() {
        for bad in ["/thanks", "javascript:alert(1)", "ftp://x.org/", "http://"] {
            assert!(errors_of(with(valid(), "return_url", json!(bad))).has("return_url"), "{bad}");
        }
        let ok = parse(with(valid(), "return_url", json!("https://shop.example/thanks?o=1"))).unwrap();
        assert_eq!(ok.return_url.as_deref(), Some("https://shop.example/thanks?o=1"));
    }

    #[test]
    fn shop_id_must_be_the_callers() {
        assert!(parse(with(valid(), "shop_id", json!("7"))).is_ok());
        assert!(errors_of(with(valid(), "shop_id", json!(8))).has("shop_id"));
    }

    #[test]
    fn updates_change_only_what_is_sent_and_keep_the_rules() {
        let current = parse(valid()).unwrap();
        let update = |body: Value| ProductFields::parse(body.as_object().unwrap(), Some(&current), 7);
        let p = update(json!({"amount": "1200"})).unwrap();
        assert_eq!((p.amount, p.name.as_str()), (1200, "Book"));
        let p = update(json!({"infinite": true})).unwrap();
        assert_eq!(p.quantity, None);
        let e = update(json!({"name": ""})).unwrap_err();
        assert_eq!(e.get("name").unwrap(), ["can't be blank"]);
        let infinite = update(json!({"infinite": true})).unwrap();
        let e = ProductFields::parse(json!({"infinite": false}).as_object().unwrap(), Some(&infinite), 7).unwrap_err();
        assert_eq!(e.get("quantity").unwrap(), ["can't be blank"]);
    }

    #[test]
    fn expiry_is_checked_against_the_given_time() {
        let p = parse(valid()).unwrap();
        let before: DateTime<Utc> = "2029-12-31T20:59:59Z".parse().unwrap();
        assert!(!p.is_expired(before));
        assert!(p.is_expired("2029-12-31T21:00:00Z".parse().unwrap()));
    }
}
