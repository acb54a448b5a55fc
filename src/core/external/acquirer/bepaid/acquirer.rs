//! A shop's bePaid account as paydesk's [`Acquirer`]: cards typed on paydesk's page go to
//! the gateway's vault once, and every charge after that is of the token. Each operation
//! carries paydesk's own reference as its `RequestID` (and a charge's as its `tracking_id`),
//! so a lost answer is settled by a lookup, or by sending the very same request, which the
//! gateway answers with its first answer; never by charging anew.

use std::time::Duration;

use async_trait::async_trait;

use super::gateway::{Account, ChargeKind, ChildKind, Gateway};
use super::status::{CheckoutReading, Reading};
use super::wire::{
    AdditionalData, Card, CardOnFile, CardToken, Charge, Checkout, CheckoutSettings, Child, Customer, NewCard, Order,
};
use crate::domain::card::{CardInput, CardRef, Outcome};
use crate::external::acquirer::{
    Acquirer, CardRefused, ChargeRequest, Hosted, HostedRequest, IfUnsent, RefundRequest, SettleRequest, never_sent,
    page_unavailable,
};
use crate::external::outbound::Outbound;

/// What paydesk tells the gateway a refund is for when the merchant gave no reason (the
/// gateway refuses a refund without one).
pub const DEFAULT_REFUND_REASON: &str = "Refund requested by the merchant";

/// How many cards a customer may try on bePaid's page (Checkout) before it closes; a
/// declined card leaves it open for another until then.
pub const CHECKOUT_ATTEMPTS: u32 = 5;

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
    /// Customers type their cards on the processor's page (Checkout), not paydesk's.
    pub hosted: bool,
    /// How long an answer is waited for before the outcome is unknown.
    pub timeout: Duration,
}

impl Bepaid {
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
                return outcome;
            }
        }
        // Still not known: the authorization's own transactions say whether it happened.
        let looked_up = if kind == ChildKind::Void { "void" } else { "capture" };
        match self.gateway().lookup(request.tracking_id, looked_up).await {
            reading @ Reading::Succeeded { .. } => child_outcome(reading, None),
            _ => outcome,
        }
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
                fingerprint: fingerprint(&stored),
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
        // Nothing to take (a free trial): the card is checked and stored, no money moves.
        let (kind, looked_up) = match (request.amount, request.capture) {
            (0, _) => (ChargeKind::Tokenization, "tokenization"),
            (_, true) => (ChargeKind::Payment, "payment"),
            (_, false) => (ChargeKind::Authorization, "authorization"),
        };
        if request.again {
            match self.gateway().lookup(request.idempotency_key, looked_up).await {
                // It never arrived: the same request goes now, if the caller may resend.
                Reading::NotFound if request.if_unsent == IfUnsent::Resend => {}
                Reading::NotFound if request.if_unsent == IfUnsent::GiveUp => return never_sent(),
                found => return charge_outcome(found, true, request.customer_present),
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
        let reading = self.gateway().charge(kind, &charge, request.idempotency_key).await;
        charge_outcome(reading, request.again, request.customer_present)
    }

    async fn capture(&self, request: SettleRequest<'_>) -> Outcome {
        self.settle(ChildKind::Capture, request).await
    }

    async fn void(&self, request: SettleRequest<'_>) -> Outcome {
        self.settle(ChildKind::Void, request).await
    }

    fn hosted(&self) -> bool {
        self.hosted
    }

    fn test_cards(&self) -> [&'static str; 3] {
        ["4200 0000 0000 0000", "4005 5500 0000 0019", "4012 0000 0000 1097"]
    }

    fn customer_origins(&self) -> Vec<String> {
        [&self.account.checkout_url, &self.account.gateway_url]
            .iter()
            .filter_map(|u| url::Url::parse(u).ok())
            .map(|u| u.origin().ascii_serialization())
            .collect()
    }

    async fn start_hosted(&self, request: HostedRequest<'_>) -> Result<Hosted, Outcome> {
        let transaction_type = match (request.amount, request.capture) {
            (0, _) => "tokenization",
            (_, true) => "payment",
            (_, false) => "authorization",
        };
        let contract = if request.keep_card { vec!["recurring"] } else { vec![] };
        let checkout = Checkout {
            version: 2.1,
            transaction_type,
            test: self.test,
            settings: CheckoutSettings {
                success_url: request.return_url,
                decline_url: request.return_url,
                fail_url: request.return_url,
                cancel_url: request.back_url,
                notification_url: self.notification_url.as_deref(),
                language: request.language,
            },
            order: Order {
                amount: request.amount,
                currency: request.currency.code,
                description: request.description,
                tracking_id: request.reference,
                additional_data: AdditionalData { contract, card_on_file: None },
                expired_at: Some(request.expires_at.format("%Y-%m-%dT%H:%M:%S+00:00").to_string()),
            },
            customer: request.email.map(|email| Customer { email: Some(email), ip: None }),
            attempts: CHECKOUT_ATTEMPTS,
        };
        match self.gateway().start_checkout(checkout).await {
            Ok((token, redirect_url)) => Ok(Hosted { token, redirect_url }),
            // No money moves before the customer is on the page: whatever went wrong, the
            // payment can be started again.
            Err(Reading::Refused { message }) => {
                Err(page_unavailable(format!("bePaid refused to open its payment page: {message}")))
            }
            Err(Reading::Unreached { message }) => {
                Err(page_unavailable(format!("bePaid could not be reached to open its payment page: {message}.")))
            }
            Err(_) => Err(page_unavailable("bePaid answered with an error while opening its payment page.".into())),
        }
    }

    async fn hosted_outcome(&self, token: &str) -> (Outcome, Option<CardRef>) {
        match self.gateway().checkout_state(token).await {
            CheckoutReading::Finished(reading) => {
                let card = match &reading {
                    Reading::Succeeded { transaction } => match &transaction.credit_card {
                        Some(card) => card_of(card),
                        None => self.gateway().card_of(&transaction.uid).await.as_ref().and_then(card_of),
                    },
                    _ => None,
                };
                (charge_outcome(reading, true, true), card)
            }
            CheckoutReading::Open => (Outcome::unknown(), None),
            CheckoutReading::Expired => (
                Outcome::Declined {
                    code: "payment_expired",
                    message: "The customer did not finish paying on the processor's page in time.".into(),
                },
                None,
            ),
            CheckoutReading::Unanswered(_) => (Outcome::unknown(), None),
        }
    }

    async fn refund(&self, _card: &CardRef, request: RefundRequest<'_>) -> Outcome {
        let reason = Some(request.reason).filter(|r| !r.trim().is_empty()).unwrap_or(DEFAULT_REFUND_REASON);
        let child = Child { parent_uid: request.reference, amount: request.amount, reason: Some(reason) };
        let reading = self.gateway().child(ChildKind::Refund, &child, request.idempotency_key).await;
        child_outcome(reading, Some("refund_failed"))
    }
}

/// The card of a transaction as paydesk keeps it: the gateway's token and what may be shown.
fn card_of(card: &Card) -> Option<CardRef> {
    let brand = match card.brand.as_deref().unwrap_or("card") {
        "master" => "mastercard",
        brand => brand,
    };
    Some(CardRef {
        token: card.token.clone()?,
        brand: brand.to_string(),
        last4: card.last_4.clone().unwrap_or_default(),
        exp_month: card.exp_month.unwrap_or(0) as i32,
        exp_year: card.exp_year.unwrap_or(0),
        holder: card.holder.clone().unwrap_or_default(),
        fingerprint: fingerprint(card),
    })
}

/// What identifies the card across entries: the gateway's `stamp` (a hash of its number).
fn fingerprint(card: &Card) -> Option<String> {
    card.stamp.as_deref().filter(|s| !s.is_empty()).map(|stamp| format!("bepaid_{stamp}"))
}

/// What a charge's reading means; `again`: the charge was sent before, so a gateway that
/// cannot be reached now says nothing about it. A bank that asks for a customer who is not
/// there (a renewal) declines it as `authentication_required`: no retry helps without them.
fn charge_outcome(reading: Reading, again: bool, customer_present: bool) -> Outcome {
    match reading {
        // Looked up: only a transaction's own status says how it ended; a refused lookup (the
        // credentials changed meanwhile, say) says nothing, and a charge waiting for a
        // customer may still be finished by them.
        Reading::Refused { .. } if again => Outcome::unknown(),
        Reading::NeedsCustomer { uid, redirect_url } if again => {
            Outcome::Pending { reference: Some(uid), redirect_url: Some(redirect_url) }
        }
        Reading::NeedsCustomer { .. } if !customer_present => Outcome::Declined {
            code: "authentication_required",
            message: "The bank asks the customer to confirm this payment.".into(),
        },
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
