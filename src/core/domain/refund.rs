//! What a refund may give back: some or all of what a payment took and no refund gave or
//! holds back yet, never more. An authorization took nothing: it is voided instead.

use serde_json::{Map, Value};

use super::Errors;
use super::input::{Reader, msg};
use super::vocab::PaymentStatus;

/// The longest `reason` kept.
pub const REASON_MAX: usize = 500;

/// What `POST /payments/{id}/refund` asks: an amount (all that is left when absent) and why.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RefundAsk {
    pub amount: Option<i64>,
    pub reason: Option<String>,
    /// The refund's id when the asker chose it (a dashboard confirmation's one-time id), so
    /// the same form sent twice makes one refund: the second finds the first. The API's
    /// requests leave it to paydesk (and use `Idempotency-Key` for retries).
    pub id: Option<String>,
}

impl RefundAsk {
    /// Reads the body of a refund request.
    pub fn read(body: &Map<String, Value>) -> Result<RefundAsk, Errors> {
        let r = Reader::new(body);
        let mut errors = Errors::default();
        let amount = r.integer_in("amount", 1, i64::MAX, &mut errors);
        let reason = r.string("reason", REASON_MAX, &mut errors).map(|s| s.trim().to_string());
        errors.into_result(|| RefundAsk { amount, reason, id: None })
    }
}

/// Where a payment stands as refunds see it.
#[derive(Debug, Clone, Copy)]
pub struct Refundable {
    pub status: PaymentStatus,
    pub amount: i64,
    /// Given back by finished refunds.
    pub refunded: i64,
    /// Held by refunds under way.
    pub refunding: i64,
    /// Taken back by disputes (chargebacks).
    pub disputed: i64,
}

/// Why a payment cannot be refunded as asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The payment is a held authorization: it is voided, not refunded.
    Authorization,
    /// The payment's money was never taken (failed, voided, still processing).
    NotTaken(PaymentStatus),
    /// Nothing is left to give back.
    NothingLeft,
    /// A dispute took back what was left: the cardholder has it already.
    Disputed,
    /// More was asked than is left.
    TooMuch { left: i64 },
}

impl Refusal {
    /// The refusal as the API words it: a conflict of state, or a field error of `amount`.
    pub fn explain(&self) -> Result<String, Errors> {
        match self {
            Refusal::Authorization => {
                Ok("An authorization is voided, not refunded: void this payment to release the funds".into())
            }
            Refusal::NotTaken(status) => {
                Ok(format!("Only a succeeded payment can be refunded; this payment is {status}"))
            }
            Refusal::NothingLeft => Ok("Nothing is left to refund on this payment".into()),
            Refusal::Disputed => {
                Ok("This payment is disputed: the dispute gave the cardholder back what was left to refund".into())
            }
            Refusal::TooMuch { left } => {
                let errors = Errors::one("amount", format!("{}, the amount left to refund", msg::at_most(*left)));
                Err(errors)
            }
        }
    }
}

impl Refundable {
    /// What is neither given back, held by a refund under way, nor taken back by a dispute.
    pub fn left(&self) -> i64 {
        self.amount - self.refunded - self.refunding - self.disputed
    }

    /// The amount a refund gives back: `asked`, or all that is left.
    pub fn amount_to_refund(&self, asked: Option<i64>) -> Result<i64, Refusal> {
        match self.status {
            PaymentStatus::Authorized => return Err(Refusal::Authorization),
            status if !status.is_taken() => return Err(Refusal::NotTaken(status)),
            _ => {}
        }
        let left = self.left();
        match asked {
            _ if left <= 0 && self.disputed > 0 => Err(Refusal::Disputed),
            _ if left <= 0 => Err(Refusal::NothingLeft),
            Some(asked) if asked > left => Err(Refusal::TooMuch { left }),
            Some(asked) => Ok(asked),
            None => Ok(left),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn paid(refunded: i64, refunding: i64) -> Refundable {
        Refundable { status: PaymentStatus::Succeeded, amount: 1000, refunded, refunding, disputed: 0 }
    }

    #[test]
    fn a_refund_gives_back_what_is_asked_or_all_that_is_left() {
        assert_eq!(paid(0, 0).amount_to_refund(None), Ok(1000));
        assert_eq!(paid(300, 200).amount_to_refund(None), Ok(500));
        assert_eq!(paid(300, 200).amount_to_refund(Some(500)), Ok(500));
        assert_eq!(paid(300, 200).amount_to_refund(Some(501)), Err(Refusal::TooMuch { left: 500 }));
        assert_eq!(paid(1000, 0).amount_to_refund(None), Err(Refusal::NothingLeft));
        assert_eq!(paid(600, 400).amount_to_refund(Some(1)), Err(Refusal::NothingLeft));
        let disputed = Refundable { disputed: 700, ..paid(300, 0) };
        assert_eq!(disputed.amount_to_refund(None), Err(Refusal::Disputed));
        assert_eq!(Refundable { disputed: 500, ..paid(300, 0) }.amount_to_refund(None), Ok(200));
    }

    #[test]
    fn only_taken_money_is_refunded() {
        let with = |status| Refundable { status, ..paid(0, 0) };
        assert_eq!(with(PaymentStatus::Authorized).amount_to_refund(None), Err(Refusal::Authorization));
        for status in [PaymentStatus::Failed, PaymentStatus::Voided, PaymentStatus::Processing, PaymentStatus::Error] {
            assert_eq!(with(status).amount_to_refund(None), Err(Refusal::NotTaken(status)));
        }
        assert_eq!(with(PaymentStatus::PartiallyRefunded).amount_to_refund(Some(10)), Ok(10));
    }

    #[test]
    fn the_ask_is_read_with_every_problem_named() {
        let ask = |body: Value| RefundAsk::read(body.as_object().unwrap());
        assert_eq!(ask(json!({})), Ok(RefundAsk::default()));
        let read = ask(json!({"amount": "250", "reason": " duplicate "})).unwrap();
        assert_eq!(read, RefundAsk { amount: Some(250), reason: Some("duplicate".into()), id: None });
        let errors = ask(json!({"amount": 0, "reason": "x".repeat(501)})).unwrap_err();
        assert_eq!(errors.get("amount").unwrap(), ["must be greater than or equal to 1".to_string()]);
        assert!(errors.has("reason"));
        let too_much = Refusal::TooMuch { left: 40 }.explain().unwrap_err();
        assert_eq!(too_much.message(), "Amount must be less than or equal to 40, the amount left to refund");
    }
}
