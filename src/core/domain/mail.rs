//! Subscriber e-mail rules: the kinds of mail, which event causes which, which a shop sends,
//! when a failed attempt is tried again, and the reminders' timing. No SMTP here.

use chrono::{DateTime, TimeDelta, TimeZone, Utc};

use super::Errors;
use super::billing::State;
use super::event::EventType;
use super::vocab::words;

words! {
    /// What a mail is about. `portal_link` answers a subscriber asking for a link to their
    /// page; it cannot be turned off. `security_notice` (to the shop's owners, of a change to
    /// its access or money) and `account_locked` (to a user whose account wrong passwords
    /// locked, with the link that opens it) go to the shop's own users, never to customers.
    MailKind {
        Receipt = "receipt", RefundReceipt = "refund_receipt", RenewalFailed = "renewal_failed",
        SubscriptionEnded = "subscription_ended", TrialEnding = "trial_ending",
        RenewalReminder = "renewal_reminder", CardExpiring = "card_expiring",
        CancellationConfirmed = "cancellation_confirmed", PortalLink = "portal_link",
        SecurityNotice = "security_notice", AccountLocked = "account_locked",
        // To the shop's owners: a cardholder disputed a payment.
        DisputeOpened = "dispute_opened",
        // To the shop's owners: a refund failed after the processor had accepted it.
        RefundFailedLater = "refund_failed_later",
    }
}

words! {
    /// Where a mail stands: `queued` until the SMTP server accepts it (`sent`) or refuses it
    /// for good, or every attempt failed (`failed`); `skipped` when there was nothing to send
    /// by the time its turn came (no address, or a reminder that no longer applies).
    MailStatus { Queued = "queued", Sent = "sent", Failed = "failed", Skipped = "skipped" }
}

impl MailKind {
    /// Whether mails of this kind go to the shop's own users rather than its customers.
    pub fn to_staff(self) -> bool {
        matches!(
            self,
            MailKind::SecurityNotice | MailKind::AccountLocked | MailKind::DisputeOpened | MailKind::RefundFailedLater
        )
    }

    /// The kinds a merchant turns on or off, in the order the dashboard lists them.
    pub const CHOSEN: [MailKind; 8] = [
        MailKind::Receipt,
        MailKind::RefundReceipt,
        MailKind::RenewalFailed,
        MailKind::SubscriptionEnded,
        MailKind::TrialEnding,
        MailKind::RenewalReminder,
        MailKind::CardExpiring,
        MailKind::CancellationConfirmed,
    ];

    /// The mail an event causes, if any. `data` is the event's object as it was then: a
    /// subscription cancelled for the end of its period was confirmed when that was asked,
    /// so its ending sends nothing more.
    pub fn of_event(kind: EventType, data: &serde_json::Value) -> Option<MailKind> {
        match kind {
            EventType::PaymentSucceeded | EventType::PaymentCaptured => Some(MailKind::Receipt),
            EventType::RefundSucceeded => Some(MailKind::RefundReceipt),
            EventType::SubscriptionRetryScheduled | EventType::SubscriptionActionRequired => {
                Some(MailKind::RenewalFailed)
            }
            EventType::SubscriptionFailed | EventType::SubscriptionError => Some(MailKind::SubscriptionEnded),
            EventType::SubscriptionCanceled if data["cancel_at_period_end"] == true => None,
            EventType::SubscriptionCanceled | EventType::SubscriptionCancellationRequested => {
                Some(MailKind::CancellationConfirmed)
            }
            _ => None,
        }
    }
}

/// Mails a shop sends; every kind is on unless the merchant turned it off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MailSettings {
    /// The kinds turned off.
    pub off: Vec<MailKind>,
    /// Days before a renewal its reminder goes.
    pub reminder_days: i32,
    /// Whether renewals of every plan are announced; by default only those of plans whose
    /// period is longer than 180 days (Mastercard's rule).
    pub reminder_all_periods: bool,
}

/// A mail to the shop's users not tried within this long after it was queued (the instance
/// sent no mail then) is skipped: it would tell of a lock long open, a change long known.
pub const STAFF_NEWS: TimeDelta = TimeDelta::days(1);
/// Days before a renewal its reminder goes unless the shop says otherwise.
pub const REMINDER_DAYS: i32 = 7;
/// The shortest and longest lead a shop may choose (Mastercard asks for 7 to 30 days).
pub const REMINDER_DAYS_RANGE: std::ops::RangeInclusive<i32> = 1..=60;
/// A free trial's end is announced this long before (Visa: at least 7 days).
pub const TRIAL_NOTICE: TimeDelta = TimeDelta::days(7);
/// A card that expires before the next charge is announced this long before it.
pub const CARD_NOTICE: TimeDelta = TimeDelta::days(14);
/// Renewals of plans with a longer period are announced by default.
pub const LONG_PERIOD: TimeDelta = TimeDelta::days(180);

impl MailSettings {
    /// The settings as stored: the kinds turned off (comma-separated words), the lead
    /// (none for the default) and the all-periods switch.
    pub fn from_db(off: &str, reminder_days: Option<i32>, reminder_all_periods: bool) -> MailSettings {
        MailSettings {
            off: off.split(',').filter_map(|w| MailKind::parse(w.trim())).collect(),
            reminder_days: reminder_days.unwrap_or(REMINDER_DAYS),
            reminder_all_periods,
        }
    }

    /// The kinds turned off, as stored.
    pub fn off_to_db(&self) -> String {
        self.off.iter().map(|k| k.as_str()).collect::<Vec<_>>().join(",")
    }

    /// Whether the shop sends mails of this kind (only the chosen kinds can be turned off).
    pub fn sends(&self, kind: MailKind) -> bool {
        !MailKind::CHOSEN.contains(&kind) || !self.off.contains(&kind)
    }

    /// Checks a lead chosen in the dashboard.
    pub fn check_days(days: &str, errors: &mut Errors) -> Option<i32> {
        match days.trim().parse::<i32>() {
            Ok(d) if REMINDER_DAYS_RANGE.contains(&d) => Some(d),
            _ => {
                let (low, high) = (REMINDER_DAYS_RANGE.start(), REMINDER_DAYS_RANGE.end());
                errors.add("reminder_days", format!("must be a whole number of days from {low} to {high}"));
                None
            }
        }
    }
}

impl Default for MailSettings {
    fn default() -> Self {
        MailSettings { off: Vec::new(), reminder_days: REMINDER_DAYS, reminder_all_periods: false }
    }
}

/// The waits after each failed attempt: the first is made at once, the last about three
/// days after it.
pub const RETRY_DELAYS: [TimeDelta; 9] = [
    TimeDelta::seconds(30),
    TimeDelta::minutes(2),
    TimeDelta::minutes(10),
    TimeDelta::minutes(30),
    TimeDelta::hours(1),
    TimeDelta::hours(3),
    TimeDelta::hours(8),
    TimeDelta::hours(24),
    TimeDelta::hours(36),
];

/// When to try again after `attempts` failed attempts; `None` when none is left.
pub fn next_attempt(attempts: i32, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let index = usize::try_from(attempts).ok()?.checked_sub(1)?;
    RETRY_DELAYS.get(index).map(|delay| now + *delay)
}

/// The stable `Message-ID` of a mail: the same on every attempt, so that the one duplicate
/// SMTP cannot rule out (accepted, then the connection lost before paydesk heard it) is
/// recognisable as one.
pub fn message_id(mail_id: &str, sender: &str) -> String {
    let domain = sender.rsplit_once('@').map_or("paydesk.invalid", |(_, d)| d.trim_end_matches('>'));
    format!("<{mail_id}@{domain}>")
}

/// Whether `text` is an address a mail may go to or come from: one `@`, a dotted domain,
/// no spaces or angle brackets (the customers' addresses are checked the same way).
pub fn is_address(text: &str) -> bool {
    let Some((local, domain)) = text.rsplit_once('@') else { return false };
    !local.is_empty()
        && local.len() <= 64
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && text.len() <= 254
        && !text.chars().any(|c| c.is_whitespace() || c.is_control() || "<>()[],;:\"\\".contains(c))
}

/// What a subscription's reminders look at: its state, next charge, its plan's period and
/// whether that charge is the end of a free or promotional trial, and its card's expiry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReminderFacts {
    pub state: State,
    pub renew_at: DateTime<Utc>,
    /// How long the plan's period that ends at the charge is (months as the calendar has them).
    pub period: TimeDelta,
    pub card_expiry: Option<(i32, i32)>,
    pub cancel_at_period_end: bool,
}

/// The reminders of the subscription's next charge, each with the moment it is due (it may
/// be now or past: a trial shorter than the notice is announced at once).
pub fn reminders(facts: &ReminderFacts, settings: &MailSettings) -> Vec<(MailKind, DateTime<Utc>)> {
    let mut due = Vec::new();
    if facts.cancel_at_period_end || !matches!(facts.state, State::Trial | State::Active) {
        return due;
    }
    let at = facts.renew_at;
    if facts.state == State::Trial {
        due.push((MailKind::TrialEnding, at - TRIAL_NOTICE));
    } else if settings.reminder_all_periods || facts.period > LONG_PERIOD {
        due.push((MailKind::RenewalReminder, at - TimeDelta::days(i64::from(settings.reminder_days))));
    }
    if let Some((month, year)) = facts.card_expiry
        && card_expires_before(month, year, at)
    {
        due.push((MailKind::CardExpiring, at - CARD_NOTICE));
    }
    due.retain(|(kind, _)| settings.sends(*kind));
    due
}

/// Whether a card valid through `month`/`year` (the last day of that month) has expired by
/// `at`.
pub fn card_expires_before(month: i32, year: i32, at: DateTime<Utc>) -> bool {
    let (next_year, next_month) = if month >= 12 { (year + 1, 1) } else { (year, month + 1) };
    let month = u32::try_from(next_month).unwrap_or(1);
    match Utc.with_ymd_and_hms(next_year, month, 1, 0, 0, 0).single() {
        Some(end) => end <= at,
        None => false,
    }
}

/// The dedupe key of a reminder: one per kind, subscription and charge.
pub fn reminder_key(kind: MailKind, subscription_id: &str, renew_at: DateTime<Utc>) -> String {
    format!("{kind}:{subscription_id}:{}", renew_at.timestamp_millis())
}

/// The charge a reminder's key names.
pub fn reminder_time(key: &str) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp_millis(key.rsplit_once(':')?.1.parse().ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> DateTime<Utc> {
        text.parse().unwrap()
    }

    #[test]
    fn events_cause_their_mails() {
        let none = serde_json::json!({});
        assert_eq!(MailKind::of_event(EventType::PaymentSucceeded, &none), Some(MailKind::Receipt));
        assert_eq!(MailKind::of_event(EventType::PaymentAuthorized, &none), None);
        assert_eq!(MailKind::of_event(EventType::SubscriptionRetryScheduled, &none), Some(MailKind::RenewalFailed));
        assert_eq!(MailKind::of_event(EventType::SubscriptionFailed, &none), Some(MailKind::SubscriptionEnded));
        let at_end = serde_json::json!({"cancel_at_period_end": true});
        assert_eq!(MailKind::of_event(EventType::SubscriptionCanceled, &at_end), None);
        assert_eq!(MailKind::of_event(EventType::SubscriptionCanceled, &none), Some(MailKind::CancellationConfirmed));
    }

    #[test]
    fn settings_round_trip_and_portal_links_always_go() {
        let s = MailSettings::from_db("receipt, trial_ending,nonsense", Some(10), true);
        assert_eq!(s.off, vec![MailKind::Receipt, MailKind::TrialEnding]);
        assert_eq!(s.off_to_db(), "receipt,trial_ending");
        assert!(!s.sends(MailKind::Receipt) && s.sends(MailKind::RenewalFailed) && s.sends(MailKind::PortalLink));
        let mut errors = Errors::default();
        assert_eq!(MailSettings::check_days("0", &mut errors), None);
        assert_eq!(MailSettings::check_days(" 30 ", &mut errors), Some(30));
    }

    #[test]
    fn retries_grow_then_stop() {
        let now = at("2026-11-25T10:00:00Z");
        assert_eq!(next_attempt(1, now), Some(now + TimeDelta::seconds(30)));
        assert_eq!(next_attempt(9, now), Some(now + TimeDelta::hours(36)));
        assert_eq!(next_attempt(10, now), None);
        assert_eq!(next_attempt(0, now), None);
    }

    #[test]
    fn message_ids_name_the_mail_and_the_senders_domain() {
        assert_eq!(message_id("mail_1", "shop@example.com"), "<mail_1@example.com>");
        assert_eq!(message_id("mail_1", "nobody"), "<mail_1@paydesk.invalid>");
    }

    #[test]
    fn a_reminders_key_names_its_charge() {
        let at = at("2027-01-15T10:00:00.250Z");
        let key = reminder_key(MailKind::TrialEnding, "sbs_1", at);
        assert_eq!(key, "trial_ending:sbs_1:1800007200250");
        assert_eq!(reminder_time(&key), Some(at));
        assert_eq!(reminder_time("nonsense"), None);
    }

    #[test]
    fn addresses() {
        assert!(is_address("ann@example.com"));
        for bad in ["", "ann", "ann@example", "a b@example.com", "ann@.com", "<ann@example.com>", "ann@example.com\r\n"]
        {
            assert!(!is_address(bad), "{bad:?}");
        }
    }

    fn facts(state: State, renew_at: &str, days: i64) -> ReminderFacts {
        ReminderFacts {
            state,
            renew_at: at(renew_at),
            period: TimeDelta::days(days),
            card_expiry: None,
            cancel_at_period_end: false,
        }
    }

    #[test]
    fn a_trial_is_announced_a_week_before_it_turns_paid() {
        let f = facts(State::Trial, "2026-12-20T00:00:00Z", 30);
        assert_eq!(reminders(&f, &MailSettings::default()), vec![(MailKind::TrialEnding, at("2026-12-13T00:00:00Z"))]);
    }

    #[test]
    fn renewals_are_announced_for_long_periods_or_when_asked() {
        let settings = MailSettings::default();
        assert!(reminders(&facts(State::Active, "2026-12-20T00:00:00Z", 30), &settings).is_empty());
        let yearly = facts(State::Active, "2026-12-20T00:00:00Z", 365);
        assert_eq!(reminders(&yearly, &settings), vec![(MailKind::RenewalReminder, at("2026-12-13T00:00:00Z"))]);
        let all = MailSettings { reminder_all_periods: true, reminder_days: 3, ..settings.clone() };
        let monthly = facts(State::Active, "2026-12-20T00:00:00Z", 30);
        assert_eq!(reminders(&monthly, &all), vec![(MailKind::RenewalReminder, at("2026-12-17T00:00:00Z"))]);
        let ending = ReminderFacts { cancel_at_period_end: true, ..yearly };
        assert!(reminders(&ending, &settings).is_empty());
        assert!(reminders(&facts(State::FailedAttempt, "2026-12-20T00:00:00Z", 365), &settings).is_empty());
    }

    #[test]
    fn a_card_that_expires_before_the_charge_is_announced() {
        let mut f = facts(State::Active, "2027-01-05T00:00:00Z", 30);
        f.card_expiry = Some((12, 2026));
        assert_eq!(reminders(&f, &MailSettings::default()), vec![(MailKind::CardExpiring, at("2026-12-22T00:00:00Z"))]);
        f.card_expiry = Some((1, 2027));
        assert!(reminders(&f, &MailSettings::default()).is_empty());
        let off = MailSettings { off: vec![MailKind::CardExpiring], ..MailSettings::default() };
        f.card_expiry = Some((12, 2026));
        assert!(reminders(&f, &off).is_empty());
    }
}
