//! The calls paydesk makes to Stripe for one account: every POST under an `Idempotency-Key`
//! derived from paydesk's own record (Stripe answers a repeated key with its first answer for
//! at least 24 hours), lookups of what paydesk's reference names, and a harmless call that
//! checks the key. Every answer is read by [`status::read`]; a request that may have arrived
//! but got no answer is [`Reading::Unknown`], one that never left is [`Reading::Unreached`].

use std::time::Duration;

use http::{HeaderName, Method, header};

use super::status::{self, Operation, Reading};
use super::wire::{
    CheckoutSession, Customer, Form, List, PaymentIntent, PaymentMethod, REFERENCE_KEY, Refund, reference_of,
};
use crate::external::acquirer::Check;
use crate::external::outbound::{NoReply, Outbound, Reply};

/// The API version paydesk's requests and readings are written for.
pub const API_VERSION: &str = "2024-06-20";

/// How many of the newest PaymentIntents a lookup reads before it searches.
const RECENT: usize = 100;

/// A Stripe account in one mode.
#[derive(Clone)]
pub struct Account {
    /// Stripe's API base URL (`https://api.stripe.com`), without a trailing `/`.
    pub api_url: String,
    pub secret_key: String,
}

impl std::fmt::Debug for Account {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Account").field("api_url", &self.api_url).finish_non_exhaustive()
    }
}

/// One account's calls, made with `outbound`.
pub struct Api<'a> {
    pub outbound: &'a Outbound,
    pub account: &'a Account,
    pub timeout: Duration,
}

impl Api<'_> {
    /// POSTs `form` to `path` under `key`, read for `operation`.
    pub async fn post(&self, path: &str, form: &Form, key: &str, operation: Operation) -> Reading {
        read(operation, self.send(Method::POST, path, Some(form), Some(key)).await)
    }

    /// GETs `path`, read for `operation`.
    pub async fn get(&self, path: &str, operation: Operation) -> Reading {
        read(operation, self.send(Method::GET, path, None, None).await)
    }

    /// POSTs `form` to `path` under `key` and reads the object it answers; why not otherwise.
    pub async fn create<T: serde::de::DeserializeOwned>(
        &self,
        path: &str,
        form: &Form,
        key: &str,
    ) -> Result<T, Reading> {
        self.object(self.send(Method::POST, path, Some(form), Some(key)).await)
    }

    /// GETs the object at `path`; why not otherwise.
    pub async fn fetch<T: serde::de::DeserializeOwned>(&self, path: &str) -> Result<T, Reading> {
        self.object(self.send(Method::GET, path, None, None).await)
    }

    fn object<T: serde::de::DeserializeOwned>(&self, reply: Result<Reply, NoReply>) -> Result<T, Reading> {
        match reply {
            Ok(reply) if (200..300).contains(&reply.status) => {
                serde_json::from_slice(&reply.body).map_err(|_| Reading::Unknown)
            }
            // How the refusal reads for a card: declined, refused, or to be tried again.
            reply => Err(read(Operation::Setup, reply)),
        }
    }

    /// A Checkout Session with its PaymentIntent or SetupIntent and their card expanded.
    pub async fn session(&self, id: &str) -> Result<CheckoutSession, Reading> {
        let expand = "expand[]=payment_intent.payment_method&expand[]=setup_intent.payment_method";
        self.fetch(&format!("/v1/checkout/sessions/{}?{expand}", encode(id))).await
    }

    /// The PaymentIntent made under paydesk's `reference`: among the newest, else by Stripe's
    /// search. `Ok(None)` when neither finds it; an error when either cannot be asked (a
    /// server without search included).
    pub async fn find_intent(&self, reference: &str) -> Result<Option<PaymentIntent>, Reading> {
        let recent: List<PaymentIntent> = self.fetch(&format!("/v1/payment_intents?limit={RECENT}")).await?;
        if let Some(found) = recent.data.into_iter().find(|pi| reference_of(&pi.metadata) == Some(reference)) {
            return Ok(Some(found));
        }
        let query = format!("metadata['{REFERENCE_KEY}']:'{}'", reference.replace('\'', "\\'"));
        let path = format!("/v1/payment_intents/search?query={}", encode(&query));
        // A server without search (404) cannot say that nothing was made: that stays unknown.
        let found = self.fetch::<List<PaymentIntent>>(&path).await?;
        Ok(found.data.into_iter().find(|pi| reference_of(&pi.metadata) == Some(reference)))
    }

    /// The refund of the PaymentIntent `intent` made under paydesk's `reference`, if Stripe
    /// lists one.
    pub async fn find_refund(&self, intent: &str, reference: &str) -> Result<Option<Refund>, Reading> {
        let path = format!("/v1/refunds?payment_intent={}&limit=100", encode(intent));
        let listed: List<Refund> = self.fetch(&path).await?;
        Ok(listed.data.into_iter().find(|r| reference_of(&r.metadata) == Some(reference)))
    }

    /// A saved card.
    pub async fn payment_method(&self, id: &str) -> Option<PaymentMethod> {
        self.fetch(&format!("/v1/payment_methods/{}", encode(id))).await.ok()
    }

    /// A new Customer (who saved cards belong to).
    pub async fn customer(&self, form: &Form, key: &str) -> Result<Customer, Reading> {
        self.create("/v1/customers", form, key).await
    }

    /// Makes one harmless authenticated call (a list of one customer) and says whether Stripe
    /// takes the key.
    pub async fn check(&self) -> Check {
        match self.send(Method::GET, "/v1/customers?limit=1", None, None).await {
            Ok(reply) => match reply.status {
                200..=299 => Check::Works,
                401 | 403 => Check::Refused,
                status => Check::Answered(status),
            },
            Err(e) => Check::Unreachable(e.reason),
        }
    }

    async fn send(&self, method: Method, path: &str, form: Option<&Form>, key: Option<&str>) -> Result<Reply, NoReply> {
        let url = format!("{}{path}", self.account.api_url);
        let mut headers = vec![
            (header::AUTHORIZATION, format!("Bearer {}", self.account.secret_key)),
            (HeaderName::from_static("stripe-version"), API_VERSION.to_string()),
        ];
        if form.is_some() {
            headers.push((header::CONTENT_TYPE, "application/x-www-form-urlencoded".into()));
        }
        if let Some(key) = key {
            headers.push((HeaderName::from_static("idempotency-key"), key.to_string()));
        }
        let body = form.map(|f| f.encode().into_bytes());
        self.outbound.call(method, &url, &headers, body, self.timeout).await
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

/// `text` as one path segment or query value.
pub fn encode(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect::<String>().replace('+', "%20")
}
