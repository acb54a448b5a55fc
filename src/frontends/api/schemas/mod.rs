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
use crate::domain::vocab::{IntervalUnit, Language, PaymentStatus, TransactionType, VisibleField};

// ---------------------------------------------------------------------------------------------
// Products
// ---------------------------------------------------------------------------------------------

/// A new product (spec 2.1). `shop_id` is accepted too (a JSON integer or digit string) but must
/// be the authenticated shop's id, so it is left out of this schema: omit it.
#[derive(ToSchema)]
#[schema(example = json!({
    "name": "Gift card", "description": "Worth 9.90", "currency": "EUR", "amount": "990",
    "quantity": "5", "expired_at": "2030-06-30T23:59:59+02:00",
    "visible_fields": ["first_name", "email"], "return_url": "https://books.example/thanks"
}))]
pub struct ProductCreate {
    /// What is sold: 1 to 255 characters, not only spaces.
    #[schema(
        max_length = 255,
        pattern = r"^[^\x00]*[^\x00\t\n\v\f\r \x85\xA0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000][^\x00]*$"
    )]
    name: String,
    /// Shown on the pay page: 1 to 10,000 characters, not only spaces.
    #[schema(
        max_length = 10000,
        pattern = r"^[^\x00]*[^\x00\t\n\v\f\r \x85\xA0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000][^\x00]*$"
    )]
    description: String,
    /// The price's currency.
    currency: Currency,
    /// The price in minimal units of `currency` (990 is 9.90 EUR).
    amount: MinorAmount,
    /// Units left to sell. Required unless `infinite` is true; must not be sent (or be `null`)
    /// when `infinite` is true.
    quantity: Option<ProductQuantity>,
    /// True when the stock is unlimited (then `quantity` must not be sent).
    #[schema(default = false)]
    infinite: Option<FlexibleBoolean>,
    /// Customer data the pay page asks for (each listed field becomes required on the page).
    /// Duplicates are ignored; `null` reads as none.
    #[schema(default = json!([]))]
    visible_fields: Option<Vec<VisibleField>>,
    /// A test product: paid with test cards only, never charged.
    #[schema(default = false)]
    test: Option<FlexibleBoolean>,
    /// True when the product can be paid forever (then `expired_at` is not needed).
    #[schema(default = false)]
    immortal: Option<FlexibleBoolean>,
    /// Until when the product can be paid: exactly `YYYY-MM-DDThh:mm:ss±hh:mm` (an explicit
    /// numeric offset; no `Z`, no fraction). Required unless `immortal` is true; ignored (but
    /// still checked) when `immortal` is true.
    #[schema(format = DateTime, pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[+-][0-9]{2}:[0-9]{2}$", example = "2030-06-30T23:59:59+02:00")]
    expired_at: Option<String>,
    /// Where the customer goes after paying: an absolute `http` or `https` URL of at most
    /// 2048 characters. Without it the shop's own URL is used.
    #[schema(
        max_length = 2048,
        pattern = r"^$|^https?://([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z]([A-Za-z0-9-]*[A-Za-z0-9])?(:[0-9]{1,4})?([/?#][^\x00]*)?$"
    )]
    return_url: Option<String>,
    /// Where bePaid-style notifications of this product's payments go (else the shop's
    /// `notification_url`): an absolute `http` or `https` URL of at most 2048 characters.
    #[schema(
        max_length = 2048,
        pattern = r"^$|^https?://([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z]([A-Za-z0-9-]*[A-Za-z0-9])?(:[0-9]{1,4})?([/?#][^\x00]*)?$"
    )]
    notification_url: Option<String>,
    /// The pay page's language.
    #[schema(default = "en")]
    language: Option<Language>,
    /// `payment` takes the money at once; `authorization` holds it for a later capture.
    #[schema(default = "payment")]
    transaction_type: Option<TransactionType>,
    // `quantity` unless `infinite`, `expired_at` unless `immortal`.
    #[serde(flatten)]
    #[schema(schema_with = product_create_rules)]
    rules: Value,
}

/// A change to a product (`PUT /products/{id}`): any subset of the create fields; only those
/// sent change, and the result must obey every rule of a new product. `quantity` is the
/// number of units left; `"infinite": true` clears it, `"infinite": false` on an unlimited
/// product needs a `quantity`; `"immortal": false` needs an `expired_at` if the product has
/// none; `null` removes `return_url`, `notification_url` or `visible_fields`.
#[derive(ToSchema)]
#[schema(example = json!({"amount": "1200", "infinite": true}))]
pub struct ProductUpdate {
    /// What is sold: 1 to 255 characters, not only spaces.
    #[schema(
        nullable = false,
        max_length = 255,
        pattern = r"^[^\x00]*[^\x00\t\n\v\f\r \x85\xA0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000][^\x00]*$"
    )]
    name: Option<String>,
    /// Shown on the pay page: 1 to 10,000 characters, not only spaces.
    #[schema(
        nullable = false,
        max_length = 10000,
        pattern = r"^[^\x00]*[^\x00\t\n\v\f\r \x85\xA0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000][^\x00]*$"
    )]
    description: Option<String>,
    /// The price's currency.
    #[schema(nullable = false)]
    currency: Option<Currency>,
    /// The price in minimal units of `currency`.
    #[schema(nullable = false)]
    amount: Option<MinorAmount>,
    /// Units left to sell. Must not be sent together with `"infinite": true`. A new value is
    /// applied as the difference from the quantity read, so units sold meanwhile stay sold
    /// (409 when they would leave fewer than zero).
    quantity: Option<ProductQuantity>,
    /// True makes the stock unlimited (and clears `quantity`); false needs a `quantity` if the
    /// product has none.
    infinite: Option<FlexibleBoolean>,
    /// Customer data the pay page asks for; `null` clears the list.
    visible_fields: Option<Vec<VisibleField>>,
    /// A test product.
    test: Option<FlexibleBoolean>,
    /// True: payable forever (clears `expired_at`); false needs an `expired_at` if the product
    /// has none.
    immortal: Option<FlexibleBoolean>,
    /// Until when the product can be paid: exactly `YYYY-MM-DDThh:mm:ss±hh:mm`.
    #[schema(nullable = false, format = DateTime, pattern = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[+-][0-9]{2}:[0-9]{2}$", example = "2030-06-30T23:59:59+02:00")]
    expired_at: Option<String>,
    /// Where the customer goes after paying (`null` removes it).
    #[schema(
        max_length = 2048,
        pattern = r"^$|^https?://([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z]([A-Za-z0-9-]*[A-Za-z0-9])?(:[0-9]{1,4})?([/?#][^\x00]*)?$"
    )]
    return_url: Option<String>,
    /// Where notifications of this product's payments go (`null` removes it).
    #[schema(
        max_length = 2048,
        pattern = r"^$|^https?://([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z]([A-Za-z0-9-]*[A-Za-z0-9])?(:[0-9]{1,4})?([/?#][^\x00]*)?$"
    )]
    notification_url: Option<String>,
    /// The pay page's language.
    language: Option<Language>,
    /// `payment` or `authorization`.
    transaction_type: Option<TransactionType>,
    // No `quantity` together with `"infinite": true`.
    #[serde(flatten)]
    #[schema(schema_with = product_update_rules)]
    rules: Value,
}

// ---------------------------------------------------------------------------------------------
// Plans
// ---------------------------------------------------------------------------------------------

/// A new subscription plan (spec 2.2).
#[derive(ToSchema)]
#[schema(example = json!({
    "title": "Gold", "currency": "EUR",
    "plan": {"amount": 990, "interval": 1, "interval_unit": "month"},
    "trial": {"amount": 100, "interval": 7, "interval_unit": "day", "as_first_payment": false},
    "number_payment_attempts": 3, "prevent_payments_at_night": false,
    "infinite": false, "billing_cycles": 12
}))]
pub struct PlanCreate {
    /// The plan's name: 1 to 255 characters, not only spaces.
    #[schema(
        max_length = 255,
        pattern = r"^[^\x00]*[^\x00\t\n\v\f\r \x85\xA0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000][^\x00]*$"
    )]
    title: String,
    /// The currency of every charge.
    currency: Currency,
    /// The language of the plan's pay page.
    #[schema(default = "en")]
    language: Option<Language>,
    /// A test plan: its subscriptions are charged on test cards only and may use test clocks.
    #[schema(default = false)]
    test: Option<FlexibleBoolean>,
    /// How much and how often.
    plan: PlanSchedule,
    /// An optional trial before the plan's own charges.
    trial: Option<PlanTrial>,
    /// True (the default) bills until cancelled; false stops after `billing_cycles` charges.
    #[schema(default = true)]
    infinite: Option<FlexibleBoolean>,
    /// How many charges a finite plan makes (1 to 100,000). Required when `infinite` is false;
    /// ignored (not even checked) otherwise.
    #[schema(value_type = Option<serde_json::Value>)]
    billing_cycles: Option<BillingCycleCount>,
    /// Failed attempts of one charge before the subscription fails (1 to 100).
    #[schema(default = 3)]
    number_payment_attempts: Option<PaymentAttemptCount>,
    /// Moves charges that fall due at night to the morning.
    #[schema(default = false)]
    prevent_payments_at_night: Option<FlexibleBoolean>,
    // `billing_cycles` when `infinite` is false.
    #[serde(flatten)]
    #[schema(schema_with = plan_create_rules)]
    rules: Value,
}

/// The plan's own charges: `amount` every `interval` `interval_unit`s. A missing `plan` names
/// each of its fields as missing.
#[derive(ToSchema)]
pub struct PlanSchedule {
    /// Each charge, in minimal units of the plan's currency.
    amount: MinorAmount,
    /// How many `interval_unit`s between charges (1 to 1000).
    interval: IntervalCount,
    /// The unit of `interval`.
    interval_unit: IntervalUnit,
}

/// A trial period: one charge of `amount`, then the plan's charges start `interval`
/// `interval_unit`s later. `amount` and `interval` come together or not at all; without them
/// there is no trial (`as_first_payment` is still stored).
#[derive(ToSchema)]
pub struct PlanTrial {
    /// The trial's charge in minimal units; 0 for a free trial.
    amount: Option<TrialAmount>,
    /// How many `interval_unit`s the trial lasts (1 to 1000).
    interval: Option<IntervalCount>,
    /// The unit of `interval`; defaults to the plan's `interval_unit`.
    interval_unit: Option<IntervalUnit>,
    /// When true the trial charge counts as the first payment: a failed charge after the trial
    /// is retried as any other. When false a failed charge after the trial is not retried.
    #[schema(default = false)]
    as_first_payment: Option<FlexibleBoolean>,
    // `amount` and `interval` together.
    #[serde(flatten)]
    #[schema(schema_with = trial_rules)]
    rules: Value,
}

// ---------------------------------------------------------------------------------------------
// Customers
// ---------------------------------------------------------------------------------------------

/// A new customer (spec 2.3). Text fields are at most 255 characters; blank text reads as not
/// sent. Also the inline `customer` of `POST /subscriptions`.
#[derive(ToSchema)]
#[schema(example = json!({
    "email": "ann@example.com", "ip": "203.0.113.9", "first_name": "Ann",
    "country": "US", "state": "NY", "zip": "12207", "external_id": "crm-42"
}))]
pub struct CustomerCreate {
    /// The customer's e-mail address (an HTML5-valid address: no quoted local parts).
    #[schema(
        max_length = 255,
        pattern = r"^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$"
    )]
    email: String,
    /// The customer's IP address.
    ip: IpAddress,
    /// First name.
    #[schema(max_length = 255, pattern = r"^[^\x00]*$")]
    first_name: Option<String>,
    /// Last name.
    #[schema(max_length = 255, pattern = r"^[^\x00]*$")]
    last_name: Option<String>,
    /// Street address.
    #[schema(max_length = 255, pattern = r"^[^\x00]*$")]
    address: Option<String>,
    /// City.
    #[schema(max_length = 255, pattern = r"^[^\x00]*$")]
    city: Option<String>,
    /// Country.
    country: Option<CountryCode>,
    /// State or province: only with `country` `US` or `CA`, and one of that country's codes.
    state: Option<StateCode>,
    /// Postal code; for `country` `US` it must be `NNNNN` or `NNNNN-NNNN`.
    #[schema(max_length = 255, pattern = r"^[^\x00]*$")]
    zip: Option<String>,
    /// Phone number, as typed.
    #[schema(max_length = 255, pattern = r"^[^\x00]*$")]
    phone: Option<String>,
    /// The merchant's own reference for the customer: text, or a whole number (kept as its
    /// digits).
    #[schema(schema_with = merchant_reference)]
    external_id: Option<String>,
    // `state` only for US and CA, US zip codes.
    #[serde(flatten)]
    #[schema(schema_with = customer_region_rules)]
    rules: Value,
}

// ---------------------------------------------------------------------------------------------
// Subscriptions
// ---------------------------------------------------------------------------------------------

/// A new subscription: a plan (`plan.id` or `plan_id`), a customer (inline `customer`, an
/// existing one as `customer.id`, or `customer_id`) and optionally a card. Without a card the
/// subscription waits in `redirecting` until the customer enters one at its `redirect_url`.
/// With a card the first charge is made at once. Unknown plan, customer or test clock ids are
/// refused with 422.
#[derive(ToSchema)]
#[schema(example = json!({
    "plan": {"id": "pln_5b1e0c4d9a7f3e21"},
    "customer": {"email": "ann@example.com", "ip": "203.0.113.9", "first_name": "Ann"},
    "card": {"number": "4200000000000000", "exp_month": 12, "exp_year": 2030, "cvc": "123", "holder": "Ann Lee"},
    "return_url": "https://books.example/thanks", "tracking_id": "order-42"
}))]
pub struct SubscriptionCreate {
    /// The plan. When sent (not `null`), `plan_id` is ignored.
    plan: Option<SubscriptionPlanRef>,
    /// The plan's id, when `plan` is not sent.
    #[schema(max_length = 64, pattern = r"^[A-Za-z0-9_]{1,64}$", example = "pln_5b1e0c4d9a7f3e21")]
    plan_id: Option<String>,
    /// The customer: `{"id": "cst_…"}` for an existing one, or a new customer's fields. When
    /// sent (not `null`), `customer_id` is ignored (but still checked).
    customer: Option<SubscriptionCustomer>,
    /// An existing customer's id, when `customer` is not sent.
    #[schema(max_length = 64, pattern = r"^[A-Za-z0-9_]{1,64}$", example = "cst_1a2b3c4d5e6f7a8b")]
    customer_id: Option<String>,
    /// The card to charge now and on every renewal.
    card: Option<SubscriptionCard>,
    /// Where the customer goes after entering a card on the hosted page.
    #[schema(
        max_length = 2048,
        pattern = r"^$|^https?://([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z]([A-Za-z0-9-]*[A-Za-z0-9])?(:[0-9]{1,4})?([/?#][^\x00]*)?$"
    )]
    return_url: Option<String>,
    /// Where bePaid-style notifications of this subscription go (else the shop's).
    #[schema(
        max_length = 2048,
        pattern = r"^$|^https?://([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z]([A-Za-z0-9-]*[A-Za-z0-9])?(:[0-9]{1,4})?([/?#][^\x00]*)?$"
    )]
    notification_url: Option<String>,
    /// The merchant's own reference, returned with the subscription: text, or a whole number
    /// (kept as its digits).
    #[schema(schema_with = merchant_reference)]
    tracking_id: Option<String>,
    /// Any JSON object, kept and returned as sent. No key or text in it may contain NUL.
    additional_data: Option<HashMap<String, Value>>,
    /// A test clock (`clk_…`) to run the subscription on: test plans only.
    #[schema(max_length = 64, pattern = r"^[A-Za-z0-9_]{1,64}$", example = "clk_0a1b2c3d4e5f6a7b")]
    test_clock: Option<String>,
    // One of `plan`/`plan_id`, one of `customer`/`customer_id`.
    #[serde(flatten)]
    #[schema(schema_with = subscription_rules)]
    rules: Value,
}

/// A plan by id.
#[derive(ToSchema)]
pub struct SubscriptionPlanRef {
    /// The plan's id (`pln_…`).
    #[schema(max_length = 64, pattern = r"^[A-Za-z0-9_]{1,64}$", example = "pln_5b1e0c4d9a7f3e21")]
    id: String,
}

/// An existing customer by id. Any other field sent with `id` is ignored.
#[derive(ToSchema)]
pub struct CustomerRef {
    /// The customer's id (`cst_…`): a JSON string (an object whose `id` is not a string is
    /// read as a new customer).
    #[schema(max_length = 64, pattern = r"^[A-Za-z0-9_]{1,64}$", example = "cst_1a2b3c4d5e6f7a8b")]
    id: String,
}

/// A card as the customer would type it, checked before any charge (length, Luhn checksum,
/// expiry, CVC). In test mode only the documented test numbers are accepted
/// (`4200000000000000` succeeds); a live plan takes a card only with a real acquirer.
#[derive(ToSchema)]
pub struct SubscriptionCard {
    /// 12 to 19 digits passing the Luhn check (spaces and dashes are ignored), as text or a
    /// JSON integer.
    #[schema(schema_with = card_number)]
    number: String,
    /// Expiry month.
    exp_month: CardExpMonth,
    /// Expiry year.
    exp_year: CardExpYear,
    /// The 3 or 4 digits on the card, as text (a JSON integer loses leading zeros).
    #[schema(schema_with = card_code)]
    cvc: String,
    /// Another name for `cvc`, read when `cvc` is absent or blank.
    #[schema(schema_with = card_code)]
    verification_value: Option<String>,
    /// The name on the card: 1 to 100 characters, not only spaces.
    #[schema(
        max_length = 100,
        pattern = r"^[^\x00]*[^\x00\t\n\v\f\r \x85\xA0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000][^\x00]*$",
        example = "Ann Lee"
    )]
    holder: String,
}

/// Cancelling a subscription (the body may be empty). 409 when it has already ended.
#[derive(ToSchema)]
#[schema(example = json!({"cancel_reason": "The customer asked"}))]
pub struct SubscriptionCancel {
    /// Why, kept with the subscription.
    #[schema(max_length = 255, pattern = r"^[^\x00]*$")]
    cancel_reason: Option<String>,
}

/// Test mode: how the subscription's card behaves from `from` on. Only test subscriptions.
#[derive(ToSchema)]
#[schema(example = json!({"outcome": "declined", "from": "2026-12-01T00:00:00Z"}))]
pub struct TestCardOutcome {
    /// What every charge from `from` on does (until a later entry of the schedule).
    outcome: ChargeOutcome,
    /// From when; defaults to the subscription's current time (its test clock's, if it has
    /// one), and must not be before it. The same `from` again replaces that entry.
    from: Option<TimeInput>,
}

// ---------------------------------------------------------------------------------------------
// Test clocks
// ---------------------------------------------------------------------------------------------

/// A new test clock, frozen at `frozen_time`.
#[derive(ToSchema)]
#[schema(example = json!({"frozen_time": "2026-11-22T10:15:30Z", "name": "Renewals"}))]
pub struct TestClockCreate {
    /// The clock's time.
    frozen_time: TimeInput,
    /// A name for the merchant.
    #[schema(max_length = 255, pattern = r"^[^\x00]*$")]
    name: Option<String>,
}

/// Moving a test clock forward; everything that falls due on the way runs, in order, before
/// the answer. 409 while the clock is already advancing.
#[derive(ToSchema)]
#[schema(example = json!({"frozen_time": "2026-12-22T10:15:30Z"}))]
pub struct TestClockAdvance {
    /// The new time: the clock's own time does nothing; an earlier one is 409.
    frozen_time: TimeInput,
}

// ---------------------------------------------------------------------------------------------
// Refunds
// ---------------------------------------------------------------------------------------------

/// A refund of a payment that took money (`succeeded` or `partially_refunded`; 409 otherwise).
/// The body may be empty: then all that is left is refunded.
#[derive(ToSchema)]
#[schema(example = json!({"amount": 300, "reason": "damaged cover"}))]
pub struct RefundCreate {
    /// How much to give back, in minimal units; at most what is left to refund (422 above
    /// it). All that is left when absent.
    amount: Option<RefundAmount>,
    /// Why, kept for the merchant; surrounding spaces are trimmed.
    #[schema(max_length = 500, pattern = r"^[^\x00]*$")]
    reason: Option<String>,
}

// ---------------------------------------------------------------------------------------------
// Webhooks and the shop
// ---------------------------------------------------------------------------------------------

/// A new webhook endpoint. The answer shows its signing secret, this once.
#[derive(ToSchema)]
#[schema(example = json!({
    "url": "https://erp.example/paydesk", "enabled_events": ["payment.*", "refund.failed"],
    "description": "ERP"
}))]
pub struct WebhookEndpointCreate {
    /// Where deliveries are POSTed: an absolute `http` or `https` URL of at most 2048
    /// characters. Private and loopback addresses are accepted here but never delivered to.
    #[schema(
        max_length = 2048,
        pattern = r"^https?://([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z]([A-Za-z0-9-]*[A-Za-z0-9])?(:[0-9]{1,4})?([/?#][^\x00]*)?$"
    )]
    url: String,
    /// A note for the merchant, at most 1000 characters.
    #[schema(max_length = 1000, pattern = r"^[^\x00]*$")]
    description: Option<String>,
    /// Which events the endpoint receives (at least one entry; duplicates are ignored).
    #[schema(min_items = 1, default = json!(["*"]))]
    enabled_events: Option<Vec<EnabledEventEntry>>,
    /// Whether deliveries are made.
    #[schema(default = true)]
    enabled: Option<FlexibleBoolean>,
}

/// A change to a webhook endpoint (`PUT` or `POST /webhook_endpoints/{id}`): only what is
/// sent changes. `null` leaves `url` and `enabled_events` as they are and clears
/// `description`. Enabling an endpoint clears its failure record.
#[derive(ToSchema)]
#[schema(example = json!({"enabled": false}))]
pub struct WebhookEndpointUpdate {
    /// Where deliveries are POSTed: an absolute `http` or `https` URL.
    #[schema(
        max_length = 2048,
        pattern = r"^$|^https?://([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z]([A-Za-z0-9-]*[A-Za-z0-9])?(:[0-9]{1,4})?([/?#][^\x00]*)?$"
    )]
    url: Option<String>,
    /// A note for the merchant, at most 1000 characters (`null` or blank clears it).
    #[schema(max_length = 1000, pattern = r"^[^\x00]*$")]
    description: Option<String>,
    /// Which events the endpoint receives (at least one entry).
    #[schema(min_items = 1)]
    enabled_events: Option<Vec<EnabledEventEntry>>,
    /// Whether deliveries are made.
    enabled: Option<FlexibleBoolean>,
}

/// The shop's notification settings (`PUT` or `POST /shop`); the body may be empty.
#[derive(ToSchema)]
#[schema(example = json!({"notification_url": "https://erp.example/bepaid"}))]
pub struct ShopUpdate {
    /// Where bePaid-style notifications go when the product or subscription names none: an
    /// absolute `http` or `https` URL; `null` or blank clears it, absent leaves it.
    #[schema(
        max_length = 2048,
        pattern = r"^$|^https?://([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z]([A-Za-z0-9-]*[A-Za-z0-9])?(:[0-9]{1,4})?([/?#][^\x00]*)?$"
    )]
    notification_url: Option<String>,
}

/// Sending an event again (`POST /events/{id}/redeliver`); the body may be empty.
#[derive(ToSchema)]
#[schema(example = json!({"endpoint_id": "we_0123456789abcdef"}))]
pub struct Redeliver {
    /// Only to this endpoint (even one that does not take the event's type; 404 if unknown).
    /// Absent: to every target of the event.
    #[schema(max_length = 64, pattern = r"^[A-Za-z0-9_]{1,64}$")]
    endpoint_id: Option<String>,
}

// ---------------------------------------------------------------------------------------------
// Query strings
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

/// `GET /payments`: each filter given narrows the list. Ids are compared as sent; an unknown
/// id gives an empty page. When a name is repeated the last value counts.
#[derive(serde::Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PaymentFilterParams {
    /// Page size, 1 to 1000.
    #[param(minimum = 1, maximum = 1000, default = 100)]
    limit: Option<u64>,
    /// The last id of the previous page (an id of this list, else 404); empty means the first.
    #[param(max_length = 64, pattern = r"^[A-Za-z0-9_]{0,64}$")]
    starting_after: Option<String>,
    /// Payments of this product (`prd_…`).
    product: Option<String>,
    /// Same as `product`.
    product_id: Option<String>,
    /// Payments of this plan (`pln_…`).
    plan: Option<String>,
    /// Same as `plan`.
    plan_id: Option<String>,
    /// Payments of this subscription (`sbs_…`).
    subscription: Option<String>,
    /// Same as `subscription`.
    subscription_id: Option<String>,
    /// Payments of this customer (`cst_…`).
    customer: Option<String>,
    /// Same as `customer`.
    customer_id: Option<String>,
    /// Payments in this status.
    #[param(value_type = Option<PaymentStatus>, inline)]
    status: Option<String>,
}

/// `GET /subscriptions`: each filter given narrows the list.
#[derive(serde::Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SubscriptionFilterParams {
    /// Page size, 1 to 1000.
    #[param(minimum = 1, maximum = 1000, default = 100)]
    limit: Option<u64>,
    /// The last id of the previous page (an id of this list, else 404); empty means the first.
    #[param(max_length = 64, pattern = r"^[A-Za-z0-9_]{0,64}$")]
    starting_after: Option<String>,
    /// Subscriptions in this state.
    #[param(value_type = Option<SubscriptionState>, inline)]
    state: Option<String>,
    /// Subscriptions to this plan (`pln_…`).
    plan: Option<String>,
    /// Same as `plan`.
    plan_id: Option<String>,
    /// Subscriptions of this customer (`cst_…`).
    customer: Option<String>,
    /// Same as `customer`.
    customer_id: Option<String>,
}

/// `GET /events`: each filter given narrows the list; the `Link` to the next page keeps them.
/// A `+` in a time must be sent percent-encoded (`%2B`): a bare `+` reads as a space.
#[derive(serde::Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EventFilterParams {
    /// Page size, 1 to 1000.
    #[param(minimum = 1, maximum = 1000, default = 100)]
    limit: Option<u64>,
    /// The last id of the previous page (an id of this list, else 404); empty means the first.
    #[param(max_length = 64, pattern = r"^[A-Za-z0-9_]{0,64}$")]
    starting_after: Option<String>,
    /// One event type, or every type of an object (`payment.*`).
    #[serde(rename = "type")]
    #[param(value_type = Option<EventTypeFilter>, inline)]
    kind: Option<String>,
    /// Events about this object (`pay_…`, `sbs_…`, ...); empty means any.
    object_id: Option<String>,
    /// Created at or after this moment.
    #[serde(rename = "created[gte]")]
    #[param(value_type = Option<FilterTime>, inline)]
    created_gte: Option<String>,
    /// Created after this moment.
    #[serde(rename = "created[gt]")]
    #[param(value_type = Option<FilterTime>, inline)]
    created_gt: Option<String>,
    /// Created at or before this moment.
    #[serde(rename = "created[lte]")]
    #[param(value_type = Option<FilterTime>, inline)]
    created_lte: Option<String>,
    /// Created before this moment.
    #[serde(rename = "created[lt]")]
    #[param(value_type = Option<FilterTime>, inline)]
    created_lt: Option<String>,
}

/// `GET /refunds`.
#[derive(serde::Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RefundFilterParams {
    /// Page size, 1 to 1000.
    #[param(minimum = 1, maximum = 1000, default = 100)]
    limit: Option<u64>,
    /// The last id of the previous page (an id of this list, else 404); empty means the first.
    #[param(max_length = 64, pattern = r"^[A-Za-z0-9_]{0,64}$")]
    starting_after: Option<String>,
    /// Refunds of this payment (`pay_…`).
    payment: Option<String>,
    /// Same as `payment` (when both are given, the later one counts).
    payment_id: Option<String>,
}

/// `GET /webhook_deliveries`: each delivery with its last attempts.
#[derive(serde::Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DeliveryFilterParams {
    /// Page size, 1 to 1000.
    #[param(minimum = 1, maximum = 1000, default = 100)]
    limit: Option<u64>,
    /// The last id of the previous page (an id of this list, else 404); empty means the first.
    #[param(max_length = 64, pattern = r"^[A-Za-z0-9_]{0,64}$")]
    starting_after: Option<String>,
    /// Deliveries to this endpoint (`we_…`).
    endpoint_id: Option<String>,
    /// Deliveries of this event (`evt_…`).
    event_id: Option<String>,
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

/// The `customer` of a new subscription: an existing customer by id, or a new one. An object
/// whose `id` is a string is an existing customer; any other object is a new one.
pub struct SubscriptionCustomer;

impl PartialSchema for SubscriptionCustomer {
    fn schema() -> RefOr<Schema> {
        // anyOf: an object with a string `id` and valid customer fields matches both (it is
        // read as the existing customer).
        AnyOfBuilder::new()
            .item(Ref::from_schema_name(CustomerRef::name()))
            .item(Ref::from_schema_name(CustomerCreate::name()))
            .description(Some(
                "`{\"id\": \"cst_…\"}` for an existing customer, or a new customer's fields (created with the subscription).",
            ))
            .into()
    }
}

impl ToSchema for SubscriptionCustomer {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("SubscriptionCustomer")
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.push((CustomerRef::name().into_owned(), CustomerRef::schema()));
        <CustomerRef as ToSchema>::schemas(schemas);
        schemas.push((CustomerCreate::name().into_owned(), CustomerCreate::schema()));
        <CustomerCreate as ToSchema>::schemas(schemas);
    }
}

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

/// ProductCreate: `quantity` is required unless `infinite` is true and must not be sent when
/// it is; `expired_at` is required unless `immortal` is true. One branch per combination.
fn product_create_rules() -> OneOfBuilder {
    let mut rules = OneOfBuilder::new().description(Some(
        "`quantity` is required unless `infinite` is true, and must not be sent (or be null) when it is; \
         `expired_at` is required unless `immortal` is true.",
    ));
    for infinite in [false, true] {
        for immortal in [false, true] {
            let title = format!(
                "{} stock, {}",
                if infinite { "Unlimited" } else { "Counted" },
                if immortal { "payable forever" } else { "payable until expired_at" }
            );
            let mut branch = ObjectBuilder::new().title(Some(title));
            branch = if infinite {
                branch.property("infinite", yes()).required("infinite").property("quantity", absent())
            } else {
                branch.property("infinite", no()).property("quantity", given_number()).required("quantity")
            };
            branch = if immortal {
                branch.property("immortal", yes()).required("immortal")
            } else {
                branch.property("immortal", no()).property("expired_at", given(Type::String)).required("expired_at")
            };
            rules = rules.item(branch);
        }
    }
    rules
}

/// ProductUpdate: no `quantity` together with `"infinite": true`.
fn product_update_rules() -> OneOfBuilder {
    OneOfBuilder::new()
        .item(
            ObjectBuilder::new()
                .title(Some("Making the stock unlimited"))
                .property("infinite", yes())
                .required("infinite")
                .property("quantity", absent()),
        )
        .item(ObjectBuilder::new().title(Some("Keeping or making the stock counted")).property("infinite", no()))
        .description(Some("`quantity` must not be sent together with `\"infinite\": true`."))
}

/// PlanCreate: `billing_cycles` is required when `infinite` is false.
fn plan_create_rules() -> OneOfBuilder {
    OneOfBuilder::new()
        .item(
            ObjectBuilder::new()
                .title(Some("Billed until cancelled"))
                .property("infinite", values([json!(true), json!("true"), Value::Null])),
        )
        .item(
            ObjectBuilder::new()
                .title(Some("A fixed number of charges"))
                .property("infinite", values([json!(false), json!("false")]))
                .required("infinite")
                .property("billing_cycles", <BillingCycleCount as PartialSchema>::schema())
                .required("billing_cycles"),
        )
        .description(Some("`billing_cycles` is required when `infinite` is false."))
}

/// PlanTrial: `amount` and `interval` together or not at all.
fn trial_rules() -> OneOfBuilder {
    OneOfBuilder::new()
        .item(
            ObjectBuilder::new()
                .title(Some("A trial"))
                .property("amount", given_number())
                .required("amount")
                .property("interval", given_number())
                .required("interval"),
        )
        .item(ObjectBuilder::new().title(Some("No trial")).property("amount", absent()).property("interval", absent()))
        .description(Some("`amount` and `interval` are sent together or not at all."))
}

/// CustomerCreate: `state` only with `country` US or CA (and one of its codes); a US `zip`
/// is `NNNNN` or `NNNNN-NNNN`. anyOf: a CA customer without a state matches two branches.
fn customer_region_rules() -> AnyOfBuilder {
    // Exact lengths instead of a final `$`, which Python's `re` also matches before a
    // trailing newline (and fuzzers built on it generate one).
    let us_zip = AnyOfBuilder::new()
        .item(absent())
        .item(given(Type::String).pattern(Some("^[0-9]{5}")).min_length(Some(5)).max_length(Some(5)))
        .item(given(Type::String).pattern(Some("^[0-9]{5}-[0-9]{4}")).min_length(Some(10)).max_length(Some(10)));
    AnyOfBuilder::new()
        .item(
            ObjectBuilder::new()
                .title(Some("A US address"))
                .property("country", values([json!("US")]))
                .required("country")
                .property("state", codes_or_null(US_STATES.split_ascii_whitespace()))
                .property("zip", us_zip),
        )
        .item(
            ObjectBuilder::new()
                .title(Some("A Canadian address"))
                .property("country", values([json!("CA")]))
                .required("country")
                .property("state", codes_or_null(CA_PROVINCES.split_ascii_whitespace())),
        )
        .item(
            ObjectBuilder::new()
                .title(Some("Any other country, or none: no state"))
                .property("country", codes_or_null(COUNTRIES.split_ascii_whitespace().filter(|c| *c != "US")))
                .property("state", absent()),
        )
        .description(Some(
            "`state` may be sent only with `country` US or CA, and must be one of that country's codes; \
             with `country` US, `zip` must be NNNNN or NNNNN-NNNN.",
        ))
}

/// SubscriptionCreate: the plan as `plan` or `plan_id`, the customer as `customer` or
/// `customer_id`. One branch per combination.
fn subscription_rules() -> OneOfBuilder {
    let mut rules = OneOfBuilder::new().description(Some(
        "The plan is `plan` (an object) or, when `plan` is absent or null, `plan_id`; the customer is \
         `customer` (an object) or, when `customer` is absent or null, `customer_id`.",
    ));
    for plan_inline in [true, false] {
        for customer_inline in [true, false] {
            let title = format!(
                "{} and {}",
                if plan_inline { "plan" } else { "plan_id" },
                if customer_inline { "customer" } else { "customer_id" }
            );
            let mut branch = ObjectBuilder::new().title(Some(title));
            branch = if plan_inline {
                branch.property("plan", given(Type::Object)).required("plan")
            } else {
                branch.property("plan", absent()).property("plan_id", given(Type::String)).required("plan_id")
            };
            branch = if customer_inline {
                branch.property("customer", given(Type::Object)).required("customer")
            } else {
                branch
                    .property("customer", absent())
                    .property("customer_id", given(Type::String))
                    .required("customer_id")
            };
            rules = rules.item(branch);
        }
    }
    rules
}

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
