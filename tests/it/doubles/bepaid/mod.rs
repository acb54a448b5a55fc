//! A BeGateway gateway on loopback, written from the documented protocol (API v2 envelopes):
//! payments, authorizations, captures, voids and refunds, lookups by uid and by
//! `tracking_id`, `RequestID` replay, 3-D Secure `incomplete` with its `/process/{uid}`
//! link, the card vault (`/credit_cards`: opaque tokens, charged later), HTTP Basic with the
//! shop's id and secret. Faults are queued by the test and taken
//! by the next money request: they fail before recording (500, 429) or after it (a 502 with
//! no body, an answer held past the client's timeout, a dropped connection), the cases where
//! the outcome is unknown to the client. Checkout tokens (the processor's own card page) are
//! made and queried as bePaid's Checkout API does; the test plays the customer on that page.
//! The processor's pages are served for a browser: the Checkout card page
//! (`/checkout?token=`) and the bank's 3-D Secure check (`/process/{uid}`), each sending the
//! customer back where the transaction says. Notifications go out when the test says, signed as bePaid signs them (RSA-SHA256 of the
//! raw body in `Content-Signature`, the shop's id and secret as HTTP Basic), to the address
//! the transaction was made with.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

mod checkout;

use checkout::*;

/// The shop the double knows.
pub const SHOP_ID: &str = "361";
pub const SECRET: &str = "b8647b68898b084b836474ed8d61ffe117c9a01168d867f24953b776ddcb134d";

/// What the next money request meets.
#[derive(Debug, Clone, Copy)]
pub enum Fault {
    /// 500 before anything is recorded.
    ServerError,
    /// 429 before anything is recorded.
    TooMany,
    /// Recorded, then a 502 with no body (a proxy lost the answer).
    BadGatewayAfter,
    /// Recorded, then the answer held this long.
    HoldAfter(Duration),
    /// Recorded, then the connection closed without an answer.
    DropAfter,
}

/// One transaction at the gateway.
#[derive(Debug, Clone)]
pub struct Tx {
    /// Where the customer goes back to after the bank's check (or the Checkout page).
    pub return_url: Option<String>,
    /// Where its notifications go.
    pub notification_url: Option<String>,
    pub uid: String,
    pub kind: String,
    pub status: String,
    pub amount: i64,
    pub currency: String,
    pub tracking_id: String,
    pub parent_uid: Option<String>,
    pub message: String,
    pub bank_code: &'static str,
    pub redirect_url: Option<String>,
    pub card: Option<(String, String, String)>,
    /// Who started a charge of a stored card (`additional_data.card_on_file.initiator`).
    pub initiator: Option<String>,
    /// Why a refund (or a chargeback) was made.
    pub reason: Option<String>,
}

/// A Checkout token.
#[derive(Debug, Clone)]
struct Token {
    kind: String,
    order: Value,
    finished: bool,
    expired: bool,
    /// The transaction the page made last.
    made: Option<String>,
    /// The cards the customer may still try (`attempts`, 1 when not sent, as bePaid's
    /// default): the page closes after the last is declined.
    attempts_left: u64,
}

#[derive(Default)]
struct Inner {
    transactions: Vec<Tx>,
    /// The vault: token → card number.
    cards: HashMap<String, String>,
    checkouts: HashMap<String, Token>,
    /// RequestID → the uid its first request made (or the refusal it got).
    requests: HashMap<String, Result<String, (u16, Value)>>,
    faults: VecDeque<Fault>,
    /// Money requests received, faults included.
    received: usize,
}

/// The running double.
#[derive(Clone)]
pub struct Gateway {
    pub url: String,
    inner: Arc<Mutex<Inner>>,
    /// The processor's signing key.
    key: Arc<ring::signature::RsaKeyPair>,
    /// Its public key, as the back office shows it (PEM).
    pub public_key: String,
}

impl Gateway {
    /// Serves a new gateway on a free loopback port.
    pub async fn start() -> Gateway {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        use rsa::pkcs8::{EncodePrivateKey, EncodePublicKey, LineEnding};
        let private = rsa::RsaPrivateKey::new(&mut argon2::password_hash::rand_core::OsRng, 2048).unwrap();
        let public_key = rsa::RsaPublicKey::from(&private).to_public_key_pem(LineEnding::LF).unwrap();
        let key = ring::signature::RsaKeyPair::from_pkcs8(private.to_pkcs8_der().unwrap().as_bytes()).unwrap();
        let gateway = Gateway { url, inner: Arc::default(), key: Arc::new(key), public_key };
        let app = Router::new()
            .route("/transactions/{id}", post(money).get(by_uid))
            .route("/credit_cards", post(store_card))
            .route("/v2/transactions/tracking_id/{id}", get(by_tracking_id))
            .route("/ctp/api/checkouts", post(new_checkout))
            .route("/ctp/api/checkouts/{token}", get(checkout_state))
            .route("/checkout", get(checkout_page).post(checkout_pay))
            .route("/process/{uid}", get(process_page).post(process_finish))
            .with_state(gateway.clone());
        tokio::spawn(async move { axum::serve(listener, app).await });
        gateway
    }

    /// Queues faults for the next money requests, in order.
    pub fn fail_next(&self, faults: &[Fault]) {
        self.inner.lock().unwrap().faults.extend(faults);
    }

    /// Every transaction, oldest first.
    pub fn transactions(&self) -> Vec<Tx> {
        self.inner.lock().unwrap().transactions.clone()
    }

    /// How many money requests arrived.
    pub fn received(&self) -> usize {
        self.inner.lock().unwrap().received
    }

    /// Sends the notification of transaction `uid` as it stands now, signed (with `forged`,
    /// signed by another key), to where it was made to notify; the HTTP status it met.
    pub async fn notify(&self, uid: &str, forged: bool) -> u16 {
        let (tx, notification_url) = {
            let inner = self.inner.lock().unwrap();
            let tx = inner.transactions.iter().find(|t| t.uid == uid).unwrap().clone();
            // A child is notified where its first ancestor was made to notify.
            let mut url = tx.notification_url.clone();
            let mut parent = tx.parent_uid.clone();
            while let (None, Some(uid)) = (&url, parent) {
                let found = inner.transactions.iter().find(|t| t.uid == uid);
                (url, parent) =
                    (found.and_then(|t| t.notification_url.clone()), found.and_then(|t| t.parent_uid.clone()));
            }
            (tx, url.expect("a notification address"))
        };
        let body = json!({ "transaction": tx.json() }).to_string();
        self.send_notification(&notification_url, body, forged).await
    }

    /// Sends `body` as a notification to `url`, signed (or signed by another key).
    pub async fn send_notification(&self, url: &str, body: String, forged: bool) -> u16 {
        use ring::signature::{RSA_PKCS1_SHA256, RsaKeyPair};
        let other;
        let key: &RsaKeyPair = if forged {
            use rsa::pkcs8::EncodePrivateKey;
            let private = rsa::RsaPrivateKey::new(&mut argon2::password_hash::rand_core::OsRng, 2048).unwrap();
            other = RsaKeyPair::from_pkcs8(private.to_pkcs8_der().unwrap().as_bytes()).unwrap();
            &other
        } else {
            &self.key
        };
        let mut signature = vec![0u8; key.public().modulus_len()];
        key.sign(&RSA_PKCS1_SHA256, &ring::rand::SystemRandom::new(), body.as_bytes(), &mut signature).unwrap();
        let basic = format!("Basic {}", STANDARD.encode(format!("{SHOP_ID}:{SECRET}")));
        let response = reqwest::Client::new()
            .post(url)
            .header("authorization", basic)
            .header("content-signature", STANDARD.encode(signature))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .unwrap();
        response.status().as_u16()
    }

    /// A refund, capture or void made in the processor's back office of the transaction
    /// `parent`: its uid.
    pub fn back_office(&self, kind: &str, parent: &str, amount: i64) -> String {
        let mut inner = self.inner.lock().unwrap();
        let request = json!({"parent_uid": parent, "amount": amount, "reason": "asked by phone"});
        record(&mut inner, &self.url, &format!("{kind}s"), &request).unwrap()
    }

    /// A chargeback of the transaction `parent` received from the card's bank: its uid (the
    /// test then notifies it, as bePaid posts every chargeback to the notification URL).
    pub fn chargeback(&self, parent: &str, amount: i64) -> String {
        let mut inner = self.inner.lock().unwrap();
        let of = inner.transactions.iter().find(|t| t.uid == parent).unwrap().clone();
        let uid = format!("cb-{}", inner.transactions.len() + 1);
        inner.transactions.push(Tx {
            uid: uid.clone(),
            kind: "chargeback".into(),
            parent_uid: Some(parent.into()),
            amount,
            reason: Some("fraud".into()),
            notification_url: None,
            redirect_url: None,
            return_url: None,
            card: None,
            initiator: None,
            ..of
        });
        uid
    }

    /// The vault's token for a card number (stored now if it was not).
    pub fn token_of(&self, number: &str) -> String {
        vault(&mut self.inner.lock().unwrap(), number)
    }

    /// The card number behind a vault token.
    pub fn number_of(&self, token: &str) -> Option<String> {
        self.inner.lock().unwrap().cards.get(token).cloned()
    }

    /// The customer paying on the Checkout page of `token` with the card `number`: the page
    /// makes its transaction (under the order's `tracking_id`); a success finishes the page, a
    /// decline leaves it open for another card.
    pub fn pay_checkout(&self, token: &str, number: &str) -> Option<String> {
        let mut inner = self.inner.lock().unwrap();
        let checkout = inner.checkouts.get(token)?.clone();
        let mut request = checkout.order.clone();
        request["credit_card"] = json!({"number": number});
        let kind = format!("{}s", checkout.kind);
        let uid = record(&mut inner, &self.url, &kind, &request).ok()?;
        let succeeded = inner.transactions.iter().any(|t| t.uid == uid && t.status == "successful");
        let checkout = inner.checkouts.get_mut(token)?;
        checkout.attempts_left = checkout.attempts_left.saturating_sub(u64::from(!succeeded));
        (checkout.made, checkout.finished) = (Some(uid.clone()), succeeded || checkout.attempts_left == 0);
        Some(uid)
    }

    /// The order a Checkout token was made for.
    pub fn checkout_order(&self, token: &str) -> Value {
        self.inner.lock().unwrap().checkouts[token].order.clone()
    }

    /// The token of `token` running out unpaid.
    pub fn expire_checkout(&self, token: &str) {
        if let Some(checkout) = self.inner.lock().unwrap().checkouts.get_mut(token) {
            checkout.expired = !checkout.finished;
        }
    }

    /// The customer finishing 3-D Secure for `uid`: it becomes `status`.
    pub fn finish_3ds(&self, uid: &str, succeeded: bool) {
        let mut inner = self.inner.lock().unwrap();
        let tx = inner.transactions.iter_mut().find(|t| t.uid == uid).unwrap();
        (tx.status, tx.redirect_url) = (if succeeded { "successful" } else { "failed" }.into(), None);
    }
}

fn authorized(headers: &HeaderMap) -> bool {
    let expected = format!("Basic {}", STANDARD.encode(format!("{SHOP_ID}:{SECRET}")));
    headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()) == Some(expected.as_str())
}

fn refused(status: StatusCode, message: &str, errors: Value) -> (u16, Value) {
    (status.as_u16(), json!({"message": message, "errors": errors}))
}

fn json_reply(status: u16, body: &Value) -> Response {
    (StatusCode::from_u16(status).unwrap(), [(header::CONTENT_TYPE, "application/json")], body.to_string())
        .into_response()
}

impl Tx {
    fn json(&self) -> Value {
        let mut t = json!({
            "uid": self.uid, "status": self.status, "type": self.kind, "amount": self.amount,
            "currency": self.currency, "tracking_id": self.tracking_id, "message": self.message,
            "test": true, "parent_uid": self.parent_uid, "redirect_url": self.redirect_url,
        });
        t[self.kind.as_str()] = json!({"status": self.status, "bank_code": self.bank_code, "message": self.message});
        if let Some(reason) = &self.reason {
            t["reason"] = json!(reason);
        }
        if let Some((token, brand, last4)) = &self.card {
            // The double keeps one token per number, so the token's hash is as good as the number's.
            t["credit_card"] = json!({"token": token, "brand": brand, "last_4": last4, "exp_month": 12, "exp_year": 2030,
                                      "stamp": stamp(token)});
        }
        t
    }
}

async fn money(State(g): State<Gateway>, Path(kind): Path<String>, headers: HeaderMap, body: Bytes) -> Response {
    if !authorized(&headers) {
        return json_reply(401, &json!({"message": "Unauthorized"}));
    }
    let fault = {
        let mut inner = g.inner.lock().unwrap();
        inner.received += 1;
        inner.faults.pop_front()
    };
    match fault {
        Some(Fault::ServerError) => return json_reply(500, &json!({"message": "Internal error"})),
        Some(Fault::TooMany) => return json_reply(429, &json!({"message": "Too many requests"})),
        _ => {}
    }
    let request_id = headers.get("requestid").and_then(|v| v.to_str().ok()).map(String::from);
    let answer = {
        let mut inner = g.inner.lock().unwrap();
        let replayed = request_id.as_ref().and_then(|id| inner.requests.get(id).cloned());
        let answer = match replayed {
            Some(first) => first,
            None => {
                let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                let made = record(&mut inner, &g.url, &kind, &request["request"]);
                if let Some(id) = request_id {
                    inner.requests.insert(id, made.clone());
                }
                made
            }
        };
        // A replay answers with the transaction as it stands now.
        answer.map(|uid| inner.transactions.iter().find(|t| t.uid == uid).unwrap().json())
    };
    match fault {
        Some(Fault::BadGatewayAfter) => return StatusCode::BAD_GATEWAY.into_response(),
        Some(Fault::HoldAfter(held)) => tokio::time::sleep(held).await,
        Some(Fault::DropAfter) => panic!("the double drops this connection on purpose"),
        _ => {}
    }
    match answer {
        Ok(transaction) => json_reply(200, &json!({ "transaction": transaction })),
        Err((status, body)) => json_reply(status, &body),
    }
}

/// Makes the transaction a request asks for: its uid, or the gateway's refusal.
fn record(inner: &mut Inner, base: &str, kind: &str, r: &Value) -> Result<String, (u16, Value)> {
    let n = inner.transactions.len() as u64 + 1000;
    let uid = format!("{n}-{:010x}", n.wrapping_mul(2_654_435_761) & 0xff_ffff_ffff);
    let amount = r["amount"].as_i64().filter(|a| *a > 0 || kind == "tokenizations").ok_or_else(|| {
        refused(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Amount must be greater than 0.",
            json!({"amount": ["must be greater than 0"]}),
        )
    })?;
    let (kind, parent) = match kind {
        "payments" => ("payment", None),
        "authorizations" => ("authorization", None),
        "tokenizations" => ("tokenization", None),
        "captures" | "voids" | "refunds" => {
            let parent_uid = r["parent_uid"].as_str().unwrap_or_default();
            let parent = inner.transactions.iter().find(|t| t.uid == parent_uid).cloned().ok_or_else(|| {
                refused(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "Parent transaction not found.",
                    json!({"parent_uid": ["is invalid"]}),
                )
            })?;
            (kind.trim_end_matches('s'), Some(parent))
        }
        _ => return Err(refused(StatusCode::NOT_FOUND, "Not found", json!({}))),
    };
    let mut tx = Tx {
        uid: uid.clone(),
        kind: kind.into(),
        status: "successful".into(),
        amount,
        currency: r["currency"].as_str().unwrap_or("").into(),
        tracking_id: r["tracking_id"].as_str().unwrap_or("").into(),
        parent_uid: None,
        message: "Successfully processed".into(),
        bank_code: "00",
        redirect_url: None,
        card: None,
        initiator: r["additional_data"]["card_on_file"]["initiator"].as_str().map(String::from),
        return_url: r["return_url"].as_str().or(r["settings"]["success_url"].as_str()).map(String::from),
        notification_url: r["notification_url"]
            .as_str()
            .or(r["settings"]["notification_url"].as_str())
            .map(String::from),
        reason: r["reason"].as_str().map(String::from),
    };
    match parent {
        None => {
            let card = &r["credit_card"];
            let (token, number) = match card["token"].as_str() {
                Some(token) => (token.to_string(), inner.cards.get(token).cloned().unwrap_or_default()),
                None => {
                    let number = card["number"].as_str().unwrap_or("").to_string();
                    (vault(inner, &number), number)
                }
            };
            let last4 = number.get(number.len().saturating_sub(4)..).unwrap_or("").to_string();
            tx.card = Some((token, "visa".into(), last4));
            match number.as_str() {
                "4200000000000000" | "5555555555554444" => {}
                "4005550000000019" => {
                    (tx.status, tx.message, tx.bank_code) = ("failed".into(), "Payment was declined".into(), "05")
                }
                "4012000000003010" | "4012000000001097" => {
                    tx.status = "incomplete".into();
                    tx.message = String::new();
                    tx.redirect_url = Some(format!("{base}/process/{uid}"));
                }
                _ => {
                    return Err(refused(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        "Credit card number is invalid.",
                        json!({"credit_card": {"number": ["is invalid"]}}),
                    ));
                }
            }
        }
        Some(parent) => {
            tx.parent_uid = Some(parent.uid.clone());
            tx.currency = parent.currency.clone();
            tx.tracking_id = parent.tracking_id.clone();
            let children = |k: &'static str| {
                let parent_uid = parent.uid.clone();
                inner.transactions.iter().filter(move |t| {
                    t.parent_uid.as_deref() == Some(parent_uid.as_str()) && t.kind == k && t.status == "successful"
                })
            };
            let refusal = match kind {
                "refund" if r["reason"].as_str().unwrap_or("").trim().is_empty() => {
                    return Err(refused(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        "Reason can't be blank.",
                        json!({"reason": ["can't be blank"]}),
                    ));
                }
                // Only a payment's or a capture's money can be given back, never an
                // authorization's (its capture has a uid of its own).
                "refund" if !matches!(parent.kind.as_str(), "payment" | "capture") || parent.status != "successful" => {
                    return Err(refused(
                        StatusCode::UNPROCESSABLE_ENTITY,
                        "transaction can't be refunded",
                        json!({"base": ["transaction can't be refunded"]}),
                    ));
                }
                "capture" | "void" if parent.kind != "authorization" || parent.status != "successful" => {
                    Some("Transaction can't be processed".to_string())
                }
                "capture" | "void" if children("capture").next().is_some() || children("void").next().is_some() => {
                    Some("Transaction can't be processed".to_string())
                }
                "capture" | "void" if amount > parent.amount => {
                    Some(format!("Amount can't be greater than {}", parent.amount))
                }
                "refund" => {
                    let left = parent.amount - children("refund").map(|c| c.amount).sum::<i64>();
                    (amount > left).then(|| format!("Amount can't be greater than {left}"))
                }
                _ => None,
            };
            if let Some(message) = refusal {
                (tx.status, tx.message) = ("failed".into(), message);
            }
        }
    }
    inner.transactions.push(tx);
    Ok(uid)
}

/// Keeps `number` in the vault: its token (the same token for the same number, as the
/// gateway updates a stored card rather than storing it twice).
fn vault(inner: &mut Inner, number: &str) -> String {
    if let Some((token, _)) = inner.cards.iter().find(|(_, n)| *n == number) {
        return token.clone();
    }
    let token =
        format!("{:032x}", (inner.cards.len() as u128 + 7).wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c834));
    inner.cards.insert(token.clone(), number.to_string());
    token
}

/// The gateway's hash of a card (here of its token, which is one per number).
fn stamp(token: &str) -> String {
    use sha1::Digest;
    format!("{:x}", sha1::Sha1::digest(token.as_bytes()))
}

/// A number sent as a number or as digits.
fn number_of(value: &Value) -> Option<i64> {
    value.as_i64().or_else(|| value.as_str()?.parse().ok())
}

/// `POST /credit_cards`: a card into the vault (no money moves); a number that is not a
/// valid card is refused.
async fn store_card(State(g): State<Gateway>, headers: HeaderMap, body: Bytes) -> Response {
    if !authorized(&headers) {
        return json_reply(401, &json!({"message": "Unauthorized"}));
    }
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let card = &request["request"];
    let number = card["number"].as_str().unwrap_or("");
    if number.len() < 12 || !number.bytes().all(|b| b.is_ascii_digit()) {
        let (status, body) =
            refused(StatusCode::UNPROCESSABLE_ENTITY, "Number is invalid.", json!({"number": ["is invalid"]}));
        return json_reply(status, &body);
    }
    let token = vault(&mut g.inner.lock().unwrap(), number);
    json_reply(
        200,
        &json!({
            "token": token, "brand": "visa", "last_4": &number[number.len() - 4..], "first_1": &number[..1],
            "holder": card["holder"], "stamp": stamp(&token),
        "exp_month": number_of(&card["exp_month"]), "exp_year": number_of(&card["exp_year"]),
        }),
    )
}

async fn by_uid(State(g): State<Gateway>, Path(uid): Path<String>, headers: HeaderMap) -> Response {
    if !authorized(&headers) {
        return json_reply(401, &json!({"message": "Unauthorized"}));
    }
    let inner = g.inner.lock().unwrap();
    match inner.transactions.iter().find(|t| t.uid == uid) {
        Some(t) => json_reply(200, &json!({"transaction": t.json()})),
        None => json_reply(404, &json!({"message": "Record not found"})),
    }
}

async fn by_tracking_id(State(g): State<Gateway>, Path(id): Path<String>, headers: HeaderMap) -> Response {
    if !authorized(&headers) {
        return json_reply(401, &json!({"message": "Unauthorized"}));
    }
    let inner = g.inner.lock().unwrap();
    let found: Vec<Value> = inner.transactions.iter().filter(|t| t.tracking_id == id).map(Tx::json).collect();
    match found.len() {
        0 => json_reply(404, &json!({"message": "Record not found"})),
        1 => json_reply(200, &json!({"transaction": found[0]})),
        _ => json_reply(200, &json!({"transactions": found})),
    }
}
