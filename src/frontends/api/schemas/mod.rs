//! Documentation-only types: what the API's parsers accept, for the OpenAPI document
//! (`/openapi.json`). The handlers parse bodies themselves (`domain::*::parse`); these types
//! are never deserialized.
//!
//! - Request bodies derive `ToSchema`. A field is required exactly when the parser requires it
//!   of an otherwise valid body; an `Option` field is nullable where the parser reads `null` as
//!   "not sent", and `nullable = false` where `null` is refused.
//! - Query strings derive `IntoParams` (`parameter_in = Query`). utoipa 5's `IntoParams` cannot
//!   flatten one parameter struct into another, so every list filter type (`PaymentFilterParams`,
//!   ...) carries its own `limit` and `starting_after`; [`Paging`] is for the lists with no
//!   filter. An operation names one of them, never both.
//! - Values the parsers take in two shapes (numbers as JSON integers or digit strings, booleans
//!   as `true` or `"true"`, times as RFC 3339 or Unix seconds) are small named schemas below
//!   with hand-written `PartialSchema`/`ToSchema` impls; closed vocabularies of the domain
//!   (`Currency`, `Language`, `IntervalUnit`, ...) use the domain types' own schemas.
//! - Rules between fields (`quantity` unless `infinite`, ...) are `oneOf`/`anyOf` branches
//!   added with a `#[serde(flatten)] #[schema(schema_with = ...)]` field: utoipa renders the
//!   type as `allOf: [<rules>, <object>]`. Every such rule is listed at the end of this file.
//! - Patterns are ECMA-262 regexes, ASCII-only, anchored. Text fields exclude NUL: the body
//!   reader refuses it anywhere (the database cannot store it).
//!
//! Each resource's request types and their rules are in a file named after it; this file
//! holds what they share: the value shapes, the vocabularies, the rule builders and [`Paging`].
#![allow(dead_code)]

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::{Value, json};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{
    AnyOfBuilder, KnownFormat, ObjectBuilder, OneOfBuilder, Ref, Schema, SchemaFormat, SchemaType, Type,
};
use utoipa::{IntoParams, PartialSchema, ToSchema};

use crate::domain::billing::State as SubscriptionState;
use crate::domain::card::Behaviour;
use crate::domain::currency::Currency;
use crate::domain::event::EventType;
use crate::domain::plan::{MAX_ATTEMPTS, MAX_CYCLES, MAX_INTERVAL};
use crate::domain::product::{MAX_AMOUNT, MAX_QUANTITY};
use crate::domain::tax::TaxBehavior;
use crate::domain::vocab::{IntervalUnit, Language, PaymentStatus, TransactionType, VisibleField};

// ---------------------------------------------------------------------------------------------
// Paging
// ---------------------------------------------------------------------------------------------

/// Paging of a list with no filters. Other query parameters are ignored.
#[derive(serde::Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct Paging {
    /// Page size, 1 to 1000.
    #[param(minimum = 1, maximum = 1000, default = 100)]
    limit: Option<u64>,
    /// The last id of the previous page: the page starts after it. It must be an id of this
    /// list (404 otherwise); empty means the first page.
    #[param(max_length = 64, pattern = r"^[A-Za-z0-9_]{0,64}$")]
    starting_after: Option<String>,
}

// ---------------------------------------------------------------------------------------------
// Values taken in more than one shape
// ---------------------------------------------------------------------------------------------

/// `impl ToSchema` with a fixed component name.
macro_rules! named {
    ($name:ident) => {
        impl ToSchema for $name {
            fn name() -> Cow<'static, str> {
                Cow::Borrowed(stringify!($name))
            }
        }
    };
}

/// A whole number sent as a JSON integer or as a string of digits (the API family's clients
/// send numbers as strings). Strings are trimmed; leading zeros are fine; no sign, point or
/// separators (`"9.90"`, `"1,000"`, `"+5"` and JSON `5.0` are refused).
macro_rules! whole_number {
    ($name:ident, $min:expr, $max:expr, $digits:literal, $description:literal) => {
        #[doc = $description]
        pub struct $name;

        impl PartialSchema for $name {
            fn schema() -> RefOr<Schema> {
                whole_number_schema($min, $max, $digits, $description)
            }
        }

        named!($name);
    };
}

fn whole_number_schema(min: i64, max: i64, digits: &str, description: &str) -> RefOr<Schema> {
    OneOfBuilder::new()
        .item(
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
                .minimum(Some(min))
                .maximum(Some(max)),
        )
        .item(ObjectBuilder::new().schema_type(Type::String).pattern(Some(digits)))
        .description(Some(description))
        .into()
}

// The digit patterns spell out the same ranges as the integers (with leading zeros).
whole_number!(
    MinorAmount,
    1,
    MAX_AMOUNT,
    r"^0*[1-9][0-9]{0,11}$",
    "An amount in minimal currency units, 1 to 999,999,999,999: a JSON integer or a string of digits."
);
whole_number!(
    TrialAmount,
    0,
    MAX_AMOUNT,
    r"^0*[0-9]{1,12}$",
    "A trial amount in minimal currency units, 0 (free) to 999,999,999,999: a JSON integer or a string of digits."
);
whole_number!(
    ProductQuantity,
    0,
    MAX_QUANTITY,
    r"^0*([0-9]{1,9}|1000000000)$",
    "Units left to sell, 0 to 1,000,000,000: a JSON integer or a string of digits."
);
whole_number!(
    IntervalCount,
    1,
    MAX_INTERVAL,
    r"^0*([1-9][0-9]{0,2}|1000)$",
    "A number of interval units, 1 to 1000: a JSON integer or a string of digits."
);
whole_number!(
    BillingCycleCount,
    1,
    MAX_CYCLES,
    r"^0*([1-9][0-9]{0,4}|100000)$",
    "A number of charges, 1 to 100,000: a JSON integer or a string of digits."
);
whole_number!(
    PaymentAttemptCount,
    1,
    MAX_ATTEMPTS,
    r"^0*([1-9][0-9]?|100)$",
    "Attempts per charge, 1 to 100: a JSON integer or a string of digits."
);
whole_number!(
    RefundAmount,
    1,
    i64::MAX,
    r"^0*[1-9][0-9]*$",
    "An amount in minimal currency units, at least 1 and at most what is left to refund: a JSON integer or a string of digits."
);
whole_number!(
    CardExpMonth,
    1,
    12,
    r"^0*([1-9]|1[0-2])$",
    "A card's expiry month, 1 to 12: a JSON integer or a string of digits."
);
whole_number!(
    CardExpYear,
    0,
    9999,
    r"^[0-9]{2}([0-9]{2})?$",
    "A card's expiry year: four digits, or two meaning 20YY; from the current month to 25 years ahead. A JSON integer or a string of digits."
);

/// `true` or `false`, as JSON booleans or the strings `"true"` and `"false"`.
pub struct FlexibleBoolean;

impl PartialSchema for FlexibleBoolean {
    fn schema() -> RefOr<Schema> {
        OneOfBuilder::new()
            .item(ObjectBuilder::new().schema_type(Type::Boolean))
            .item(ObjectBuilder::new().schema_type(Type::String).enum_values(Some(["true", "false"])))
            .description(Some("A JSON boolean, or the string \"true\" or \"false\"."))
            .into()
    }
}

named!(FlexibleBoolean);

/// A card number: its digits as text, or a JSON integer of 12 to 19 digits.
fn card_number() -> OneOfBuilder {
    OneOfBuilder::new()
        .item(ObjectBuilder::new().schema_type(Type::String).max_length(Some(255)).pattern(Some(r"^[0-9]{12,19}$")))
        .item(
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .minimum(Some(100_000_000_000i64))
                .maximum(Some(SAFE_INTEGER)),
        )
        .examples([json!("4200000000000000")])
}

/// A card's 3 or 4 digit code: as text, or a JSON integer (100 to 9999).
fn card_code() -> OneOfBuilder {
    OneOfBuilder::new()
        .item(ObjectBuilder::new().schema_type(Type::String).max_length(Some(8)).pattern(Some(r"^[0-9]{3,4}$")))
        .item(ObjectBuilder::new().schema_type(Type::Integer).minimum(Some(100)).maximum(Some(9999)))
        .examples([json!("123")])
}

/// The largest integer every JSON reader keeps exactly (2^53 - 1).
const SAFE_INTEGER: i64 = crate::domain::input::SAFE_INTEGER as i64;

/// A reference in the merchant's system: at most 255 characters of text, or a whole number
/// (within ±2^53, which every JSON reader keeps exactly).
fn merchant_reference() -> OneOfBuilder {
    OneOfBuilder::new()
        .item(ObjectBuilder::new().schema_type(Type::String).max_length(Some(255)).pattern(Some(r"^[^\x00]*$")))
        .item(ObjectBuilder::new().schema_type(Type::Integer).minimum(Some(-SAFE_INTEGER)).maximum(Some(SAFE_INTEGER)))
        .item(ObjectBuilder::new().schema_type(Type::Null))
}

/// The last second of 9999 in Unix seconds.
const LAST_SECOND_9999: i64 = 253_402_300_799;

/// A moment as RFC 3339 text matching `pattern`, or Unix seconds from `first` to `last`.
fn moment(pattern: &str, first: i64, last: i64, description: &str) -> RefOr<Schema> {
    OneOfBuilder::new()
        .item(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)))
                .pattern(Some(pattern))
                .description(Some("RFC 3339 (`2026-11-22T10:15:30Z`, `2026-11-22T12:15:30.5+02:00`)"))
                .examples(["2026-11-22T10:15:30Z"]),
        )
        .item(
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
                .minimum(Some(first))
                .maximum(Some(last))
                .description(Some("Unix seconds")),
        )
        .description(Some(description))
        .into()
}

/// A moment of a request body (test clocks, card outcomes): RFC 3339 text or Unix seconds,
/// between 1970 and 9999 (in UTC).
pub struct TimeInput;

impl PartialSchema for TimeInput {
    fn schema() -> RefOr<Schema> {
        // Years 1971 to 9998 as text (1970 and 9999 are accepted only where the offset keeps
        // the UTC year in range).
        moment(
            r"^(197[1-9]|19[89][0-9]|[2-8][0-9]{3}|9[0-8][0-9]{2}|99[0-8][0-9]|999[0-8])-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$",
            0,
            LAST_SECOND_9999,
            "A moment: RFC 3339 text or Unix seconds (a JSON integer), in the years 1970 to 9999 (UTC).",
        )
    }
}

named!(TimeInput);

/// The first second of the year 0 in Unix seconds.
const FIRST_SECOND_0: i64 = -62_167_219_200;

/// A moment of the events filter: RFC 3339 text or Unix seconds, in the years 0 to 9999.
pub struct FilterTime;

impl PartialSchema for FilterTime {
    fn schema() -> RefOr<Schema> {
        moment(
            r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$",
            FIRST_SECOND_0,
            LAST_SECOND_9999,
            "A moment: RFC 3339 text or Unix seconds, in the years 0 to 9999.",
        )
    }
}

named!(FilterTime);

/// An IPv4 or IPv6 address (surrounding spaces are trimmed; no zone index).
pub struct IpAddress;

impl PartialSchema for IpAddress {
    fn schema() -> RefOr<Schema> {
        // anyOf, not oneOf: a validator that treats `format` as an annotation sees two plain
        // strings, which oneOf would refuse.
        AnyOfBuilder::new()
            .item(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .format(Some(SchemaFormat::KnownFormat(KnownFormat::Ipv4))),
            )
            .item(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .format(Some(SchemaFormat::KnownFormat(KnownFormat::Ipv6))),
            )
            .description(Some("An IPv4 or IPv6 address (`203.0.113.9`, `2001:db8::1`)."))
            .into()
    }
}

named!(IpAddress);

// ---------------------------------------------------------------------------------------------
// Closed vocabularies that are not (or not exactly) a domain enum
// ---------------------------------------------------------------------------------------------

/// A string, one of `$words`.
macro_rules! word_list {
    ($name:ident, $words:expr, $description:literal) => {
        #[doc = $description]
        pub struct $name;

        impl PartialSchema for $name {
            fn schema() -> RefOr<Schema> {
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .enum_values(Some($words))
                    .description(Some($description))
                    .into()
            }
        }

        named!($name);
    };
}

use crate::domain::country::{CA_PROVINCES, COUNTRIES, US_STATES};

word_list!(
    CountryCode,
    COUNTRIES.split_ascii_whitespace(),
    "An ISO 3166-1 alpha-2 country code in capitals (`DE`, `US`); `UK` is not one (use `GB`)."
);
word_list!(
    StateCode,
    US_STATES.split_ascii_whitespace().chain(CA_PROVINCES.split_ascii_whitespace()),
    "A US state, district, territory or military code (`NY`, `DC`, `PR`, `AE`) or a Canadian province or territory code (`ON`, `QC`)."
);
word_list!(
    ChargeOutcome,
    Behaviour::WORDS.iter().copied().filter(|w| *w != Behaviour::RefundFails.as_str()),
    "What the card does: `succeeds`, `declined` (card_declined), `insufficient_funds`, `processing_error`, or `succeeds_then_declines` (succeeds while the customer is present, declines every later charge)."
);
word_list!(
    EventTypeFilter,
    event_types_with_wildcards(false),
    "An event type (`payment.succeeded`), or `<object>.*` for every type of `payment`, `refund`, `subscription` or `product`."
);
word_list!(
    EnabledEventEntry,
    event_types_with_wildcards(true),
    "`*` (every event), an event type (`refund.failed`), or `<object>.*` (`payment.*`). Surrounding spaces are trimmed."
);

/// Every event type, then `<object>.*` for each object, with `*` first when `all`.
fn event_types_with_wildcards(all: bool) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    if all {
        words.push("*".to_string());
    }
    words.extend(EventType::WORDS.iter().map(|w| w.to_string()));
    for kind in EventType::ALL {
        let wildcard = format!("{}.*", kind.object());
        if !words.contains(&wildcard) {
            words.push(wildcard);
        }
    }
    words
}

// ---------------------------------------------------------------------------------------------
// Rules between fields (rendered as `allOf: [<rules>, <object>]` by the `flatten` fields)
// ---------------------------------------------------------------------------------------------

/// `null` or not sent.
fn absent() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::Null)
}

/// One of these JSON values (of any type).
fn values(values: impl IntoIterator<Item = Value>) -> ObjectBuilder {
    ObjectBuilder::new().schema_type(SchemaType::AnyValue).enum_values(Some(values))
}

/// True, as the parsers read it.
fn yes() -> ObjectBuilder {
    values([json!(true), json!("true")])
}

/// False or `null` (a property constraint: not sending the field also passes).
fn no() -> ObjectBuilder {
    values([json!(false), json!("false"), Value::Null])
}

/// Sent as a number (a JSON integer or a digit string), not `null`.
fn given_number() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(SchemaType::from_iter([Type::Integer, Type::String]))
}

/// Sent as a value of `kind`, not `null`.
fn given(kind: Type) -> ObjectBuilder {
    ObjectBuilder::new().schema_type(kind)
}

/// These codes, or `null`.
fn codes_or_null<'a>(codes: impl IntoIterator<Item = &'a str>) -> ObjectBuilder {
    values(codes.into_iter().map(Value::from).chain([Value::Null]))
}

// The resources' files come after the macros above, which they use.
pub mod api_keys;
pub mod audit;
pub mod coupons;
pub mod customers;
pub mod disputes;
pub mod documents;
pub mod events;
pub mod payments;
pub mod plans;
pub mod processor;
pub mod products;
pub mod refunds;
pub mod revenue;
pub mod subscriptions;
pub mod tax_rates;
pub mod test_clocks;
pub mod webhooks;

// ---------------------------------------------------------------------------------------------
// Cross-field rules, and where each is encoded
// ---------------------------------------------------------------------------------------------
//
// Static (encoded above as allOf [<rules>, <object>] through a flattened `rules` field; delete
// that field to drop the encoding and keep only the prose in the field descriptions):
// - ProductCreate: `quantity` required unless `infinite` is true (true or "true"); `quantity`
//   must be absent or null when `infinite` is true ("must be blank"); `expired_at` required
//   unless `immortal` is true (when immortal, a sent `expired_at` is still checked, then
//   dropped).                                                        -> product_create_rules
// - ProductUpdate: no non-null `quantity` with `"infinite": true`.   -> product_update_rules
// - PlanCreate: `billing_cycles` required when `infinite` is false; when `infinite` is true or
//   absent, `billing_cycles` is not even read (any value passes).     -> plan_create_rules
// - PlanTrial: `amount` and `interval` together or neither.           -> trial_rules
// - CustomerCreate (also inline in SubscriptionCreate): `state` only with `country` US or CA
//   and then one of that country's codes; with `country` US, `zip` NNNNN or NNNNN-NNNN.
//                                                                     -> customer_region_rules
// - SubscriptionCreate: `plan` object, else `plan_id`; `customer` object, else `customer_id`.
//   A non-null `plan` wins over `plan_id` (even a `plan` without `id`: "plan.id can't be
//   blank"); a `customer` object wins, but `customer_id` is still length-checked. Inside
//   `customer`, a string `id` means an existing customer (other fields ignored), anything
//   else an inline new customer.                  -> subscription_rules, SubscriptionCustomer
// - SubscriptionCard: `cvc`, else `verification_value` (encoded as: `cvc` required).
//
// Not expressible here (they depend on stored state or the clock; a fuzzer meets them as 4xx):
// - ProductUpdate: `"infinite": false` on an unlimited product needs `quantity`;
//   `"immortal": false` needs `expired_at` when the product has none; a lowered `quantity`
//   that sales overtook meanwhile is 409.
// - SubscriptionCreate: `plan.id`/`plan_id`, `customer.id`/`customer_id` and `test_clock` must
//   exist in the shop (422); `test_clock` only with a test plan (422); a `card` on a live plan
//   needs a real acquirer, and a test plan takes only the test card numbers (422 on
//   `card.number`); the card must pass Luhn and not be expired (`exp_year`/`exp_month` at or
//   after the current month, at most 25 years ahead).
// - TestCardOutcome: only for a test subscription (409); `from` not before the subscription's
//   current time (422).
// - TestClockAdvance: `frozen_time` not earlier than the clock's time (409; the same time is a
//   no-op); 409 while advancing.
// - RefundCreate: `amount` at most what is left (422); the payment must have taken money (409).
// - Redeliver: `endpoint_id` must exist (404).
// - Lists: `starting_after` must be an id of that list (404).
