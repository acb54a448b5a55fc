//! The event log's vocabulary: what happened, as an integrator acts on it, and which events a
//! change of a subscription (a line of its timeline) means.

use chrono::{DateTime, Utc};

use super::Errors;
use super::billing::State;
use super::vocab::{PaymentStatus, words};

words! {
    /// The type of an event: the object's kind, a dot, what happened to it.
    EventType {
        PaymentSucceeded = "payment.succeeded", PaymentFailed = "payment.failed",
        PaymentAuthorized = "payment.authorized", PaymentCaptured = "payment.captured",
        PaymentVoided = "payment.voided", PaymentRefunded = "payment.refunded",
        RefundSucceeded = "refund.succeeded", RefundFailed = "refund.failed",
        // The card's bank sent an early fraud warning about a payment.
        PaymentEarlyFraudWarning = "payment.early_fraud_warning",
        // A cardholder disputed a payment; the dispute moved (its stage, status or money);
        // it ended (won, lost, accepted, expired, or an inquiry closed).
        DisputeCreated = "dispute.created", DisputeUpdated = "dispute.updated", DisputeClosed = "dispute.closed",
        SubscriptionCreated = "subscription.created", SubscriptionTrialStarted = "subscription.trial_started",
        SubscriptionRenewed = "subscription.renewed", SubscriptionPaymentFailed = "subscription.payment_failed",
        SubscriptionRetryScheduled = "subscription.retry_scheduled", SubscriptionCanceled = "subscription.canceled",
        SubscriptionFailed = "subscription.failed", SubscriptionError = "subscription.error",
        SubscriptionExpired = "subscription.expired",
        // The bank asked for the customer on a renewal: it waits for them at its card link.
        SubscriptionActionRequired = "subscription.action_required",
        // Cancelled for the end of the paid period (by the merchant or the subscriber), and
        // that undone; a new card saved by the subscriber.
        SubscriptionCancellationRequested = "subscription.cancellation_requested",
        SubscriptionCancellationWithdrawn = "subscription.cancellation_withdrawn",
        SubscriptionCardUpdated = "subscription.card_updated",
        // Paused (now, or as its paid period ended) and resumed; a pause set for the end of
        // the period, and that undone.
        SubscriptionPaused = "subscription.paused", SubscriptionResumed = "subscription.resumed",
        SubscriptionPauseRequested = "subscription.pause_requested",
        SubscriptionPauseWithdrawn = "subscription.pause_withdrawn",
        // Moved to another plan (now, paid; or as the period ended), and such a move set for
        // the period end (or withdrawn).
        SubscriptionPlanChanged = "subscription.plan_changed",
        SubscriptionPlanChangeScheduled = "subscription.plan_change_scheduled",
        SubscriptionPlanChangeWithdrawn = "subscription.plan_change_withdrawn",
        // A coupon's discount given to it (by the merchant, or its customer on the plan's
        // page), or taken away.
        SubscriptionDiscountApplied = "subscription.discount_applied",
        SubscriptionDiscountRemoved = "subscription.discount_removed",
        ProductSoldOut = "product.sold_out",
        // Archived (its link takes no payments) and brought back; a plan's title or page
        // language edited.
        ProductArchived = "product.archived", ProductRestored = "product.restored",
        PlanUpdated = "plan.updated", PlanArchived = "plan.archived", PlanRestored = "plan.restored",
        // An invoice issued for a charge; a credit note for a refund or a dispute lost.
        InvoiceIssued = "invoice.issued", CreditNoteIssued = "credit_note.issued",
        // An API key stops working within 7 days (its expiry, or a roll's overlap ending).
        ApiKeyExpiring = "api_key.expiring",
    }
}

impl EventType {
    /// The kind of object the event is about: `payment`, `refund`, `subscription`, `product`,
    /// `plan`.
    pub fn object(self) -> &'static str {
        self.as_str().split('.').next().unwrap_or_default()
    }

    /// What happened, without the object: `succeeded`, `trial_started`.
    pub fn action(self) -> &'static str {
        self.as_str().split_once('.').map_or("", |(_, action)| action)
    }

    /// The event of a charge that ended with `status`; none while it is still processing.
    pub fn of_charge(status: PaymentStatus) -> Option<EventType> {
        match status {
            PaymentStatus::Succeeded => Some(EventType::PaymentSucceeded),
            PaymentStatus::Authorized => Some(EventType::PaymentAuthorized),
            PaymentStatus::Failed | PaymentStatus::Error => Some(EventType::PaymentFailed),
            _ => None,
        }
    }

    /// The events a line of a subscription's timeline means: a change `from` a state (none
    /// when the subscription was just created) `to` another, with the status of the charge
    /// it records, if any.
    pub fn of_subscription_change(from: Option<State>, to: State, charge: Option<PaymentStatus>) -> Vec<EventType> {
        let mut types = Vec::new();
        if from.is_none() {
            types.push(EventType::SubscriptionCreated);
        }
        match charge {
            Some(status) if status.is_taken() => types.push(EventType::SubscriptionRenewed),
            Some(_) => types.push(EventType::SubscriptionPaymentFailed),
            None => {}
        }
        let moved = from != Some(to);
        let then = match to {
            State::Trial | State::Active if moved && from == Some(State::Paused) => {
                Some(EventType::SubscriptionResumed)
            }
            State::Paused if moved => Some(EventType::SubscriptionPaused),
            State::Trial if moved => Some(EventType::SubscriptionTrialStarted),
            // Every failed attempt with another one to come schedules a retry.
            State::FailedAttempt if moved || charge.is_some() => Some(EventType::SubscriptionRetryScheduled),
            State::Canceled if moved => Some(EventType::SubscriptionCanceled),
            State::Failed if moved => Some(EventType::SubscriptionFailed),
            State::Error if moved => Some(EventType::SubscriptionError),
            State::Expired if moved => Some(EventType::SubscriptionExpired),
            State::Redirecting if moved && from.is_some() => Some(EventType::SubscriptionActionRequired),
            _ => None,
        };
        types.extend(then);
        types
    }
}

/// Which events a list shows: `?type=` (a type, or `payment.*` for all of an object's),
/// `?object_id=`, and `?created[gte]=` / `[gt]` / `[lte]` / `[lt]` (RFC 3339 or Unix seconds).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventFilter {
    /// Any of these types; empty for every type.
    pub types: Vec<EventType>,
    pub object_id: Option<String>,
    /// From this moment on (inclusive).
    pub since: Option<DateTime<Utc>>,
    /// Before this moment (exclusive).
    pub until: Option<DateTime<Utc>>,
}

impl EventFilter {
    /// The filters among `pairs` (name, value); other names are ignored.
    pub fn parse<K: AsRef<str>, V: AsRef<str>>(pairs: impl IntoIterator<Item = (K, V)>) -> Result<Self, Errors> {
        let mut filter = EventFilter::default();
        let mut errors = Errors::default();
        for (key, value) in pairs {
            let (key, value) = (key.as_ref(), value.as_ref().trim());
            if read_bound("created", (key, value), &mut filter.since, &mut filter.until, &mut errors) {
                continue;
            }
            match key {
                "type" => match types_of(value) {
                    Some(types) => filter.types = types,
                    None => errors.add("type", "is not included in the list"),
                },
                "object_id" => filter.object_id = Some(value.to_string()).filter(|v| !v.is_empty()),
                _ => {}
            }
        }
        errors.into_result(|| filter)
    }
}

/// The types a `type` filter names: one type, or every type of an object (`payment.*`).
fn types_of(value: &str) -> Option<Vec<EventType>> {
    match value.strip_suffix(".*") {
        Some(object) => {
            let types: Vec<EventType> = EventType::ALL.iter().copied().filter(|t| t.object() == object).collect();
            Some(types).filter(|t| !t.is_empty())
        }
        None => EventType::parse(value).map(|t| vec![t]),
    }
}

/// Reads `key` if it is a time bound of `field` (`{field}[gte]`, `[gt]`, `[lte]` or `[lt]`,
/// RFC 3339 or Unix seconds) into `since` (inclusive) or `until` (exclusive), or its error
/// into `errors`: whether it was one.
pub fn read_bound(
    field: &str,
    (key, value): (&str, &str),
    since: &mut Option<DateTime<Utc>>,
    until: &mut Option<DateTime<Utc>>,
    errors: &mut Errors,
) -> bool {
    let Some(bound) = key.strip_prefix(field).filter(|b| ["[gte]", "[gt]", "[lte]", "[lt]"].contains(b)) else {
        return false;
    };
    let Some(at) = moment(value) else {
        errors.add(key, "must be an RFC 3339 time or Unix seconds");
        return true;
    };
    let millisecond = chrono::TimeDelta::milliseconds(1);
    match bound {
        "[gte]" => *since = Some(at),
        "[gt]" => *since = Some(at + millisecond),
        "[lte]" => *until = Some(at + millisecond),
        _ => *until = Some(at),
    }
    true
}

/// A moment of a filter, in the years 0 to 9999 (what every database stores).
pub fn moment(value: &str) -> Option<DateTime<Utc>> {
    let moment = match value.parse::<i64>() {
        Ok(seconds) => DateTime::from_timestamp(seconds, 0),
        Err(_) => DateTime::parse_from_rfc3339(value).ok().map(|t| t.to_utc()),
    };
    moment.filter(|t| (0..=9999).contains(&chrono::Datelike::year(t)))
}

#[cfg(test)]
mod tests {
    use super::EventType::*;
    use super::*;

    #[test]
    fn types_name_their_object_and_action() {
        assert_eq!(SubscriptionTrialStarted.object(), "subscription");
        assert_eq!(SubscriptionTrialStarted.action(), "trial_started");
        assert_eq!(EventType::parse("product.sold_out"), Some(ProductSoldOut));
        assert_eq!(EventType::of_charge(PaymentStatus::Error), Some(PaymentFailed));
        assert_eq!(EventType::of_charge(PaymentStatus::Processing), None);
    }

    #[test]
    fn a_subscription_change_means_its_events() {
        use PaymentStatus as P;
        use State as S;
        let of = EventType::of_subscription_change;
        assert_eq!(of(None, S::Redirecting, None), [SubscriptionCreated]);
        assert_eq!(of(None, S::Active, Some(P::Succeeded)), [SubscriptionCreated, SubscriptionRenewed]);
        assert_eq!(
            of(Some(S::Redirecting), S::Trial, Some(P::Succeeded)),
            [SubscriptionRenewed, SubscriptionTrialStarted]
        );
        assert_eq!(of(Some(S::Redirecting), S::Trial, None), [SubscriptionTrialStarted]);
        assert_eq!(of(Some(S::Active), S::Active, Some(P::Succeeded)), [SubscriptionRenewed]);
        assert_eq!(
            of(Some(S::Active), S::FailedAttempt, Some(P::Failed)),
            [SubscriptionPaymentFailed, SubscriptionRetryScheduled]
        );
        assert_eq!(
            of(Some(S::FailedAttempt), S::FailedAttempt, Some(P::Error)),
            [SubscriptionPaymentFailed, SubscriptionRetryScheduled]
        );
        assert_eq!(
            of(Some(S::FailedAttempt), S::Canceled, Some(P::Failed)),
            [SubscriptionPaymentFailed, SubscriptionCanceled]
        );
        assert_eq!(
            of(Some(S::Redirecting), S::Failed, Some(P::Failed)),
            [SubscriptionPaymentFailed, SubscriptionFailed]
        );
        assert_eq!(of(Some(S::Active), S::Error, Some(P::Error)), [SubscriptionPaymentFailed, SubscriptionError]);
        assert_eq!(of(Some(S::Active), S::Expired, None), [SubscriptionExpired]);
        assert_eq!(
            of(Some(S::Canceled), S::Canceled, Some(P::Succeeded)),
            [SubscriptionRenewed],
            "charged before the cancel"
        );
        assert_eq!(of(Some(S::Trial), S::Canceled, None), [SubscriptionCanceled]);
        assert_eq!(of(Some(S::FailedAttempt), S::Paused, None), [SubscriptionPaused]);
        assert_eq!(of(Some(S::Paused), S::Trial, None), [SubscriptionResumed]);
        assert_eq!(of(Some(S::Paused), S::Active, None), [SubscriptionResumed]);
        assert_eq!(of(Some(S::Paused), S::Canceled, None), [SubscriptionCanceled]);
    }

    #[test]
    fn lists_filter_by_type_object_and_time() {
        let f =
            EventFilter::parse([("type", "refund.*"), ("object_id", "pay_1"), ("created[gte]", "1700000000")]).unwrap();
        assert_eq!(f.types, [RefundSucceeded, RefundFailed]);
        assert_eq!(f.object_id.as_deref(), Some("pay_1"));
        assert_eq!(f.since, DateTime::from_timestamp(1_700_000_000, 0));
        let f = EventFilter::parse([("type", "payment.voided"), ("created[lt]", "2026-11-23T10:00:00+01:00")]).unwrap();
        assert_eq!(f.types, [PaymentVoided]);
        assert_eq!(f.until, Some("2026-11-23T09:00:00Z".parse().unwrap()));
        let e = EventFilter::parse([("type", "payment"), ("created[gt]", "yesterday")]).unwrap_err();
        assert!(e.has("type") && e.has("created[gt]"));
        assert!(EventFilter::parse([("type", "nothing.*")]).is_err());
    }
}
