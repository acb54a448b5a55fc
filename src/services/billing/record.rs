//! Recording answers and transitions: one transaction records a batch's answers, the new
//! schedules and the timeline.

use super::*;

/// Step 5, in one transaction: the answers, the new schedules and the timeline.
pub(super) async fn record(
    state: &AppState,
    charges: Vec<Charge>,
    answers: Vec<Option<ChargeOutcome>>,
    ending: Vec<Transition>,
    token: &str,
    now: DateTime<Utc>,
) -> Result<(Report, Vec<subscriptions::Model>), DbErr> {
    let txn = crate::db::begin(&state.db).await?;
    let (report, saved, charged) = record_in(&txn, state, charges, answers, ending, token, now).await?;
    txn.commit().await?;
    for payment in &charged {
        telemetry::payment(payment.status.as_str(), "billing");
    }
    Ok((report, saved))
}

/// [`record`] in the caller's transaction; answers also the payments whose answers it
/// recorded.
pub(super) async fn record_in(
    txn: &impl ConnectionTrait,
    state: &AppState,
    charges: Vec<Charge>,
    answers: Vec<Option<ChargeOutcome>>,
    ending: Vec<Transition>,
    token: &str,
    now: DateTime<Utc>,
) -> Result<(Report, Vec<subscriptions::Model>, Vec<payments::Model>), DbErr> {
    let mut report = Report::default();
    let (mut saved, mut lines, mut answered) = (Vec::new(), Vec::new(), Vec::new());
    // Changes without a line on the timeline, recorded with the timeline (see below).
    let mut changed = Vec::new();
    for (c, answer) in charges.into_iter().zip(answers) {
        let Some(payment_id) = c.payment_id.clone() else { continue };
        let needs_customer = match &answer {
            Some(ChargeOutcome::Declined { code, .. }) => *code == NEEDS_CUSTOMER,
            Some(_) => false,
            None => c.known_needs_customer,
        };
        let status = match (&answer, c.known) {
            (Some(outcome), _) => {
                report.charged += 1;
                db::payments::record_by_id(txn, &payment_id, outcome, c.asked.unwrap_or(now), now).await?
            }
            (None, known) => known.unwrap_or(PaymentStatus::Error),
        };
        report.succeeded += usize::from(status == PaymentStatus::Succeeded);
        if answer.is_some() {
            answered.push(c.key.clone());
        }
        let answered = Answered { status, needs_customer };
        let new_card = c.new_card.clone().filter(|_| status == PaymentStatus::Succeeded);
        let old_plan = c.sub.plan_id.clone();
        let (mut sub, line) = record_charge(txn, c, answered, payment_id, token, now, state.config.timezone).await?;
        if let Some(moved) = sub.as_ref().filter(|s| s.plan_id != old_plan) {
            changed.push(events::subscription(txn, &state.config, EventType::SubscriptionPlanChanged, moved).await?);
        }
        if let (Some(card), Some(charged)) = (new_card, &sub) {
            sub = db::subscriptions::replace_card(txn, charged, &card, now).await?;
            if let Some(updated) = &sub {
                changed
                    .push(events::subscription(txn, &state.config, EventType::SubscriptionCardUpdated, updated).await?);
            }
        }
        saved.extend(sub);
        lines.extend(line);
    }
    for t in ending {
        let old_plan = t.sub.plan_id.clone();
        if let Some((sub, line)) = transition(txn, t, token, now, state.config.timezone, &mut report).await? {
            if sub.plan_id != old_plan {
                changed.push(events::subscription(txn, &state.config, EventType::SubscriptionPlanChanged, &sub).await?);
            }
            lines.push(events::Line { row: line, sub: sub.clone(), charge: None });
            saved.push(sub);
        }
    }
    let charged = db::payments::find_by_billing_keys(txn, answered).await?;
    let charge_events = charged.iter().filter_map(|p| Some(events::payment(EventType::of_charge(p.status)?, p)));
    events::record(txn, &state.config, charge_events.collect()).await?;
    // The subscriptions' events last but for the invoices, in one call: recording them holds
    // their customers' MRR (`revenue::follow`) until commit, taken in one order, after every
    // row this batch changes and before the invoice series, as every transaction takes them.
    events::timeline_after(txn, &state.config, changed, lines).await?;
    let invoiced: Vec<&payments::Model> = charged.iter().collect();
    crate::services::invoices::issue_for_payments(txn, &state.config, &invoiced, now).await?;
    Ok((report, saved, charged))
}

/// Makes a due change that charges nothing, while the engine holds the claim `token`:
/// answers the subscription as saved and its timeline line, `None` when another change won.
pub(super) async fn transition(
    txn: &impl ConnectionTrait,
    t: Transition,
    token: &str,
    now: DateTime<Utc>,
    tz: chrono_tz::Tz,
    report: &mut Report,
) -> Result<Option<(subscriptions::Model, subscription_events::ActiveModel)>, DbErr> {
    let Transition { sub, terms, progress, due, change } = t;
    let from = sub.state;
    let (saved, reason) = match due {
        Due::Cancel => {
            let reason = sub.cancel_reason.clone().or_else(|| Some("cancelled at the end of the paid period".into()));
            let Some((sub, row)) = db::subscriptions::cancel(txn, &sub, reason, true, now).await? else {
                return Ok(None);
            };
            report.canceled += 1;
            return Ok(Some((sub, row)));
        }
        Due::Expire => {
            let saved = db::subscriptions::save_progress(txn, sub, token, &rules::expire(&progress), None, now).await?;
            report.expired += usize::from(saved.is_some());
            (saved, "billing cycles paid")
        }
        Due::Pause => {
            let paused = rules::pause(&progress, sub.resume_at);
            (
                db::subscriptions::pause_from_period_end(txn, &sub, token, &paused, now).await?,
                "paused at the end of the paid period",
            )
        }
        Due::Resume => {
            let billing = sub.resume_billing.unwrap_or(ResumeBilling::NewPeriod);
            let resumed = rules::resume(&terms, &progress, sub.anchor(now), billing, now, tz);
            let by = db::subscriptions::Resumer::Engine(token);
            let saved = db::subscriptions::resume(txn, &sub, by, (&resumed.0, resumed.1), None, now).await?;
            (saved, resume_reason(billing, true))
        }
        Due::ChangePlan | Due::Prorate { .. } => {
            // A change asked now whose plan is gone is dropped; one at the period end takes
            // effect as the next period begins, and that period is charged at its price next.
            let anchor = match (&change, due) {
                (Some(c), Due::ChangePlan) => {
                    plan_change::anchor_at_period_end(&terms, &c.terms, &progress, sub.anchor(now), tz)
                }
                _ => sub.anchor(now),
            };
            let plan_id = change.as_ref().filter(|_| due == Due::ChangePlan).map(|c| c.plan_id.as_str());
            let reason = if plan_id.is_some() {
                "plan changed at the end of the period"
            } else {
                "plan change dropped: the plan is gone"
            };
            let kept = Progress { change_now: None, change_at_period_end: false, ..progress };
            let saved = db::subscriptions::settle_change(txn, &sub, token, (&kept, anchor), plan_id, None, now).await?;
            (saved, reason)
        }
        Due::Charge { .. } => return Ok(None),
    };
    Ok(saved.map(|sub| {
        let row =
            db::subscriptions::event_row(&sub, Some(from), (sub.state, sub.renew_at), None, Some(reason.into()), now);
        (sub, row)
    }))
}

/// Why a paused subscription goes on, as its timeline says.
pub fn resume_reason(billing: ResumeBilling, on_its_date: bool) -> &'static str {
    match (billing, on_its_date) {
        (ResumeBilling::NewPeriod, true) => "resumed on its date with a new period",
        (ResumeBilling::Continue, true) => "resumed on its date on its old schedule",
        (ResumeBilling::NewPeriod, false) => "resumed with a new period",
        (ResumeBilling::Continue, false) => "resumed on its old schedule",
    }
}

/// How a charge was answered: its status, and whether the bank wants the customer.
pub(super) struct Answered {
    pub(super) status: PaymentStatus,
    pub(super) needs_customer: bool,
}

/// The new schedule after a charge that ended with `status`, and its timeline line (with
/// the subscription as saved). A
/// subscription cancelled while the charge was with the acquirer keeps its cancel: the
/// charge is recorded against it and changes nothing else.
pub(super) async fn record_charge(
    txn: &impl ConnectionTrait,
    c: Charge,
    answered: Answered,
    payment_id: String,
    token: &str,
    now: DateTime<Utc>,
    tz: chrono_tz::Tz,
) -> Result<(Option<subscriptions::Model>, Option<events::Line>), DbErr> {
    let status = answered.status;
    if status == PaymentStatus::Processing {
        // Not known yet: nothing moves on, and the charge is looked up again later.
        let waiting = Progress { renew_at: Some(pending::next_lookup(c.asked.unwrap_or(now), now)), ..c.progress };
        let sub = db::subscriptions::save_progress(txn, c.sub, token, &waiting, Some(payment_id), now).await?;
        return Ok((sub, None));
    }
    if c.change.is_some() {
        return record_change(txn, c, status == PaymentStatus::Succeeded, payment_id, token, now, tz).await;
    }
    let outcome = match status {
        PaymentStatus::Succeeded => Outcome::Succeeded,
        PaymentStatus::Failed if answered.needs_customer => Outcome::NeedsCustomer,
        PaymentStatus::Failed => Outcome::Declined,
        _ => Outcome::Error,
    };
    let next = rules::after_charge(&c.terms, &c.progress, outcome, c.sub.anchor(now), now, tz);
    // The first charge of a subscription created with its card is where its timeline begins.
    let first = c.sub.state == rules::State::Redirecting && c.sub.created_with_card();
    let (from, sub_id) = ((!first).then_some(c.sub.state), c.sub.id.clone());
    if let Some(sub) = db::subscriptions::save_progress(txn, c.sub, token, &next, Some(payment_id.clone()), now).await?
    {
        let row = db::subscriptions::event_row(&sub, from, (sub.state, sub.renew_at), Some(payment_id), None, now);
        let line = events::Line { row, sub: sub.clone(), charge: Some(status) };
        return Ok((Some(sub), Some(line)));
    }
    let current = db::find_public::<subscriptions::Entity>(txn, &sub_id).await?;
    let line = current.filter(|s| s.state == rules::State::Canceled).map(|sub| {
        let reason = Some("charged before the cancel took effect".to_string());
        let row = db::subscriptions::event_row(&sub, Some(sub.state), (sub.state, None), Some(payment_id), reason, now);
        events::Line { row, sub, charge: Some(status) }
    });
    Ok((None, line))
}

/// The end of a plan change's charge: paid, the subscription moves to the new plan (its
/// period goes on, or the new plan's first period began at the change); failed, the change
/// is dropped and the subscription goes on as it was (no retry: the merchant asks again).
pub(super) async fn record_change(
    txn: &impl ConnectionTrait,
    c: Charge,
    paid: bool,
    payment_id: String,
    token: &str,
    now: DateTime<Utc>,
    tz: chrono_tz::Tz,
) -> Result<(Option<subscriptions::Model>, Option<events::Line>), DbErr> {
    let Some(change) = c.change.clone() else { return Ok((None, None)) };
    let anchor = c.sub.anchor(now);
    let before = Progress { change_now: None, ..c.progress };
    let proration = plan_change::prorate(&c.terms, &change.terms, &before, anchor, change.at, tz);
    let (progress, anchor, plan_id, reason) = match (paid, proration) {
        (true, Ok(p)) => {
            let (progress, anchor) = plan_change::after_change(&before, anchor, &p, change.at);
            (progress, anchor, Some(change.plan_id.as_str()), "plan changed")
        }
        _ => {
            // As it was: its next charge at the start of its next period.
            let start = c.terms.start_of(anchor, before.period, tz);
            let renew = if c.terms.night { rules::outside_night(start, tz) } else { start };
            (Progress { renew_at: Some(renew), ..before }, anchor, None, "plan change refused: its charge failed")
        }
    };
    let Some(sub) =
        db::subscriptions::settle_change(txn, &c.sub, token, (&progress, anchor), plan_id, Some(&payment_id), now)
            .await?
    else {
        return Ok((None, None));
    };
    let row = db::subscriptions::event_row(
        &sub,
        Some(c.sub.state),
        (sub.state, sub.renew_at),
        Some(payment_id),
        Some(reason.into()),
        now,
    );
    // The charge's own events are the payment's; the change is `subscription.plan_changed`.
    Ok((Some(sub.clone()), Some(events::Line { row, sub, charge: None })))
}
