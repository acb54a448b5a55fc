//! The double's disputes and early fraud warnings, written from Stripe's documentation: a
//! test opens a dispute (or an inquiry) on a PaymentIntent, as a cardholder's bank would, and
//! decides it; the API lists and reads them, takes evidence (`submit`, or staged) and
//! `close`, and refuses both once the dispute no longer needs a response. A chargeback
//! withdraws the amount and a 1500 fee; a won one reinstates the amount.

use super::*;

/// The dispute fee the double takes.
pub const FEE: i64 = 1500;

/// One Dispute.
#[derive(Debug, Clone)]
pub struct Dispute {
    pub id: String,
    pub payment_intent: String,
    pub amount: i64,
    pub currency: String,
    pub status: String,
    pub reason: String,
    pub evidence: HashMap<String, String>,
    pub submission_count: i64,
    pub due_by: u64,
    pub created: u64,
    pub withdrawn: bool,
    pub reinstated: bool,
}

impl StripeDouble {
    /// The cardholder's bank disputes the PaymentIntent `intent` (an inquiry with `inquiry`):
    /// the dispute as Stripe's events carry it.
    pub fn open_dispute(&self, intent: &str, inquiry: bool) -> Value {
        let mut inner = self.inner.lock().unwrap();
        let id = next_id(&mut inner, "dp");
        let pi = inner.intents.iter().find(|i| i.id == intent).unwrap().clone();
        let status = if inquiry { "warning_needs_response" } else { "needs_response" };
        let dispute = Dispute {
            id: id.clone(),
            payment_intent: intent.into(),
            amount: pi.amount_received - pi.refunded,
            currency: pi.currency.clone(),
            status: status.into(),
            reason: "fraudulent".into(),
            evidence: HashMap::new(),
            submission_count: 0,
            due_by: now() + 7 * 86_400,
            created: now(),
            withdrawn: !inquiry,
            reinstated: false,
        };
        inner.disputes.push(dispute.clone());
        dispute_json(&dispute)
    }

    /// The bank decides the dispute `id`: `won`, `lost` or `warning_closed` (a won chargeback
    /// gives the amount back). The dispute as Stripe's events carry it.
    pub fn decide_dispute(&self, id: &str, status: &str) -> Value {
        let mut inner = self.inner.lock().unwrap();
        let d = inner.disputes.iter_mut().find(|d| d.id == id).unwrap();
        d.status = status.into();
        d.reinstated = status == "won" && d.withdrawn;
        dispute_json(d)
    }

    /// The dispute `id` as Stripe's events carry it.
    pub fn dispute(&self, id: &str) -> Value {
        let inner = self.inner.lock().unwrap();
        dispute_json(inner.disputes.iter().find(|d| d.id == id).unwrap())
    }

    /// The disputes so far.
    pub fn disputes(&self) -> Vec<Dispute> {
        self.inner.lock().unwrap().disputes.clone()
    }

    /// An early fraud warning about the PaymentIntent `intent`, as Stripe's events carry it.
    pub fn fraud_warning(&self, intent: &str, actionable: bool) -> Value {
        let mut inner = self.inner.lock().unwrap();
        let id = next_id(&mut inner, "issfr");
        let warning = json!({"id": id, "object": "radar.early_fraud_warning", "actionable": actionable,
                             "charge": format!("ch_{intent}"), "payment_intent": intent,
                             "fraud_type": "made_with_stolen_card", "created": now(), "livemode": false});
        inner.warnings.push(warning.clone());
        warning
    }
}

/// A dispute as Stripe shows it.
pub fn dispute_json(d: &Dispute) -> Value {
    let mut money = Vec::new();
    if d.withdrawn {
        money.push(json!({"object": "balance_transaction", "amount": -d.amount, "fee": FEE, "currency": d.currency,
                          "type": "adjustment", "reporting_category": "dispute"}));
    }
    if d.reinstated {
        money.push(json!({"object": "balance_transaction", "amount": d.amount, "fee": 0, "currency": d.currency,
                          "type": "adjustment", "reporting_category": "dispute_reversal"}));
    }
    json!({"id": d.id, "object": "dispute", "amount": d.amount, "currency": d.currency, "status": d.status,
           "reason": d.reason, "charge": format!("ch_{}", d.payment_intent), "payment_intent": d.payment_intent,
           "evidence": d.evidence, "balance_transactions": money, "created": d.created, "livemode": false,
           "is_charge_refundable": false,
           "evidence_details": {"due_by": d.due_by, "has_evidence": !d.evidence.is_empty(),
                                "past_due": now() > d.due_by, "submission_count": d.submission_count}})
}

/// `GET /v1/disputes` (`payment_intent`, `created[gte]`, `limit`, `starting_after`),
/// `GET /v1/disputes/{id}` and `GET /v1/radar/early_fraud_warnings`.
pub fn read(inner: &Inner, parts: &[&str], query: &[(String, String)]) -> Option<(u16, Value)> {
    match parts {
        ["disputes"] => {
            let since: u64 = field(query, "created[gte]").and_then(|c| c.parse().ok()).unwrap_or(0);
            let intent = field(query, "payment_intent");
            let limit = field(query, "limit").and_then(|l| l.parse().ok()).unwrap_or(10usize);
            let newest: Vec<&Dispute> = inner
                .disputes
                .iter()
                .rev()
                .filter(|d| d.created >= since && intent.is_none_or(|i| i == d.payment_intent))
                .collect();
            let after = field(query, "starting_after").and_then(|a| newest.iter().position(|d| d.id == a));
            let rest = &newest[after.map_or(0, |at| at + 1)..];
            let data: Vec<Value> = rest.iter().take(limit).map(|d| dispute_json(d)).collect();
            Some((200, json!({"object": "list", "data": data, "has_more": rest.len() > limit})))
        }
        ["disputes", id] => Some(match inner.disputes.iter().find(|d| d.id == *id) {
            Some(d) => (200, dispute_json(d)),
            None => missing(id),
        }),
        ["radar", "early_fraud_warnings"] => {
            let data: Vec<Value> = inner.warnings.iter().rev().cloned().collect();
            Some((200, json!({"object": "list", "data": data, "has_more": false})))
        }
        _ => None,
    }
}

/// `POST /v1/disputes/{id}` (evidence, `submit`) and `POST /v1/disputes/{id}/close`.
pub fn write(inner: &mut Inner, parts: &[&str], form: &[(String, String)]) -> Option<(u16, Value)> {
    let (id, close) = match parts {
        ["disputes", id] => (*id, false),
        ["disputes", id, "close"] => (*id, true),
        _ => return None,
    };
    let Some(d) = inner.disputes.iter_mut().find(|d| d.id == id) else { return Some(missing(id)) };
    if !d.status.ends_with("needs_response") {
        let message = format!("This dispute is already closed or under review (status {}).", d.status);
        return Some(error(400, "invalid_request_error", None, &message, json!({})));
    }
    if close {
        d.status = "lost".into();
        return Some((200, dispute_json(d)));
    }
    for (key, value) in form {
        if let Some(field) = key.strip_prefix("evidence[").and_then(|k| k.strip_suffix(']')) {
            d.evidence.insert(field.to_string(), value.clone());
        }
    }
    if field(form, "submit") != Some("false") {
        d.submission_count += 1;
        d.status = if d.status.starts_with("warning_") { "warning_under_review" } else { "under_review" }.into();
    }
    Some((200, dispute_json(d)))
}
