//! The calls paydesk makes to a BeGateway gateway for one shop's account: each money
//! movement with its `RequestID` (the gateway answers a repeated one with the first answer,
//! for 24 hours), lookups by paydesk's own reference, and a harmless call that checks the
//! connection. Every answer is read by [`status::read`]; a request that may have arrived but
//! got no answer is [`Reading::Unknown`], one that never left is [`Reading::Unreached`].

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use http::{HeaderName, Method, header};
use serde::Serialize;

use super::status::{self, CheckoutReading, Operation, Reading};
use super::wire::{Card, Charge, Checkout, CheckoutRequest, Child, NewCard, Request};
use crate::external::acquirer::Check;
use crate::external::outbound::{NoReply, Outbound, Reply};

/// How long a connection check waits: a merchant is looking at the page.
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(10);

/// A shop's account at a gateway, in one mode (test or live).
#[derive(Clone)]
pub struct Account {
    /// The gateway's base URL (`https://gateway.bepaid.by`), without a trailing `/`.
    pub gateway_url: String,
    /// The hosted Checkout's base URL (`https://checkout.bepaid.by`), without a trailing `/`.
    pub checkout_url: String,
    pub shop_id: String,
    pub secret_key: String,
}

impl std::fmt::Debug for Account {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Account")
            .field("gateway_url", &self.gateway_url)
            .field("checkout_url", &self.checkout_url)
            .field("shop_id", &self.shop_id)
            .finish_non_exhaustive()
    }
}

/// A payment takes the money at once; an authorization holds it for a capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChargeKind {
    Payment,
    Authorization,
    /// Stores the card (3-D Secure included) without moving money: a free trial's card.
    Tokenization,
}

/// What is done to an earlier transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildKind {
    Capture,
    Void,
    Refund,
}

/// One account's calls, made with `outbound`.
pub struct Gateway<'a> {
    pub outbound: &'a Outbound,
    pub account: &'a Account,
    pub timeout: Duration,
}

impl Gateway<'_> {
    /// Charges (or authorizes) a card; `request_id` names this operation for good.
    pub async fn charge(&self, kind: ChargeKind, charge: &Charge<'_>, request_id: &str) -> Reading {
        let path = match kind {
            ChargeKind::Payment => "/transactions/payments",
            ChargeKind::Authorization => "/transactions/authorizations",
            ChargeKind::Tokenization => "/transactions/tokenizations",
        };
        let operation = if kind == ChargeKind::Tokenization { Operation::Tokenization } else { Operation::Charge };
        self.post(path, &Request { request: charge }, request_id, operation).await
    }

    /// Captures, voids or refunds an earlier transaction.
    pub async fn child(&self, kind: ChildKind, child: &Child<'_>, request_id: &str) -> Reading {
        let (path, operation) = match kind {
            ChildKind::Capture => ("/transactions/captures", Operation::Capture),
            ChildKind::Void => ("/transactions/voids", Operation::Void),
            ChildKind::Refund => ("/transactions/refunds", Operation::Refund),
        };
        self.post(path, &Request { request: child }, request_id, operation).await
    }

    /// Stores a card typed on paydesk's page in the gateway's vault (no money moves): its
    /// token, or why not ([`Reading::Refused`] for details the gateway does not take).
    pub async fn store_card(&self, card: &NewCard<'_>) -> Result<Card, Reading> {
        let url = format!("{}/credit_cards", self.account.gateway_url);
        let body = serde_json::to_vec(&Request { request: card }).expect("requests serialize");
        let reply = self.outbound.call(Method::POST, &url, &self.headers(None), Some(body), self.timeout).await;
        match reply {
            Ok(reply) if (200..300).contains(&reply.status) => {
                status::read_card(&reply.body).filter(|c| c.token.is_some()).ok_or(Reading::Unknown)
            }
            reply => Err(read(Operation::Tokenization, reply)),
        }
    }

    /// The latest transaction of type `kind` made under paydesk's reference `tracking_id`.
    pub async fn lookup(&self, tracking_id: &str, kind: &'static str) -> Reading {
        let url = format!("{}/v2/transactions/tracking_id/{}", self.account.gateway_url, encode(tracking_id));
        let reply = self.outbound.call(Method::GET, &url, &self.headers(None), None, self.timeout).await;
        read(Operation::Lookup { kind }, reply)
    }

    /// The card a transaction was made with (a Checkout query names the transaction, not
    /// its card); `None` when the gateway does not answer it.
    pub async fn card_of(&self, uid: &str) -> Option<Card> {
        self.transaction(uid).await.ok()??.credit_card
    }

    /// The transaction `uid` as the gateway has it: `Ok(None)` when the gateway says it has
    /// none (404), `Err` when it could not be asked or its answer not read.
    pub async fn transaction(&self, uid: &str) -> Result<Option<super::wire::Transaction>, ()> {
        let url = format!("{}/transactions/{}", self.account.gateway_url, encode(uid));
        let reply =
            self.outbound.call(Method::GET, &url, &self.headers(None), None, self.timeout).await.map_err(|_| ())?;
        if reply.status == 404 {
            return Ok(None);
        }
        let answer = serde_json::from_slice::<super::wire::Answer>(&reply.body).map_err(|_| ())?;
        Ok(answer.into_transactions().pop())
    }

    /// Opens a Checkout token: the processor's own page takes the card. Answers the token and
    /// where to send the customer.
    pub async fn start_checkout(&self, checkout: Checkout<'_>) -> Result<(String, String), Reading> {
        let url = format!("{}/ctp/api/checkouts", self.account.checkout_url);
        let body = serde_json::to_vec(&CheckoutRequest { checkout }).expect("requests serialize");
        let reply = self.outbound.call(Method::POST, &url, &self.checkout_headers(), Some(body), self.timeout).await;
        match reply {
            Ok(reply) => status::read_checkout_token(reply.status, &reply.body),
            Err(e) => Err(read(Operation::Charge, Err(e))),
        }
    }

    /// What became of a Checkout token: still open, finished (and how), or expired.
    pub async fn checkout_state(&self, token: &str) -> CheckoutReading {
        let url = format!("{}/ctp/api/checkouts/{}", self.account.checkout_url, encode(token));
        match self.outbound.call(Method::GET, &url, &self.checkout_headers(), None, self.timeout).await {
            Ok(reply) => status::read_checkout(reply.status, &reply.body),
            Err(e) => CheckoutReading::Unanswered(read(Operation::Charge, Err(e))),
        }
    }

    /// Checkout's headers: the account's Basic auth and the API version the SDKs send.
    fn checkout_headers(&self) -> Vec<(HeaderName, String)> {
        let mut headers = self.headers(None);
        headers.push((HeaderName::from_static("x-api-version"), "2".into()));
        headers
    }

    /// Makes one harmless authenticated call (a lookup of a reference nothing carries) and
    /// says whether the gateway takes the account.
    pub async fn check(&self) -> Check {
        let url = format!("{}/v2/transactions/tracking_id/paydesk-connection-check", self.account.gateway_url);
        match self.outbound.call(Method::GET, &url, &self.headers(None), None, self.timeout).await {
            Ok(reply) => match reply.status {
                200 | 404 => Check::Works,
                401 | 403 => Check::Refused,
                status => Check::Answered(status),
            },
            Err(e) => Check::Unreachable(e.reason),
        }
    }

    async fn post(&self, path: &str, body: &impl Serialize, request_id: &str, operation: Operation) -> Reading {
        let url = format!("{}{path}", self.account.gateway_url);
        let body = serde_json::to_vec(body).expect("requests serialize");
        let reply =
            self.outbound.call(Method::POST, &url, &self.headers(Some(request_id)), Some(body), self.timeout).await;
        read(operation, reply)
    }

    fn headers(&self, request_id: Option<&str>) -> Vec<(HeaderName, String)> {
        let credentials = STANDARD.encode(format!("{}:{}", self.account.shop_id, self.account.secret_key));
        let mut headers = vec![(header::AUTHORIZATION, format!("Basic {credentials}"))];
        if let Some(id) = request_id {
            headers.push((HeaderName::from_static("requestid"), id.to_string()));
        }
        headers
    }
}

/// What a reply (or its absence) means for `operation`.
fn read(operation: Operation, reply: Result<Reply, NoReply>) -> Reading {
    match reply {
        Ok(reply) => status::read(operation, reply.status, &reply.body),
        Err(NoReply { maybe_sent: true, .. }) => Reading::Unknown,
        Err(NoReply { maybe_sent: false, reason }) => Reading::Unreached { message: reason },
    }
}

/// `reference` as one path segment.
fn encode(reference: &str) -> String {
    url::form_urlencoded::byte_serialize(reference.as_bytes()).collect::<String>().replace('+', "%20")
}
