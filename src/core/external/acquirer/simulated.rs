//! The simulated acquirer: deterministic by test card number, no network, no money.

use std::collections::HashMap;
use std::sync::Mutex;

use async_trait::async_trait;
use chrono::Datelike;

use super::{
    Acquirer, Behaviour, CardRef, CardRefused, ChargeRequest, IfUnsent, Outcome, RefundRequest, SettleRequest,
    never_refunded, never_sent,
};
use crate::domain::card::{CardInput, NetworkEvent};
use crate::domain::ids::random_hex;

impl Behaviour {
    /// The word a simulated card's token carries.
    fn word(self) -> &'static str {
        match self {
            Behaviour::Succeeds => "ok",
            Behaviour::Declined => "decline",
            Behaviour::InsufficientFunds => "funds",
            Behaviour::ProcessingError => "error",
            Behaviour::SucceedsThenDeclines => "later",
            Behaviour::RefundFails => "norefund",
        }
    }

    fn from_token(token: &str) -> Behaviour {
        // After the word may come what the card network does later (`ok.dispute`).
        let word = token.strip_prefix("tok_sim_").and_then(|t| t.split(['_', '.']).next()).unwrap_or("");
        TEST_CARDS.iter().map(|(_, b, _)| *b).find(|b| b.word() == word).unwrap_or(Behaviour::Declined)
    }
}

/// The test cards: number, behaviour, what it is for (README lists the same).
pub const TEST_CARDS: &[(&str, Behaviour, &str)] = &[
    ("4200000000000000", Behaviour::Succeeds, "succeeds (Visa)"),
    ("5555555555554444", Behaviour::Succeeds, "succeeds (Mastercard)"),
    ("4005550000000019", Behaviour::Declined, "declined: card_declined"),
    ("4000000000009995", Behaviour::InsufficientFunds, "declined: insufficient_funds"),
    ("4000000000000119", Behaviour::ProcessingError, "processing error: processing_error"),
    ("4000000000000341", Behaviour::SucceedsThenDeclines, "succeeds now, declines every later charge"),
    ("4000000000005126", Behaviour::RefundFails, "succeeds; every refund of it fails: refund_failed"),
];

/// The test cards that pay and are then disputed, asked about or warned of by the card
/// network a few minutes later (README lists the same).
pub const NETWORK_CARDS: &[(&str, NetworkEvent, &str)] = &[
    ("4000000000000259", NetworkEvent::Dispute, "succeeds; disputed as fraudulent a few minutes later"),
    ("4000000000001976", NetworkEvent::Inquiry, "succeeds; the bank inquires about it a few minutes later"),
    ("4000000000005423", NetworkEvent::FraudWarning, "succeeds; an early fraud warning follows a few minutes later"),
];

/// The simulated acquirer: deterministic by card number, no network, no money. Like a real
/// acquirer it answers a repeated idempotency key with the first answer.
/// What identifies a simulated card across entries, derived from its number (as a processor
/// does): the same number gives the same fingerprint, and the number cannot be read back.
pub fn fingerprint(number: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(format!("paydesk simulated card fingerprint:{number}"));
    format!("sim_{}", crate::domain::ids::hex(&digest[..12]))
}

pub struct SimulatedAcquirer {
    /// The operator allows live (non-test) payments through the simulation.
    allow_live: bool,
    answered: Mutex<HashMap<String, Outcome>>,
}

impl SimulatedAcquirer {
    /// A simulated acquirer; `allow_live` lets non-test payments through.
    pub fn new(allow_live: bool) -> Self {
        SimulatedAcquirer { allow_live, answered: Mutex::new(HashMap::new()) }
    }

    fn decide(card: &CardRef, request: &ChargeRequest<'_>) -> Outcome {
        let expired = (card.exp_year, card.exp_month as u32) < (request.now.year(), request.now.month());
        if expired {
            return Outcome::Declined { code: "expired_card", message: "The card has expired.".into() };
        }
        match request.simulate.unwrap_or_else(|| Behaviour::from_token(&card.token)) {
            Behaviour::Succeeds | Behaviour::RefundFails => approved(request.capture),
            Behaviour::SucceedsThenDeclines if request.customer_present => approved(request.capture),
            Behaviour::Declined | Behaviour::SucceedsThenDeclines => {
                Outcome::Declined { code: "card_declined", message: "The card was declined.".into() }
            }
            Behaviour::InsufficientFunds => {
                Outcome::Declined { code: "insufficient_funds", message: "The card has insufficient funds.".into() }
            }
            Behaviour::ProcessingError => Outcome::Error {
                code: "processing_error",
                message: "The payment could not be processed. Please try again later.".into(),
            },
        }
    }
}

#[async_trait]
impl Acquirer for SimulatedAcquirer {
    fn is_simulated(&self) -> bool {
        true
    }

    fn answers_disputes(&self) -> bool {
        true
    }

    async fn tokenize(&self, card: &CardInput, test: bool) -> Result<CardRef, CardRefused> {
        let network = NETWORK_CARDS.iter().find(|(n, _, _)| *n == card.number()).map(|(_, e, _)| *e);
        let listed = TEST_CARDS.iter().find(|(n, _, _)| *n == card.number()).map(|(_, b, _)| *b);
        let listed = listed.or(network.map(|_| Behaviour::Succeeds));
        let behaviour = match (test, listed) {
            (true, Some(b)) => b,
            (true, None) => return Err(CardRefused::NotATestCard),
            (false, _) if !self.allow_live => return Err(CardRefused::LiveNotAllowed),
            (false, listed) => listed.unwrap_or(Behaviour::Succeeds),
        };
        Ok(CardRef {
            token: match network.filter(|_| test) {
                Some(event) => format!("tok_sim_{}.{}_{}", behaviour.word(), event, random_hex(12)),
                None => format!("tok_sim_{}_{}", behaviour.word(), random_hex(12)),
            },
            brand: card.brand().to_string(),
            last4: card.last4().to_string(),
            exp_month: card.exp_month as i32,
            exp_year: card.exp_year,
            holder: card.holder.clone(),
            fingerprint: Some(fingerprint(card.number())),
        })
    }

    async fn charge(&self, card: &CardRef, request: ChargeRequest<'_>) -> Outcome {
        let mut answered = self.answered.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if request.again && request.if_unsent == IfUnsent::GiveUp && !answered.contains_key(request.idempotency_key) {
            return never_sent();
        }
        answered.entry(request.idempotency_key.to_string()).or_insert_with(|| Self::decide(card, &request)).clone()
    }

    async fn capture(&self, request: SettleRequest<'_>) -> Outcome {
        Outcome::Approved { reference: request.reference.to_string() }
    }

    async fn void(&self, request: SettleRequest<'_>) -> Outcome {
        Outcome::Approved { reference: request.reference.to_string() }
    }

    async fn find_refund(&self, _card: &CardRef, request: RefundRequest<'_>) -> Outcome {
        self.refund_answered(request.idempotency_key).unwrap_or_else(never_refunded)
    }

    async fn refund(&self, card: &CardRef, request: RefundRequest<'_>) -> Outcome {
        let mut answered = self.answered.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let answer = || match Behaviour::from_token(&card.token) {
            Behaviour::RefundFails => Outcome::Declined {
                code: "refund_failed",
                message: "The card's issuer refused the refund: give the money back another way.".into(),
            },
            _ => Outcome::Approved { reference: format!("sim_re_{}", random_hex(8)) },
        };
        answered.entry(format!("refund:{}", request.idempotency_key)).or_insert_with(answer).clone()
    }
}

impl SimulatedAcquirer {
    /// The answer given to the refund asked under `key`, if it was asked.
    fn refund_answered(&self, key: &str) -> Option<Outcome> {
        let answered = self.answered.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        answered.get(&format!("refund:{key}")).cloned()
    }
}

fn approved(capture: bool) -> Outcome {
    let kind = if capture { "ch" } else { "auth" };
    Outcome::Approved { reference: format!("sim_{kind}_{}", random_hex(8)) }
}

#[cfg(test)]
mod tests {
    use chrono::Utc;

    use super::*;
    use crate::domain::Errors;
    use crate::domain::card::RawCard;
    use crate::domain::card::network_of;

    fn card(number: &str) -> CardInput {
        let raw = RawCard { number, exp_month: "12", exp_year: "2030", cvc: "123", holder: "Ann" };
        CardInput::parse(raw, Utc::now(), &mut Errors::default()).unwrap()
    }

    fn request(customer_present: bool, key: &str) -> ChargeRequest<'_> {
        ChargeRequest {
            first_sent: None,
            amount: 990,
            currency: crate::domain::currency::find("EUR").unwrap(),
            capture: true,
            idempotency_key: key,
            customer_present,
            again: false,
            if_unsent: IfUnsent::Wait,
            description: "A test",
            return_url: None,
            now: "2026-11-23T10:00:00Z".parse().unwrap(),
            simulate: None,
        }
    }

    #[tokio::test]
    async fn every_test_card_behaves_as_listed() {
        let acquirer = SimulatedAcquirer::new(false);
        for (number, behaviour, _) in TEST_CARDS {
            let stored = acquirer.tokenize(&card(number), true).await.unwrap();
            assert_eq!(stored.last4, number[12..]);
            assert!(!stored.token.contains(&number[..12]));
            let (first_key, later_key) = (format!("{number}-first"), format!("{number}-later"));
            let now = acquirer.charge(&stored, request(true, &first_key)).await;
            let later = acquirer.charge(&stored, request(false, &later_key)).await;
            let (now_ok, later_ok) =
                (matches!(now, Outcome::Approved { .. }), matches!(later, Outcome::Approved { .. }));
            match behaviour {
                Behaviour::Succeeds | Behaviour::RefundFails => assert!(now_ok && later_ok),
                Behaviour::SucceedsThenDeclines => assert!(now_ok && !later_ok),
                Behaviour::ProcessingError => assert!(matches!(now, Outcome::Error { .. })),
                Behaviour::Declined | Behaviour::InsufficientFunds => {
                    assert!(matches!(now, Outcome::Declined { .. }) && !later_ok)
                }
            }
        }
    }

    #[tokio::test]
    async fn network_cards_pay_and_carry_what_the_network_does_later() {
        let acquirer = SimulatedAcquirer::new(false);
        for (number, event, _) in NETWORK_CARDS {
            let stored = acquirer.tokenize(&card(number), true).await.unwrap();
            assert_eq!(network_of(&stored.token), Some(*event));
            let charged = acquirer.charge(&stored, request(false, number)).await;
            assert!(matches!(charged, Outcome::Approved { .. }), "{number} pays, later charges too");
        }
        let plain = acquirer.tokenize(&card("4200000000000000"), true).await.unwrap();
        assert_eq!(network_of(&plain.token), None);
    }

    #[tokio::test]
    async fn test_mode_takes_only_test_cards_and_live_mode_needs_consent() {
        let strict = SimulatedAcquirer::new(false);
        assert_eq!(strict.tokenize(&card("4242424242424242"), true).await, Err(CardRefused::NotATestCard));
        assert_eq!(strict.tokenize(&card("4200000000000000"), false).await, Err(CardRefused::LiveNotAllowed));
        let lenient = SimulatedAcquirer::new(true);
        assert!(lenient.tokenize(&card("4242424242424242"), false).await.is_ok());
    }

    #[tokio::test]
    async fn an_expired_stored_card_is_declined() {
        let acquirer = SimulatedAcquirer::new(false);
        let mut stored = acquirer.tokenize(&card("4200000000000000"), true).await.unwrap();
        stored.exp_year = 2026;
        stored.exp_month = 10;
        let outcome = acquirer.charge(&stored, request(false, "c")).await;
        assert!(matches!(outcome, Outcome::Declined { code: "expired_card", .. }));
    }

    #[tokio::test]
    async fn a_repeated_idempotency_key_gets_the_first_answer_and_overrides_apply() {
        let acquirer = SimulatedAcquirer::new(false);
        let stored = acquirer.tokenize(&card("4200000000000000"), true).await.unwrap();
        let first = acquirer.charge(&stored, request(false, "k")).await;
        let declining = ChargeRequest { simulate: Some(Behaviour::Declined), ..request(false, "k") };
        assert_eq!(acquirer.charge(&stored, declining.clone()).await, first, "the same key is not charged again");
        let fresh = ChargeRequest { idempotency_key: "k2", ..declining };
        assert!(matches!(acquirer.charge(&stored, fresh).await, Outcome::Declined { .. }));
    }

    #[tokio::test]
    async fn refunds_succeed_but_for_the_refund_failing_card_and_repeat_their_first_answer() {
        let acquirer = SimulatedAcquirer::new(false);
        for (number, fails) in [("4200000000000000", false), ("4000000000005126", true)] {
            let stored = acquirer.tokenize(&card(number), true).await.unwrap();
            let charged = acquirer.charge(&stored, request(true, number)).await;
            let Outcome::Approved { reference } = charged else { panic!("{number} charges") };
            let currency = crate::domain::currency::find("EUR").unwrap();
            let refund = RefundRequest {
                reference: &reference,
                amount: 100,
                currency,
                idempotency_key: number,
                reason: "asked",
            };
            let first = acquirer.refund(&stored, refund.clone()).await;
            assert_eq!(matches!(first, Outcome::Declined { code: "refund_failed", .. }), fails);
            assert_eq!(acquirer.refund(&stored, refund).await, first);
        }
    }
}
