//! Subscriptions in the dashboard: the list by state, one subscription with its timeline
//! of charges and retries and its next charge, and cancelling.

use askama::Template;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::routing::{get, post};
use serde::Deserialize;

use super::form::PostedForm;
use super::list::{PER_PAGE, next_link};
use super::schedule::describe;
use super::tables::{SubscriptionRow, next_charge, subscription_rows};
use super::{Chrome, Merchant, Page, Words, k, local, ok, see_other};
use crate::db;
use crate::db::entities::{customers, payments, plans, subscription_events, subscriptions};
use crate::domain::billing::{ResumeBilling, State as SubState};
use crate::domain::subscription::SubscriptionFilter;
use crate::web::error::AppError;
use crate::web::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/dashboard/subscriptions", get(list))
        .route("/dashboard/subscriptions/{id}", get(show))
        .route("/dashboard/subscriptions/{id}/cancel", post(cancel))
        .route("/dashboard/subscriptions/{id}/keep", post(keep))
        .route("/dashboard/subscriptions/{id}/pause", post(pause))
        .route("/dashboard/subscriptions/{id}/resume", post(resume))
        .route("/dashboard/subscriptions/{id}/change_plan", post(change_plan))
        .route("/dashboard/subscriptions/{id}/discount", post(discount))
        .route("/dashboard/subscriptions/{id}/discount/remove", post(remove_discount))
}

#[derive(Deserialize, Default)]
struct ListQuery {
    state: Option<String>,
    plan: Option<String>,
    after: Option<String>,
}

#[derive(Template)]
#[template(path = "dashboard/subscriptions/list.html")]
struct ListPage {
    chrome: Chrome,
    state: String,
    plan: String,
    states: &'static [&'static str],
    subscriptions: Vec<SubscriptionRow>,
    next: Option<String>,
}

async fn list(State(state): State<AppState>, m: Merchant, Query(query): Query<ListQuery>) -> Page {
    let wanted = query.state.filter(|s| SubState::parse(s).is_some()).unwrap_or_default();
    let plan = query.plan.unwrap_or_default();
    let filter = SubscriptionFilter {
        state: SubState::parse(&wanted),
        plan: Some(plan.clone()).filter(|p| !p.is_empty()),
        customer: None,
    };
    let (subscriptions, next_after) = subscription_rows(&state, &m, &filter, PER_PAGE, query.after).await?;
    let next = next_link("/dashboard/subscriptions", &[("state", &wanted), ("plan", &plan)], next_after);
    ok(&ListPage {
        chrome: m.chrome("subscriptions").await,
        state: wanted,
        plan,
        states: SubState::WORDS,
        subscriptions,
        next,
    })
}

/// One line of the timeline.
struct Line {
    at: String,
    what: String,
    payment: Option<(String, String, String)>,
}

#[derive(Template)]
#[template(path = "dashboard/subscriptions/show.html")]
struct ShowPage {
    chrome: Chrome,
    s: subscriptions::Model,
    plan: Option<plans::Model>,
    customer: Option<customers::Model>,
    summary: Option<String>,
    next_charge: Option<String>,
    paid_until: Option<String>,
    cancellable: bool,
    /// It may instead end with its trial or paid period.
    period_end: bool,
    /// It may pause now (its trial, a paid period, its retries), and not set to end.
    pausable: bool,
    /// When a pause (or a pause to come) ends by itself.
    resume_at: Option<String>,
    paused_at: Option<String>,
    /// The plans it may move to: (id, label); empty when it cannot change plan now.
    other_plans: Vec<(String, String)>,
    /// A change at the period end to come: the plan's title.
    changes_to: Option<String>,
    /// Its discount while it lasts: which coupon, what it takes off, for how many payments.
    discount: Option<String>,
    /// Waiting for its card: the link where the customer enters it.
    card_link: Option<String>,
    timeline: Vec<Line>,
}

async fn find(state: &AppState, m: &Merchant, id: &str) -> Result<subscriptions::Model, AppError> {
    db::find::<subscriptions::Entity>(&state.db, m.shop.id, id).await?.ok_or(AppError::NotFound("Subscription"))
}

/// What an event of the timeline did, in `words`: `Charge attempt → active: …`.
fn describe_event(e: &subscription_events::Model, words: Words) -> String {
    let state = |s: SubState| words.t_in("subscription", s.as_str());
    let to = state(e.to_state);
    let what = match (&e.from_state, &e.payment_id) {
        (None, Some(_)) => words.f("Created with its first charge → {}", &[&to]),
        (None, None) => words.f("Created ({})", &[&to]),
        (Some(_), Some(_)) => words.f("Charge attempt → {}", &[&to]),
        (Some(from), None) => format!("{} → {to}", state(*from)),
    };
    match &e.reason {
        Some(reason) => format!("{what}: {}", words.t_data(reason)),
        None => what,
    }
}

async fn show(State(state): State<AppState>, m: Merchant, Path(id): Path<String>) -> Page {
    let s = find(&state, &m, &id).await?;
    let plan = db::find::<plans::Entity>(&state.db, m.shop.id, &s.plan_id).await?;
    let customer = db::find::<customers::Entity>(&state.db, m.shop.id, &s.customer_id).await?;
    let events = db::subscriptions::timeline(&state.db, m.shop.id, &s.id).await?;
    let payment_ids: Vec<&str> = events.iter().filter_map(|e| e.payment_id.as_deref()).collect();
    let paid = db::by_ids::<payments::Entity>(&state.db, m.shop.id, &payment_ids).await?;
    let timeline: Vec<Line> = events
        .iter()
        .map(|e| Line {
            at: local(e.occurred_at, m.tz),
            what: describe_event(e, m.words),
            payment: e
                .payment_id
                .as_ref()
                .and_then(|id| paid.get(id))
                .map(|p| (p.id.clone(), m.money(p.amount, p.currency), p.status.to_string())),
        })
        .collect();
    let sub_state = s.state;
    let other_plans = match (&plan, matches!(sub_state, SubState::Trial | SubState::Active)) {
        (Some(current), true) if !s.cancel_at_period_end && !s.pause_at_period_end && s.change_amount.is_none() => {
            plan_choices(&state, &m, current).await?
        }
        _ => Vec::new(),
    };
    let changes_to = match s.change_plan_id.as_deref().filter(|_| s.change_amount.is_none()) {
        Some(id) => db::find::<plans::Entity>(&state.db, m.shop.id, id).await?.map(|p| p.title),
        None => None,
    };
    let coupon = db::coupons::of_subscription(&state.db, &s).await?;
    // The next charge with what it costs then (its discount taken off while it lasts).
    let next_amount =
        plan.as_ref().and_then(|p| s.next_charge(p, coupon.as_ref()).map(|(amount, _)| m.money(amount, p.currency)));
    let next_charge = next_charge(&s).map(|t| match &next_amount {
        Some(amount) => m.f("{} on {}", &[amount, &local(t, m.tz)]),
        None => local(t, m.tz),
    });
    let discount = match coupon {
        Some(c) => {
            let off = match c.off() {
                crate::domain::coupon::Off::Percent(p) => format!("{p}%"),
                crate::domain::coupon::Off::Amount(amount, currency) => m.money(amount, currency),
            };
            Some(match s.discount_periods_left() {
                Some(left) => m.f("Coupon {}: {} off the next {} plan payments.", &[&c.code, &off, &left]),
                None => m.f("Coupon {}: {} off every plan payment.", &[&c.code, &off]),
            })
        }
        None => None,
    };
    let page = ShowPage {
        other_plans,
        changes_to,
        discount,
        summary: plan.as_ref().map(|p| describe(&p.fields(), &m)),
        next_charge,
        paid_until: s.active_to.map(|t| local(t, m.tz)),
        card_link: (sub_state == SubState::Redirecting)
            .then(|| crate::web::urls::subscription_pay(&state.config, &s.id)),
        cancellable: !sub_state.has_ended(),
        period_end: matches!(sub_state, SubState::Trial | SubState::Active)
            && !s.cancel_at_period_end
            && s.active_to.is_some(),
        pausable: SubState::PAUSABLE.contains(&sub_state) && !s.cancel_at_period_end && !s.pause_at_period_end,
        resume_at: s
            .resume_at
            .filter(|_| sub_state == SubState::Paused || s.pause_at_period_end)
            .map(|t| local(t, m.tz)),
        paused_at: s.paused_at.filter(|_| sub_state == SubState::Paused).map(|t| local(t, m.tz)),
        chrome: m.chrome("subscriptions").await,
        timeline,
        plan,
        customer,
        s,
    };
    ok(&page)
}

/// Cancels now, or at the end of the paid period (`when=period_end`), after a confirmation.
async fn cancel(State(state): State<AppState>, m: Merchant, Path(id): Path<String>, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let sub = find(&state, &m, &id).await?;
    if sub.state.has_ended() {
        let ended = m.words.t_in("subscription", sub.state.as_str());
        m.flash(&m.f("The subscription has already ended: it is {}", &[&ended])).await;
        return see_other(&format!("/dashboard/subscriptions/{id}"));
    }
    let at_period_end = form.get("when") == Some("period_end");
    let reason: Option<String> =
        form.get("cancel_reason").map(str::trim).filter(|r| !r.is_empty()).map(|r| r.chars().take(255).collect());
    if form.get("confirm") != Some("yes") {
        let paid_until = sub.active_to.map(|t| local(t, m.tz)).unwrap_or_default();
        let lines = match at_period_end {
            true => vec![
                m.f("It stays active until the end of the period already paid for, {}, and then ends.", &[&paid_until]),
                m.t("It is not charged again.").to_string(),
            ],
            false if sub.active_to.is_none() => vec![m.t("It ends now, before it was ever charged.").to_string()],
            false => vec![
                m.t("It ends now and is not charged again.").to_string(),
                m.t("Time already paid for is not refunded by this; refund its last payment if you want to.")
                    .to_string(),
            ],
        };
        let mut fields = vec![("when".to_string(), if at_period_end { "period_end" } else { "now" }.to_string())];
        fields.extend(reason.map(|r| ("cancel_reason".to_string(), r)));
        let page = super::ConfirmPage {
            chrome: m.chrome("subscriptions").await,
            title: match at_period_end {
                true => m.t("Cancel at the end of the paid period?"),
                false => m.t("Cancel the subscription now?"),
            }
            .into(),
            lines,
            action: format!("/dashboard/subscriptions/{id}/cancel"),
            fields,
            button: m.t("Cancel the subscription").into(),
            back: format!("/dashboard/subscriptions/{id}"),
            back_label: k("Keep it"),
        };
        return ok(&page);
    }
    if at_period_end {
        let marked = crate::services::subscriptions::cancel_at_period_end(&state, &sub, reason).await;
        if m.unless_moved_on(marked).await?.is_some() {
            m.flash(m.t("The subscription ends at the end of its paid period and will not be charged again.")).await;
        }
    } else {
        let cancelled = crate::services::subscriptions::cancel(&state, sub, reason).await;
        if m.unless_moved_on(cancelled).await?.is_some() {
            m.flash(m.t("The subscription was cancelled: it will not be charged again.")).await;
        }
    }
    see_other(&format!("/dashboard/subscriptions/{id}"))
}

/// Withdraws a cancel at the end of the paid period.
async fn keep(State(state): State<AppState>, m: Merchant, Path(id): Path<String>, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let sub = find(&state, &m, &id).await?;
    let kept = crate::services::subscriptions::keep(&state, &sub).await;
    if m.unless_moved_on(kept).await?.is_some() {
        m.flash(m.t("The cancel was withdrawn: the subscription goes on.")).await;
    }
    see_other(&format!("/dashboard/subscriptions/{id}"))
}

/// Pauses now or from the end of the paid period, until a day it resumes by itself (its
/// start in the shop's zone) or until resumed.
async fn pause(State(state): State<AppState>, m: Merchant, Path(id): Path<String>, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let sub = find(&state, &m, &id).await?;
    let back = format!("/dashboard/subscriptions/{id}");
    let resume_on = form.get("resume_on").map(str::trim).filter(|d| !d.is_empty());
    let resume_at = match resume_on.map(|d| chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d")) {
        None => None,
        Some(Ok(day)) => Some(crate::domain::billing::resolve_local(m.tz, day.and_time(chrono::NaiveTime::MIN))),
        Some(Err(_)) => {
            m.flash(m.t("The resume date must be a date such as 2026-12-31.")).await;
            return see_other(&back);
        }
    };
    let billing = match form.get("billing") {
        Some("continue") => ResumeBilling::Continue,
        _ => ResumeBilling::NewPeriod,
    };
    let at_period_end = form.get("when") == Some("period_end");
    let now = crate::services::subscriptions::now_of(&state, &sub).await?;
    if resume_at.is_some_and(|at| at <= now) {
        m.flash(m.t("The resume date must be after today.")).await;
        return see_other(&back);
    }
    // Paused now, it stops at once: asked first, as a cancel, a resume or a plan change is.
    if !at_period_end && form.get("confirm") != Some("yes") {
        let resumes = match resume_at {
            Some(at) => m.f("It resumes by itself on {}.", &[&local(at, m.tz)]),
            None => m.t("It stays paused until it is resumed.").to_string(),
        };
        let mut fields = vec![("when".to_string(), "now".to_string())];
        fields.push(("billing".to_string(), form.get("billing").unwrap_or("new_period").to_string()));
        fields.extend(resume_on.map(|d| ("resume_on".to_string(), d.to_string())));
        let page = super::ConfirmPage {
            chrome: m.chrome("subscriptions").await,
            title: m.t("Pause the subscription now?").into(),
            lines: vec![
                m.t("Nothing is charged or retried while it is paused. Time already paid for is not refunded.").into(),
                resumes,
            ],
            action: format!("/dashboard/subscriptions/{id}/pause"),
            fields,
            button: m.t("Pause now").into(),
            back,
            back_label: k("Keep it running"),
        };
        return ok(&page);
    }
    let ask = crate::services::subscriptions::PauseRequest {
        at_period_end,
        resume: crate::db::subscriptions::ResumePlan { at: resume_at, billing },
    };
    match crate::services::subscriptions::pause(&state, &sub, ask).await {
        Ok(paused) if paused.sub.state == SubState::Paused => {
            m.flash(m.t("The subscription is paused: nothing is charged until it resumes.")).await
        }
        Ok(_) => m.flash(m.t("The subscription pauses at the end of its paid period.")).await,
        Err(AppError::Validation(_)) => m.flash(m.t("The resume date must be after today.")).await,
        Err(e) => {
            m.unless_moved_on::<()>(Err(e)).await?;
        }
    }
    see_other(&back)
}

/// Resumes a paused subscription (after a confirmation when that charges it now), or
/// withdraws a pause set for the end of the period.
async fn resume(State(state): State<AppState>, m: Merchant, Path(id): Path<String>, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let sub = find(&state, &m, &id).await?;
    let billing = match form.get("billing") {
        Some("continue") => ResumeBilling::Continue,
        _ => ResumeBilling::NewPeriod,
    };
    if sub.state == SubState::Paused && billing == ResumeBilling::NewPeriod && form.get("confirm") != Some("yes") {
        let plan = db::find::<plans::Entity>(&state.db, m.shop.id, &sub.plan_id).await?;
        let amount = plan.map(|p| m.money(p.amount, p.currency)).unwrap_or_default();
        let page = super::ConfirmPage {
            chrome: m.chrome("subscriptions").await,
            title: m.t("Resume the subscription with a new period?").into(),
            lines: vec![
                m.f("A new period starts now and {} is charged to the saved card now.", &[&amount]),
                m.t("The time it was paused is not charged.").to_string(),
            ],
            action: format!("/dashboard/subscriptions/{id}/resume"),
            fields: vec![("billing".to_string(), "new_period".to_string())],
            button: m.t("Resume and charge").into(),
            back: format!("/dashboard/subscriptions/{id}"),
            back_label: k("Keep it paused"),
        };
        return ok(&page);
    }
    let was_paused = sub.state == SubState::Paused;
    let resumed = crate::services::subscriptions::resume(&state, &sub, billing).await;
    if let Some(resumed) = m.unless_moved_on(resumed).await? {
        let message = match (was_paused, resumed.sub.state) {
            (false, _) => m.t("The pause was withdrawn: the subscription goes on."),
            (true, SubState::FailedAttempt | SubState::Failed | SubState::Error) => {
                m.t("The subscription resumed, but its charge failed: see the timeline.")
            }
            (true, _) => m.t("The subscription resumed."),
        };
        m.flash(message).await;
    }
    see_other(&format!("/dashboard/subscriptions/{id}"))
}

/// The plans a subscription on `current` may move to: of its currency and mode, not
/// archived, not its own; labelled with their price.
async fn plan_choices(
    state: &AppState,
    m: &Merchant,
    current: &plans::Model,
) -> Result<Vec<(String, String)>, AppError> {
    let page = db::Page { limit: 500, starting_after: None };
    let listed = db::search_archived::<plans::Entity>(&state.db, m.shop.id, &page, "", false).await?;
    let texts = crate::web::i18n::texts(m.words.language());
    Ok(listed
        .rows
        .iter()
        .filter(|p| p.id != current.id && p.currency == current.currency && p.test == current.test)
        .map(|p| {
            let price = format!("{} {}", m.money(p.amount, p.currency), texts.every(p.interval, p.interval_unit));
            (p.id.clone(), format!("{} ({price})", p.title))
        })
        .collect())
}

/// Moves a subscription to another plan: a confirmation first, which says what is charged
/// now and next (the preview; its moment is what the change is prorated at), then the change.
async fn change_plan(State(state): State<AppState>, m: Merchant, Path(id): Path<String>, form: PostedForm) -> Page {
    use crate::domain::plan_change::ChangeAt;
    m.check(form.get("csrf"))?;
    let sub = find(&state, &m, &id).await?;
    let back = format!("/dashboard/subscriptions/{id}");
    let at = if form.get("when") == Some("period_end") { ChangeAt::PeriodEnd } else { ChangeAt::Now };
    let proration_date = form.get("proration_date").and_then(|t| t.parse::<chrono::DateTime<chrono::Utc>>().ok());
    let ask = crate::services::subscriptions::ChangeRequest {
        plan_id: form.get("plan_id").unwrap_or_default().to_string(),
        at,
        proration_date,
    };
    let preview = match crate::services::subscriptions::preview_change(&state, &sub, &ask).await {
        Ok(preview) => preview,
        Err(AppError::Validation(errors)) => {
            let mut why = Vec::new();
            errors.for_each(|_, e| why.push(m.words.rule(e)));
            m.flash(&m.f("The plan cannot change so: {}", &[&why.join("; ")])).await;
            return see_other(&back);
        }
        Err(e) => {
            m.unless_moved_on::<()>(Err(e)).await?;
            return see_other(&back);
        }
    };
    if form.get("confirm") != Some("yes") {
        let money = |amount: i64| m.money(amount, preview.plan.currency);
        let next = preview.next_charge_at.map(|t| local(t, m.tz)).unwrap_or_default();
        let lines = match (at, preview.withdraws) {
            (_, true) => {
                vec![m.t("It stays on its plan; the change at the end of the period is withdrawn.").to_string()]
            }
            (ChangeAt::PeriodEnd, false) => vec![
                m.f("It moves to {} at the end of its paid period, {}.", &[&preview.plan.title, &next]),
                m.f("Nothing is charged now; {} is charged then.", &[&money(preview.plan.amount)]),
            ],
            (ChangeAt::Now, false) if sub.state == SubState::Trial => vec![
                m.t("Nothing is charged now: its trial goes on to its end.").to_string(),
                m.f("Next charge: {} on {}.", &[&money(preview.plan.amount), &next]),
            ],
            (ChangeAt::Now, false) => vec![
                m.f("Credit for the unused part of the paid period: {}.", &[&money(preview.credit)]),
                m.f("{} at the new price: {}.", &[&preview.plan.title, &money(preview.charge)]),
                m.f("Charged now to the saved card: {}.", &[&money(preview.amount_due)]),
                m.f("Next charge: {} on {}.", &[&money(preview.plan.amount), &next]),
            ],
        };
        let mut fields =
            vec![("plan_id".to_string(), preview.plan.id.clone()), ("when".to_string(), at.as_str().to_string())];
        fields.extend(preview.proration_date.map(|t| ("proration_date".to_string(), t.to_rfc3339())));
        let page = super::ConfirmPage {
            chrome: m.chrome("subscriptions").await,
            title: m.f("Move the subscription to {}?", &[&preview.plan.title]),
            lines,
            action: format!("/dashboard/subscriptions/{id}/change_plan"),
            fields,
            button: m.t("Change the plan").into(),
            back: back.clone(),
            back_label: k("Keep its plan"),
        };
        return ok(&page);
    }
    let changed = crate::services::subscriptions::change_plan(&state, &sub, &ask).await;
    let changed = match changed {
        Err(AppError::Declined(why)) => {
            m.flash(&m.f("The card was declined, and the plan was not changed: {}", &[&why])).await;
            return see_other(&back);
        }
        other => m.unless_moved_on(other).await?,
    };
    if let Some(changed) = changed {
        let message = match (changed.sub.plan_id == preview.plan.id, preview.withdraws) {
            (_, true) => m.t("The change of plan was withdrawn."),
            (true, _) => m.t("The plan was changed."),
            (false, _) => m.t("The plan changes at the end of the paid period."),
        };
        m.flash(message).await;
    }
    see_other(&back)
}

/// Gives the subscription a coupon's discount by its code.
async fn discount(State(state): State<AppState>, m: Merchant, Path(id): Path<String>, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let sub = find(&state, &m, &id).await?;
    let code = form.get("coupon").unwrap_or_default().trim().to_string();
    match crate::services::coupons::apply(&state, &sub, &code).await {
        Ok(_) => {
            m.flash(&m.f("Coupon {} applied: its discount comes off the next plan payments.", &[&code.to_uppercase()]))
                .await
        }
        Err(AppError::Validation(errors)) => {
            let mut why = Vec::new();
            errors.for_each(|_, e| why.push(m.words.rule(e)));
            m.flash(&m.f("The coupon was not applied: {}", &[&why.join("; ")])).await;
        }
        Err(e) => {
            m.unless_moved_on::<()>(Err(e)).await?;
        }
    }
    see_other(&format!("/dashboard/subscriptions/{id}"))
}

/// Takes the subscription's discount away.
async fn remove_discount(State(state): State<AppState>, m: Merchant, Path(id): Path<String>, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let sub = find(&state, &m, &id).await?;
    crate::services::coupons::remove(&state, &sub).await?;
    m.flash(m.t("The discount was removed: the next payments are at the plan's price.")).await;
    see_other(&format!("/dashboard/subscriptions/{id}"))
}
