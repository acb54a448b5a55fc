//! Stripe's objects as paydesk reads them, and its requests: `application/x-www-form-urlencoded`
//! with nested keys (`card[number]`, `metadata[paydesk_reference]`, `expand[]`).

use serde::Deserialize;
use serde_json::Value;

/// The metadata key under which every object paydesk makes carries paydesk's own reference
/// (the payment, renewal or refund it is for): how a lost answer is found again.
pub const REFERENCE_KEY: &str = "paydesk_reference";

/// A form body, in the order its fields are added.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Form(Vec<(String, String)>);

impl Form {
    pub fn new() -> Form {
        Form::default()
    }

    /// Adds `key=value`.
    pub fn set(mut self, key: &str, value: impl ToString) -> Form {
        self.0.push((key.to_string(), value.to_string()));
        self
    }

    /// Adds `key=value` when there is a value.
    pub fn maybe(self, key: &str, value: Option<impl ToString>) -> Form {
        match value {
            Some(value) => self.set(key, value),
            None => self,
        }
    }

    /// The encoded body.
    pub fn encode(&self) -> String {
        url::form_urlencoded::Serializer::new(String::new()).extend_pairs(self.0.iter()).finish()
    }
}

/// `{"error": {…}}`: why Stripe refused a request.
#[derive(Debug, Clone, Deserialize)]
pub struct ErrorAnswer {
    pub error: StripeError,
}

/// An error of Stripe's API.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct StripeError {
    /// `card_error`, `invalid_request_error`, `api_error`, `idempotency_error`, ...
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    /// `card_declined`, `expired_card`, `authentication_required`, `processing_error`, ...
    #[serde(default)]
    pub code: Option<String>,
    /// The issuer's reason for a `card_declined` (`insufficient_funds`, ...).
    #[serde(default)]
    pub decline_code: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
    /// The PaymentIntent the error is about (a declined confirmation carries it).
    #[serde(default)]
    pub payment_intent: Option<Box<PaymentIntent>>,
    /// The SetupIntent the error is about.
    #[serde(default)]
    pub setup_intent: Option<Box<SetupIntent>>,
}

/// A PaymentIntent: one payment, through its attempts.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct PaymentIntent {
    pub id: String,
    /// `requires_payment_method`, `requires_confirmation`, `requires_action`, `processing`,
    /// `requires_capture`, `canceled`, `succeeded`.
    pub status: String,
    #[serde(default)]
    pub amount: Option<i64>,
    #[serde(default)]
    pub amount_received: Option<i64>,
    #[serde(default)]
    pub currency: Option<String>,
    /// The Customer's id, or the Customer when expanded.
    #[serde(default)]
    pub customer: Option<Expandable<Customer>>,
    /// The PaymentMethod's id, or the PaymentMethod when expanded.
    #[serde(default)]
    pub payment_method: Option<Expandable<PaymentMethod>>,
    /// The latest Charge's id (an object in older API versions).
    #[serde(default)]
    pub latest_charge: Option<Expandable<Value>>,
    #[serde(default)]
    pub last_payment_error: Option<StripeError>,
    #[serde(default)]
    pub next_action: Option<NextAction>,
    #[serde(default)]
    pub metadata: Option<serde_json::Map<String, Value>>,
    #[serde(default)]
    pub livemode: Option<bool>,
}

/// What the customer must do (3-D Secure).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct NextAction {
    /// `redirect_to_url`, `use_stripe_sdk`, ...
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub redirect_to_url: Option<RedirectToUrl>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct RedirectToUrl {
    #[serde(default)]
    pub url: Option<String>,
}

impl NextAction {
    /// Where to send the customer, when Stripe gave a page for it.
    pub fn url(&self) -> Option<&str> {
        self.redirect_to_url.as_ref()?.url.as_deref()
    }
}

/// A SetupIntent: a card saved for later charges, without a payment.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct SetupIntent {
    pub id: String,
    /// `requires_payment_method`, `requires_confirmation`, `requires_action`, `processing`,
    /// `canceled`, `succeeded`.
    pub status: String,
    #[serde(default)]
    pub customer: Option<Expandable<Customer>>,
    #[serde(default)]
    pub payment_method: Option<Expandable<PaymentMethod>>,
    #[serde(default)]
    pub last_setup_error: Option<StripeError>,
    #[serde(default)]
    pub next_action: Option<NextAction>,
    #[serde(default)]
    pub metadata: Option<serde_json::Map<String, Value>>,
}

/// A saved payment method (a card).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct PaymentMethod {
    pub id: String,
    #[serde(default)]
    pub card: Option<CardDetails>,
    #[serde(default)]
    pub billing_details: Option<BillingDetails>,
    #[serde(default)]
    pub customer: Option<Expandable<Customer>>,
}

/// What may be shown of a card.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct CardDetails {
    #[serde(default)]
    pub brand: Option<String>,
    #[serde(default)]
    pub last4: Option<String>,
    #[serde(default)]
    pub exp_month: Option<i32>,
    #[serde(default)]
    pub exp_year: Option<i32>,
    /// The same for every entry of the same card number (in one Stripe account).
    #[serde(default)]
    pub fingerprint: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct BillingDetails {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub email: Option<String>,
}

/// A Customer: who a saved card belongs to.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Customer {
    pub id: String,
}

/// A Refund.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Refund {
    pub id: String,
    /// `pending`, `requires_action`, `succeeded`, `failed`, `canceled`.
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub amount: Option<i64>,
    #[serde(default)]
    pub payment_intent: Option<Expandable<Value>>,
    #[serde(default)]
    pub charge: Option<Expandable<Value>>,
    #[serde(default)]
    pub failure_reason: Option<String>,
    #[serde(default)]
    pub metadata: Option<serde_json::Map<String, Value>>,
}

/// A Charge, as the `charge.*` events carry it.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Charge {
    pub id: String,
    #[serde(default)]
    pub payment_intent: Option<Expandable<Value>>,
    #[serde(default)]
    pub amount_captured: Option<i64>,
    #[serde(default)]
    pub refunds: Option<List<Refund>>,
}

/// A Checkout Session: Stripe's own card page for one payment or one saved card.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct CheckoutSession {
    pub id: String,
    /// `open`, `complete`, `expired`.
    #[serde(default)]
    pub status: Option<String>,
    /// `paid`, `unpaid`, `no_payment_required`.
    #[serde(default)]
    pub payment_status: Option<String>,
    /// `payment`, `setup`, `subscription`.
    #[serde(default)]
    pub mode: Option<String>,
    /// Where the customer pays.
    #[serde(default)]
    pub url: Option<String>,
    #[serde(default)]
    pub client_reference_id: Option<String>,
    #[serde(default)]
    pub customer: Option<Expandable<Customer>>,
    #[serde(default)]
    pub payment_intent: Option<Expandable<PaymentIntent>>,
    #[serde(default)]
    pub setup_intent: Option<Expandable<SetupIntent>>,
    #[serde(default)]
    pub metadata: Option<serde_json::Map<String, Value>>,
}

/// A list (`{"object": "list", "data": […]}`) or a search result, which has the same shape.
#[derive(Debug, Clone, Deserialize)]
pub struct List<T> {
    pub data: Vec<T>,
    #[serde(default)]
    pub has_more: bool,
}

impl<T> Default for List<T> {
    fn default() -> Self {
        List { data: Vec::new(), has_more: false }
    }
}

/// A field that is an object's id, or the object itself when expanded.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Expandable<T> {
    Id(String),
    Object(Box<T>),
}

impl<T> Expandable<T> {
    /// The object, when it was expanded.
    pub fn object(&self) -> Option<&T> {
        match self {
            Expandable::Object(object) => Some(object),
            Expandable::Id(_) => None,
        }
    }
}

/// The id of an expandable field, whatever its form.
pub trait HasId {
    fn id(&self) -> Option<&str>;
}

macro_rules! has_id {
    ($($t:ty),*) => {$(
        impl HasId for $t {
            fn id(&self) -> Option<&str> {
                Some(&self.id)
            }
        }
    )*};
}
has_id!(Customer, PaymentMethod, PaymentIntent, SetupIntent);

impl HasId for Value {
    fn id(&self) -> Option<&str> {
        self.get("id").and_then(Value::as_str)
    }
}

impl<T: HasId> Expandable<T> {
    pub fn id(&self) -> Option<&str> {
        match self {
            Expandable::Id(id) => Some(id),
            Expandable::Object(object) => object.id(),
        }
    }
}

/// An event, as a webhook delivers it.
#[derive(Debug, Clone, Deserialize)]
pub struct Event {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub livemode: bool,
    pub data: EventData,
}

#[derive(Debug, Clone, Deserialize)]
pub struct EventData {
    pub object: Value,
}

/// paydesk's reference in an object's metadata.
pub fn reference_of(metadata: &Option<serde_json::Map<String, Value>>) -> Option<&str> {
    metadata.as_ref()?.get(REFERENCE_KEY)?.as_str()
}

/// A Dispute: a cardholder's bank taking a charge back, or asking about it.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Dispute {
    pub id: String,
    pub amount: i64,
    pub currency: String,
    /// `warning_needs_response`, `warning_under_review`, `warning_closed`, `needs_response`,
    /// `under_review`, `won`, `lost` (and `prevented` in later API versions).
    pub status: String,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub payment_intent: Option<Expandable<Value>>,
    #[serde(default)]
    pub charge: Option<Expandable<Value>>,
    #[serde(default)]
    pub evidence_details: Option<EvidenceDetails>,
    /// The money it moved: a withdrawal, and a reinstatement once won.
    #[serde(default)]
    pub balance_transactions: Vec<BalanceTransaction>,
}

/// When a dispute's evidence is due, and whether it was given.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct EvidenceDetails {
    /// Unix seconds.
    #[serde(default)]
    pub due_by: Option<i64>,
    #[serde(default)]
    pub has_evidence: bool,
    #[serde(default)]
    pub past_due: bool,
    #[serde(default)]
    pub submission_count: i64,
}

/// Money moved on the account: negative when taken.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct BalanceTransaction {
    pub amount: i64,
    #[serde(default)]
    pub fee: i64,
    #[serde(default)]
    pub currency: String,
}

/// An early fraud warning: the card's bank reported a charge as fraud.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct EarlyFraudWarning {
    pub id: String,
    #[serde(default)]
    pub actionable: bool,
    #[serde(default)]
    pub fraud_type: Option<String>,
    #[serde(default)]
    pub payment_intent: Option<Expandable<Value>>,
    #[serde(default)]
    pub charge: Option<Expandable<Value>>,
}
