//! bePaid's JSON as it crosses the wire (API v2: requests inside `{"request": …}`, answers
//! inside `{"transaction": …}`, as the official SDKs speak it), with only the fields paydesk
//! sends or reads. Unknown fields of an answer are ignored; an unknown status reads as
//! [`Status::Other`], never as a success.

use serde::{Deserialize, Serialize};

/// Where a transaction stands at the gateway.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Processed and approved.
    Successful,
    /// Processed and declined.
    Failed,
    /// Waiting for the customer (3-D Secure) or the merchant.
    Incomplete,
    /// Being processed; a notification or a lookup tells the end.
    Pending,
    /// Not processed: the gateway or the acquirer failed.
    Error,
    /// Not completed before it ran out (a Checkout token, an unpaid payment).
    Expired,
    /// A word this version of paydesk does not know.
    #[serde(other)]
    Other,
}

/// A transaction as the gateway answers it: to an operation, a lookup or in a notification.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Transaction {
    pub uid: String,
    pub status: Status,
    /// `payment`, `authorization`, `capture`, `void`, `refund`, `tokenization`, ...
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub amount: Option<i64>,
    #[serde(default)]
    pub currency: Option<String>,
    #[serde(default)]
    pub tracking_id: Option<String>,
    #[serde(default)]
    pub parent_uid: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
    /// API v3's processing code (`F.0114`), where the gateway gives one.
    #[serde(default)]
    pub code: Option<String>,
    /// Where to send the customer for 3-D Secure (`incomplete` transactions).
    #[serde(default)]
    pub redirect_url: Option<String>,
    #[serde(default)]
    pub test: Option<bool>,
    #[serde(default)]
    pub credit_card: Option<Card>,
    /// Everything else, among it the acquirer's part of the transaction, named after its type
    /// (`"payment": {…}`, `"authorization": {…}`, ...): see [`Transaction::processing`].
    #[serde(flatten)]
    pub rest: serde_json::Map<String, serde_json::Value>,
}

impl Transaction {
    /// The acquirer's answer inside the transaction (the section named after its type).
    pub fn processing(&self) -> Option<Processing> {
        let section = self.rest.get(self.kind.as_deref()?)?;
        serde_json::from_value(section.clone()).ok()
    }
}

/// The card of a transaction: what paydesk may keep of it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct Card {
    #[serde(default)]
    pub token: Option<String>,
    #[serde(default)]
    pub brand: Option<String>,
    #[serde(default)]
    pub last_4: Option<String>,
    #[serde(default)]
    pub holder: Option<String>,
    #[serde(default)]
    pub exp_month: Option<u32>,
    #[serde(default)]
    pub exp_year: Option<i32>,
    /// The gateway's hash of the card's number: the same for every entry of the card.
    #[serde(default)]
    pub stamp: Option<String>,
}

/// The acquirer's answer inside a transaction.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Processing {
    /// The issuer's ISO 8583 answer code (`00`, `05`, `51`, ...).
    #[serde(default)]
    pub bank_code: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub auth_code: Option<String>,
}

/// Every shape a successful HTTP answer comes in: one transaction (an operation, a lookup
/// by uid, a notification), or a list (a lookup by a `tracking_id` several carry).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Answer {
    One { transaction: Box<Transaction> },
    Many { transactions: Vec<Transaction> },
}

impl Answer {
    /// The transactions, newest last as the gateway lists them.
    pub fn into_transactions(self) -> Vec<Transaction> {
        match self {
            Answer::One { transaction } => vec![*transaction],
            Answer::Many { transactions } => transactions,
        }
    }
}

/// A refusal of the request itself (422 and the like): `{"message", "errors"}`, or the same
/// inside `{"response": …}`.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Refusal {
    Wrapped { response: RefusalBody },
    Plain(RefusalBody),
}

/// What a refusal says.
#[derive(Debug, Clone, Deserialize)]
pub struct RefusalBody {
    pub message: String,
    #[serde(default)]
    pub errors: Option<serde_json::Value>,
}

impl Refusal {
    /// The gateway's message ("Reason can't be blank.").
    pub fn message(&self) -> &str {
        match self {
            Refusal::Wrapped { response } | Refusal::Plain(response) => &response.message,
        }
    }
}

/// `{"request": …}` around a request body.
#[derive(Debug, Serialize)]
pub struct Request<T> {
    pub request: T,
}

/// A payment or an authorization of a stored card's token.
#[derive(Debug, Serialize)]
pub struct Charge<'a> {
    pub amount: i64,
    pub currency: &'a str,
    pub description: &'a str,
    /// paydesk's own reference of the attempt: the key of lookups.
    pub tracking_id: &'a str,
    pub test: bool,
    /// paydesk never sends one charge twice on purpose: retries carry the same `RequestID`.
    pub duplicate_check: bool,
    pub language: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub return_url: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notification_url: Option<&'a str>,
    pub credit_card: CardToken<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub customer: Option<Customer<'a>>,
    pub additional_data: AdditionalData,
}

/// A card typed on paydesk's page, for the gateway's vault (`/credit_cards`): no CVC, no
/// money.
#[derive(Serialize)]
pub struct NewCard<'a> {
    pub number: &'a str,
    pub holder: &'a str,
    pub exp_month: String,
    pub exp_year: String,
}

impl std::fmt::Debug for NewCard<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never a card number in a log.
        f.write_str("NewCard { .. }")
    }
}

/// Where the money comes from: a card the gateway keeps.
#[derive(Serialize)]
pub struct CardToken<'a> {
    pub token: &'a str,
}

impl std::fmt::Debug for CardToken<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CardToken { .. }")
    }
}

/// The customer as the gateway's fraud checks see them.
#[derive(Debug, Serialize)]
pub struct Customer<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub email: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ip: Option<&'a str>,
}

/// What the card is kept for and who starts the charge.
#[derive(Debug, Default, Serialize)]
pub struct AdditionalData {
    /// `["recurring"]` on a first payment whose card pays the renewals.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub contract: Vec<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub card_on_file: Option<CardOnFile>,
}

/// The card networks' marking of a charge on a stored card.
#[derive(Debug, Serialize)]
pub struct CardOnFile {
    /// `merchant` for a renewal the engine makes, `customer` when they are at the page.
    pub initiator: &'static str,
    #[serde(rename = "type")]
    pub kind: &'static str,
}

impl CardOnFile {
    /// A renewal: merchant-initiated, the customer absent.
    pub fn renewal() -> CardOnFile {
        CardOnFile { initiator: "merchant", kind: "delayed_charge" }
    }

    /// A charge of a stored card the customer starts at the page.
    pub fn customer() -> CardOnFile {
        CardOnFile { initiator: "customer", kind: "delayed_charge" }
    }
}

/// A capture, void or refund of an earlier transaction.
#[derive(Debug, Serialize)]
pub struct Child<'a> {
    pub parent_uid: &'a str,
    pub amount: i64,
    /// Required of refunds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'a str>,
}

/// A Checkout token request: the processor's own page takes the card (`{"checkout": …}`).
#[derive(Debug, Serialize)]
pub struct CheckoutRequest<'a> {
    pub checkout: Checkout<'a>,
}

/// What the processor's page is to do.
#[derive(Debug, Serialize)]
pub struct Checkout<'a> {
    /// The Checkout API version the SDKs send.
    pub version: f64,
    /// `payment`, `authorization` or `tokenization` (a card stored, nothing charged).
    pub transaction_type: &'a str,
    pub test: bool,
    pub settings: CheckoutSettings<'a>,
    pub order: Order<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub customer: Option<Customer<'a>>,
    /// How many cards the customer may try before the page closes (bePaid's default is 1).
    pub attempts: u32,
}

/// Where the processor's page sends the customer back, and in which language it speaks.
#[derive(Debug, Serialize)]
pub struct CheckoutSettings<'a> {
    pub success_url: &'a str,
    pub decline_url: &'a str,
    pub fail_url: &'a str,
    pub cancel_url: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notification_url: Option<&'a str>,
    pub language: &'a str,
}

/// What is paid for.
#[derive(Debug, Serialize)]
pub struct Order<'a> {
    pub amount: i64,
    pub currency: &'a str,
    pub description: &'a str,
    /// paydesk's own reference: the transaction the page makes carries it.
    pub tracking_id: &'a str,
    pub additional_data: AdditionalData,
    /// The page takes no payment after this (ISO 8601).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expired_at: Option<String>,
}

/// Checkout's answer: to a token request (`token`, `redirect_url`) or to a query (whether
/// the customer finished, and the transaction the page made).
#[derive(Debug, Clone, Deserialize)]
pub struct CheckoutAnswer {
    pub checkout: CheckoutState,
}

/// A Checkout token as the processor sees it.
#[derive(Debug, Clone, Deserialize)]
pub struct CheckoutState {
    pub token: String,
    #[serde(default)]
    pub redirect_url: Option<String>,
    #[serde(default)]
    pub transaction_type: Option<String>,
    /// The customer finished on the page (paid, or was declined for good).
    #[serde(default)]
    pub finished: Option<bool>,
    /// The token ran out before the customer finished.
    #[serde(default)]
    pub expired: Option<bool>,
    #[serde(default)]
    pub message: Option<String>,
    /// The transaction the page made, under its type (`{"payment": {"uid", "status", …}}`).
    #[serde(default)]
    pub gateway_response: Option<serde_json::Map<String, serde_json::Value>>,
}

impl CheckoutState {
    /// The transaction the page made, if it made one.
    pub fn transaction(&self) -> Option<Transaction> {
        let response = self.gateway_response.as_ref()?;
        let kind = self.transaction_type.as_deref().unwrap_or("payment");
        let section = response.get(kind).or_else(|| response.values().next())?;
        let mut transaction: Transaction = serde_json::from_value(section.clone()).ok()?;
        transaction.kind.get_or_insert_with(|| kind.to_string());
        Some(transaction)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// bePaid's Ruby client's fixture of a successful authorization (connectors.md §1.9 B).
    const AUTHORIZATION: &str = include_str!("fixtures/authorization.json");

    #[test]
    fn an_answer_reads_the_fields_paydesk_needs_and_ignores_the_rest() {
        let answer: Answer = serde_json::from_str(AUTHORIZATION).unwrap();
        let [t] = answer.into_transactions().try_into().unwrap();
        assert_eq!(
            (t.uid.as_str(), t.status, t.kind.as_deref()),
            ("4107-310b0da80b", Status::Successful, Some("authorization"))
        );
        assert_eq!((t.amount, t.tracking_id.as_deref()), (Some(100), Some("your_uniq_number")));
        let card = t.credit_card.clone().unwrap();
        assert_eq!(
            (card.token.as_deref(), card.last_4.as_deref(), card.exp_year),
            (Some("40bd…329e"), Some("0000"), Some(2015))
        );
        assert_eq!(t.processing().unwrap().bank_code.as_deref(), Some("00"));
    }

    #[test]
    fn a_lookup_by_a_shared_tracking_id_lists_them_and_an_unknown_status_is_other() {
        let body = r#"{"transactions":[{"uid":"1-a","status":"failed"},{"uid":"2-b","status":"refunding"}]}"#;
        let found = serde_json::from_str::<Answer>(body).unwrap().into_transactions();
        assert_eq!(found.iter().map(|t| t.status).collect::<Vec<_>>(), [Status::Failed, Status::Other]);
    }

    #[test]
    fn refusals_read_in_both_shapes() {
        let plain = r#"{"message":"Reason can't be blank.","errors":{"reason":["can't be blank"]}}"#;
        let wrapped = r#"{"response":{"message":"Gateway is temporarily unavailable","errors":{"gateway":"is temporarily unavailable"}}}"#;
        assert_eq!(serde_json::from_str::<Refusal>(plain).unwrap().message(), "Reason can't be blank.");
        assert_eq!(serde_json::from_str::<Refusal>(wrapped).unwrap().message(), "Gateway is temporarily unavailable");
    }

    #[test]
    fn a_renewal_is_sent_as_the_sdk_sends_a_token_charge_and_a_typed_card_never_prints() {
        let renewal = Charge {
            amount: 990,
            currency: "EUR",
            description: "Gym, period 2",
            tracking_id: "pay_1",
            test: true,
            duplicate_check: false,
            language: "en",
            return_url: None,
            notification_url: Some("https://shop.example/bepaid/1"),
            credit_card: CardToken { token: "40bd329e" },
            customer: None,
            additional_data: AdditionalData { contract: vec![], card_on_file: Some(CardOnFile::renewal()) },
        };
        let json = serde_json::to_value(Request { request: &renewal }).unwrap();
        assert_eq!(json["request"]["credit_card"], serde_json::json!({"token": "40bd329e"}));
        assert_eq!(json["request"]["additional_data"]["card_on_file"]["initiator"], "merchant");
        assert_eq!(json["request"]["duplicate_check"], false);
        let typed =
            NewCard { number: "4200000000000000", holder: "Ann", exp_month: "01".into(), exp_year: "2030".into() };
        assert!(!format!("{typed:?}").contains("4200"));
    }

    #[test]
    fn a_checkout_query_reads_as_the_ruby_clients_fixture_shows_it() {
        let answer: CheckoutAnswer = serde_json::from_str(include_str!("fixtures/checkout_query.json")).unwrap();
        let state = answer.checkout;
        assert_eq!(state.finished, Some(true));
        let t = state.transaction().unwrap();
        assert_eq!(
            (t.uid.as_str(), t.status, t.kind.as_deref()),
            ("1891-5fcb2bda3b", Status::Successful, Some("payment"))
        );
    }
}
