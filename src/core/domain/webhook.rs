//! Webhook rules: which events an endpoint takes, when a failed delivery is tried again, which
//! addresses a delivery may reach, and the Standard Webhooks signature.

use std::net::IpAddr;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use chrono::{DateTime, TimeDelta, Utc};
use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::Errors;
use super::event::EventType;
use super::input::{Reader, msg};
use super::vocab::words;

words! {
    /// How a delivery is made: Standard Webhooks to an endpoint, or a bePaid notification.
    Scheme { StandardWebhooks = "standard_webhooks", Bepaid = "bepaid" }
}

words! {
    /// Where a delivery stands: `pending` until an attempt is answered with 2xx
    /// (`delivered`) or every attempt failed (`failed`).
    DeliveryStatus { Pending = "pending", Delivered = "delivered", Failed = "failed" }
}

/// The waits after each failed attempt (Standard Webhooks' schedule): the first attempt is
/// made at once, the tenth and last about 75 hours after it.
pub const RETRY_DELAYS: [TimeDelta; 9] = [
    TimeDelta::seconds(5),
    TimeDelta::minutes(5),
    TimeDelta::minutes(30),
    TimeDelta::hours(2),
    TimeDelta::hours(5),
    TimeDelta::hours(10),
    TimeDelta::hours(14),
    TimeDelta::hours(20),
    TimeDelta::hours(24),
];

/// An endpoint whose deliveries have all failed for this long is disabled.
pub const DISABLE_AFTER: TimeDelta = TimeDelta::days(5);

/// How long a rotated-out secret keeps signing beside the new one.
pub const ROTATION_OVERLAP: TimeDelta = TimeDelta::hours(24);

/// How long a receiver has to answer.
pub const TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// When to try again after `attempts` failed attempts; `None` when none is left.
pub fn next_attempt(attempts: i32, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let index = usize::try_from(attempts).ok()?.checked_sub(1)?;
    RETRY_DELAYS.get(index).map(|delay| now + *delay)
}

/// The event types an endpoint receives: `*` (all), a type, or `object.*`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnabledEvents(Vec<String>);

impl EnabledEvents {
    /// Every type.
    pub fn all() -> Self {
        EnabledEvents(vec!["*".into()])
    }

    /// Checks a list as sent; unknown entries are named.
    pub fn parse(entries: &[String], field: &str, errors: &mut Errors) -> Option<Self> {
        let known = |e: &str| {
            e == "*"
                || EventType::parse(e).is_some()
                || e.strip_suffix(".*").is_some_and(|object| EventType::ALL.iter().any(|t| t.object() == object))
        };
        let mut clean: Vec<String> = Vec::new();
        for entry in entries.iter().map(|e| e.trim()) {
            if !known(entry) {
                errors.add(field, format!("has an unknown event type: {entry}"));
            } else if !clean.iter().any(|c| c == entry) {
                clean.push(entry.to_string());
            }
        }
        if clean.is_empty() && !errors.has(field) {
            errors.add(field, msg::BLANK);
        }
        (!errors.has(field)).then_some(EnabledEvents(clean))
    }

    /// As stored: space-separated.
    pub fn to_db(&self) -> String {
        self.0.join(" ")
    }

    /// As stored.
    pub fn from_db(stored: &str) -> Self {
        EnabledEvents(stored.split_whitespace().map(str::to_string).collect())
    }

    /// The entries.
    pub fn entries(&self) -> &[String] {
        &self.0
    }

    /// Whether an event of `kind` goes to the endpoint.
    pub fn takes(&self, kind: EventType) -> bool {
        self.0.iter().any(|e| {
            e == "*" || e == kind.as_str() || e.strip_suffix(".*").is_some_and(|object| object == kind.object())
        })
    }
}

/// What `POST /webhook_endpoints` and its update send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointFields {
    pub url: Option<String>,
    pub description: Option<Option<String>>,
    pub enabled_events: Option<EnabledEvents>,
    pub enabled: Option<bool>,
}

/// The longest endpoint description.
const MAX_DESCRIPTION: usize = 1000;

impl EndpointFields {
    /// Reads a create (`url` and `enabled_events` required) or an update (all optional). A
    /// URL whose host is a loopback, private or other non-public address is refused unless
    /// `allow_private` (a host name is checked when each delivery resolves it).
    pub fn read(r: &Reader, create: bool, allow_private: bool) -> Result<Self, Errors> {
        let mut e = Errors::default();
        let url = super::product::read_url(r, "url", &mut e);
        if let Err(refused) = public_url(url.as_deref(), "url", allow_private) {
            refused.for_each(|field, message| e.add(field, message));
        }
        let description = r.sent("description").then(|| r.string("description", MAX_DESCRIPTION, &mut e));
        let enabled_events = match r.strings("enabled_events", &mut e) {
            Some(list) => EnabledEvents::parse(&list, "enabled_events", &mut e),
            None if create && !e.has("enabled_events") => Some(EnabledEvents::all()),
            None => None,
        };
        let enabled = r.boolean("enabled", &mut e);
        if create {
            e.require("url", url.is_none());
        }
        e.into_result(|| EndpointFields { url, description, enabled_events, enabled })
    }
}

/// Refuses a URL deliveries go to (a webhook endpoint, a notification URL) whose host is an IP
/// address outside the public ranges, unless `allow_private`: a problem of `field`.
pub fn public_url(url: Option<&str>, field: &str, allow_private: bool) -> Result<(), Errors> {
    match url.and_then(private_host) {
        Some(host) if !allow_private => Err(Errors::one(field, format!("{host} is not a public address"))),
        _ => Ok(()),
    }
}

/// The host of a URL when it is an IP address outside the public ranges; a host name is
/// checked as each delivery resolves it (it may change), not here.
fn private_host(url: &str) -> Option<String> {
    match url::Url::parse(url).ok()?.host()? {
        url::Host::Ipv4(ip) => (!is_public(IpAddr::V4(ip))).then(|| ip.to_string()),
        url::Host::Ipv6(ip) => (!is_public(IpAddr::V6(ip))).then(|| ip.to_string()),
        url::Host::Domain(_) => None,
    }
}

/// Whether a delivery may connect to `ip`: not loopback, private, link-local, shared,
/// documentation, multicast or unspecified (IPv4-mapped IPv6 checked as IPv4).
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, c, _] = v4.octets();
            !(v4.is_private()
                || v4.is_loopback()
                || v4.is_link_local()
                || v4.is_broadcast()
                || v4.is_documentation()
                || v4.is_unspecified()
                || v4.is_multicast()
                || a == 0
                || (a == 100 && (64..128).contains(&b))
                || (a == 192 && b == 0 && c == 0)
                || (a == 198 && (b == 18 || b == 19))
                || a >= 240)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            let seg = v6.segments();
            let embedded =
                |hi: u16, lo: u16| IpAddr::V4(std::net::Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo)));
            // An IPv4 address carried inside: NAT64 (64:ff9b::/96), 6to4 (2002::/16) and the
            // old IPv4-compatible form (::a.b.c.d) reach it, so it is judged as that address.
            if seg[..6] == [0x64, 0xff9b, 0, 0, 0, 0] || (seg[..6] == [0; 6] && seg[6] != 0) {
                return is_public(embedded(seg[6], seg[7]));
            }
            if seg[0] == 0x2002 {
                return is_public(embedded(seg[1], seg[2]));
            }
            let first = seg[0];
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
                || first == 0x2001 && seg[1] == 0x0db8
                // Local-use NAT64 (64:ff9b:1::/48) translates into private networks.
                || first == 0x64 && seg[1] == 0xff9b && seg[2] == 1)
        }
    }
}

/// A new signing secret: `whsec_` and base64 of 32 random bytes.
pub fn new_secret(random: [u8; 32]) -> String {
    format!("whsec_{}", STANDARD.encode(random))
}

/// The Standard Webhooks signature of a delivery: `v1,` and base64 of HMAC-SHA256 over
/// `id.timestamp.body`, keyed with the secret's bytes. `None` for a malformed secret.
pub fn sign(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> Option<String> {
    let key = STANDARD.decode(secret.strip_prefix("whsec_").unwrap_or(secret)).ok()?;
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).ok()?;
    mac.update(format!("{id}.{timestamp}.").as_bytes());
    mac.update(body);
    Some(format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes())))
}

/// The body of a bePaid notification about `object` (the API's object at the event): a
/// payment wrapped as bePaid wraps a transaction, `{"transaction": {...}}`, or the
/// subscription itself; marked with the event as bePaid marks it (`created.subscription`).
///
/// The transaction is the payment object with bePaid's names added: `uid` (the id), `type`
/// (`payment`, `authorization`, or `capture`/`void`/`refund` for those events), `status` in
/// bePaid's words (`successful`, `failed`, `incomplete`; paydesk's own is `payment_status`),
/// `message` and `credit_card`. A capture, void or refund is its own transaction, as at
/// bePaid: `child` gives its `uid` and `amount`, and the payment's id is its `parent_uid`.
pub fn bepaid_body(
    kind: EventType,
    object: &serde_json::Value,
    child: Option<&serde_json::Value>,
) -> serde_json::Value {
    use serde_json::{Value, json};
    let event = Value::String(format!("{}.{}", kind.action(), kind.object()));
    if kind.object() == "dispute" {
        return json!({ "transaction": chargeback(object), "event": event });
    }
    if kind.object() != "payment" {
        let mut body = object.clone();
        if let Value::Object(map) = &mut body {
            map.insert("event".into(), event);
        }
        return body;
    }
    let mut tx = object.clone();
    let ours = object["status"].as_str().unwrap_or_default().to_string();
    let status = match ours.as_str() {
        "failed" | "error" => "failed",
        "processing" => "incomplete",
        _ => "successful",
    };
    let kind_word = match kind {
        EventType::PaymentCaptured => "capture",
        EventType::PaymentVoided => "void",
        EventType::PaymentRefunded => "refund",
        _ => object["transaction_type"].as_str().unwrap_or("payment"),
    };
    let message = object["failure_message"].as_str().unwrap_or("Successfully processed").to_string();
    let card = &object["card"];
    if let Value::Object(map) = &mut tx {
        map.insert("uid".into(), object["id"].clone());
        map.insert("type".into(), kind_word.into());
        map.insert("payment_status".into(), ours.into());
        map.insert("status".into(), status.into());
        map.insert("message".into(), message.into());
        if let Some(child) = child.filter(|_| matches!(kind_word, "capture" | "void" | "refund")) {
            map.insert("uid".into(), child["uid"].clone());
            map.insert("parent_uid".into(), object["id"].clone());
            map.insert("amount".into(), child["amount"].clone());
        }
        map.insert(
            "credit_card".into(),
            json!({
                "holder": card["holder"], "brand": card["brand"], "last_4": card["last_4"],
                "exp_month": card["exp_month"], "exp_year": card["exp_year"],
            }),
        );
    }
    json!({ "transaction": tx, "event": event })
}

/// A dispute as bePaid notifies a chargeback: a transaction of `type: chargeback` whose
/// `parent_uid` is the payment, `status` `successful` once money was taken back (else
/// `incomplete`), with the dispute's own fields beside bePaid's.
fn chargeback(dispute: &serde_json::Value) -> serde_json::Value {
    let mut tx = dispute.clone();
    let taken = dispute["withdrawn_amount"].as_i64().unwrap_or(0) > 0;
    if let serde_json::Value::Object(map) = &mut tx {
        map.insert("uid".into(), dispute["id"].clone());
        map.insert("type".into(), "chargeback".into());
        map.insert("parent_uid".into(), dispute["payment_id"].clone());
        map.insert("dispute_status".into(), dispute["status"].clone());
        map.insert("status".into(), if taken { "successful" } else { "incomplete" }.into());
        map.insert("message".into(), dispute["reason"].clone());
    }
    tx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dispute_is_notified_as_bepaid_notifies_a_chargeback() {
        let dispute = serde_json::json!({"id": "dsp_1", "payment_id": "pay_1", "status": "needs_response",
                                         "reason": "fraudulent", "amount": 990, "withdrawn_amount": 2490});
        let body = bepaid_body(EventType::DisputeCreated, &dispute, None);
        assert_eq!(body["event"], "created.dispute");
        let tx = &body["transaction"];
        assert_eq!(
            (tx["type"].as_str(), tx["uid"].as_str(), tx["parent_uid"].as_str()),
            (Some("chargeback"), Some("dsp_1"), Some("pay_1"))
        );
        assert_eq!(
            (tx["status"].as_str(), tx["dispute_status"].as_str()),
            (Some("successful"), Some("needs_response"))
        );
    }

    #[test]
    fn the_signature_matches_the_reference_example() {
        // The example of the Standard Webhooks reference libraries.
        let signed = sign(
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1614265330,
            br#"{"test": 2432232314}"#,
        );
        assert_eq!(signed.as_deref(), Some("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="));
        assert_eq!(sign("whsec_%%%", "m", 1, b""), None);
        assert!(new_secret([1; 32]).starts_with("whsec_AQEB"));
    }

    #[test]
    fn retries_follow_the_schedule_for_over_three_days() {
        let now: DateTime<Utc> = "2026-11-23T10:00:00Z".parse().unwrap();
        assert_eq!(next_attempt(1, now), Some(now + TimeDelta::seconds(5)));
        assert_eq!(next_attempt(9, now), Some(now + TimeDelta::hours(24)));
        assert_eq!(next_attempt(10, now), None);
        assert_eq!(next_attempt(0, now), None);
        let total: TimeDelta = RETRY_DELAYS.iter().sum();
        assert!(total > TimeDelta::days(3), "{total}");
    }

    #[test]
    fn endpoints_take_the_types_they_name() {
        let mut e = Errors::default();
        let list = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let events =
            EnabledEvents::parse(&list(&["payment.*", "refund.failed", "refund.failed"]), "enabled_events", &mut e)
                .unwrap();
        assert_eq!(events.to_db(), "payment.* refund.failed");
        assert!(events.takes(EventType::PaymentVoided) && events.takes(EventType::RefundFailed));
        assert!(!events.takes(EventType::RefundSucceeded) && !events.takes(EventType::ProductSoldOut));
        assert!(EnabledEvents::from_db("*").takes(EventType::ProductSoldOut));
        assert!(EnabledEvents::parse(&list(&["payment.paid"]), "enabled_events", &mut e).is_none());
        assert_eq!(e.get("enabled_events").unwrap(), ["has an unknown event type: payment.paid".to_string()]);
        let mut e = Errors::default();
        assert!(EnabledEvents::parse(&[], "enabled_events", &mut e).is_none() && e.has("enabled_events"));
    }

    #[test]
    fn only_public_addresses_are_reached() {
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fc00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "224.0.0.1",
            "255.255.255.255",
            "64:ff9b::a00:5",
            "64:ff9b:1::1",
            "2002:7f00:1::1",
            "::127.0.0.1",
        ] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
        for url in ["http://[::1]/x", "http://0x7f.1/x", "http://[64:ff9b::a00:5]/x"] {
            assert!(private_host(url).is_some(), "{url}");
        }
        assert_eq!(private_host("https://example.com/x"), None, "a name is checked when it is resolved");
        for public in ["93.184.216.34", "8.8.8.8", "2606:4700::1111", "64:ff9b::808:808", "2002:808:808::1"] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
    }

    #[test]
    fn a_refund_is_notified_as_its_own_transaction_of_its_own_amount() {
        use serde_json::json;
        let payment = json!({"id": "pay_1", "status": "partially_refunded", "transaction_type": "payment", "amount": 1000,
                             "refunded_amount": 300, "card": {}});
        let child = json!({"uid": "rfd_1", "amount": 300});
        let tx = &bepaid_body(EventType::PaymentRefunded, &payment, Some(&child))["transaction"];
        assert_eq!((tx["uid"].clone(), tx["parent_uid"].clone()), (json!("rfd_1"), json!("pay_1")));
        assert_eq!(
            (tx["type"].clone(), tx["amount"].clone(), tx["status"].clone()),
            (json!("refund"), json!(300), json!("successful"))
        );
        // An event recorded before children were kept is notified as it was.
        let old = &bepaid_body(EventType::PaymentRefunded, &payment, None)["transaction"];
        assert_eq!((old["uid"].clone(), old["amount"].clone()), (json!("pay_1"), json!(1000)));
    }

    #[test]
    fn bepaid_bodies_wrap_payments_as_transactions_and_mark_the_event() {
        use serde_json::json;
        let payment = json!({"id": "pay_1", "status": "succeeded", "transaction_type": "payment", "amount": 990,
                             "card": {"brand": "visa", "last_4": "0000", "exp_month": 12, "exp_year": 2031, "holder": "Ann"}});
        let body = bepaid_body(EventType::PaymentSucceeded, &payment, None);
        let tx = &body["transaction"];
        assert_eq!(
            (tx["uid"].clone(), tx["type"].clone(), tx["status"].clone()),
            (json!("pay_1"), json!("payment"), json!("successful"))
        );
        assert_eq!((tx["payment_status"].clone(), tx["amount"].clone()), (json!("succeeded"), json!(990)));
        assert_eq!(tx["credit_card"]["last_4"], "0000");
        assert_eq!(body["event"], "succeeded.payment");
        let failed = json!({"id": "pay_2", "status": "error", "failure_message": "try later", "card": {}});
        let tx = &bepaid_body(EventType::PaymentFailed, &failed, None)["transaction"];
        assert_eq!((tx["status"].clone(), tx["message"].clone()), (json!("failed"), json!("try later")));
        let sub = json!({"id": "sbs_1", "state": "trial"});
        assert_eq!(
            bepaid_body(EventType::SubscriptionCreated, &sub, None),
            json!({"id": "sbs_1", "state": "trial", "event": "created.subscription"})
        );
    }
}
