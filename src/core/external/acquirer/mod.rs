//! The acquirer: whoever moves the money. Handlers and the billing engine only see the
//! [`Acquirer`] trait; paydesk ships [`simulated::SimulatedAcquirer`], which behaves by test
//! card number, and each real acquirer plugs in as another implementation (a file of this
//! folder) in `AppState`.

pub mod bepaid;
pub mod simulated;
pub mod stripe;

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::domain::card::CardInput;
pub use crate::domain::card::{Behaviour, CardRef, Outcome};
use crate::domain::currency::Currency;
use crate::domain::dispute::{Evidence, Seen};

/// One charge.
#[derive(Debug, Clone)]
pub struct ChargeRequest<'a> {
    pub amount: i64,
    pub currency: Currency,
    /// `false` holds the funds (authorization); `true` also captures them.
    pub capture: bool,
    /// paydesk's own reference of the attempt: repeating a request with the same key never
    /// charges twice, and a lost answer is looked up by it.
    pub idempotency_key: &'a str,
    /// The customer is at the page (first payment) rather than billed later by the engine.
    pub customer_present: bool,
    /// Asked before under this key with no answer known: the acquirer looks the attempt up
    /// first instead of charging.
    pub again: bool,
    /// With `again`: what a lookup that finds it never arrived leads to.
    pub if_unsent: IfUnsent,
    /// With `again`: when it was first sent, if known. Within a processor's retention of its
    /// idempotency keys, the same request may be sent again even when a lookup cannot tell
    /// whether it arrived (the processor answers a repeat with its first answer).
    pub first_sent: Option<DateTime<Utc>>,
    /// What is paid for, as the processor's back office and the bank statement show it.
    pub description: &'a str,
    /// Where a customer who must authenticate (3-D Secure) comes back to.
    pub return_url: Option<&'a str>,
    pub now: DateTime<Utc>,
    /// Test mode only: a simulated acquirer behaves as this card would from now on (how a
    /// black-box client walks through the retry rules). Real acquirers ignore it.
    pub simulate: Option<Behaviour>,
}

/// What a charge asked again (`again`) that never reached the processor leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IfUnsent {
    /// Nothing yet: its answer stays unknown (it may still be on its way).
    Wait,
    /// The same request is sent now. Only the sweep does, a while after the first try (never
    /// while it may be in flight).
    Resend,
    /// It is answered as not charged ([`never_sent`]): what it was for ended meanwhile (a
    /// renewal of a subscription since cancelled), so it is never sent again.
    GiveUp,
}

/// The failure code of a payment whose processor's card page could not be opened: no card
/// was tried, nothing was charged.
pub const PAGE_UNAVAILABLE: &str = "page_unavailable";

/// A processor's card page that could not be opened, and why (for the merchant; the
/// customer reads that the page could not be opened and nothing was charged).
pub fn page_unavailable(why: String) -> Outcome {
    Outcome::Error {
        code: PAGE_UNAVAILABLE,
        message: format!("{why} No card was tried and nothing was charged.").into(),
    }
}

/// The failure code of a payment whose customer left the processor's page without paying.
pub const LEFT_THE_PAGE: &str = "payment_canceled";

/// A charge that never reached the processor and is not sent again.
pub fn never_sent() -> Outcome {
    Outcome::Declined {
        code: "not_charged",
        message: "Not charged: the charge never reached the payment processor, and what it was for ended before it was sent again.".into(),
    }
}

/// A refund the processor has no record of: it never arrived, and nothing was given back.
pub fn never_refunded() -> Outcome {
    Outcome::Declined {
        code: "refund_failed",
        message: "The refund never reached the payment processor: nothing was given back.".into(),
    }
}

/// A capture or a void of a held authorization.
#[derive(Debug, Clone)]
pub struct SettleRequest<'a> {
    /// The acquirer's reference of the authorization.
    pub reference: &'a str,
    pub amount: i64,
    /// paydesk's own name for this capture or void: repeating it never acts twice.
    pub idempotency_key: &'a str,
    /// paydesk's reference of the authorization (what its transactions carry): a lost answer
    /// is looked up by it.
    pub tracking_id: &'a str,
}

/// Why a card cannot be used at all (nothing is charged).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CardRefused {
    /// Test products and plans take test cards only.
    #[error(
        "is not a test card: test mode takes only the test cards shown on the payment page (and listed in the docs)"
    )]
    NotATestCard,
    /// A live payment with a test card, or with the simulated acquirer when not allowed.
    #[error("cannot be charged in live mode")]
    LiveNotAllowed,
    /// The processor refused the card (its details, or its bank); the processor's words.
    #[error("was refused by the payment processor: {0}")]
    Invalid(String),
    /// The processor could not be asked (nothing was charged); the customer may try again.
    #[error("could not be checked by the payment processor just now: please try again in a minute")]
    Unavailable,
    /// A payment with the card is disputed with the shop (see `DisputeStatus::STANDING`),
    /// and the shop refuses such cards.
    #[error("cannot be used with this shop: a payment with it is disputed. Please use another card")]
    Disputed,
}

/// Moves money. Implementations must be safe to call from many requests at once.
#[async_trait]
pub trait Acquirer: Send + Sync {
    /// Whether this acquirer only pretends (live payments then need the operator's consent).
    fn is_simulated(&self) -> bool;
    /// Vaults the card; after this only the token is used.
    async fn tokenize(&self, card: &CardInput, test: bool) -> Result<CardRef, CardRefused>;
    /// Charges (or authorizes) a stored card. [`Outcome::Pending`] when the end is not known
    /// yet: ask again later with `again` set, never as a new charge.
    async fn charge(&self, card: &CardRef, request: ChargeRequest<'_>) -> Outcome;
    /// Captures a held authorization.
    async fn capture(&self, request: SettleRequest<'_>) -> Outcome;
    /// Releases a held authorization.
    async fn void(&self, request: SettleRequest<'_>) -> Outcome;
    /// Gives back `amount` of a captured charge to `card`. Repeating a request with the same
    /// key never refunds twice.
    async fn refund(&self, card: &CardRef, request: RefundRequest<'_>) -> Outcome;
    /// Looks up the refund asked before under `request.idempotency_key`, without asking for
    /// it again (past the processor's replay window a resend could refund twice): how it
    /// ended, [`never_refunded`] when the processor has no such refund, or unknown when it
    /// cannot tell.
    async fn find_refund(&self, _card: &CardRef, _request: RefundRequest<'_>) -> Outcome {
        Outcome::unknown()
    }
    /// The origins (`https://host`) this acquirer sends customers to: its card page, its
    /// bank checks. A hosted form that leads there must be allowed to.
    fn customer_origins(&self) -> Vec<String> {
        Vec::new()
    }
    /// Gives up a charge still waiting for the customer (3-D Secure not finished in time):
    /// whether the processor confirms it can no longer go through. Where such a charge lapses
    /// by itself at the processor, there is nothing to do.
    async fn abandon(&self, _reference: &str, _idempotency_key: &str) -> bool {
        true
    }
    /// Whether the merchant answers this processor's disputes through paydesk (evidence,
    /// acceptance); otherwise in the processor's back office.
    fn answers_disputes(&self) -> bool {
        false
    }
    /// Sends the merchant's evidence of the dispute `reference` (the processor's id), and
    /// submits it with `submit`. Repeating a call with the same `key` never acts twice.
    async fn answer_dispute(&self, _reference: &str, _evidence: &Evidence, _submit: bool, _key: &str) -> DisputeAnswer {
        DisputeAnswer::Done(None)
    }
    /// Accepts the dispute `reference`: the money stays with the cardholder.
    async fn accept_dispute(&self, _reference: &str, _key: &str) -> DisputeAnswer {
        DisputeAnswer::Done(None)
    }
    /// The processor's test cards, as printed: one that goes through, one that is declined,
    /// one that asks for 3-D Secure (shown on test pages of a real processor).
    fn test_cards(&self) -> [&'static str; 3] {
        ["", "", ""]
    }
    /// Whether customers type their cards on this acquirer's own page ([`Acquirer::start_hosted`])
    /// rather than on paydesk's.
    fn hosted(&self) -> bool {
        false
    }
    /// Opens the acquirer's card page for one payment: where to send the customer. Nothing
    /// is charged yet; an error says why the page could not be opened.
    async fn start_hosted(&self, _request: HostedRequest<'_>) -> Result<Hosted, Outcome> {
        Err(Outcome::Error { code: "processing_error", message: "This processor has no card page.".into() })
    }
    /// Closes the card page `token` at the processor so that no payment can be made there
    /// any more (the customer left it): whether it did. A processor that cannot close its
    /// pages lets them run out at their expiry.
    async fn close_hosted(&self, _token: &str) -> bool {
        false
    }
    /// How the card page `token` ended: the payment's outcome (pending while the customer is
    /// still there) and, once it went through, the card as the acquirer keeps it.
    async fn hosted_outcome(&self, _token: &str) -> (Outcome, Option<CardRef>) {
        (Outcome::unknown(), None)
    }
}

/// What a call that answers a dispute came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DisputeAnswer {
    /// Done: the dispute as the processor has it now, when it says.
    Done(Option<Seen>),
    /// The processor refused it (the dispute's state, or what was sent): why.
    Refused(String),
    /// Sent, with no answer: sending the same again is safe.
    Unknown,
}

/// One payment on the acquirer's own card page.
#[derive(Debug, Clone)]
pub struct HostedRequest<'a> {
    pub amount: i64,
    pub currency: Currency,
    /// `false` holds the funds (authorization); `true` also captures them. Nothing is moved
    /// for an amount of 0: the card is only stored.
    pub capture: bool,
    /// paydesk's own reference of the payment: what the page's transaction carries.
    pub reference: &'a str,
    pub description: &'a str,
    /// Where the customer comes back to once the page ended (paid, declined, failed).
    pub return_url: &'a str,
    /// Where a customer who leaves the page without paying (its back link) lands.
    pub back_url: &'a str,
    pub email: Option<&'a str>,
    /// The page's language (`en`, `ru`).
    pub language: &'a str,
    /// The card pays later charges too (a subscription): the acquirer keeps it reusable.
    pub keep_card: bool,
    /// The page takes no payment after this.
    pub expires_at: DateTime<Utc>,
}

/// A card page opened for a payment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hosted {
    /// The acquirer's name for the page's session.
    pub token: String,
    /// Where the customer goes to type their card.
    pub redirect_url: String,
}

/// One refund of a captured charge.
#[derive(Debug, Clone)]
pub struct RefundRequest<'a> {
    /// The acquirer's reference of the charge.
    pub reference: &'a str,
    pub amount: i64,
    pub currency: Currency,
    pub idempotency_key: &'a str,
    /// Why the money goes back (processors require one).
    pub reason: &'a str,
}

/// What a connection check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Check {
    /// The gateway took the credentials.
    Works,
    /// The gateway refused the shop id or the secret key.
    Refused,
    /// The gateway answered with this unexpected HTTP status (a wrong URL, most likely).
    Answered(u16),
    /// No answer: why.
    Unreachable(String),
}

impl Check {
    /// What is wrong, in English; `None` when it works.
    pub fn problem(&self) -> Option<String> {
        match self {
            Check::Works => None,
            Check::Refused => Some(
                "The processor refused the account's credentials: copy them again from the processor's back office."
                    .into(),
            ),
            Check::Answered(status) => Some(format!("The processor answered HTTP {status}: check its URL.")),
            Check::Unreachable(why) => Some(format!("The processor could not be reached: {why}.")),
        }
    }
}
