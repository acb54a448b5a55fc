//! Subscribing: through the API (with or without a card) or a plan's hosted page. The first
//! charge is made at once with the customer present; the engine makes the rest.

use chrono::{DateTime, Utc};

use crate::db::entities::{customers, plans, subscriptions, test_clocks};
use crate::db::subscriptions::NewSubscription;
use crate::db::{self};
use crate::domain::Errors;
use crate::domain::billing::{ResumeBilling, State as SubState, Terms, begin};
use crate::domain::event::EventType;
use crate::domain::plan_change::{ChangeAt, Proration, Refusal};
use crate::domain::subscription::{CustomerRef, SubscriptionRequest};
use crate::domain::webhook::public_url;
use crate::external::acquirer::{CardRef, CardRefused};
use crate::services::payments::{PayError, acquirer_for};
use crate::web::error::AppError;
use crate::web::state::AppState;

fn invalid(field: &str, message: &str) -> AppError {
    let errors = Errors::one(field, message);
    AppError::Validation(errors)
}

/// Creates a subscription of the shop from an API request; with a card, makes the first
/// charge. `now` is the real time (a test clock's time replaces it).
pub async fn create(
    state: &AppState,
    shop_id: i64,
    request: SubscriptionRequest,
    now: DateTime<Utc>,
) -> Result<subscriptions::Model, AppError> {
    if let Some(made) = made_already(state, shop_id, request.id.as_deref()).await? {
        return Ok(made);
    }
    let allow_private = state.config.webhooks_allow_private;
    public_url(request.notification_url.as_deref(), "notification_url", allow_private)?;
    let plan = db::find::<plans::Entity>(&state.db, shop_id, &request.plan_id)
        .await?
        .ok_or_else(|| invalid("plan.id", "is not a plan of this shop"))?;
    if plan.archived_at.is_some() {
        return Err(invalid("plan.id", "is archived: it takes no new subscriptions"));
    }
    let (clock, now) = match &request.test_clock {
        Some(id) => {
            let clock = db::find::<test_clocks::Entity>(&state.db, shop_id, id)
                .await?
                .ok_or_else(|| invalid("test_clock", "is not a test clock of this shop"))?;
            if !plan.test {
                return Err(invalid("test_clock", "works only with test plans"));
            }
            (Some(clock.id), clock.frozen_time)
        }
        None => (None, now),
    };
    let card = match &request.card {
        Some(input) => Some(tokenize(state, shop_id, input, plan.test).await?),
        None => None,
    };
    let customer = match request.customer {
        CustomerRef::Existing(id) => db::find::<customers::Entity>(&state.db, shop_id, &id)
            .await?
            .ok_or_else(|| invalid("customer.id", "is not a customer of this shop"))?,
        CustomerRef::New(fields) => db::customers::insert(&state.db, shop_id, *fields, now).await?,
    };
    let chosen = request.id.clone();
    let new = NewSubscription {
        id: request.id,
        shop_id,
        plan_id: plan.id.clone(),
        customer_id: customer.id,
        test: plan.test,
        test_clock_id: clock,
        tracking_id: request.tracking_id,
        return_url: request.return_url,
        notification_url: request.notification_url,
        additional_data: request.additional_data,
        progress: begin(&Terms::from(&plan.fields())),
    };
    let txn = crate::db::begin(&state.db).await?;
    let sub = match db::subscriptions::insert(&txn, new, now).await {
        Ok(sub) => sub,
        // The same chosen id sent twice at once: the other request started it.
        Err(e) if chosen.is_some() && crate::web::error::duplicate(&e) => {
            drop(txn);
            return made_already(state, shop_id, chosen.as_deref())
                .await?
                .ok_or_else(|| AppError::Conflict("This subscription's id is taken".into()));
        }
        Err(e) => return Err(e.into()),
    };
    // With a card, the first charge's line begins the timeline (and says it was created).
    if card.is_none() {
        crate::services::events::timeline(&txn, &state.config, vec![crate::services::events::created(&sub, now)])
            .await?;
    }
    txn.commit().await?;
    match card {
        Some(card) => crate::services::billing::start(state, &plan, sub, &card, now)
            .await?
            .ok_or_else(|| AppError::Conflict("The subscription was started by another request".into())),
        None => Ok(sub),
    }
}

/// The subscription started earlier under the id its asker chose, if any.
async fn made_already(
    state: &AppState,
    shop_id: i64,
    id: Option<&str>,
) -> Result<Option<subscriptions::Model>, AppError> {
    match id {
        Some(id) => Ok(db::find::<subscriptions::Entity>(&state.db, shop_id, id).await?),
        None => Ok(None),
    }
}

/// Turns a card into the acquirer's token, refusing what test or live mode does not take.
pub async fn tokenize(
    state: &AppState,
    shop_id: i64,
    card: &crate::domain::card::CardInput,
    test: bool,
) -> Result<CardRef, AppError> {
    let acquirer = match acquirer_for(state, shop_id, test).await {
        Ok(acquirer) => acquirer,
        Err(PayError::LiveUnavailable) => {
            return Err(invalid(
                "card",
                "cannot be charged: the shop's payment processor takes no payments in this mode",
            ));
        }
        Err(PayError::Db(e)) => return Err(e.into()),
        Err(e) => return Err(AppError::Internal(e.to_string())),
    };
    let refused = |refused: CardRefused| invalid("card.number", &refused.to_string());
    let card = acquirer.tokenize(card, test).await.map_err(refused)?;
    match crate::services::disputes::refusal(state, shop_id, test, &card).await? {
        Some(refusal) => Err(refused(refusal)),
        None => Ok(card),
    }
}

/// Cancels the merchant's subscription at its own time (its clock's in test mode); 409 if
/// it has already ended, also when the engine ended it a moment before.
pub async fn cancel(
    state: &AppState,
    sub: subscriptions::Model,
    reason: Option<String>,
) -> Result<subscriptions::Model, AppError> {
    let ended = |state: SubState| AppError::Conflict(format!("The subscription has already ended: it is {state}"));
    if sub.state.has_ended() {
        return Err(ended(sub.state));
    }
    let now = now_of(state, &sub).await?;
    let txn = crate::db::begin(&state.db).await?;
    match db::subscriptions::cancel(&txn, &sub, reason, false, now).await? {
        Some((canceled, row)) => {
            let line = crate::services::events::Line { row, sub: canceled.clone(), charge: None };
            crate::services::events::timeline(&txn, &state.config, vec![line]).await?;
            txn.commit().await?;
            Ok(canceled)
        }
        None => {
            let current = db::find::<subscriptions::Entity>(&state.db, sub.shop_id, &sub.id).await?;
            Err(ended(current.map_or(sub.state, |s| s.state)))
        }
    }
}

/// Ends a subscription when its trial or paid period does, without charging it again; the
/// `reason` is its cancel reason then. Asked again, it changes nothing; integrators hear it
/// once (`subscription.cancellation_requested`).
pub async fn cancel_at_period_end(
    state: &AppState,
    sub: &subscriptions::Model,
    reason: Option<String>,
) -> Result<(), AppError> {
    let now = now_of(state, sub).await?;
    let txn = crate::db::begin(&state.db).await?;
    if let Some(marked) = db::subscriptions::cancel_at_period_end(&txn, sub, reason, now).await? {
        crate::services::events::record_about(
            &txn,
            &state.config,
            EventType::SubscriptionCancellationRequested,
            &marked,
        )
        .await?;
        txn.commit().await?;
        return Ok(());
    }
    drop(txn);
    let current = db::find::<subscriptions::Entity>(&state.db, sub.shop_id, &sub.id).await?;
    if current.is_some_and(|s| s.cancel_at_period_end && matches!(s.state, SubState::Trial | SubState::Active)) {
        return Ok(());
    }
    let message = "Only a subscription in its trial or a paid period can end with it; cancel it now instead";
    Err(AppError::Conflict(message.into()))
}

/// Withdraws a cancel at the end of the period: the subscription goes on being charged.
/// Asked again, it changes nothing; `409` once the subscription has ended.
pub async fn keep(state: &AppState, sub: &subscriptions::Model) -> Result<(), AppError> {
    let now = now_of(state, sub).await?;
    let txn = crate::db::begin(&state.db).await?;
    if let Some(kept) = db::subscriptions::withdraw_cancellation(&txn, sub, now).await? {
        crate::services::events::record_about(&txn, &state.config, EventType::SubscriptionCancellationWithdrawn, &kept)
            .await?;
        txn.commit().await?;
        return Ok(());
    }
    drop(txn);
    let current = db::find::<subscriptions::Entity>(&state.db, sub.shop_id, &sub.id).await?;
    match current {
        Some(s) if !s.state.has_ended() => Ok(()),
        Some(s) => Err(AppError::Conflict(format!("The subscription has already ended: it is {}", s.state))),
        None => Err(AppError::NotFound("Subscription")),
    }
}

/// Saves a card the subscriber typed on a subscription in its trial or a paid period: the
/// next charges use it (`subscription.card_updated`). `409` once it has ended.
pub async fn replace_card(state: &AppState, sub: &subscriptions::Model, card: &CardRef) -> Result<(), AppError> {
    let now = now_of(state, sub).await?;
    let txn = crate::db::begin(&state.db).await?;
    let Some(updated) = db::subscriptions::replace_card(&txn, sub, card, now).await? else {
        return Err(AppError::Conflict("The subscription has ended".into()));
    };
    crate::services::events::record_about(&txn, &state.config, EventType::SubscriptionCardUpdated, &updated).await?;
    txn.commit().await?;
    Ok(())
}

/// The time of a subscription: its test clock's, else the real one.
pub async fn now_of(state: &AppState, sub: &subscriptions::Model) -> Result<DateTime<Utc>, AppError> {
    Ok(db::test_clocks::time_of(&state.db, sub.shop_id, sub.test_clock_id.as_deref(), Utc::now()).await?)
}

/// What a merchant asks of a pause: from now or from the end of the paid period, and when
/// and how it resumes by itself.
#[derive(Debug, Clone, Copy)]
pub struct PauseRequest {
    pub at_period_end: bool,
    pub resume: db::subscriptions::ResumePlan,
}

/// Pauses a subscription now (its trial, a paid period or its retries; a paused one only
/// takes the new resume) or from the end of its paid period (`subscription.pause_requested`).
/// `409` when it has ended, is set to end with its period, or a charge of it is in flight.
pub async fn pause(
    state: &AppState,
    sub: &subscriptions::Model,
    ask: PauseRequest,
) -> Result<subscriptions::Model, AppError> {
    let now = now_of(state, sub).await?;
    if ask.resume.at.is_some_and(|at| at <= now) {
        let message = format!("must be after the subscription's current time, {}", crate::web::views::timestamp(now));
        return Err(AppError::Validation(Errors::one("resume_at", message)));
    }
    if sub.state.has_ended() {
        return Err(ended(sub.state));
    }
    if !SubState::PAUSABLE.contains(&sub.state) && sub.state != SubState::Paused {
        let message = "Only a subscription in its trial, a paid period or its retries can pause; cancel it instead";
        return Err(AppError::Conflict(message.into()));
    }
    if sub.cancel_at_period_end {
        return Err(AppError::Conflict("The subscription ends with its period: withdraw that cancel first".into()));
    }
    let txn = crate::db::begin(&state.db).await?;
    if ask.at_period_end && sub.state != SubState::Paused {
        let Some(marked) = db::subscriptions::pause_at_period_end(&txn, sub, ask.resume, now).await? else {
            let message =
                "Only a subscription in its trial or a paid period can pause from its end; pause it now instead";
            return Err(AppError::Conflict(message.into()));
        };
        crate::services::events::record_about(&txn, &state.config, EventType::SubscriptionPauseRequested, &marked)
            .await?;
        txn.commit().await?;
        return Ok(marked);
    }
    let paused = match db::subscriptions::pause_now(&txn, sub, ask.resume, now).await? {
        Some(paused) => paused,
        None => {
            drop(txn);
            // Paused a moment ago by another request (a double click): this one only sets
            // the resume, as a pause of a paused subscription does.
            let current = db::find::<subscriptions::Entity>(&state.db, sub.shop_id, &sub.id).await?;
            if let Some(current) = current.filter(|c| c.state == SubState::Paused && sub.state != SubState::Paused) {
                return Box::pin(pause(state, &current, ask)).await;
            }
            return Err(refused(state, sub).await);
        }
    };
    if sub.state != SubState::Paused {
        let reason = Some("paused by the merchant".to_string());
        let row =
            db::subscriptions::event_row(&paused, Some(sub.state), (paused.state, paused.renew_at), None, reason, now);
        let line = crate::services::events::Line { row, sub: paused.clone(), charge: None };
        crate::services::events::timeline(&txn, &state.config, vec![line]).await?;
    }
    txn.commit().await?;
    Ok(paused)
}

/// Resumes a paused subscription now, with a new period (charged at once) or on its old
/// schedule; for one set to pause from the end of its period, withdraws that
/// (`subscription.pause_withdrawn`). `409` when it is neither, or a charge of it is in flight.
pub async fn resume(
    state: &AppState,
    sub: &subscriptions::Model,
    billing: ResumeBilling,
) -> Result<subscriptions::Model, AppError> {
    let now = now_of(state, sub).await?;
    if sub.pause_at_period_end && sub.state != SubState::Paused {
        let txn = crate::db::begin(&state.db).await?;
        if let Some(kept) = db::subscriptions::withdraw_pause(&txn, sub, now).await? {
            crate::services::events::record_about(&txn, &state.config, EventType::SubscriptionPauseWithdrawn, &kept)
                .await?;
            txn.commit().await?;
            return Ok(kept);
        }
    }
    if sub.state.has_ended() {
        return Err(ended(sub.state));
    }
    if sub.state != SubState::Paused {
        return Err(AppError::Conflict("The subscription is not paused".into()));
    }
    let plan =
        db::find::<plans::Entity>(&state.db, sub.shop_id, &sub.plan_id).await?.ok_or(AppError::NotFound("Plan"))?;
    let tz = state.config.timezone;
    let (progress, anchor) = crate::domain::billing::resume(
        &Terms::from(&plan.fields()),
        &sub.progress(),
        sub.anchor(now),
        billing,
        now,
        tz,
    );
    // Due at once (a new period, outside the night): charged in this request, claimed for it.
    let token = crate::domain::ids::random_hex(12);
    let charge_now = progress.renew_at.is_some_and(|at| at <= now);
    let claim = charge_now.then(|| (token.as_str(), Utc::now() + state.config.lease));
    let txn = crate::db::begin(&state.db).await?;
    let by = db::subscriptions::Resumer::Merchant;
    let Some(resumed) = db::subscriptions::resume(&txn, sub, by, (&progress, anchor), claim, now).await? else {
        drop(txn);
        return Err(refused(state, sub).await);
    };
    let reason = Some(crate::services::billing::resume_reason(billing, false).to_string());
    let row =
        db::subscriptions::event_row(&resumed, Some(sub.state), (resumed.state, resumed.renew_at), None, reason, now);
    let line = crate::services::events::Line { row, sub: resumed.clone(), charge: None };
    crate::services::events::timeline(&txn, &state.config, vec![line]).await?;
    txn.commit().await?;
    if !charge_now {
        return Ok(resumed);
    }
    let billed = crate::services::billing::charge_claimed(state, resumed.clone(), now, &token).await?;
    Ok(billed.unwrap_or(resumed))
}

/// Why a pause or resume that lost its guarded update was refused: the subscription ended
/// or changed meanwhile, or a charge of it is in flight (try again in a moment).
async fn refused(state: &AppState, sub: &subscriptions::Model) -> AppError {
    match db::find::<subscriptions::Entity>(&state.db, sub.shop_id, &sub.id).await {
        Err(e) => e.into(),
        Ok(None) => AppError::NotFound("Subscription"),
        Ok(Some(s)) if s.state.has_ended() => ended(s.state),
        Ok(Some(s)) if s.state != sub.state => {
            AppError::Conflict(format!("The subscription changed meanwhile: it is now {}", s.state))
        }
        Ok(Some(_)) => AppError::Conflict("A charge of the subscription is in flight: try again in a moment".into()),
    }
}

fn ended(state: SubState) -> AppError {
    AppError::Conflict(format!("The subscription has already ended: it is {state}"))
}

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
    if p.amount_due > 0 && old.fields().taxing != taxing {
        // The credit of the old plan's part and the new plan's charge would be taxed alike.
        return Err(invalid("at", "is for the period end: the two plans are taxed differently"));
    }
    let customer = db::find_public::<crate::db::entities::customers::Entity>(&state.db, &sub.customer_id).await?;
    let buyer = customer.as_ref().map(crate::services::taxes::Buyer::of_customer).unwrap_or_default();
    let (amount_due, _) = crate::services::taxes::price(&state.db, sub.shop_id, p.amount_due, &taxing, &buyer).await?;
    preview.proration_date = Some(at);
    (preview.credit, preview.charge, preview.amount_due) = (p.credit, p.charge, amount_due);
    (preview.period_end, preview.next_charge_at) = (Some(p.period_end), Some(p.next_charge_at));
    preview.proration = Some(p);
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
) -> Result<subscriptions::Model, AppError> {
    let preview = preview_change(state, sub, ask).await?;
    let now = now_of(state, sub).await?;
    let change_id = crate::domain::ids::random_hex(12);
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
        crate::services::events::record_about(&txn, &state.config, kind, &changed).await?;
        txn.commit().await?;
        return Ok(changed);
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
        crate::services::events::timeline(
            &txn,
            &state.config,
            vec![crate::services::events::Line { row, sub: changed.clone(), charge: None }],
        )
        .await?;
        crate::services::events::record_about(&txn, &state.config, EventType::SubscriptionPlanChanged, &changed)
            .await?;
        txn.commit().await?;
        return Ok(changed);
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
        return Ok(billed);
    }
    let key = crate::domain::billing::change_key(&sub.id, &change_id);
    let payment = db::payments::find_by_billing_keys(&state.db, vec![key]).await?.pop();
    let why = payment.and_then(|p| p.failure_message).unwrap_or_else(|| "the charge failed".into());
    Err(AppError::Declined(format!("{why}; the plan was not changed")))
}
