//! The reminders that no request causes: a trial about to turn paid, a renewal ahead, a card
//! that expires before the next charge. A sweep at `now` (every minute in real time; at each
//! step of a test clock's advance, in the clock's time) queues those due, once per kind,
//! subscription and charge, and notes on each subscription when to look again
//! (`remind_at`), so that a subscription is looked at when a reminder falls due or its next
//! period begins, not every minute.

use chrono::{DateTime, TimeDelta, Utc};
use sea_orm::DbErr;

use crate::db::entities::plans;
use crate::db::mails::NewMail;
use crate::db::{self};
use crate::domain::mail::{self as rules, ReminderFacts};
use crate::domain::vocab::IntervalUnit;
use crate::web::state::AppState;

/// Subscriptions one sweep looks at per batch.
const BATCH: u64 = 500;

/// How long a plan's period that ends at `renew_at` is.
fn period_of(plan: &plans::Model, renew_at: DateTime<Utc>) -> TimeDelta {
    let n = i64::from(plan.interval);
    match plan.interval_unit {
        IntervalUnit::Hour => TimeDelta::hours(n),
        IntervalUnit::Day => TimeDelta::days(n),
        // The calendar's months that end at the charge: 6 of them are 181 to 184 days.
        IntervalUnit::Month => renew_at
            .checked_sub_months(chrono::Months::new(plan.interval.unsigned_abs()))
            .map_or(TimeDelta::days(30 * n), |start| renew_at - start),
    }
}

/// Queues the reminders due by `now` of the subscriptions on `clock_id` (or in real time);
/// answers how many were queued. Nothing when the instance sends no mail.
pub async fn sweep(state: &AppState, clock_id: Option<&str>, now: DateTime<Utc>) -> Result<usize, DbErr> {
    if state.mailer.is_none() {
        return Ok(0);
    }
    let mut queued = 0;
    loop {
        let subs = db::subscriptions::reminders_due(&state.db, clock_id, now, BATCH).await?;
        if subs.is_empty() {
            return Ok(queued);
        }
        let plan_ids: Vec<&str> = subs.iter().map(|s| s.plan_id.as_str()).collect();
        let plans = db::plans::by_ids_of_any_shop(&state.db, &plan_ids).await?;
        let mut shop_ids: Vec<i64> = subs.iter().map(|s| s.shop_id).collect();
        shop_ids.sort_unstable();
        shop_ids.dedup();
        let settings = db::mails::settings_of(&state.db, &shop_ids).await?;
        let mut mails = Vec::new();
        let mut next: Vec<(String, DateTime<Utc>)> = Vec::new();
        for sub in &subs {
            let (Some(renew_at), Some(plan), Some((shop_settings, from))) =
                (sub.renew_at, plans.get(&sub.plan_id), settings.get(&sub.shop_id))
            else {
                // Nothing to remind of (its plan or shop is gone): looked at again in a day.
                next.push((sub.id.clone(), now + TimeDelta::days(1)));
                continue;
            };
            let facts = ReminderFacts {
                state: sub.state,
                renew_at,
                period: period_of(plan, renew_at),
                card_expiry: sub.card_exp_month.zip(sub.card_exp_year),
                // Paused from the period end, it is not renewed either.
                cancel_at_period_end: sub.cancel_at_period_end || sub.pause_at_period_end,
            };
            let due = rules::reminders(&facts, shop_settings);
            for (kind, _) in due.iter().filter(|(_, at)| *at <= now) {
                mails.push(NewMail {
                    shop_id: sub.shop_id,
                    customer_id: Some(sub.customer_id.clone()),
                    kind: *kind,
                    object_id: sub.id.clone(),
                    event_id: None,
                    dedupe_key: rules::reminder_key(*kind, &sub.id, renew_at),
                    test: sub.test,
                    to_address: None,
                    sender: from.clone().unwrap_or_else(|| state.config.mail_from.clone()),
                    rendered: None,
                });
            }
            // Looked at again when the next reminder falls due, else when the period turns.
            let again = due.iter().map(|(_, at)| *at).filter(|at| *at > now).min().unwrap_or(renew_at);
            next.push((sub.id.clone(), again));
        }
        queued += mails.len();
        let txn = crate::db::begin(&state.db).await?;
        db::mails::enqueue(&txn, mails, Utc::now()).await?;
        db::subscriptions::set_remind_at(&txn, &next).await?;
        txn.commit().await?;
        if (subs.len() as u64) < BATCH {
            return Ok(queued);
        }
    }
}
