//! Stripe's disputes in paydesk's terms (a table like the payment statuses'), and the calls
//! that answer one: evidence (staged, or submitted) and acceptance (`close`).

use chrono::{DateTime, Utc};

use super::api::{Api, encode};
use super::status::Reading;
use super::wire::{Dispute, Form};
use crate::domain::dispute::{DisputeStage, DisputeStatus, Evidence, Funds, Seen, lost_as};
use crate::external::acquirer::DisputeAnswer as Answered;

/// Stripe's dispute statuses: the stage and status each means. `lost` is read further by
/// [`lost_as`] (accepted, or expired unanswered).
const STATUSES: &[(&str, DisputeStage, DisputeStatus)] = &[
    ("warning_needs_response", DisputeStage::Inquiry, DisputeStatus::NeedsResponse),
    ("warning_under_review", DisputeStage::Inquiry, DisputeStatus::UnderReview),
    ("warning_closed", DisputeStage::Inquiry, DisputeStatus::WarningClosed),
    ("needs_response", DisputeStage::Chargeback, DisputeStatus::NeedsResponse),
    ("under_review", DisputeStage::Chargeback, DisputeStatus::UnderReview),
    ("won", DisputeStage::Chargeback, DisputeStatus::Won),
    ("lost", DisputeStage::Chargeback, DisputeStatus::Lost),
    // Resolved before it became a chargeback (newer API versions).
    ("prevented", DisputeStage::Inquiry, DisputeStatus::WarningClosed),
];

/// The dispute as paydesk reads it at `now`; `None` for a status it does not know. A
/// chargeback asked for a response again after evidence was submitted is in
/// pre-arbitration. Its fee is known when Stripe took it in the dispute's currency.
pub fn seen(d: &Dispute, now: DateTime<Utc>) -> Option<Seen> {
    let (_, mut stage, status) = *STATUSES.iter().find(|(word, _, _)| *word == d.status)?;
    let details = d.evidence_details.clone().unwrap_or_default();
    if stage == DisputeStage::Chargeback && status == DisputeStatus::NeedsResponse && details.submission_count > 0 {
        stage = DisputeStage::PreArbitration;
    }
    let due_by = details.due_by.and_then(|s| DateTime::from_timestamp(s, 0));
    let status = match status {
        DisputeStatus::Lost => lost_as(false, details.has_evidence, due_by.filter(|_| details.past_due), now),
        status => status,
    };
    let same = |currency: &str| currency.eq_ignore_ascii_case(&d.currency);
    let withdrawal = d.balance_transactions.iter().find(|b| b.amount < 0);
    let reinstatement = d.balance_transactions.iter().find(|b| b.amount > 0);
    let withdrawn =
        withdrawal.map(|b| Funds { amount: d.amount, fee: if same(&b.currency) { b.fee.max(0) } else { 0 } });
    let reinstated = reinstatement.map(|b| Funds {
        amount: if same(&b.currency) { b.amount } else { d.amount },
        fee: if same(&b.currency) { (-b.fee).max(0) } else { 0 },
    });
    Some(Seen {
        reference: d.id.clone(),
        stage,
        status,
        reason: d.reason.clone().unwrap_or_else(|| "general".into()),
        amount: d.amount,
        fee: withdrawal.filter(|b| same(&b.currency)).map(|b| b.fee),
        evidence_due_by: due_by,
        withdrawn,
        reinstated,
    })
}

impl Api<'_> {
    /// Sends evidence of the dispute `id` (submitted with `submit`), under `key`.
    pub async fn answer_dispute(&self, id: &str, evidence: &Evidence, submit: bool, key: &str) -> Answered {
        let mut form = Form::new();
        for (field, text) in evidence {
            form = form.set(&format!("evidence[{field}]"), text);
        }
        let form = form.set("submit", submit);
        self.dispute_call(&format!("/v1/disputes/{}", encode(id)), &form, key).await
    }

    /// Accepts the dispute `id` (Stripe: closes it, lost), under `key`.
    pub async fn close_dispute(&self, id: &str, key: &str) -> Answered {
        self.dispute_call(&format!("/v1/disputes/{}/close", encode(id)), &Form::new(), key).await
    }

    async fn dispute_call(&self, path: &str, form: &Form, key: &str) -> Answered {
        match self.create::<Dispute>(path, form, key).await {
            Ok(dispute) => Answered::Done(seen(&dispute, Utc::now())),
            Err(Reading::Refused { message } | Reading::Declined { message, .. }) => Answered::Refused(message),
            Err(Reading::Unreached { .. } | Reading::RetryLater | Reading::Unknown) => Answered::Unknown,
            Err(other) => Answered::Refused(format!("{other:?}")),
        }
    }

    /// The account's disputes created since `since` (newest first, every page).
    pub async fn disputes_since(&self, since: DateTime<Utc>) -> Result<Vec<Dispute>, Reading> {
        let mut found: Vec<Dispute> = Vec::new();
        loop {
            let mut path = format!("/v1/disputes?limit=100&created[gte]={}", since.timestamp());
            if let Some(last) = found.last() {
                path.push_str(&format!("&starting_after={}", encode(&last.id)));
            }
            let page = self.fetch::<super::wire::List<Dispute>>(&path).await?;
            let more = page.has_more && !page.data.is_empty();
            found.extend(page.data);
            if !more || found.len() >= 10_000 {
                return Ok(found);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::external::acquirer::stripe::wire::{BalanceTransaction, EvidenceDetails};

    fn dispute(status: &str) -> Dispute {
        Dispute {
            id: "dp_1".into(),
            amount: 990,
            currency: "eur".into(),
            status: status.into(),
            reason: Some("fraudulent".into()),
            evidence_details: Some(EvidenceDetails { due_by: Some(1_800_000_000), ..Default::default() }),
            ..Default::default()
        }
    }

    #[test]
    fn every_stripe_status_reads_as_a_stage_and_status() {
        let now = Utc::now();
        let read = |status: &str| seen(&dispute(status), now).map(|s| (s.stage, s.status));
        assert_eq!(read("warning_needs_response"), Some((DisputeStage::Inquiry, DisputeStatus::NeedsResponse)));
        assert_eq!(read("under_review"), Some((DisputeStage::Chargeback, DisputeStatus::UnderReview)));
        assert_eq!(read("won"), Some((DisputeStage::Chargeback, DisputeStatus::Won)));
        assert_eq!(read("lost"), Some((DisputeStage::Chargeback, DisputeStatus::Lost)));
        assert_eq!(read("mystery"), None);
        let mut again = dispute("needs_response");
        again.evidence_details.as_mut().unwrap().submission_count = 1;
        assert_eq!(seen(&again, now).unwrap().stage, DisputeStage::PreArbitration);
        let mut unanswered = dispute("lost");
        unanswered.evidence_details.as_mut().unwrap().past_due = true;
        let late: DateTime<Utc> = "2027-02-01T00:00:00Z".parse().unwrap();
        assert_eq!(seen(&unanswered, late).unwrap().status, DisputeStatus::Expired);
    }

    #[test]
    fn its_money_is_read_from_its_balance_transactions() {
        let mut d = dispute("won");
        d.balance_transactions = vec![
            BalanceTransaction { amount: -990, fee: 1500, currency: "eur".into() },
            BalanceTransaction { amount: 990, fee: 0, currency: "eur".into() },
        ];
        let read = seen(&d, Utc::now()).unwrap();
        assert_eq!(read.withdrawn, Some(Funds { amount: 990, fee: 1500 }));
        assert_eq!(read.reinstated, Some(Funds { amount: 990, fee: 0 }));
        assert_eq!(read.fee, Some(1500));
        d.balance_transactions = vec![BalanceTransaction { amount: -1100, fee: 1700, currency: "usd".into() }];
        let read = seen(&d, Utc::now()).unwrap();
        assert_eq!(read.withdrawn, Some(Funds { amount: 990, fee: 0 }), "a fee in another currency is not counted");
        assert_eq!(read.fee, None);
    }
}
