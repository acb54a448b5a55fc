//! Requests paydesk makes to the outside: webhook deliveries and notifications, and calls to
//! a shop's payment processor. One request over HTTP/1.1 (TLS for https), never following a
//! redirect, answered within the timeout, and only to public addresses unless the operator
//! allows private ones: a host name is checked after it is resolved (so DNS cannot point a
//! request inside), an IP literal before.

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{HeaderName, HeaderValue, Method, Request, header};
use http_body_util::{BodyExt, Full, Limited};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::connect::dns::Name;
use hyper_util::rt::TokioExecutor;

use crate::domain::webhook::is_public;

/// How much of an answer's body is kept for the delivery log.
pub const HEAD_BYTES: usize = 512;

/// The HTTP client of deliveries.
#[derive(Clone)]
pub struct Outbound {
    client: Client<HttpsConnector<HttpConnector<Resolver>>, Full<Bytes>>,
    allow_private: bool,
}

/// How a POST was answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub status: u16,
    /// The first bytes of the body, as text.
    pub head: String,
}

/// A POST that got no answer (refused address, connection failure, timeout).
#[derive(Debug, Clone, thiserror::Error)]
#[error("{0}")]
pub struct Unanswered(pub String);

/// A whole answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub status: u16,
    pub body: Bytes,
}

/// A request that got no answer, and whether it may have been acted on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct NoReply {
    /// `false` when the request never left (a refused address, no connection): sending it
    /// again is safe. `true` when it may have arrived (a timeout, a connection dropped after
    /// writing): its outcome is unknown.
    pub maybe_sent: bool,
    pub reason: String,
}

/// The most of an answer's body [`Outbound::call`] reads.
const BODY_LIMIT: usize = 1024 * 1024;

impl Outbound {
    /// A client; `allow_private` lets it reach private and loopback addresses.
    pub fn new(allow_private: bool) -> Self {
        let mut http = HttpConnector::new_with_resolver(Resolver { allow_private });
        http.enforce_http(false);
        http.set_connect_timeout(Some(Duration::from_secs(5)));
        let https = hyper_rustls::HttpsConnectorBuilder::new()
            .with_webpki_roots()
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
        let client = Client::builder(TokioExecutor::new()).pool_idle_timeout(Duration::from_secs(30)).build(https);
        Outbound { client, allow_private }
    }

    /// POSTs `body` as JSON to `url` with `headers`, within `timeout`; answers the status and
    /// the head of the body, and how long it took.
    pub async fn post(
        &self,
        url: &str,
        headers: &[(HeaderName, String)],
        body: Vec<u8>,
        timeout: Duration,
    ) -> (Result<Answer, Unanswered>, Duration) {
        let started = Instant::now();
        // Only the head is kept; a receiver that sends more than 64 KiB is cut off there.
        let answer = match self.send(Method::POST, url, headers, Some(body), 64 * 1024, timeout).await {
            Ok((status, body)) => {
                let body = body.unwrap_or_default();
                Ok(Answer { status, head: String::from_utf8_lossy(&body[..body.len().min(HEAD_BYTES)]).into_owned() })
            }
            Err(e) => Err(Unanswered(e.reason)),
        };
        (answer, started.elapsed())
    }

    /// Sends `method` to `url` with `headers` and a `body` (JSON unless `headers` name
    /// another content type), within `timeout`; answers
    /// the status and the whole body (a body over 1 MiB, or one that breaks off, is no answer).
    pub async fn call(
        &self,
        method: Method,
        url: &str,
        headers: &[(HeaderName, String)],
        body: Option<Vec<u8>>,
        timeout: Duration,
    ) -> Result<Reply, NoReply> {
        match self.send(method, url, headers, body, BODY_LIMIT, timeout).await? {
            (status, Ok(body)) => Ok(Reply { status, body }),
            (_, Err(e)) => Err(NoReply { maybe_sent: true, reason: format!("the answer broke off: {e}") }),
        }
    }

    /// One request within `timeout`: the status, and the body up to `limit` bytes (or why it
    /// could not be read whole).
    async fn send(
        &self,
        method: Method,
        url: &str,
        headers: &[(HeaderName, String)],
        body: Option<Vec<u8>>,
        limit: usize,
        timeout: Duration,
    ) -> Result<(u16, Result<Bytes, String>), NoReply> {
        let exchange = self.exchange(method, url, headers, body, limit);
        match tokio::time::timeout(timeout, exchange).await {
            Ok(answered) => answered,
            Err(_) => Err(NoReply { maybe_sent: true, reason: format!("no answer within {} s", timeout.as_secs()) }),
        }
    }

    async fn exchange(
        &self,
        method: Method,
        url: &str,
        headers: &[(HeaderName, String)],
        body: Option<Vec<u8>>,
        limit: usize,
    ) -> Result<(u16, Result<Bytes, String>), NoReply> {
        let unsent = |reason: String| NoReply { maybe_sent: false, reason };
        let parsed = url::Url::parse(url).map_err(|e| unsent(format!("not a URL: {e}")))?;
        let literal = match parsed.host() {
            Some(url::Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
            Some(url::Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
            _ => None,
        };
        if let Some(ip) = literal
            && !self.allow_private
            && !is_public(ip)
        {
            return Err(unsent(format!("{ip} is not a public address")));
        }
        let mut request = Request::builder()
            .method(method)
            .uri(parsed.as_str())
            .header(header::ACCEPT, "application/json")
            .header(header::USER_AGENT, concat!("paydesk/", env!("CARGO_PKG_VERSION")));
        if body.is_some() && !headers.iter().any(|(name, _)| name == header::CONTENT_TYPE) {
            request = request.header(header::CONTENT_TYPE, "application/json");
        }
        for (name, value) in headers {
            let value = HeaderValue::from_str(value).map_err(|_| unsent(format!("bad {name} header")))?;
            request = request.header(name, value);
        }
        let body = Full::new(Bytes::from(body.unwrap_or_default()));
        let request = request.body(body).map_err(|e| unsent(e.to_string()))?;
        let response = self
            .client
            .request(request)
            .await
            .map_err(|e| NoReply { maybe_sent: !e.is_connect(), reason: describe(&e) })?;
        let status = response.status().as_u16();
        let body = Limited::new(response.into_body(), limit).collect().await;
        Ok((status, body.map(|collected| collected.to_bytes()).map_err(|e| e.to_string())))
    }
}

/// The cause of a client error, in one line (hyper's own text says only "client error").
fn describe(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        text = format!("{text}: {cause}");
        source = cause.source();
    }
    text
}

/// Resolves host names, keeping only the addresses a delivery may reach.
#[derive(Clone)]
struct Resolver {
    allow_private: bool,
}

impl tower_service::Service<Name> for Resolver {
    type Response = std::vec::IntoIter<SocketAddr>;
    type Error = std::io::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Self::Error>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: Name) -> Self::Future {
        let allow_private = self.allow_private;
        Box::pin(async move {
            let found: Vec<SocketAddr> = tokio::net::lookup_host((name.as_str(), 0)).await?.collect();
            let allowed: Vec<SocketAddr> = found.into_iter().filter(|a| allow_private || is_public(a.ip())).collect();
            if allowed.is_empty() {
                return Err(std::io::Error::other(format!("{} resolves to no public address", name.as_str())));
            }
            Ok(allowed.into_iter())
        })
    }
}
