//! Changing a subscription's plan: worked out first (a preview), then made now (its prorated
//! amount charged at once) or at the period end.

use chrono::{DateTime, Utc};

use super::{Changed, ended, invalid, now_of, refused};
use crate::db::entities::{customers, plans, subscriptions};
use crate::db::{self};
use crate::domain::Errors;
use crate::domain::billing::{State as SubState, Terms};
use crate::domain::event::EventType;
use crate::domain::plan_change::{ChangeAt, Proration, Refusal};
use crate::web::error::AppError;
use crate::web::state::AppState;
use crate::web::views::SubscriptionParts as Parts;

/// A merchant's change of a subscription's plan: to which plan, when, and (asked now) the
/// moment it is prorated at (default: now; a preview's moment, so that the change charges
/// what the preview said).
#[derive(Debug, Clone)]
pub struct ChangeRequest {
    pub plan_id: String,
    pub at: ChangeAt,
    pub proration_date: Option<DateTime<Utc>>,
}

/// What a change would charge and when, as a preview shows it and the change then does.
#[derive(Debug, Clone)]
pub struct ChangePreview {
    pub plan: plans::Model,
    pub at: ChangeAt,
    /// The moment it is prorated at (asked now).
    pub proration_date: Option<DateTime<Utc>>,
    pub credit: i64,
    pub charge: i64,
    pub amount_due: i64,
    /// Until when it is paid once changed; when the new plan's price is charged next.
    pub period_end: Option<DateTime<Utc>>,
    pub next_charge_at: Option<DateTime<Utc>>,
    /// Withdraws a change set for the period end (the plan asked is the subscription's own).
    pub withdraws: bool,
    proration: Option<Proration>,
    /// The subscription's time, its plan and (asked now) its customer, as the preview read
    /// them: the change goes on from them instead of reading them again.
    now: DateTime<Utc>,
    old: plans::Model,
    customer: Option<customers::Model>,
}

/// Works out a change without making it: what is charged now and when the new plan's price
/// is charged next. `422` for a plan it cannot move to, `409` for a subscription that cannot
/// change now.
pub async fn preview_change(
    state: &AppState,
    sub: &subscriptions::Model,
    ask: &ChangeRequest,
) -> Result<ChangePreview, AppError> {
    let now = now_of(state, sub).await?;
    if sub.state.has_ended() {
        return Err(ended(sub.state));
    }
    let old =
        db::find::<plans::Entity>(&state.db, sub.shop_id, &sub.plan_id).await?.ok_or(AppError::NotFound("Plan"))?;
    let plan = db::find::<plans::Entity>(&state.db, sub.shop_id, &ask.plan_id)
        .await?
        .ok_or_else(|| invalid("plan", "is not a plan of this shop"))?;
    let same = plan.id == sub.plan_id;
    if same && !(ask.at == ChangeAt::PeriodEnd && sub.change_plan_id.is_some()) {
        return Err(invalid("plan", "is the subscription's plan already"));
    }
    if plan.archived_at.is_some() && !same {
        return Err(invalid("plan", "is archived: it takes no new subscriptions"));
    }
    if plan.currency != old.currency {
        return Err(invalid("plan", &format!("must be in the subscription's currency, {}", old.currency)));
    }
    if plan.test != sub.test {
        return Err(invalid("plan", "must be of the subscription's mode (test or live)"));
    }
    if !matches!(sub.state, SubState::Trial | SubState::Active) {
        let message =
            "Only a subscription in its trial or a paid period changes plan; resume it or let its retries end first";
        return Err(AppError::Conflict(message.into()));
    }
    if sub.cancel_at_period_end || sub.pause_at_period_end {
        let message = "The subscription ends or pauses with its period: withdraw that first";
        return Err(AppError::Conflict(message.into()));
    }
    if sub.change_amount.is_some() {
        return Err(AppError::Conflict(
            "A change of the subscription's plan is being charged: try again in a moment".into(),
        ));
    }
    let (old_terms, new_terms) = (Terms::from(&old.fields()), Terms::from(&plan.fields()));
    let old_taxing = old.fields().taxing;
    let mut preview = ChangePreview {
        plan,
        at: ask.at,
        proration_date: None,
        credit: 0,
        charge: 0,
        amount_due: 0,
        period_end: sub.active_to,
        next_charge_at: sub.renew_at,
        withdraws: same,
        proration: None,
        now,
        old,
        customer: None,
    };
    if ask.at == ChangeAt::PeriodEnd {
        return Ok(preview);
    }
    let at = ask.proration_date.unwrap_or(now);
    let tz = state.config.timezone;
    let anchor = sub.anchor(now);
    let paid_from = old_terms.start_of(anchor, (sub.period - 1).max(anchor.period), tz);
    if at > now || (sub.state == SubState::Active && at < paid_from) {
        let message =
            format!("must be within the current period, from {} to now", crate::web::views::timestamp(paid_from));
        return Err(AppError::Validation(Errors::one("proration_date", message)));
    }
    let p = crate::domain::plan_change::prorate(&old_terms, &new_terms, &sub.progress(), anchor, at, tz).map_err(
        |refusal| match refusal {
            Refusal::WouldCredit(credit) => {
                let money = crate::domain::money::display(credit, preview.plan.currency.code, false);
                invalid("at", &format!("is for the period end: now it would leave a credit of {money}"))
            }
            Refusal::NotRunning => {
                AppError::Conflict("Only a subscription in its trial or a paid period changes plan".into())
            }
        },
    )?;
    let taxing = preview.plan.fields().taxing;
    if p.amount_due > 0 && old_taxing != taxing {
        // The credit of the old plan's part and the new plan's charge would be taxed alike.
        return Err(invalid("at", "is for the period end: the two plans are taxed differently"));
    }
    let customer = db::find_public::<customers::Entity>(&state.db, &sub.customer_id).await?;
    let buyer = customer.as_ref().map(crate::services::taxes::Buyer::of_customer).unwrap_or_default();
    let (amount_due, _) = crate::services::taxes::price(&state.db, sub.shop_id, p.amount_due, &taxing, &buyer).await?;
    preview.proration_date = Some(at);
    (preview.credit, preview.charge, preview.amount_due) = (p.credit, p.charge, amount_due);
    (preview.period_end, preview.next_charge_at) = (Some(p.period_end), Some(p.next_charge_at));
    preview.proration = Some(p);
    preview.customer = customer;
    Ok(preview)
}

/// Changes a subscription's plan as [`preview_change`] works it out: now (its prorated
/// amount charged at once, under the change's own key; declined, nothing changes and `502`
/// says why), or at the period end (`subscription.plan_change_scheduled`; asked with the
/// subscription's own plan, that is withdrawn). `subscription.plan_changed` once it changed.
pub async fn change_plan(
    state: &AppState,
    sub: &subscriptions::Model,
    ask: &ChangeRequest,
) -> Result<Changed, AppError> {
    let preview = preview_change(state, sub, ask).await?;
    let now = preview.now;
    let change_id = crate::domain::ids::random_hex(12);
    // Read before the writer's turn where the change records its event at once (one charged
    // first answers as its charge left it): it changes none of them but the plan, read already.
    let charged = preview.proration.as_ref().is_some_and(|p| p.amount_due > 0);
    let mut parts = Parts::default();
    if !charged {
        parts = parts.with_plan(preview.old).with_plan(preview.plan.clone()).with_customer(preview.customer);
        parts.complete(&state.db, std::slice::from_ref(sub)).await?;
    }
    let txn = crate::db::begin(&state.db).await?;
    if preview.at == ChangeAt::PeriodEnd {
        let (kind, changed) = match preview.withdraws {
            true => {
                (EventType::SubscriptionPlanChangeWithdrawn, db::subscriptions::withdraw_change(&txn, sub, now).await?)
            }
            false => {
                let change =
                    db::subscriptions::ChangeAsk { plan_id: &preview.plan.id, change_id: &change_id, now: None };
                (
                    EventType::SubscriptionPlanChangeScheduled,
                    db::subscriptions::ask_change(&txn, sub, change, None, now).await?,
                )
            }
        };
        let Some(changed) = changed else {
            drop(txn);
            return Err(refused(state, sub).await);
        };
        let view = crate::services::events::record_of(&txn, &state.config, parts, kind, &changed).await?;
        txn.commit().await?;
        return Ok(Changed::recorded(changed, view));
    }
    let (Some(p), Some(at)) = (preview.proration, preview.proration_date) else {
        return Err(AppError::Internal("a change asked now was not prorated".into()));
    };
    if p.amount_due == 0 {
        // Nothing to charge: the plan changes at once.
        let (progress, anchor) = crate::domain::plan_change::after_change(&sub.progress(), sub.anchor(now), &p, at);
        let Some(changed) =
            db::subscriptions::switch_plan(&txn, sub, &preview.plan.id, (&progress, anchor), now).await?
        else {
            drop(txn);
            return Err(refused(state, sub).await);
        };
        let row = db::subscriptions::event_row(
            &changed,
            Some(sub.state),
            (changed.state, changed.renew_at),
            None,
            Some("plan changed".into()),
            now,
        );
        let line = crate::services::events::Line { row, sub: changed.clone(), charge: None };
        let changed_kind = Some(EventType::SubscriptionPlanChanged);
        let view = crate::services::events::timeline_of(&txn, &state.config, parts, line, changed_kind).await?;
        txn.commit().await?;
        return Ok(Changed::recorded(changed, view));
    }
    let token = crate::domain::ids::random_hex(12);
    let claim = (token.as_str(), Utc::now() + state.config.lease);
    let change = db::subscriptions::ChangeAsk {
        plan_id: &preview.plan.id,
        change_id: &change_id,
        now: Some((p.amount_due, at)),
    };
    let Some(asked) = db::subscriptions::ask_change(&txn, sub, change, Some(claim), now).await? else {
        drop(txn);
        return Err(refused(state, sub).await);
    };
    txn.commit().await?;
    let billed = crate::services::billing::charge_claimed(state, asked.clone(), now, &token).await?.unwrap_or(asked);
    if billed.plan_id == preview.plan.id || billed.change_amount.is_some() {
        // Changed, or its charge's answer is not known yet (the change waits for it).
        return Ok(Changed::unrecorded(billed));
    }
    let key = crate::domain::billing::change_key(&sub.id, &change_id);
    let payment = db::payments::find_by_billing_keys(&state.db, vec![key]).await?.pop();
    let why = payment.and_then(|p| p.failure_message).unwrap_or_else(|| "the charge failed".into());
    Err(AppError::Declined(format!("{why}; the plan was not changed")))
}
