//! A shop's bePaid account as paydesk's [`Acquirer`]: cards typed on paydesk's page go to
//! the gateway's vault once, and every charge after that is of the token. Each operation
//! carries paydesk's own reference as its `RequestID` (and a charge's as its `tracking_id`),
//! so a lost answer is settled by a lookup, or by sending the very same request, which the
//! gateway answers with its first answer; never by charging anew.

use std::time::Duration;

use async_trait::async_trait;

use super::gateway::{Account, ChargeKind, ChildKind, Gateway, TIMEOUT};
use super::status::Reading;
use super::wire::{AdditionalData, CardOnFile, CardToken, Charge, Child, NewCard};
use crate::domain::card::{CardInput, CardRef, Outcome};
use crate::external::acquirer::{Acquirer, CardRefused, ChargeRequest, RefundRequest, SettleRequest};
use crate::external::outbound::Outbound;

/// What paydesk tells the gateway a refund is for when the merchant gave no reason (the
/// gateway refuses a refund without one).
pub const DEFAULT_REFUND_REASON: &str = "Refund requested by the merchant";

/// How often a capture or void whose answer was lost is sent again (under the same
/// `RequestID`) before paydesk gives up for now.
const SETTLE_TRIES: u32 = 3;

/// One shop's account in one mode.
pub struct Bepaid {
    pub outbound: Outbound,
    pub account: Account,
    /// The account is the shop's test account (`"test": true` on every request).
    pub test: bool,
    /// Where the gateway notifies paydesk of this shop's transactions.
    pub notification_url: Option<String>,
    pub timeout: Duration,
}

impl Bepaid {
    /// The account of `account`, asking with the usual timeout.
    pub fn new(outbound: Outbound, account: Account, test: bool, notification_url: Option<String>) -> Bepaid {
        Bepaid { outbound, account, test, notification_url, timeout: TIMEOUT }
    }

    fn gateway(&self) -> Gateway<'_> {
        Gateway { outbound: &self.outbound, account: &self.account, timeout: self.timeout }
    }

    async fn settle(&self, kind: ChildKind, request: SettleRequest<'_>) -> Outcome {
        let child = Child { parent_uid: request.reference, amount: request.amount, reason: None };
        let mut outcome = Outcome::unknown();
        for attempt in 0..SETTLE_TRIES {
            if attempt > 0 {
                tokio::time::sleep(Duration::from_millis(500 * u64::from(attempt))).await;
            }
            outcome = child_outcome(self.gateway().child(kind, &child, request.idempotency_key).await, None);
            if !matches!(outcome, Outcome::Pending { .. }) {
                break;
            }
        }
        outcome
    }
}

#[async_trait]
impl Acquirer for Bepaid {
    fn is_simulated(&self) -> bool {
        false
    }

    async fn tokenize(&self, card: &CardInput, _test: bool) -> Result<CardRef, CardRefused> {
        let new = NewCard {
            number: card.number(),
            holder: &card.holder,
            exp_month: format!("{:02}", card.exp_month),
            exp_year: card.exp_year.to_string(),
        };
        match self.gateway().store_card(&new).await {
            Ok(stored) => Ok(CardRef {
                token: stored.token.unwrap_or_default(),
                brand: card.brand().to_string(),
                last4: card.last4().to_string(),
                exp_month: card.exp_month as i32,
                exp_year: card.exp_year,
                holder: card.holder.clone(),
            }),
            Err(Reading::Refused { message }) => Err(CardRefused::Invalid(message)),
            Err(_) => Err(CardRefused::Unavailable),
        }
    }

    async fn charge(&self, card: &CardRef, request: ChargeRequest<'_>) -> Outcome {
        let (kind, looked_up) = match request.capture {
            true => (ChargeKind::Payment, "payment"),
            false => (ChargeKind::Authorization, "authorization"),
        };
        if request.again {
            match self.gateway().lookup(request.idempotency_key, looked_up).await {
                // It never arrived: the same request goes now.
                Reading::NotFound => {}
                found => return charge_outcome(found, true),
            }
        }
        let card_on_file = match request.customer_present {
            true => CardOnFile::customer(),
            false => CardOnFile::renewal(),
        };
        let charge = Charge {
            amount: request.amount,
            currency: request.currency.code,
            description: request.description,
            tracking_id: request.idempotency_key,
            test: self.test,
            duplicate_check: false,
            language: "en",
            return_url: request.return_url,
            notification_url: self.notification_url.as_deref(),
            credit_card: CardToken { token: &card.token },
            customer: None,
            additional_data: AdditionalData { contract: vec![], card_on_file: Some(card_on_file) },
        };
        charge_outcome(self.gateway().charge(kind, &charge, request.idempotency_key).await, request.again)
    }

    async fn capture(&self, request: SettleRequest<'_>) -> Outcome {
        self.settle(ChildKind::Capture, request).await
    }

    async fn void(&self, request: SettleRequest<'_>) -> Outcome {
        self.settle(ChildKind::Void, request).await
    }

    async fn refund(&self, _card: &CardRef, request: RefundRequest<'_>) -> Outcome {
        let reason = Some(request.reason).filter(|r| !r.trim().is_empty()).unwrap_or(DEFAULT_REFUND_REASON);
        let child = Child { parent_uid: request.reference, amount: request.amount, reason: Some(reason) };
        let reading = self.gateway().child(ChildKind::Refund, &child, request.idempotency_key).await;
        child_outcome(reading, Some("refund_failed"))
    }
}

/// What a charge's reading means; `again`: the charge was sent before, so a gateway that
/// cannot be reached now says nothing about it.
fn charge_outcome(reading: Reading, again: bool) -> Outcome {
    match reading {
        Reading::Succeeded { transaction } => Outcome::Approved { reference: transaction.uid },
        Reading::Declined { code, message, .. } => {
            let message = if message.is_empty() { "The card was declined.".into() } else { message };
            Outcome::Declined { code, message: message.into() }
        }
        Reading::NeedsCustomer { uid, redirect_url } => {
            Outcome::Pending { reference: Some(uid), redirect_url: Some(redirect_url) }
        }
        Reading::Pending { uid } => Outcome::Pending { reference: Some(uid), redirect_url: None },
        Reading::Error { message, .. } | Reading::Refused { message } => Outcome::Error {
            code: "processing_error",
            message: if message.is_empty() { "The payment could not be processed.".into() } else { message.into() },
        },
        Reading::Unreached { .. } if again => Outcome::unknown(),
        Reading::Unreached { message } => Outcome::Error {
            code: "processing_error",
            message: format!("The payment processor could not be reached: {message}").into(),
        },
        Reading::RetryLater | Reading::Unknown | Reading::NotFound => Outcome::unknown(),
    }
}

/// What a capture's, void's or refund's reading means; a refusal is a decline with
/// `refused_code` (refunds) or `refused`.
fn child_outcome(reading: Reading, refused_code: Option<&'static str>) -> Outcome {
    let code = refused_code.unwrap_or("refused");
    match reading {
        Reading::Succeeded { transaction } => Outcome::Approved { reference: transaction.uid },
        Reading::Declined { message, .. } | Reading::Refused { message } => {
            Outcome::Declined { code, message: format!("The payment processor refused: {message}").into() }
        }
        Reading::Error { message, .. } => Outcome::Error { code: "processing_error", message: message.into() },
        Reading::Unreached { message } => Outcome::Error {
            code: "processing_error",
            message: format!("The payment processor could not be reached: {message}").into(),
        },
        Reading::NeedsCustomer { uid, .. } | Reading::Pending { uid } => {
            Outcome::Pending { reference: Some(uid), redirect_url: None }
        }
        Reading::RetryLater | Reading::Unknown | Reading::NotFound => Outcome::unknown(),
    }
}
