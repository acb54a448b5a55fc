//! What an answer of the gateway means, as one table. The meaning depends on the operation
//! that asked (a `failed` refund is not a declined card) and on the HTTP layer before the
//! body: an answer paydesk cannot read is never taken for a refusal.
//!
//! | HTTP | transaction `status` | charge, tokenization | capture, void | refund |
//! |---|---|---|---|---|
//! | 2xx | `successful` | Succeeded | Succeeded | Succeeded |
//! | 2xx | `failed` | Declined (by the issuer's code) | Refused | Declined `refund_failed` |
//! | 2xx | `incomplete` with `redirect_url` | NeedsCustomer | Pending | Pending |
//! | 2xx | `incomplete` without, `pending` | Pending | Pending | Pending |
//! | 2xx | `expired` | Declined `payment_expired` | Refused | Declined `refund_failed` |
//! | 2xx | `error` | Error (retried as a processing error) | Error | Error |
//! | 2xx | any other word, or a body paydesk cannot read | Unknown | Unknown | Unknown |
//! | 400, 422 | (a refusal body) | Refused | Refused | Refused |
//! | 401, 403 | | Refused (the credentials) | Refused | Refused |
//! | 404 | | Refused; NotFound for a lookup | Refused | Refused |
//! | 429 | | RetryLater (same `RequestID`) | RetryLater | RetryLater |
//! | 5xx, any other | | Unknown | Unknown | Unknown |
//!
//! A transport failure after the request was written (a timeout, a dropped connection) is
//! Unknown too; one before it left (no connection) is Unreached ([`super::gateway`]). Unknown is settled by a lookup of
//! paydesk's own reference (`tracking_id`), never by sending the operation again as new.

use super::wire::{Answer, Card, CheckoutAnswer, Refusal, Status, Transaction};

/// The operation an answer is read for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// A payment or an authorization.
    Charge,
    /// Storing a card without moving money (a free trial, the card page).
    Tokenization,
    Capture,
    Void,
    Refund,
    /// Finding the transaction of type `kind` (`payment`, `authorization`, `tokenization`,
    /// `capture`, `void`, `refund`) under paydesk's reference, when an answer was lost.
    Lookup {
        kind: &'static str,
    },
}

impl Operation {
    /// The operation a lookup's transaction answers.
    fn looked_up(kind: &str) -> Operation {
        match kind {
            "tokenization" => Operation::Tokenization,
            "capture" => Operation::Capture,
            "void" => Operation::Void,
            "refund" => Operation::Refund,
            _ => Operation::Charge,
        }
    }
}

/// What an answer means for paydesk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reading {
    /// Done: the money moved, or the card is stored.
    Succeeded { transaction: Box<Transaction> },
    /// The issuer (or the gateway) said no; nothing moved. `code` is paydesk's word for it.
    Declined { uid: String, code: &'static str, message: String },
    /// Waiting for the customer: send them to `redirect_url` (3-D Secure).
    NeedsCustomer { uid: String, redirect_url: String },
    /// Accepted and not finished: a notification or a lookup tells the end.
    Pending { uid: String },
    /// Processed, and the gateway or its acquirer failed; a later attempt may work.
    Error { uid: String, message: String },
    /// The request itself was refused (its credentials, its content, a rule of the gateway):
    /// nothing moved, and sending it again changes nothing.
    Refused { message: String },
    /// Not processed yet: send the same request (the same `RequestID`) again later.
    RetryLater,
    /// Sent, and what happened is not known: look it up.
    Unknown,
    /// The request never reached the gateway (no connection, a refused address): nothing
    /// happened, and it may be sent again.
    Unreached { message: String },
    /// A lookup found nothing under the reference: the request never reached the gateway.
    NotFound,
}

/// Reads an HTTP answer of the gateway (`status` and `body`) to `operation`.
pub fn read(operation: Operation, status: u16, body: &[u8]) -> Reading {
    match status {
        200..=299 => match serde_json::from_slice::<Answer>(body) {
            Ok(answer) => {
                let mut found = answer.into_transactions();
                match operation {
                    Operation::Lookup { kind } => match found.iter().rposition(|t| t.kind.as_deref() == Some(kind)) {
                        Some(at) => meaning(Operation::looked_up(kind), found.swap_remove(at)),
                        None => Reading::NotFound,
                    },
                    _ => found.pop().map_or(Reading::Unknown, |t| meaning(operation, t)),
                }
            }
            Err(_) => Reading::Unknown,
        },
        401 | 403 => Reading::Refused { message: "The gateway refused the shop id or the secret key.".into() },
        404 if matches!(operation, Operation::Lookup { .. }) => Reading::NotFound,
        400 | 404 | 422 => {
            let message = serde_json::from_slice::<Refusal>(body)
                .map(|r| r.message().to_string())
                .unwrap_or_else(|_| format!("The gateway refused the request (HTTP {status})."));
            Reading::Refused { message }
        }
        429 => Reading::RetryLater,
        _ => Reading::Unknown,
    }
}

/// What a query of a Checkout token says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckoutReading {
    /// The customer has not finished on the processor's page (they may still try a card).
    Open,
    /// The customer finished: what the transaction the page made means.
    Finished(Reading),
    /// The token ran out before the customer finished: nothing was charged.
    Expired,
    /// The query itself was not answered as a Checkout: what the HTTP layer says.
    Unanswered(Reading),
}

/// Reads the answer to a Checkout token request: the token and where to send the customer.
pub fn read_checkout_token(status: u16, body: &[u8]) -> Result<(String, String), Reading> {
    if (200..300).contains(&status) {
        let answer = serde_json::from_slice::<CheckoutAnswer>(body).map_err(|_| Reading::Unknown)?;
        return match answer.checkout.redirect_url {
            Some(url) => Ok((answer.checkout.token, url)),
            None => Err(Reading::Unknown),
        };
    }
    Err(read(Operation::Charge, status, body))
}

/// Reads a stored card, as the gateway's vault answers it (flat, or inside `credit_card`).
pub fn read_card(body: &[u8]) -> Option<Card> {
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Stored {
        Wrapped { credit_card: Card },
        Flat(Card),
    }
    match serde_json::from_slice::<Stored>(body).ok()? {
        Stored::Wrapped { credit_card } | Stored::Flat(credit_card) => Some(credit_card),
    }
}

/// Reads the answer to a query of a Checkout token.
pub fn read_checkout(status: u16, body: &[u8]) -> CheckoutReading {
    if !(200..300).contains(&status) {
        return CheckoutReading::Unanswered(read(Operation::Charge, status, body));
    }
    let Ok(answer) = serde_json::from_slice::<CheckoutAnswer>(body) else {
        return CheckoutReading::Unanswered(Reading::Unknown);
    };
    let state = answer.checkout;
    let finished = state.finished == Some(true);
    match state.transaction() {
        Some(t) if finished || t.status == Status::Successful => {
            let operation = Operation::looked_up(t.kind.as_deref().unwrap_or("payment"));
            CheckoutReading::Finished(meaning(operation, t))
        }
        _ if state.expired == Some(true) => CheckoutReading::Expired,
        _ => CheckoutReading::Open,
    }
}

/// What a transaction of the gateway means for `operation`.
fn meaning(operation: Operation, t: Transaction) -> Reading {
    let message = t.message.clone().unwrap_or_default();
    let child = matches!(operation, Operation::Capture | Operation::Void);
    match t.status {
        Status::Successful => Reading::Succeeded { transaction: Box::new(t) },
        Status::Failed | Status::Expired if child => Reading::Refused { message },
        Status::Failed | Status::Expired if operation == Operation::Refund => {
            Reading::Declined { uid: t.uid, code: "refund_failed", message }
        }
        Status::Expired => Reading::Declined { uid: t.uid, code: "payment_expired", message },
        Status::Failed => match decline_code(&t) {
            "processing_error" => Reading::Error { uid: t.uid, message },
            code => Reading::Declined { uid: t.uid, code, message },
        },
        Status::Incomplete => match t.redirect_url {
            Some(url) if matches!(operation, Operation::Charge | Operation::Tokenization) => {
                Reading::NeedsCustomer { uid: t.uid, redirect_url: url }
            }
            _ => Reading::Pending { uid: t.uid },
        },
        Status::Pending => Reading::Pending { uid: t.uid },
        Status::Error => Reading::Error { uid: t.uid, message },
        Status::Other => Reading::Unknown,
    }
}

/// paydesk's word for a decline, from API v3's processing code where there is one, else the
/// issuer's ISO 8583 answer code: the spec's retry table treats `insufficient_funds` and
/// `card_declined` alike and a `processing_error` as worth another try within the hour.
fn decline_code(t: &Transaction) -> &'static str {
    let v3 = t.code.as_deref().unwrap_or("");
    let bank = t.processing().and_then(|p| p.bank_code).unwrap_or_default();
    match (v3, bank.as_str()) {
        ("F.0114", _) | (_, "51") => "insufficient_funds",
        (_, "54" | "33") => "expired_card",
        ("F.0117", _) | (_, "19" | "68" | "91" | "96") => "processing_error",
        _ => "card_declined",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOOKUP_PAYMENT: Operation = Operation::Lookup { kind: "payment" };

    fn body(status: &str, extra: &str) -> Vec<u8> {
        format!(r#"{{"transaction":{{"uid":"4107-310b0da80b","status":"{status}","type":"payment"{extra}}}}}"#)
            .into_bytes()
    }

    #[test]
    fn the_documented_successful_authorization_succeeds() {
        let fixture = include_str!("fixtures/authorization.json");
        let Reading::Succeeded { transaction } = read(Operation::Charge, 200, fixture.as_bytes()) else { panic!() };
        assert_eq!(transaction.uid, "4107-310b0da80b");
    }

    #[test]
    fn a_declined_payment_is_named_by_the_issuers_code() {
        // PHP SDK's WebhookTest: a failed payment, "Payment was declined".
        let declined =
            body("failed", r#","message":"Payment was declined","payment":{"bank_code":"05","status":"failed"}"#);
        assert_eq!(
            read(Operation::Charge, 200, &declined),
            Reading::Declined {
                uid: "4107-310b0da80b".into(),
                code: "card_declined",
                message: "Payment was declined".into()
            }
        );
        let funds = body("failed", r#","payment":{"bank_code":"51"}"#);
        assert!(matches!(read(Operation::Charge, 200, &funds), Reading::Declined { code: "insufficient_funds", .. }));
        let v3 = body("failed", r#","code":"F.0114""#);
        assert!(matches!(read(Operation::Charge, 200, &v3), Reading::Declined { code: "insufficient_funds", .. }));
        let unavailable = body("failed", r#","payment":{"bank_code":"91"}"#);
        assert!(matches!(read(Operation::Charge, 200, &unavailable), Reading::Error { .. }));
    }

    #[test]
    fn three_d_secure_waits_for_the_customer_and_then_for_the_notification() {
        // PHP SDK's testIncompletePayment: status incomplete, no message, a /process/ link.
        let incomplete =
            body("incomplete", r#","message":null,"redirect_url":"https://gateway.bepaid.by/process/4107-310b0da80b""#);
        assert_eq!(
            read(Operation::Charge, 200, &incomplete),
            Reading::NeedsCustomer {
                uid: "4107-310b0da80b".into(),
                redirect_url: "https://gateway.bepaid.by/process/4107-310b0da80b".into()
            }
        );
        assert!(matches!(read(Operation::Charge, 200, &body("pending", "")), Reading::Pending { .. }));
        assert!(matches!(read(Operation::Capture, 200, &incomplete), Reading::Pending { .. }));
    }

    #[test]
    fn a_failed_child_operation_is_a_refusal_and_a_failed_refund_is_refund_failed() {
        let failed = body("failed", r#","message":"Amount can't be greater than 100""#);
        assert!(matches!(read(Operation::Capture, 200, &failed), Reading::Refused { .. }));
        assert!(matches!(read(Operation::Void, 200, &failed), Reading::Refused { .. }));
        assert!(matches!(read(Operation::Refund, 200, &failed), Reading::Declined { code: "refund_failed", .. }));
    }

    #[test]
    fn what_cannot_be_read_is_unknown_never_a_failure() {
        for (status, answer) in
            [(500, &b""[..]), (502, b"<html>Bad gateway</html>"), (200, b"{"), (200, b"{}"), (504, b"")]
        {
            assert_eq!(read(Operation::Charge, status, answer), Reading::Unknown, "{status}");
        }
        assert_eq!(read(Operation::Charge, 200, &body("refunding", "")), Reading::Unknown);
        assert_eq!(read(Operation::Charge, 429, b""), Reading::RetryLater);
    }

    #[test]
    fn refusals_carry_the_gateways_message() {
        let blank = br#"{"message":"Reason can't be blank.","errors":{"reason":["can't be blank"]}}"#;
        assert_eq!(read(Operation::Refund, 422, blank), Reading::Refused { message: "Reason can't be blank.".into() });
        assert!(matches!(read(Operation::Charge, 401, b""), Reading::Refused { .. }));
    }

    #[test]
    fn a_lookup_finds_the_transaction_of_its_kind_or_nothing() {
        let both = br#"{"transactions":[{"uid":"1-a","status":"successful","type":"payment"},
                                         {"uid":"2-b","status":"failed","type":"refund"}]}"#;
        let Reading::Succeeded { transaction } = read(LOOKUP_PAYMENT, 200, both) else { panic!() };
        assert_eq!(transaction.uid, "1-a");
        assert_eq!(read(LOOKUP_PAYMENT, 200, br#"{"transactions":[]}"#), Reading::NotFound);
        assert_eq!(read(LOOKUP_PAYMENT, 404, br#"{"message":"Record not found"}"#), Reading::NotFound);
        assert_eq!(read(LOOKUP_PAYMENT, 503, b""), Reading::Unknown);
    }

    #[test]
    fn a_stored_card_reads_as_the_ruby_clients_fixture_shows_it() {
        // RB spec "credit card v2" (connectors.md §1.3), flat; the same inside `credit_card`.
        let flat = br#"{"holder":"John Doe","stamp":"b3e6","brand":"visa","last_4":"0000","first_1":"4",
                        "token":"7ba6c4f2e2c33af","exp_month":1,"exp_year":2020}"#;
        let card = read_card(flat).unwrap();
        assert_eq!(
            (card.token.as_deref(), card.last_4.as_deref(), card.exp_year),
            (Some("7ba6c4f2e2c33af"), Some("0000"), Some(2020))
        );
        let wrapped = br#"{"credit_card":{"token":"t2","brand":"master","last_4":"4444"}}"#;
        assert_eq!(read_card(wrapped).unwrap().token.as_deref(), Some("t2"));
    }

    #[test]
    fn a_checkout_is_open_until_the_customer_finishes_and_expires_unpaid() {
        let fixture = include_str!("fixtures/checkout_query.json").as_bytes();
        let CheckoutReading::Finished(Reading::Succeeded { transaction }) = read_checkout(200, fixture) else {
            panic!()
        };
        assert_eq!(transaction.uid, "1891-5fcb2bda3b");
        let open = br#"{"checkout":{"token":"t1","finished":false,"redirect_url":"https://checkout.bepaid.by/checkout?token=t1"}}"#;
        assert_eq!(read_checkout(200, open), CheckoutReading::Open);
        let retrying = br#"{"checkout":{"token":"t1","finished":false,"transaction_type":"payment",
                            "gateway_response":{"payment":{"uid":"1-a","status":"failed","bank_code":"05"}}}}"#;
        assert_eq!(read_checkout(200, retrying), CheckoutReading::Open, "a declined card may be followed by another");
        let expired = br#"{"checkout":{"token":"t1","finished":false,"expired":true,"status":"error","message":"Token is expired."}}"#;
        assert_eq!(read_checkout(200, expired), CheckoutReading::Expired);
        assert_eq!(read_checkout(502, b""), CheckoutReading::Unanswered(Reading::Unknown));
        let made = br#"{"checkout":{"token":"t1","redirect_url":"https://checkout.bepaid.by/checkout?token=t1"}}"#;
        assert_eq!(
            read_checkout_token(200, made),
            Ok(("t1".into(), "https://checkout.bepaid.by/checkout?token=t1".into()))
        );
        assert_eq!(read_checkout_token(200, br#"{"checkout":{"token":"t1"}}"#), Err(Reading::Unknown));
    }
}
