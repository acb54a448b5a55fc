//! What an answer of Stripe means, as one table. The meaning depends on the operation that
//! asked (a `canceled` PaymentIntent is a void done, or a payment that did not happen) and on
//! the HTTP layer before the body: an answer paydesk cannot read is never taken for a refusal
//! or a success.
//!
//! | HTTP | object `status` | charge (PaymentIntent) | capture | cancel (void) | save a card (SetupIntent) | refund |
//! |---|---|---|---|---|---|---|
//! | 2xx | `succeeded` | Succeeded | Succeeded | Refused (captured) | Succeeded | Succeeded |
//! | 2xx | `requires_capture` | Succeeded (held) | Unknown | Unknown | | |
//! | 2xx | `requires_action` | NeedsCustomer | Refused | Unknown | NeedsCustomer | Pending |
//! | 2xx | `processing`, `pending` | Pending | Pending | Pending | Pending | Pending |
//! | 2xx | `requires_payment_method` | Declined (by `last_payment_error`; Unknown without one) | Refused | Refused | Declined | |
//! | 2xx | `canceled` | Declined `payment_expired` | Refused | Succeeded | Declined `payment_expired` | Declined `refund_failed` |
//! | 2xx | `failed` | | | | | Declined `refund_failed` |
//! | 2xx | any other word, `requires_confirmation`, a body paydesk cannot read | Unknown | Unknown | Unknown | Unknown | Unknown |
//! | 402, or any 4xx whose error is a card's (`card_error`, a card code) | | Declined by its code; `authentication_required`; `processing_error` is Error | Refused | Refused | as charge | Declined `refund_failed` |
//! | 400 (another error), 404 | | Refused | Refused | Refused | Refused | Refused |
//! | 401, 403 | | Refused (the key) | Refused | Refused | Refused | Refused |
//! | 409 (the same `Idempotency-Key` is in flight), 429 | | RetryLater | RetryLater | RetryLater | RetryLater | RetryLater |
//! | 5xx, any other | | Unknown | Unknown | Unknown | Unknown | Unknown |
//!
//! A transport failure after the request was written (a timeout, a dropped connection) is
//! Unknown too; one before it left is Unreached ([`super::api`]). Unknown is settled by
//! finding the object through paydesk's reference in its metadata, or by sending the very same
//! request under the same `Idempotency-Key` (Stripe answers it with its first answer for at
//! least 24 hours), never by charging anew.
//!
//! Decline codes become paydesk's: `insufficient_funds`, `expired_card`, `incorrect_cvc`,
//! `authentication_required`, `processing_error` (an Error: tried again within the hour by the
//! spec's retry table), and `card_declined` for every other refusal (Stripe asks not to tell
//! customers the fraud-related reasons).

use super::wire::{CheckoutSession, ErrorAnswer, PaymentIntent, Refund, SetupIntent, StripeError};

/// The operation an answer is read for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// Creating, confirming or looking up a PaymentIntent that pays (or holds) money.
    Charge,
    Capture,
    Cancel,
    /// Saving a card without a payment (a SetupIntent).
    Setup,
    Refund,
}

/// What an answer means for paydesk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reading {
    /// Done: paid, held for a capture, captured, voided, saved or refunded. `id` is Stripe's
    /// object.
    Succeeded { id: String },
    /// The issuer (or Stripe) said no; nothing moved.
    Declined { id: Option<String>, code: &'static str, message: String },
    /// Waiting for the customer (3-D Secure); `redirect_url` when Stripe gave a page for it.
    NeedsCustomer { id: String, redirect_url: Option<String> },
    /// Accepted and not finished: a webhook or a lookup tells the end.
    Pending { id: String },
    /// Processed, and it failed on the way; a later attempt may work.
    Error { message: String },
    /// The request itself was refused (its key, its content, the object's state): nothing
    /// moved, and sending it again changes nothing.
    Refused { message: String },
    /// Not processed now: send the same request (the same key) later.
    RetryLater,
    /// Sent, and what happened is not known: look it up.
    Unknown,
    /// The request never reached Stripe: nothing happened, and it may be sent again.
    Unreached { message: String },
    /// A lookup found nothing.
    NotFound,
}

/// Reads an HTTP answer of Stripe (`status` and `body`) to `operation`.
pub fn read(operation: Operation, status: u16, body: &[u8]) -> Reading {
    if (200..300).contains(&status) {
        return match operation {
            Operation::Charge | Operation::Capture | Operation::Cancel => {
                serde_json::from_slice::<PaymentIntent>(body).map_or(Reading::Unknown, |pi| intent(operation, &pi))
            }
            Operation::Setup => serde_json::from_slice::<SetupIntent>(body).map_or(Reading::Unknown, |si| setup(&si)),
            Operation::Refund => serde_json::from_slice::<Refund>(body).map_or(Reading::Unknown, |r| refund(&r)),
        };
    }
    let error = serde_json::from_slice::<ErrorAnswer>(body).map(|a| a.error).unwrap_or_default();
    match status {
        402 => card_error(operation, &error),
        400..=499 if is_card_error(&error) => card_error(operation, &error),
        401 | 403 => Reading::Refused { message: "Stripe refused the secret key.".into() },
        404 => Reading::NotFound,
        409 | 429 => Reading::RetryLater,
        400..=499 => Reading::Refused {
            message: error.message.unwrap_or_else(|| format!("Stripe refused the request (HTTP {status}).")),
        },
        _ => Reading::Unknown,
    }
}

/// Whether an error is about the card (Stripe says `card_error`; a double may only give the code).
fn is_card_error(error: &StripeError) -> bool {
    error.kind.as_deref() == Some("card_error")
        || matches!(
            error.code.as_deref(),
            Some("card_declined" | "expired_card" | "incorrect_cvc" | "authentication_required" | "processing_error")
        )
}

/// A refusal of the card: how a charge, a saved card or a refund ended.
fn card_error(operation: Operation, error: &StripeError) -> Reading {
    let message = error.message.clone().unwrap_or_else(|| "The card was declined.".into());
    let id = error
        .payment_intent
        .as_ref()
        .map(|pi| pi.id.clone())
        .or_else(|| error.setup_intent.as_ref().map(|si| si.id.clone()));
    match operation {
        Operation::Charge | Operation::Setup => match decline_code(error) {
            "processing_error" => Reading::Error { message },
            code => Reading::Declined { id, code, message },
        },
        Operation::Refund => Reading::Declined { id: None, code: "refund_failed", message },
        Operation::Capture | Operation::Cancel => Reading::Refused { message },
    }
}

/// paydesk's word for a Stripe decline.
pub fn decline_code(error: &StripeError) -> &'static str {
    match (error.code.as_deref(), error.decline_code.as_deref()) {
        (Some("authentication_required"), _) | (_, Some("authentication_required")) => "authentication_required",
        (Some("processing_error"), _) | (_, Some("processing_error" | "try_again_later" | "issuer_not_available")) => {
            "processing_error"
        }
        (_, Some("insufficient_funds")) => "insufficient_funds",
        (Some("expired_card"), _) | (_, Some("expired_card")) => "expired_card",
        (Some("incorrect_cvc"), _) | (_, Some("incorrect_cvc")) => "incorrect_cvc",
        _ => "card_declined",
    }
}

/// What a PaymentIntent means for `operation`.
pub fn intent(operation: Operation, pi: &PaymentIntent) -> Reading {
    let id = pi.id.clone();
    let refused = |what: &str| Reading::Refused { message: format!("The payment is {what} at Stripe.") };
    match (pi.status.as_str(), operation) {
        ("succeeded", Operation::Cancel) => refused("already captured"),
        ("succeeded", _) | ("requires_capture", Operation::Charge) => Reading::Succeeded { id },
        ("canceled", Operation::Cancel) => Reading::Succeeded { id },
        ("canceled", Operation::Capture) => refused("canceled"),
        ("canceled", _) => Reading::Declined {
            id: Some(id),
            code: "payment_expired",
            message: "The payment was canceled at Stripe before it went through.".into(),
        },
        ("processing", _) => Reading::Pending { id },
        ("requires_action", Operation::Charge) => {
            let redirect_url = pi.next_action.as_ref().and_then(|a| a.url()).map(str::to_string);
            Reading::NeedsCustomer { id, redirect_url }
        }
        ("requires_action", Operation::Capture) => refused("waiting for the customer"),
        // Never attempted (no error): not a decline.
        ("requires_payment_method", Operation::Charge) if pi.last_payment_error.is_none() => Reading::Unknown,
        ("requires_payment_method", Operation::Charge) => {
            let error = pi.last_payment_error.clone().unwrap_or_default();
            match card_error(Operation::Charge, &error) {
                Reading::Declined { code, message, .. } => Reading::Declined { id: Some(id), code, message },
                other => other,
            }
        }
        ("requires_payment_method", _) => refused("not paid"),
        _ => Reading::Unknown,
    }
}

/// What a SetupIntent means.
pub fn setup(si: &SetupIntent) -> Reading {
    let id = si.id.clone();
    match si.status.as_str() {
        "succeeded" => Reading::Succeeded { id },
        "requires_action" => {
            let redirect_url = si.next_action.as_ref().and_then(|a| a.url()).map(str::to_string);
            Reading::NeedsCustomer { id, redirect_url }
        }
        "processing" => Reading::Pending { id },
        "requires_payment_method" => {
            let error = si.last_setup_error.clone().unwrap_or_default();
            match card_error(Operation::Setup, &error) {
                Reading::Declined { code, message, .. } => Reading::Declined { id: Some(id), code, message },
                other => other,
            }
        }
        "canceled" => Reading::Declined {
            id: Some(id),
            code: "payment_expired",
            message: "Saving the card was canceled at Stripe.".into(),
        },
        _ => Reading::Unknown,
    }
}

/// What a Refund means.
pub fn refund(r: &Refund) -> Reading {
    let id = r.id.clone();
    match r.status.as_deref() {
        Some("succeeded") => Reading::Succeeded { id },
        Some("pending" | "requires_action") => Reading::Pending { id },
        Some("failed" | "canceled") => Reading::Declined {
            id: Some(id),
            code: "refund_failed",
            message: match r.failure_reason.as_deref() {
                Some(reason) => format!("Stripe could not refund: {}.", reason.replace('_', " ")),
                None => "Stripe could not refund this payment.".into(),
            },
        },
        _ => Reading::Unknown,
    }
}

/// What a Checkout Session says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionReading {
    /// The customer has not finished on Stripe's page (they may still try a card).
    Open,
    /// Finished: what its PaymentIntent (`mode=payment`) or SetupIntent (`mode=setup`) means.
    Finished(Reading),
    /// The session ran out before the customer finished: nothing was charged.
    Expired,
}

/// Reads a Checkout Session retrieved with its intent expanded.
pub fn session(s: &CheckoutSession) -> SessionReading {
    match s.status.as_deref() {
        Some("complete") => {
            let reading = match (&s.payment_intent, &s.setup_intent) {
                (Some(pi), _) => pi.object().map_or(Reading::Unknown, |pi| intent(Operation::Charge, pi)),
                (None, Some(si)) => si.object().map_or(Reading::Unknown, setup),
                (None, None) => Reading::Unknown,
            };
            SessionReading::Finished(reading)
        }
        Some("expired") => SessionReading::Expired,
        _ => SessionReading::Open,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pi(status: &str, extra: &str) -> Vec<u8> {
        format!(r#"{{"id":"pi_3MtwBwLkdIwHu7ix28a3tqPa","object":"payment_intent","amount":2000,"status":"{status}"{extra}}}"#)
            .into_bytes()
    }

    const PI: &str = "pi_3MtwBwLkdIwHu7ix28a3tqPa";

    #[test]
    fn the_documented_payment_intents_read_by_their_status() {
        // Stripe's API reference: "Confirm a PaymentIntent" answers `succeeded`; a manual
        // capture's confirmation answers `requires_capture`; "Capture" answers `succeeded`.
        let confirmed = include_str!("fixtures/payment_intent_succeeded.json");
        assert_eq!(read(Operation::Charge, 200, confirmed.as_bytes()), Reading::Succeeded { id: PI.into() });
        let held = include_str!("fixtures/payment_intent_requires_capture.json");
        assert_eq!(read(Operation::Charge, 200, held.as_bytes()), Reading::Succeeded { id: PI.into() });
        assert_eq!(read(Operation::Capture, 200, held.as_bytes()), Reading::Unknown);
        assert_eq!(read(Operation::Capture, 200, confirmed.as_bytes()), Reading::Succeeded { id: PI.into() });
        assert!(matches!(read(Operation::Cancel, 200, confirmed.as_bytes()), Reading::Refused { .. }));
        let canceled = pi("canceled", r#","cancellation_reason":"requested_by_customer""#);
        assert_eq!(read(Operation::Cancel, 200, &canceled), Reading::Succeeded { id: PI.into() });
        assert!(matches!(read(Operation::Capture, 200, &canceled), Reading::Refused { .. }));
        assert!(matches!(read(Operation::Charge, 200, &canceled), Reading::Declined { code: "payment_expired", .. }));
        assert_eq!(read(Operation::Charge, 200, &pi("processing", "")), Reading::Pending { id: PI.into() });
        assert_eq!(read(Operation::Charge, 200, &pi("requires_confirmation", "")), Reading::Unknown);
        assert_eq!(
            read(Operation::Charge, 200, &pi("requires_payment_method", "")),
            Reading::Unknown,
            "never attempted"
        );
        assert_eq!(read(Operation::Charge, 200, &pi("some_new_word", "")), Reading::Unknown);
    }

    #[test]
    fn three_d_secure_waits_for_the_customer_at_the_page_stripe_gives() {
        let redirect = include_str!("fixtures/payment_intent_requires_action.json");
        assert_eq!(
            read(Operation::Charge, 200, redirect.as_bytes()),
            Reading::NeedsCustomer {
                id: PI.into(),
                redirect_url: Some("https://hooks.stripe.com/3d_secure_2/hosted?merchant=acct_1Nv0FGQ9RKHgCVdK&payment_intent=pi_3MtwBwLkdIwHu7ix28a3tqPa&payment_intent_client_secret=pi_3MtwBwLkdIwHu7ix28a3tqPa_secret_YrKJUKribcBjcG8HVhfZluoGH&publishable_key=pk_test_51Nv0FGQ9RKHgCVdK&source=payatt_3MtwBwLkdIwHu7ix2lEGWNy1".into())
            }
        );
        // Without a return URL Stripe answers `use_stripe_sdk`: no page to send anyone to.
        let sdk = pi(
            "requires_action",
            r#","next_action":{"type":"use_stripe_sdk","use_stripe_sdk":{"type":"three_d_secure_redirect"}}"#,
        );
        assert_eq!(read(Operation::Charge, 200, &sdk), Reading::NeedsCustomer { id: PI.into(), redirect_url: None });
    }

    #[test]
    fn declines_are_named_by_their_code_and_kind() {
        // Stripe's "Card errors" page: a `card_error` with the issuer's `decline_code`.
        let funds = include_str!("fixtures/error_insufficient_funds.json");
        assert_eq!(
            read(Operation::Charge, 402, funds.as_bytes()),
            Reading::Declined {
                id: Some("pi_3NcRlfLkdIwHu7ix1x6n1CQm".into()),
                code: "insufficient_funds",
                message: "Your card has insufficient funds.".into()
            }
        );
        // An off-session renewal the bank wants the customer for: not a decline to retry.
        let auth = include_str!("fixtures/error_authentication_required.json");
        assert!(matches!(
            read(Operation::Charge, 402, auth.as_bytes()),
            Reading::Declined { code: "authentication_required", .. }
        ));
        let processing = br#"{"error":{"type":"card_error","code":"processing_error","message":"An error occurred while processing your card. Try again in a little bit."}}"#;
        assert!(matches!(read(Operation::Charge, 402, processing), Reading::Error { .. }));
        let expired = br#"{"error":{"type":"card_error","code":"expired_card","message":"Your card has expired."}}"#;
        assert!(matches!(read(Operation::Charge, 402, expired), Reading::Declined { code: "expired_card", .. }));
        let fraud = br#"{"error":{"type":"card_error","code":"card_declined","decline_code":"stolen_card","message":"Your card was declined."}}"#;
        assert!(matches!(read(Operation::Charge, 402, fraud), Reading::Declined { code: "card_declined", .. }));
        // localstripe's decline: a card code with the wrong type is still a card's.
        let local = br#"{"error":{"charge":"ch_1","code":"card_declined","message":"Your card was declined.","type":"invalid_request_error"}}"#;
        assert!(matches!(read(Operation::Charge, 402, local), Reading::Declined { code: "card_declined", .. }));
        assert!(matches!(read(Operation::Charge, 400, local), Reading::Declined { code: "card_declined", .. }));
        // A failed attempt looked up later carries the error in the intent.
        let failed = pi(
            "requires_payment_method",
            r#","last_payment_error":{"type":"card_error","code":"card_declined","decline_code":"insufficient_funds","message":"Your card has insufficient funds."}"#,
        );
        assert!(matches!(
            read(Operation::Charge, 200, &failed),
            Reading::Declined { code: "insufficient_funds", id: Some(_), .. }
        ));
        assert!(matches!(read(Operation::Capture, 402, funds.as_bytes()), Reading::Refused { .. }));
    }

    #[test]
    fn the_http_layer_decides_before_the_body() {
        let invalid = br#"{"error":{"type":"invalid_request_error","code":"payment_intent_unexpected_state","message":"This PaymentIntent could not be captured because it has a status of canceled."}}"#;
        assert_eq!(
            read(Operation::Capture, 400, invalid),
            Reading::Refused {
                message: "This PaymentIntent could not be captured because it has a status of canceled.".into()
            }
        );
        assert!(matches!(read(Operation::Charge, 401, b"{}"), Reading::Refused { .. }));
        assert_eq!(read(Operation::Charge, 404, b"{}"), Reading::NotFound);
        let in_flight = br#"{"error":{"type":"idempotency_error","message":"There is currently another in-progress request using this Stripe-Idempotency-Key"}}"#;
        assert_eq!(read(Operation::Charge, 409, in_flight), Reading::RetryLater);
        assert_eq!(read(Operation::Charge, 429, b"{}"), Reading::RetryLater);
        for status in [500, 502, 503] {
            assert_eq!(read(Operation::Charge, status, br#"{"error":{"type":"api_error"}}"#), Reading::Unknown);
        }
        assert_eq!(read(Operation::Charge, 200, b"<html>"), Reading::Unknown);
    }

    #[test]
    fn refunds_and_saved_cards_read_by_their_status() {
        let refunded = include_str!("fixtures/refund.json");
        assert_eq!(
            read(Operation::Refund, 200, refunded.as_bytes()),
            Reading::Succeeded { id: "re_1Nispe2eZvKYlo2Cd31jOCgZ".into() }
        );
        let pending = br#"{"id":"re_1","object":"refund","status":"pending"}"#;
        assert_eq!(read(Operation::Refund, 200, pending), Reading::Pending { id: "re_1".into() });
        let failed =
            br#"{"id":"re_1","object":"refund","status":"failed","failure_reason":"expired_or_canceled_card"}"#;
        assert!(matches!(read(Operation::Refund, 200, failed), Reading::Declined { code: "refund_failed", .. }));
        let saved = include_str!("fixtures/setup_intent_succeeded.json");
        assert_eq!(
            read(Operation::Setup, 200, saved.as_bytes()),
            Reading::Succeeded { id: "seti_1Mm8s8LkdIwHu7ix0OXBfTRG".into() }
        );
    }

    #[test]
    fn a_checkout_session_reads_by_its_status_and_intent() {
        let open: CheckoutSession = serde_json::from_str(include_str!("fixtures/checkout_session.json")).unwrap();
        assert_eq!(session(&open), SessionReading::Open);
        let mut complete = open.clone();
        complete.status = Some("complete".into());
        complete.payment_intent = serde_json::from_slice(&pi("succeeded", ""))
            .ok()
            .map(|pi| super::super::wire::Expandable::Object(Box::new(pi)));
        assert_eq!(session(&complete), SessionReading::Finished(Reading::Succeeded { id: PI.into() }));
        let mut expired = open;
        expired.status = Some("expired".into());
        assert_eq!(session(&expired), SessionReading::Expired);
    }
}
