//! Stripe's API on loopback, for what localstripe lacks, written from Stripe's documentation:
//! Checkout Sessions (`mode=payment` and `mode=setup`) with their card page, `Idempotency-Key`
//! replay (per endpoint: the first answer again; other parameters under the same key are an
//! `idempotency_error`), declines as `card_error`s with their codes (`authentication_required`
//! off-session, `processing_error`), 3-D Secure (`use_stripe_sdk`, or `redirect_to_url` when
//! confirmed with a `return_url`), Stripe's own checks (no capture after a cancel, no refund
//! beyond what is left), lookups (the newest PaymentIntents, and search by metadata), and
//! webhooks signed as Stripe signs them. Faults are queued by the test and taken by the next
//! POST: before anything is recorded (500, 429) or after it (a 502 with no body, an answer held
//! past the client's timeout, a dropped connection).
//!
//! Disputes and early fraud warnings are in [`disputes`]; the Checkout and 3-D Secure pages in
//! [`pages`].
//!
//! Cards by number: `4242424242424242` goes through; `4000000000009995` is declined for
//! insufficient funds, `4000000000000341` declined, `4000000000000119` a processing error;
//! `4000002760003184` always asks for 3-D Secure (off-session: `authentication_required`);
//! `4000000000000002` is declined when attached to a Customer.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use paydesk::external::acquirer::stripe::signature::sign;
use serde_json::{Value, json};

mod disputes;
mod pages;

pub use disputes::Dispute;
use pages::*;

/// The account's secret key, and its webhook signing secret.
pub const SECRET: &str = "sk_test_51PaydeskDoubleAccount";
pub const WEBHOOK_SECRET: &str = "whsec_paydesk_double_signing_secret";

pub use super::bepaid::Fault;

/// One PaymentIntent.
#[derive(Debug, Clone)]
pub struct Intent {
    pub id: String,
    pub amount: i64,
    pub currency: String,
    pub status: String,
    pub capture_method: String,
    pub customer: Option<String>,
    pub payment_method: Option<String>,
    pub off_session: bool,
    pub setup_future_usage: Option<String>,
    pub metadata: HashMap<String, String>,
    pub error: Option<Value>,
    pub next_action: Option<Value>,
    pub return_url: Option<String>,
    pub amount_received: i64,
    pub refunded: i64,
    pub created: u64,
}

/// One Refund.
#[derive(Debug, Clone)]
pub struct Refund {
    pub id: String,
    pub payment_intent: String,
    pub amount: i64,
    pub metadata: HashMap<String, String>,
    /// Why it failed after it was accepted (the card's account closed, say).
    pub failed: Option<String>,
}

/// One Checkout Session.
#[derive(Debug, Clone)]
pub struct Session {
    pub id: String,
    pub form: HashMap<String, String>,
    pub status: String,
    pub customer: Option<String>,
    pub payment_intent: Option<String>,
    pub setup_intent: Option<String>,
}

/// A SetupIntent: its PaymentMethod, its Customer, its metadata.
type Setup = (String, Option<String>, HashMap<String, String>);
/// The first answer to a key: the request's form, the status and body.
type Answered = (Vec<(String, String)>, u16, Value);

#[derive(Default)]
pub struct Inner {
    counter: u64,
    customers: Vec<String>,
    /// PaymentMethod → (card number, its Customer).
    methods: HashMap<String, (String, Option<String>)>,
    intents: Vec<Intent>,
    /// SetupIntent → (PaymentMethod, Customer, metadata).
    setups: HashMap<String, Setup>,
    refunds: Vec<Refund>,
    sessions: HashMap<String, Session>,
    /// (endpoint, key) → (the request's form, the first answer).
    keys: HashMap<(String, String), Answered>,
    /// Faults for the next POSTs whose path contains the text (any path for "").
    faults: VecDeque<(String, Fault)>,
    /// Lists and searches of PaymentIntents answer 404 (a server that has neither).
    no_lookups: bool,
    /// POSTs received, faults included, by path.
    posts: Vec<String>,
    disputes: Vec<Dispute>,
    /// Early fraud warnings, as JSON.
    warnings: Vec<Value>,
}

/// The running double.
#[derive(Clone)]
pub struct StripeDouble {
    pub url: String,
    inner: Arc<Mutex<Inner>>,
}

impl StripeDouble {
    /// Serves a new double on a free loopback port.
    pub async fn start() -> StripeDouble {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let double = StripeDouble { url, inner: Arc::default() };
        let app = Router::new()
            .route("/v1/{*path}", get(api).post(api))
            .route("/pay/{session}", get(card_page).post(card_paid))
            .route("/3ds/{intent}", get(bank_page).post(bank_done))
            .with_state(double.clone());
        tokio::spawn(async move { axum::serve(listener, app).await });
        double
    }

    /// Queues faults for the next POSTs to a path that contains `part`, in order.
    pub fn fail_next_on(&self, part: &str, faults: &[Fault]) {
        self.inner.lock().unwrap().faults.extend(faults.iter().map(|f| (part.to_string(), *f)));
    }

    /// From now on, PaymentIntents can be neither listed nor searched.
    pub fn without_lookups(&self) {
        self.inner.lock().unwrap().no_lookups = true;
    }

    /// Every PaymentIntent, oldest first.
    pub fn intents(&self) -> Vec<Intent> {
        self.inner.lock().unwrap().intents.clone()
    }

    /// The PaymentIntents that carry paydesk's `reference`.
    pub fn intents_of(&self, reference: &str) -> Vec<Intent> {
        self.intents()
            .into_iter()
            .filter(|i| i.metadata.get("paydesk_reference").map(String::as_str) == Some(reference))
            .collect()
    }

    /// Every Refund, oldest first.
    pub fn refunds(&self) -> Vec<Refund> {
        self.inner.lock().unwrap().refunds.clone()
    }

    /// The POSTs received to paths that contain `part`.
    pub fn posts_to(&self, part: &str) -> usize {
        self.inner.lock().unwrap().posts.iter().filter(|p| p.contains(part)).count()
    }

    /// A Checkout Session.
    pub fn session(&self, id: &str) -> Session {
        self.inner.lock().unwrap().sessions[id].clone()
    }

    /// The card number of a PaymentMethod, and its Customer.
    pub fn method(&self, id: &str) -> Option<(String, Option<String>)> {
        self.inner.lock().unwrap().methods.get(id).cloned()
    }

    /// A card attached to `customer` (made as the merchant's own integration would): its id.
    pub fn attach_card(&self, customer: &str, number: &str) -> String {
        let mut inner = self.inner.lock().unwrap();
        let id = next_id(&mut inner, "pm");
        inner.methods.insert(id.clone(), (number.to_string(), Some(customer.to_string())));
        id
    }

    /// The customer paying on the Checkout page of `session` with the card `number`: the
    /// page makes its PaymentIntent (or SetupIntent); a success completes the session, a
    /// decline leaves it open for another card. Answers where the page sends them next.
    pub fn pay_session(&self, session: &str, number: &str) -> Result<String, String> {
        let mut inner = self.inner.lock().unwrap();
        pay(&mut inner, &self.url, session, number)
    }

    /// The session running out unpaid.
    pub fn expire_session(&self, session: &str) {
        let mut inner = self.inner.lock().unwrap();
        let s = inner.sessions.get_mut(session).unwrap();
        if s.status == "open" {
            s.status = "expired".into();
        }
    }

    /// The customer finishing 3-D Secure for the PaymentIntent `id`.
    pub fn finish_3ds(&self, id: &str, succeeded: bool) {
        let mut inner = self.inner.lock().unwrap();
        finish(&mut inner, id, succeeded);
    }

    /// A refund made in Stripe's dashboard of the PaymentIntent `intent`: its id.
    pub fn dashboard_refund(&self, intent: &str, amount: i64) -> String {
        let mut inner = self.inner.lock().unwrap();
        let id = next_id(&mut inner, "re");
        let pi = inner.intents.iter_mut().find(|i| i.id == intent).unwrap();
        pi.refunded += amount;
        inner.refunds.push(Refund {
            id: id.clone(),
            payment_intent: intent.into(),
            amount,
            metadata: HashMap::new(),
            failed: None,
        });
        id
    }

    /// The refund `id` fails after it was accepted (`expired_or_canceled_card`): the refund
    /// as Stripe's `refund.updated` carries it.
    pub fn fail_refund(&self, id: &str) -> Value {
        let mut inner = self.inner.lock().unwrap();
        let r = inner.refunds.iter_mut().find(|r| r.id == id).unwrap();
        r.failed = Some("expired_or_canceled_card".into());
        let (intent, amount) = (r.payment_intent.clone(), r.amount);
        let failed = refund_json(r);
        inner.intents.iter_mut().find(|i| i.id == intent).unwrap().refunded -= amount;
        failed
    }

    /// A capture made in Stripe's dashboard.
    pub fn dashboard_capture(&self, intent: &str) {
        let mut inner = self.inner.lock().unwrap();
        let pi = inner.intents.iter_mut().find(|i| i.id == intent).unwrap();
        assert_eq!(pi.status, "requires_capture");
        (pi.status, pi.amount_received) = ("succeeded".into(), pi.amount);
    }

    /// The event `kind` about `object` as Stripe would send it now.
    pub fn event(&self, kind: &str, object: Value) -> Value {
        let id = next_id(&mut self.inner.lock().unwrap(), "evt");
        json!({"id": id, "object": "event", "api_version": "2024-06-20", "created": now(), "livemode": false,
               "type": kind, "data": {"object": object}})
    }

    /// The object `id` (a PaymentIntent, Checkout Session, Charge of an intent `ch_<pi>`) as JSON.
    pub fn object(&self, id: &str) -> Value {
        let inner = self.inner.lock().unwrap();
        match id.split('_').next() {
            Some("pi") => intent_json(&inner, inner.intents.iter().find(|i| i.id == id).unwrap(), false),
            Some("cs") => session_json(&inner, &inner.sessions[id], false),
            Some("ch") => {
                let pi = inner.intents.iter().find(|i| format!("ch_{}", i.id) == id).unwrap();
                json!({"id": id, "object": "charge", "payment_intent": pi.id, "amount_refunded": pi.refunded})
            }
            _ => panic!("no object {id}"),
        }
    }

    /// Sends `event` to `url`, signed with `secret` at `at` (unix seconds): the status it met.
    pub async fn send(&self, url: &str, event: &Value, secret: &str, at: i64) -> u16 {
        let body = event.to_string();
        let answered = reqwest::Client::new()
            .post(url)
            .header("stripe-signature", sign(body.as_bytes(), secret, at))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        answered.status().as_u16()
    }
}

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
}

fn next_id(inner: &mut Inner, prefix: &str) -> String {
    inner.counter += 1;
    format!("{prefix}_{:016x}", inner.counter.wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

fn error(status: u16, kind: &str, code: Option<&str>, message: &str, extra: Value) -> (u16, Value) {
    let mut e = json!({"type": kind, "message": message});
    if let Some(code) = code {
        e["code"] = json!(code);
    }
    if let Value::Object(extra) = extra {
        for (k, v) in extra {
            e[k] = v;
        }
    }
    (status, json!({"error": e}))
}

fn reply((status, body): (u16, Value)) -> Response {
    (StatusCode::from_u16(status).unwrap(), [(header::CONTENT_TYPE, "application/json")], body.to_string())
        .into_response()
}

/// Every API call: the key, the faults, the replay of a key, then the endpoint.
async fn api(
    State(d): State<StripeDouble>,
    method: Method,
    Path(path): Path<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let bearer = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok());
    if bearer != Some(&format!("Bearer {SECRET}")) {
        return reply(error(401, "invalid_request_error", None, "Invalid API Key provided", json!({})));
    }
    let path = format!("/v1/{path}");
    if method == Method::GET {
        let query: Vec<(String, String)> =
            url::form_urlencoded::parse(query.unwrap_or_default().as_bytes()).into_owned().collect();
        return reply(read(&d.inner.lock().unwrap(), &path, &query));
    }
    let form: Vec<(String, String)> = url::form_urlencoded::parse(&body).into_owned().collect();
    let fault = {
        let mut inner = d.inner.lock().unwrap();
        inner.posts.push(path.clone());
        let at = inner.faults.iter().position(|(part, _)| path.contains(part.as_str()));
        at.and_then(|at| inner.faults.remove(at)).map(|(_, fault)| fault)
    };
    match fault {
        Some(Fault::ServerError) => {
            return reply(error(500, "api_error", None, "An unknown error occurred", json!({})));
        }
        Some(Fault::TooMany) => return reply(error(429, "rate_limit_error", None, "Too many requests", json!({}))),
        _ => {}
    }
    let key = headers.get("idempotency-key").and_then(|v| v.to_str().ok()).map(String::from);
    let answer = {
        let mut inner = d.inner.lock().unwrap();
        match key.as_ref().and_then(|k| inner.keys.get(&(path.clone(), k.clone())).cloned()) {
            Some((first, _, _)) if first != form => error(
                400,
                "idempotency_error",
                None,
                "Keys for idempotent requests can only be used with the same parameters they were first used with.",
                json!({}),
            ),
            Some((_, status, body)) => (status, body),
            None => {
                let answer = write(&mut inner, &d.url, &path, &form);
                if let Some(k) = key {
                    inner.keys.insert((path.clone(), k), (form.clone(), answer.0, answer.1.clone()));
                }
                answer
            }
        }
    };
    match fault {
        Some(Fault::BadGatewayAfter) => return StatusCode::BAD_GATEWAY.into_response(),
        Some(Fault::HoldAfter(held)) => tokio::time::sleep(held).await,
        Some(Fault::DropAfter) => panic!("the double drops this connection on purpose"),
        _ => {}
    }
    reply(answer)
}

fn field<'a>(form: &'a [(String, String)], name: &str) -> Option<&'a str> {
    form.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

/// `metadata[...]`-style fields under `prefix`.
fn nested(form: &[(String, String)], prefix: &str) -> HashMap<String, String> {
    form.iter()
        .filter_map(|(k, v)| {
            Some((k.strip_prefix(prefix)?.strip_prefix('[')?.strip_suffix(']')?.to_string(), v.clone()))
        })
        .collect()
}

/// A POST that changes something.
fn write(inner: &mut Inner, base: &str, path: &str, form: &[(String, String)]) -> (u16, Value) {
    let parts: Vec<&str> = path.trim_start_matches("/v1/").split('/').collect();
    if let Some(answer) = disputes::write(inner, &parts, form) {
        return answer;
    }
    match parts.as_slice() {
        ["customers"] => {
            let id = next_id(inner, "cus");
            inner.customers.push(id.clone());
            (200, json!({"id": id, "object": "customer", "email": field(form, "email")}))
        }
        ["payment_methods"] => {
            let number = field(form, "card[number]").unwrap_or_default().to_string();
            let id = next_id(inner, "pm");
            inner.methods.insert(id.clone(), (number, None));
            (200, method_json(inner, &id))
        }
        ["payment_methods", id, "attach"] => {
            let Some((number, _)) = inner.methods.get(*id).cloned() else { return missing(id) };
            if number == "4000000000000002" {
                return error(
                    402,
                    "card_error",
                    Some("card_declined"),
                    "Your card was declined.",
                    json!({"decline_code": "generic_decline"}),
                );
            }
            inner.methods.insert(id.to_string(), (number, field(form, "customer").map(String::from)));
            (200, method_json(inner, id))
        }
        ["payment_intents"] => {
            let id = next_id(inner, "pi");
            let pi = Intent {
                id: id.clone(),
                amount: field(form, "amount").and_then(|a| a.parse().ok()).unwrap_or(0),
                currency: field(form, "currency").unwrap_or("usd").to_string(),
                status: "requires_confirmation".into(),
                capture_method: field(form, "capture_method").unwrap_or("automatic").to_string(),
                customer: field(form, "customer").map(String::from),
                payment_method: field(form, "payment_method").map(String::from),
                off_session: field(form, "off_session") == Some("true"),
                setup_future_usage: None,
                metadata: nested(form, "metadata"),
                error: None,
                next_action: None,
                return_url: field(form, "return_url").map(String::from),
                amount_received: 0,
                refunded: 0,
                created: inner.counter,
            };
            if pi.amount <= 0 {
                return error(
                    400,
                    "invalid_request_error",
                    Some("parameter_invalid_integer"),
                    "Invalid positive integer",
                    json!({"param": "amount"}),
                );
            }
            inner.intents.push(pi);
            if field(form, "confirm") == Some("true") {
                return confirm(inner, base, &id);
            }
            (200, intent_json(inner, inner.intents.last().unwrap(), false))
        }
        ["payment_intents", id, "confirm"] => {
            let Some(pi) = inner.intents.iter_mut().find(|i| i.id == *id) else { return missing(id) };
            if let Some(back) = field(form, "return_url") {
                pi.return_url = Some(back.to_string());
            }
            match pi.status.as_str() {
                "requires_action" => {
                    pi.next_action = redirect(base, pi);
                    (200, intent_json(inner, inner.intents.iter().find(|i| i.id == *id).unwrap(), false))
                }
                "requires_confirmation" | "requires_payment_method" => confirm(inner, base, id),
                status => unexpected(id, status, "confirm"),
            }
        }
        ["payment_intents", id, "capture"] => {
            let Some(pi) = inner.intents.iter_mut().find(|i| i.id == *id) else { return missing(id) };
            if pi.status != "requires_capture" {
                let status = pi.status.clone();
                return unexpected(id, &status, "capture");
            }
            let amount = field(form, "amount_to_capture").and_then(|a| a.parse().ok()).unwrap_or(pi.amount);
            (pi.status, pi.amount_received) = ("succeeded".into(), amount);
            (200, intent_json(inner, inner.intents.iter().find(|i| i.id == *id).unwrap(), false))
        }
        ["payment_intents", id, "cancel"] => {
            let Some(pi) = inner.intents.iter_mut().find(|i| i.id == *id) else { return missing(id) };
            if matches!(pi.status.as_str(), "succeeded" | "canceled" | "processing") {
                let status = pi.status.clone();
                return unexpected(id, &status, "cancel");
            }
            (pi.status, pi.next_action) = ("canceled".into(), None);
            (200, intent_json(inner, inner.intents.iter().find(|i| i.id == *id).unwrap(), false))
        }
        ["refunds"] => {
            let intent = field(form, "payment_intent").unwrap_or_default();
            let Some(pi) = inner.intents.iter_mut().find(|i| i.id == intent) else { return missing(intent) };
            let left = pi.amount_received - pi.refunded;
            let amount = field(form, "amount").and_then(|a| a.parse().ok()).unwrap_or(left);
            if pi.status != "succeeded" {
                return error(
                    400,
                    "invalid_request_error",
                    Some("charge_not_refundable"),
                    "This PaymentIntent has no successful charge to refund.",
                    json!({}),
                );
            }
            if amount > left || amount <= 0 {
                let message =
                    format!("Refund amount (${amount}) is greater than unrefunded amount on charge (${left})");
                return error(
                    400,
                    "invalid_request_error",
                    Some("amount_too_large"),
                    &message,
                    json!({"param": "amount"}),
                );
            }
            pi.refunded += amount;
            let id = next_id(inner, "re");
            let refund = Refund {
                id: id.clone(),
                payment_intent: intent.into(),
                amount,
                metadata: nested(form, "metadata"),
                failed: None,
            };
            inner.refunds.push(refund.clone());
            (200, refund_json(&refund))
        }
        ["checkout", "sessions", id, "expire"] => {
            let Some(s) = inner.sessions.get_mut(*id) else { return missing(id) };
            if s.status != "open" {
                let message = "Only Checkout Sessions with a status in [\"open\"] can be expired.";
                return error(400, "invalid_request_error", None, message, json!({}));
            }
            s.status = "expired".into();
            (200, session_json(inner, &inner.sessions[*id], false))
        }
        ["checkout", "sessions"] => {
            let id = format!("cs_test_{}", next_id(inner, "a1").trim_start_matches("a1_"));
            let form: HashMap<String, String> = form.iter().cloned().collect();
            let session = Session {
                id: id.clone(),
                customer: form.get("customer").cloned(),
                form,
                status: "open".into(),
                payment_intent: None,
                setup_intent: None,
            };
            inner.sessions.insert(id.clone(), session);
            (200, session_json(inner, &inner.sessions[&id], false).tap_url(base))
        }
        _ => error(404, "invalid_request_error", None, &format!("Unrecognized request URL (POST: {path})"), json!({})),
    }
}

trait TapUrl {
    fn tap_url(self, base: &str) -> Value;
}

impl TapUrl for Value {
    fn tap_url(mut self, base: &str) -> Value {
        let id = self["id"].as_str().unwrap().to_string();
        self["url"] = json!(format!("{base}/pay/{id}"));
        self
    }
}

fn missing(id: &str) -> (u16, Value) {
    error(404, "invalid_request_error", Some("resource_missing"), &format!("No such object: '{id}'"), json!({}))
}

fn unexpected(id: &str, status: &str, verb: &str) -> (u16, Value) {
    let message = format!("This PaymentIntent ({id}) could not be {verb}ed because it has a status of {status}.");
    error(400, "invalid_request_error", Some("payment_intent_unexpected_state"), &message, json!({}))
}

/// The 3-D Secure page of a PaymentIntent, when it was confirmed with a return URL.
fn redirect(base: &str, pi: &Intent) -> Option<Value> {
    Some(match &pi.return_url {
        Some(back) => json!({"type": "redirect_to_url",
                             "redirect_to_url": {"url": format!("{base}/3ds/{}", pi.id), "return_url": back}}),
        None => json!({"type": "use_stripe_sdk", "use_stripe_sdk": {"type": "three_d_secure_redirect"}}),
    })
}

/// Confirms a PaymentIntent: what its card does.
fn confirm(inner: &mut Inner, base: &str, id: &str) -> (u16, Value) {
    let pi = inner.intents.iter().find(|i| i.id == id).unwrap().clone();
    let number =
        pi.payment_method.as_ref().and_then(|pm| inner.methods.get(pm)).map(|(n, _)| n.clone()).unwrap_or_default();
    let declined = |code: &str, decline: Option<&str>, message: &str| {
        let mut e = json!({"type": "card_error", "code": code, "message": message});
        if let Some(d) = decline {
            e["decline_code"] = json!(d);
        }
        e
    };
    let failure = match number.as_str() {
        "4000000000009995" => {
            Some(declined("card_declined", Some("insufficient_funds"), "Your card has insufficient funds."))
        }
        "4000000000000341" => Some(declined("card_declined", Some("generic_decline"), "Your card was declined.")),
        "4000000000000119" => Some(declined(
            "processing_error",
            None,
            "An error occurred while processing your card. Try again in a little bit.",
        )),
        "4000002760003184" if pi.off_session => Some(declined(
            "authentication_required",
            Some("authentication_required"),
            "Your card was declined. This transaction requires authentication.",
        )),
        _ => None,
    };
    let pi = inner.intents.iter_mut().find(|i| i.id == id).unwrap();
    if let Some(failure) = failure {
        (pi.status, pi.error) = ("requires_payment_method".into(), Some(failure.clone()));
        let mut body = failure;
        body["payment_intent"] = intent_json(inner, inner.intents.iter().find(|i| i.id == id).unwrap(), false);
        return (402, json!({"error": body}));
    }
    if number == "4000002760003184" {
        pi.status = "requires_action".into();
        pi.next_action = redirect(base, pi);
    } else {
        succeed(pi);
    }
    (200, intent_json(inner, inner.intents.iter().find(|i| i.id == id).unwrap(), false))
}

fn succeed(pi: &mut Intent) {
    pi.next_action = None;
    if pi.capture_method == "manual" {
        pi.status = "requires_capture".into();
    } else {
        (pi.status, pi.amount_received) = ("succeeded".into(), pi.amount);
    }
}

fn finish(inner: &mut Inner, id: &str, succeeded: bool) {
    let pi = inner.intents.iter_mut().find(|i| i.id == id).unwrap();
    if succeeded {
        succeed(pi);
    } else {
        pi.status = "requires_payment_method".into();
        pi.next_action = None;
        pi.error = Some(json!({"type": "card_error", "code": "payment_intent_authentication_failure",
                               "message": "The provided PaymentMethod has failed authentication."}));
    }
}

/// A GET.
fn read(inner: &Inner, path: &str, query: &[(String, String)]) -> (u16, Value) {
    let parts: Vec<&str> = path.trim_start_matches("/v1/").split('/').collect();
    if let Some(answer) = disputes::read(inner, &parts, query) {
        return answer;
    }
    let expand = query.iter().any(|(k, _)| k == "expand[]");
    match parts.as_slice() {
        ["payment_intents"] | ["payment_intents", "search"] if inner.no_lookups => missing(path),
        ["payment_intents"] => {
            let limit = field(query, "limit").and_then(|l| l.parse().ok()).unwrap_or(10usize);
            let data: Vec<Value> =
                inner.intents.iter().rev().take(limit).map(|i| intent_json(inner, i, false)).collect();
            (200, json!({"object": "list", "data": data, "has_more": inner.intents.len() > limit}))
        }
        ["payment_intents", "search"] => {
            let query = field(query, "query").unwrap_or_default();
            let data: Vec<Value> = inner
                .intents
                .iter()
                .filter(|i| i.metadata.iter().any(|(k, v)| query == format!("metadata['{k}']:'{v}'")))
                .map(|i| intent_json(inner, i, false))
                .collect();
            (200, json!({"object": "search_result", "data": data, "has_more": false}))
        }
        ["payment_intents", id] => match inner.intents.iter().find(|i| i.id == *id) {
            Some(pi) => (200, intent_json(inner, pi, expand)),
            None => missing(id),
        },
        ["payment_methods", id] if inner.methods.contains_key(*id) => (200, method_json(inner, id)),
        ["checkout", "sessions", id] => match inner.sessions.get(*id) {
            Some(s) => (200, session_json(inner, s, expand)),
            None => missing(id),
        },
        ["refunds"] => {
            let of = |r: &&Refund| match (field(query, "charge"), field(query, "payment_intent")) {
                (Some(charge), _) => format!("ch_{}", r.payment_intent) == charge,
                (_, Some(intent)) => r.payment_intent == intent,
                _ => true,
            };
            let data: Vec<Value> = inner.refunds.iter().filter(of).map(refund_json).collect();
            (200, json!({"object": "list", "data": data, "has_more": false}))
        }
        ["customers"] => (200, json!({"object": "list", "data": [], "has_more": false})),
        _ => missing(path),
    }
}

fn method_json(inner: &Inner, id: &str) -> Value {
    let (number, customer) = inner.methods[id].clone();
    json!({"id": id, "object": "payment_method", "type": "card", "customer": customer,
           "billing_details": {"name": "Ann Lee"},
           "card": {"brand": "visa", "last4": &number[number.len().saturating_sub(4)..], "exp_month": 12, "exp_year": 2034,
                    "fingerprint": fingerprint(&number)}})
}

/// Stripe's fingerprint of a card number: the same for every entry of it.
fn fingerprint(number: &str) -> String {
    use sha1::Digest;
    format!("{:x}", sha1::Sha1::digest(number.as_bytes()))[..16].to_string()
}

fn intent_json(inner: &Inner, pi: &Intent, expand: bool) -> Value {
    let method = match (&pi.payment_method, expand) {
        (Some(pm), true) if inner.methods.contains_key(pm) => method_json(inner, pm),
        (pm, _) => json!(pm),
    };
    json!({"id": pi.id, "object": "payment_intent", "amount": pi.amount, "amount_received": pi.amount_received,
           "currency": pi.currency, "status": pi.status, "capture_method": pi.capture_method,
           "customer": pi.customer, "payment_method": method, "metadata": pi.metadata,
           "last_payment_error": pi.error, "next_action": pi.next_action, "livemode": false,
           "setup_future_usage": pi.setup_future_usage, "created": pi.created,
           "latest_charge": (pi.status == "succeeded" || pi.status == "requires_capture").then(|| format!("ch_{}", pi.id))})
}

fn refund_json(r: &Refund) -> Value {
    let status = if r.failed.is_some() { "failed" } else { "succeeded" };
    json!({"id": r.id, "object": "refund", "amount": r.amount, "status": status, "failure_reason": r.failed,
           "payment_intent": r.payment_intent, "charge": format!("ch_{}", r.payment_intent), "metadata": r.metadata})
}

fn session_json(inner: &Inner, s: &Session, expand: bool) -> Value {
    let intent = s.payment_intent.as_ref().map(|id| match expand {
        true => intent_json(inner, inner.intents.iter().find(|i| &i.id == id).unwrap(), true),
        false => json!(id),
    });
    let setup = s.setup_intent.as_ref().map(|id| {
        let (pm, customer, metadata) = inner.setups[id].clone();
        match expand {
            true => json!({"id": id, "object": "setup_intent", "status": "succeeded", "customer": customer,
                           "payment_method": method_json(inner, &pm), "metadata": metadata}),
            false => json!(id),
        }
    });
    let paid = intent.is_some() && s.status == "complete";
    json!({"id": s.id, "object": "checkout.session", "status": s.status, "mode": s.form.get("mode"),
           "payment_status": if paid { "paid" } else if s.status == "complete" { "no_payment_required" } else { "unpaid" },
           "client_reference_id": s.form.get("client_reference_id"), "customer": s.customer,
           "payment_intent": intent, "setup_intent": setup, "metadata": nested(&pairs(&s.form), "metadata"),
           "success_url": s.form.get("success_url"), "livemode": false, "url": Value::Null})
}

fn pairs(form: &HashMap<String, String>) -> Vec<(String, String)> {
    form.iter().map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// How long a held answer waits: past the tests' processor timeout.
pub const HOLD: Duration = Duration::from_secs(3);
