//! Disputes: a cardholder's bank taking a payment back. A dispute moves through stages (an
//! inquiry, a chargeback, pre-arbitration) and within each from needing the merchant's
//! response, to under review, to an end. Processors report it each in their words; each
//! report is read as a [`Seen`] and [`advance`] decides what changes, so that a dispute only
//! moves forward whatever order reports arrive in, and its money moves once.

use chrono::{DateTime, Duration, Utc};
use serde_json::{Map, Value};

use super::Errors;
use super::input::{Reader, msg};
use super::vocab::words;

words! {
    /// How far a dispute went: an `inquiry` (the bank asks; no money moved yet), a
    /// `chargeback` (the money was taken back), `pre_arbitration` (disputed again after the
    /// merchant's answer).
    DisputeStage { Inquiry = "inquiry", Chargeback = "chargeback", PreArbitration = "pre_arbitration" }
}

words! {
    /// Where a dispute stands. Open: `needs_response` (the merchant may answer until the
    /// evidence is due), `under_review` (answered; the bank decides). Closed: `won`, `lost`,
    /// `accepted` (the merchant gave up), `expired` (not answered in time; lost), and
    /// `warning_closed` (an inquiry that ended without a chargeback).
    DisputeStatus {
        NeedsResponse = "needs_response", UnderReview = "under_review", Won = "won", Lost = "lost",
        Accepted = "accepted", Expired = "expired", WarningClosed = "warning_closed",
    }
}

words! {
    /// A line of a dispute's history: what happened.
    DisputeStep {
        Opened = "opened", Escalated = "escalated", EvidenceStaged = "evidence_staged",
        EvidenceSubmitted = "evidence_submitted", FundsWithdrawn = "funds_withdrawn",
        FundsReinstated = "funds_reinstated", Updated = "updated", Closed = "closed",
    }
}

impl DisputeStatus {
    /// Whether the dispute has ended.
    pub fn is_closed(self) -> bool {
        !matches!(self, DisputeStatus::NeedsResponse | DisputeStatus::UnderReview)
    }

    /// The statuses in which a dispute stands against its card: open, or ended with the
    /// money taken back (lost, accepted, expired). A won dispute, or an inquiry that ended
    /// without a chargeback, leaves the card as good as before.
    pub const STANDING: [DisputeStatus; 5] = [
        DisputeStatus::NeedsResponse,
        DisputeStatus::UnderReview,
        DisputeStatus::Lost,
        DisputeStatus::Accepted,
        DisputeStatus::Expired,
    ];

    /// How far along its stage a status is: reports that would move a dispute back are
    /// ignored.
    fn rank(self) -> u8 {
        match self {
            DisputeStatus::NeedsResponse => 0,
            DisputeStatus::UnderReview => 1,
            _ => 2,
        }
    }
}

impl DisputeStage {
    fn rank(self) -> u8 {
        match self {
            DisputeStage::Inquiry => 0,
            DisputeStage::Chargeback => 1,
            DisputeStage::PreArbitration => 2,
        }
    }
}

/// Money a dispute moved: the amount and the processor's fee (when known in the payment's
/// currency), both in minimal units.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Funds {
    pub amount: i64,
    pub fee: i64,
}

/// A dispute as its processor reports it now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// The processor's id of the dispute.
    pub reference: String,
    pub stage: DisputeStage,
    pub status: DisputeStatus,
    pub reason: String,
    pub amount: i64,
    /// The processor's dispute fee, in the payment's currency, when it says.
    pub fee: Option<i64>,
    pub evidence_due_by: Option<DateTime<Utc>>,
    /// Taken from the merchant (at the chargeback), if it was.
    pub withdrawn: Option<Funds>,
    /// Given back to the merchant (a won dispute), if it was.
    pub reinstated: Option<Funds>,
}

/// A stored dispute, as far as [`advance`] needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Current {
    pub stage: DisputeStage,
    pub status: DisputeStatus,
    /// The merchant accepted it here (`accepted` rather than `lost`).
    pub accepted: bool,
    /// The merchant submitted evidence.
    pub answered: bool,
    pub withdrawn: bool,
    pub reinstated: bool,
}

/// What a report changes of a dispute.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Change {
    /// The new stage and status, when they move.
    pub moved: Option<(DisputeStage, DisputeStatus)>,
    /// Money taken now (once per dispute).
    pub withdraw: Option<Funds>,
    /// Money given back now (once, after a withdrawal).
    pub reinstate: Option<Funds>,
}

impl Change {
    /// Whether anything changes.
    pub fn is_empty(&self) -> bool {
        self.moved.is_none() && self.withdraw.is_none() && self.reinstate.is_none()
    }
}

/// The status a processor's `lost` means here: `accepted` when the merchant accepted it,
/// `expired` when it ended unanswered past its due date.
pub fn lost_as(accepted: bool, answered: bool, due_by: Option<DateTime<Utc>>, now: DateTime<Utc>) -> DisputeStatus {
    match () {
        _ if accepted => DisputeStatus::Accepted,
        _ if !answered && due_by.is_some_and(|due| due <= now) => DisputeStatus::Expired,
        _ => DisputeStatus::Lost,
    }
}

/// What a report `seen` changes of the dispute `current` (none yet: it opens). Stages and
/// statuses only move forward (a late report of an earlier state changes nothing), a closed
/// dispute stays closed unless a later stage opens, and money moves once each way.
pub fn advance(current: Option<Current>, seen: &Seen) -> Change {
    let Some(current) = current else {
        return Change { moved: Some((seen.stage, seen.status)), withdraw: seen.withdrawn, reinstate: seen.reinstated };
    };
    let now_at = (current.stage.rank(), current.status.rank());
    let seen_at = (seen.stage.rank(), seen.status.rank());
    let moved = (seen_at > now_at).then_some((seen.stage, seen.status)).map(|(stage, status)| {
        // A processor's `lost` of a dispute the merchant accepted here stays `accepted`.
        let status = if status == DisputeStatus::Lost && current.accepted { DisputeStatus::Accepted } else { status };
        (stage, status)
    });
    let withdraw = seen.withdrawn.filter(|_| !current.withdrawn);
    let reinstate = seen.reinstated.filter(|_| !current.reinstated && (current.withdrawn || withdraw.is_some()));
    Change { moved, withdraw, reinstate }
}

/// How long is left to answer a dispute, as the dashboard counts it down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DueIn {
    /// Whole days left (at least one).
    Days(i64),
    /// Less than a day: whole hours left (0 in the last hour).
    Hours(i64),
    /// The due date passed.
    Past,
}

/// How long is left at `now` until `due_by`.
pub fn due_in(due_by: DateTime<Utc>, now: DateTime<Utc>) -> DueIn {
    let left = due_by - now;
    match () {
        _ if left <= Duration::zero() => DueIn::Past,
        _ if left < Duration::days(1) => DueIn::Hours(left.num_hours()),
        _ => DueIn::Days(left.num_days()),
    }
}

/// The evidence fields a dispute takes, as text (Stripe's names).
pub const EVIDENCE_FIELDS: &[&str] = &[
    "access_activity_log",
    "billing_address",
    "cancellation_policy_disclosure",
    "cancellation_rebuttal",
    "customer_email_address",
    "customer_name",
    "customer_purchase_ip",
    "duplicate_charge_explanation",
    "duplicate_charge_id",
    "product_description",
    "refund_policy_disclosure",
    "refund_refusal_explanation",
    "service_date",
    "shipping_address",
    "shipping_carrier",
    "shipping_date",
    "shipping_tracking_number",
    "uncategorized_text",
];

/// The most characters all evidence fields hold together (Stripe's limit).
pub const EVIDENCE_MAX: usize = 150_000;

/// Evidence: text by field name, only the fields given.
pub type Evidence = std::collections::BTreeMap<String, String>;

/// What `POST /disputes/{id}` asks: evidence fields to set (an empty text clears one), and
/// whether to submit the evidence now (the default) or only stage it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EvidenceAsk {
    pub evidence: Evidence,
    pub submit: bool,
}

impl EvidenceAsk {
    /// Reads the body of an evidence request.
    pub fn read(body: &Map<String, Value>) -> Result<EvidenceAsk, Errors> {
        let r = Reader::new(body);
        let mut errors = Errors::default();
        let submit = r.boolean("submit", &mut errors).unwrap_or(true);
        let mut evidence = Evidence::new();
        if let Some(fields) = r.object("evidence", "evidence.", &mut errors) {
            let Some(Value::Object(map)) = r.value("evidence") else { unreachable!("an object was read") };
            for key in map.keys() {
                if !EVIDENCE_FIELDS.contains(&key.as_str()) {
                    errors.add(&fields.key(key), msg::NOT_INCLUDED);
                    continue;
                }
                let text = fields.string(key, EVIDENCE_MAX, &mut errors).unwrap_or_default();
                evidence.insert(key.clone(), text.trim().to_string());
            }
        }
        errors.into_result(|| EvidenceAsk { evidence, submit })
    }
}

/// The evidence `staged` with `asked` laid over it (an empty field is removed), or the field
/// error when together they are longer than [`EVIDENCE_MAX`].
pub fn merge_evidence(staged: &Evidence, asked: &Evidence) -> Result<Evidence, Errors> {
    let mut merged = staged.clone();
    for (key, text) in asked {
        match text.is_empty() {
            true => merged.remove(key),
            false => merged.insert(key.clone(), text.clone()),
        };
    }
    let total: usize = merged.values().map(|t| t.chars().count()).sum();
    if total > EVIDENCE_MAX {
        return Err(Errors::one("evidence", format!("is too long together (maximum is {EVIDENCE_MAX} characters)")));
    }
    Ok(merged)
}

/// Why a dispute cannot take evidence or be accepted now.
pub fn refuse_answer(status: DisputeStatus) -> Option<String> {
    match status {
        DisputeStatus::NeedsResponse => None,
        DisputeStatus::UnderReview => Some("This dispute's evidence was submitted: it is under review".into()),
        status => Some(format!("This dispute is closed ({status})")),
    }
}

/// The simulated processor's card network: what its test cards do after a payment.
pub mod simulated {
    use super::*;

    /// How long after a payment its dispute or early fraud warning comes.
    pub const AFTER_PAYMENT: Duration = Duration::minutes(2);
    /// How long after evidence is submitted the bank decides.
    pub const REVIEW: Duration = Duration::minutes(2);
    /// How long the merchant has to answer.
    pub const DUE_IN: Duration = Duration::days(7);
    /// The text in the evidence that loses the dispute (any other evidence wins it).
    pub const LOSING_EVIDENCE: &str = "losing_evidence";

    /// The dispute fee, in the payment's currency: 15 of its major units.
    pub fn fee(exponent: u32) -> i64 {
        15 * 10_i64.pow(exponent)
    }

    /// A dispute opening at `now`: an inquiry or a chargeback of `amount`.
    pub fn opened(reference: String, inquiry: bool, reason: &str, amount: i64, fee: i64, now: DateTime<Utc>) -> Seen {
        let stage = if inquiry { DisputeStage::Inquiry } else { DisputeStage::Chargeback };
        let withdrawn = (!inquiry).then_some(Funds { amount, fee });
        Seen {
            reference,
            stage,
            status: DisputeStatus::NeedsResponse,
            reason: reason.to_string(),
            amount,
            fee: withdrawn.map(|w| w.fee),
            evidence_due_by: Some(now + DUE_IN),
            withdrawn,
            reinstated: None,
        }
    }

    /// The bank's decision on an answered dispute: lost when the evidence says
    /// [`LOSING_EVIDENCE`], else won (an inquiry closes without a chargeback).
    pub fn decided(before: &Seen, evidence: &Evidence) -> Seen {
        let loses = evidence.values().any(|text| text.contains(LOSING_EVIDENCE));
        let (status, reinstated) = match (before.stage, loses) {
            (DisputeStage::Inquiry, _) => (DisputeStatus::WarningClosed, None),
            (_, true) => (DisputeStatus::Lost, None),
            (_, false) => (DisputeStatus::Won, before.withdrawn.map(|w| Funds { amount: w.amount, fee: 0 })),
        };
        Seen { status, reinstated, ..before.clone() }
    }

    /// An unanswered dispute at its due date: an inquiry becomes a chargeback (the money is
    /// taken, a new due date starts); a chargeback is lost (`expired`).
    pub fn unanswered(before: &Seen, fee: i64, now: DateTime<Utc>) -> Seen {
        match before.stage {
            DisputeStage::Inquiry => Seen {
                stage: DisputeStage::Chargeback,
                status: DisputeStatus::NeedsResponse,
                fee: Some(fee),
                evidence_due_by: Some(now + DUE_IN),
                withdrawn: Some(Funds { amount: before.amount, fee }),
                ..before.clone()
            },
            _ => Seen { status: DisputeStatus::Expired, ..before.clone() },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn at(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    fn opened() -> Seen {
        simulated::opened("dp_1".into(), false, "fraudulent", 1000, 1500, at("2026-11-28T10:00:00Z"))
    }

    fn current(stage: DisputeStage, status: DisputeStatus, withdrawn: bool) -> Current {
        Current { stage, status, accepted: false, answered: false, withdrawn, reinstated: false }
    }

    #[test]
    fn a_new_dispute_opens_with_its_money_taken() {
        let change = advance(None, &opened());
        assert_eq!(change.moved, Some((DisputeStage::Chargeback, DisputeStatus::NeedsResponse)));
        assert_eq!(change.withdraw, Some(Funds { amount: 1000, fee: 1500 }));
        assert_eq!(change.reinstate, None);
    }

    #[test]
    fn reports_only_move_a_dispute_forward_and_money_moves_once() {
        let open = current(DisputeStage::Chargeback, DisputeStatus::NeedsResponse, true);
        assert!(advance(Some(open), &opened()).is_empty(), "the same report again changes nothing");
        let won = simulated::decided(&opened(), &Evidence::new());
        let change = advance(Some(open), &won);
        assert_eq!(change.moved, Some((DisputeStage::Chargeback, DisputeStatus::Won)));
        assert_eq!(change.reinstate, Some(Funds { amount: 1000, fee: 0 }));
        let closed = Current { status: DisputeStatus::Won, reinstated: true, ..open };
        assert!(advance(Some(closed), &opened()).is_empty(), "a late report of the opening changes nothing");
        assert!(advance(Some(closed), &won).is_empty());
        let review = Seen { status: DisputeStatus::UnderReview, ..opened() };
        assert!(advance(Some(closed), &review).is_empty());
    }

    #[test]
    fn money_is_given_back_only_after_it_was_taken() {
        let inquiry = current(DisputeStage::Inquiry, DisputeStatus::NeedsResponse, false);
        let odd = Seen { reinstated: Some(Funds { amount: 1000, fee: 0 }), ..opened() };
        let change = advance(Some(inquiry), &Seen { withdrawn: None, ..odd.clone() });
        assert_eq!(change.reinstate, None);
        let change = advance(Some(inquiry), &odd);
        assert_eq!((change.withdraw.is_some(), change.reinstate.is_some()), (true, true));
    }

    #[test]
    fn lost_reads_as_accepted_or_expired_when_that_is_why() {
        let due = Some(at("2026-12-05T10:00:00Z"));
        assert_eq!(lost_as(true, false, due, at("2026-12-01T00:00:00Z")), DisputeStatus::Accepted);
        assert_eq!(lost_as(false, false, due, at("2026-12-06T00:00:00Z")), DisputeStatus::Expired);
        assert_eq!(lost_as(false, true, due, at("2026-12-06T00:00:00Z")), DisputeStatus::Lost);
        let accepted =
            Current { accepted: true, ..current(DisputeStage::Chargeback, DisputeStatus::NeedsResponse, true) };
        let lost = Seen { status: DisputeStatus::Lost, ..opened() };
        assert_eq!(advance(Some(accepted), &lost).moved, Some((DisputeStage::Chargeback, DisputeStatus::Accepted)));
    }

    #[test]
    fn an_unanswered_inquiry_becomes_a_chargeback_and_an_unanswered_chargeback_is_lost() {
        let now = at("2026-12-05T10:00:00Z");
        let inquiry = simulated::opened("dp_2".into(), true, "fraudulent", 1000, 1500, at("2026-11-28T10:00:00Z"));
        assert_eq!(inquiry.withdrawn, None);
        let escalated = simulated::unanswered(&inquiry, 1500, now);
        assert_eq!((escalated.stage, escalated.status), (DisputeStage::Chargeback, DisputeStatus::NeedsResponse));
        assert_eq!(escalated.evidence_due_by, Some(now + simulated::DUE_IN));
        let change = advance(Some(current(DisputeStage::Inquiry, DisputeStatus::UnderReview, false)), &escalated);
        assert_eq!(change.withdraw, Some(Funds { amount: 1000, fee: 1500 }), "a later stage opens past a review");
        assert_eq!(simulated::unanswered(&escalated, 1500, now).status, DisputeStatus::Expired);
    }

    #[test]
    fn the_evidence_decides_a_simulated_dispute() {
        let losing = Evidence::from([("uncategorized_text".to_string(), "losing_evidence".to_string())]);
        assert_eq!(simulated::decided(&opened(), &losing).status, DisputeStatus::Lost);
        let winning = Evidence::from([("product_description".to_string(), "A signed book".to_string())]);
        assert_eq!(simulated::decided(&opened(), &winning).status, DisputeStatus::Won);
        let inquiry = simulated::opened("dp_3".into(), true, "fraudulent", 10, 0, at("2026-11-28T10:00:00Z"));
        assert_eq!(simulated::decided(&inquiry, &losing).status, DisputeStatus::WarningClosed);
    }

    #[test]
    fn evidence_is_read_with_every_problem_named_and_merged_over_what_was_staged() {
        let ask = |body: Value| EvidenceAsk::read(body.as_object().unwrap());
        let read = ask(json!({"evidence": {"customer_name": " Ann Lee "}, "submit": false})).unwrap();
        assert_eq!(read.evidence.get("customer_name").map(String::as_str), Some("Ann Lee"));
        assert!(!read.submit);
        assert!(ask(json!({})).unwrap().submit, "evidence is submitted unless asked not to");
        let errors = ask(json!({"evidence": {"receipt": "x", "customer_name": 5}})).unwrap_err();
        assert!(errors.has("evidence.receipt") && errors.has("evidence.customer_name"));
        assert!(ask(json!({"evidence": "text"})).unwrap_err().has("evidence"));
        let staged = Evidence::from([("customer_name".into(), "Ann".into()), ("service_date".into(), "May".into())]);
        let asked = Evidence::from([("customer_name".into(), "".into()), ("shipping_carrier".into(), "DHL".into())]);
        let merged = merge_evidence(&staged, &asked).unwrap();
        assert_eq!(merged.keys().collect::<Vec<_>>(), ["service_date", "shipping_carrier"]);
        let long = Evidence::from([("uncategorized_text".into(), "x".repeat(EVIDENCE_MAX))]);
        assert!(merge_evidence(&long, &Evidence::from([("customer_name".into(), "A".into())])).is_err());
    }

    #[test]
    fn the_time_left_is_counted_in_days_then_hours() {
        let due = at("2026-12-05T10:00:00Z");
        assert_eq!(due_in(due, at("2026-11-28T09:00:00Z")), DueIn::Days(7));
        assert_eq!(due_in(due, at("2026-12-04T09:59:00Z")), DueIn::Days(1));
        assert_eq!(due_in(due, at("2026-12-04T10:30:00Z")), DueIn::Hours(23));
        assert_eq!(due_in(due, at("2026-12-05T09:30:00Z")), DueIn::Hours(0));
        assert_eq!(due_in(due, due), DueIn::Past);
    }

    #[test]
    fn only_a_dispute_that_needs_a_response_takes_one() {
        assert_eq!(refuse_answer(DisputeStatus::NeedsResponse), None);
        assert!(refuse_answer(DisputeStatus::UnderReview).is_some());
        assert!(refuse_answer(DisputeStatus::Won).unwrap().contains("closed"));
    }
}
