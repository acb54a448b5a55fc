//! `/subscriptions`: create (with a plan and a customer, optionally a card), read, list,
//! cancel, and, in test mode, make the card fail from a given moment.

use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

use super::auth::{ApiShop, KeyAccess};
use super::json::JsonObject;
use super::{page_from_query, schemas};
use crate::db::entities::{payments, subscriptions};
use crate::db::subscriptions::ResumePlan;
use crate::db::{self};
use crate::domain::Errors;
use crate::domain::billing::{ResumeBilling, State as SubState};
use crate::domain::input::{Reader, whole_number};
use crate::domain::plan_change::ChangeAt;
use crate::domain::subscription::{SubscriptionFilter, SubscriptionRequest};
use crate::external::acquirer::Behaviour;
use crate::services::subscriptions::ChangeRequest;
use crate::web::error::AppError;
use crate::web::state::AppState;
use crate::web::views::{PaymentView, SubscriptionView, timestamp};

/// The most entries a test card's schedule holds.
const MAX_SCHEDULE: usize = 50;

/// Routes of subscriptions.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/subscriptions", post(create).get(list))
        .route("/subscriptions/{id}", get(show).post(update))
        .route("/subscriptions/{id}/cancel", post(cancel))
        .route("/subscriptions/{id}/pause", post(pause))
        .route("/subscriptions/{id}/resume", post(resume))
        .route("/subscriptions/{id}/change_plan", post(change_plan))
        .route("/subscriptions/{id}/change_plan/preview", post(preview_change))
        .route("/subscriptions/{id}/events", get(events))
        .route("/subscriptions/{id}/test_card_outcome", post(test_card_outcome))
}

/// Create a subscription
///
/// Subscribes a customer (given inline or by id) to a plan. With a `card`, the first (or
/// trial) charge is made at once; without one, the subscription waits in `redirecting`
/// until the customer enters a card at `redirect_url`.
#[utoipa::path(post, path = "/subscriptions", tag = "Subscriptions",
    request_body = schemas::subscriptions::SubscriptionCreate,
    responses(
        (status = 201, description = "The subscription", body = SubscriptionView),
    ))]
async fn create(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    access: KeyAccess,
    JsonObject(body): JsonObject,
) -> Result<impl IntoResponse, AppError> {
    access.may_set_notification_url(&body, None)?;
    let request = SubscriptionRequest::parse(&body, Utc::now())?;
    let sub = crate::services::subscriptions::create(&state, shop.id, request, Utc::now()).await?;
    Ok((StatusCode::CREATED, Json(SubscriptionView::load(&state.db, &state.config, &sub).await?)))
}

pub(super) async fn find(state: &AppState, shop_id: i64, id: &str) -> Result<subscriptions::Model, AppError> {
    db::find::<subscriptions::Entity>(&state.db, shop_id, id).await?.ok_or(AppError::NotFound("Subscription"))
}

/// Read a subscription
#[utoipa::path(get, path = "/subscriptions/{id}", tag = "Subscriptions", params(("id" = String, Path, description = "The subscription's id (`sbs_…`)")),
    responses((status = 200, description = "The subscription", body = SubscriptionView)))]
async fn show(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Json<SubscriptionView>, AppError> {
    let sub = find(&state, shop.id, &id).await?;
    Ok(Json(SubscriptionView::load(&state.db, &state.config, &sub).await?))
}

/// List subscriptions
#[utoipa::path(get, path = "/subscriptions", tag = "Subscriptions", params(schemas::subscriptions::SubscriptionFilterParams),
    responses((status = 200, description = "A page of subscriptions, newest first", body = [SubscriptionView])))]
async fn list(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    RawQuery(query): RawQuery,
) -> Result<Response, AppError> {
    let page = page_from_query(query.as_deref())?;
    let filter = SubscriptionFilter::parse(url::form_urlencoded::parse(query.as_deref().unwrap_or("").as_bytes()))?;
    let listed = db::subscriptions::list(&state.db, shop.id, &page, &filter).await?;
    let views = SubscriptionView::load_all(&state.db, &state.config, &listed.rows).await?;
    Ok(super::array_response(&state, "/subscriptions", query.as_deref(), &page, &views, listed.next_after.as_deref()))
}

/// One line of a subscription's timeline: a change of state or a charge attempt (with its
/// payment), and the next charge time it left.
#[derive(Serialize, ToSchema)]
#[schema(as = TimelineLine)]
struct TimelineView {
    id: String,
    /// `charge` (a charge attempt, with its payment) or `state_change`.
    #[serde(rename = "type")]
    #[schema(value_type = String, example = "charge")]
    kind: &'static str,
    from_state: Option<SubState>,
    to_state: SubState,
    payment: Option<PaymentView>,
    reason: Option<String>,
    /// The next charge time this line left.
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    renew_at: Option<String>,
    /// When it happened (on the subscription's test clock, if it has one).
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    occurred_at: String,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    created_at: String,
}

/// A subscription's timeline
///
/// Its charges and changes of state, newest first.
#[utoipa::path(get, path = "/subscriptions/{id}/events", tag = "Subscriptions",
    params(("id" = String, Path, description = "The subscription's id (`sbs_…`)"), schemas::Paging),
    responses((status = 200, description = "A page of the timeline", body = [TimelineView])))]
async fn events(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Response, AppError> {
    let page = page_from_query(query.as_deref())?;
    let sub = find(&state, shop.id, &id).await?;
    let listed = db::subscriptions::events_page(&state.db, shop.id, &sub.id, &page).await?;
    let payment_ids: Vec<&str> = listed.rows.iter().filter_map(|e| e.payment_id.as_deref()).collect();
    let payments = db::by_ids::<payments::Entity>(&state.db, shop.id, &payment_ids).await?;
    let views: Vec<TimelineView> = listed
        .rows
        .iter()
        .map(|e| TimelineView {
            id: e.id.clone(),
            kind: if e.payment_id.is_some() { "charge" } else { "state_change" },
            from_state: e.from_state,
            to_state: e.to_state,
            payment: e.payment_id.as_ref().and_then(|p| payments.get(p)).map(PaymentView::from),
            reason: e.reason.clone(),
            renew_at: e.renew_at.map(timestamp),
            occurred_at: timestamp(e.occurred_at),
            created_at: timestamp(e.created_at),
        })
        .collect();
    let path = format!("/subscriptions/{}/events", sub.id);
    Ok(super::array_response(&state, &path, query.as_deref(), &page, &views, listed.next_after.as_deref()))
}

/// Cancel a subscription
#[utoipa::path(post, path = "/subscriptions/{id}/cancel", tag = "Subscriptions", params(("id" = String, Path, description = "The subscription's id (`sbs_…`)")),
    request_body = Option<schemas::subscriptions::SubscriptionCancel>,
    responses(
        (status = 200, description = "The cancelled subscription", body = SubscriptionView),
        (status = 409, description = "The subscription has already ended", body = crate::web::error::ErrorBody),
    ))]
async fn cancel(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
    JsonObject(body): JsonObject,
) -> Result<Json<SubscriptionView>, AppError> {
    let mut errors = Errors::default();
    let reason = Reader::new(&body).string("cancel_reason", 255, &mut errors);
    errors.into_result(|| ()).map_err(AppError::from)?;
    let sub = crate::services::subscriptions::cancel(&state, find(&state, shop.id, &id).await?, reason).await?;
    Ok(Json(sub.view(&state).await?))
}

/// Pause a subscription
///
/// Now (`subscription.paused`), or from the end of its trial or paid period
/// (`subscription.pause_requested`, then `subscription.paused` when it ends). Nothing is
/// charged or retried while it is paused; it resumes at `resume_at` if given
/// (`subscription.resumed`), else when resumed.
#[utoipa::path(post, path = "/subscriptions/{id}/pause", tag = "Subscriptions", params(("id" = String, Path, description = "The subscription's id (`sbs_…`)")),
    request_body = Option<schemas::subscriptions::SubscriptionPause>,
    responses(
        (status = 200, description = "The subscription, paused or set to pause", body = SubscriptionView),
        (status = 409, description = "It has ended, waits for its customer's card, is set to end with its period, or a charge of it is in flight", body = crate::web::error::ErrorBody),
    ))]
async fn pause(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
    JsonObject(body): JsonObject,
) -> Result<Json<SubscriptionView>, AppError> {
    let r = Reader::new(&body);
    let mut errors = Errors::default();
    let at = r.choice("at", |w| ["now", "period_end"].contains(&w).then(|| w == "period_end"), &mut errors);
    let resume_at = parse_time(&r, "resume_at", &mut errors);
    let billing = r.choice("resume_billing", ResumeBilling::parse, &mut errors);
    errors.into_result(|| ()).map_err(AppError::from)?;
    let sub = find(&state, shop.id, &id).await?;
    let resume = ResumePlan { at: resume_at, billing: billing.unwrap_or(ResumeBilling::NewPeriod) };
    let ask = crate::services::subscriptions::PauseRequest { at_period_end: at.unwrap_or(false), resume };
    let sub = crate::services::subscriptions::pause(&state, &sub, ask).await?;
    Ok(Json(sub.view(&state).await?))
}

/// Resume a subscription
///
/// A paused subscription goes on now (`subscription.resumed`): with a new period charged at
/// once (`billing: new_period`, the default), or on its old schedule (`continue`). Of one set
/// to pause from the end of its period, the pause is withdrawn (`subscription.pause_withdrawn`).
#[utoipa::path(post, path = "/subscriptions/{id}/resume", tag = "Subscriptions", params(("id" = String, Path, description = "The subscription's id (`sbs_…`)")),
    request_body = Option<schemas::subscriptions::SubscriptionResume>,
    responses(
        (status = 200, description = "The subscription, resumed (with the new period's charge as `last_transaction`)", body = SubscriptionView),
        (status = 409, description = "It has ended, is not paused, or a charge of it is in flight", body = crate::web::error::ErrorBody),
    ))]
async fn resume(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
    JsonObject(body): JsonObject,
) -> Result<Json<SubscriptionView>, AppError> {
    let mut errors = Errors::default();
    let billing = Reader::new(&body).choice("billing", ResumeBilling::parse, &mut errors);
    errors.into_result(|| ()).map_err(AppError::from)?;
    let sub = find(&state, shop.id, &id).await?;
    let sub = crate::services::subscriptions::resume(&state, &sub, billing.unwrap_or(ResumeBilling::NewPeriod)).await?;
    Ok(Json(sub.view(&state).await?))
}

/// What a plan change charges and when (`POST /subscriptions/{id}/change_plan/preview`).
#[derive(Serialize, ToSchema)]
#[schema(as = PlanChangePreview)]
struct ChangePreviewView {
    /// `plan_change_preview`.
    #[schema(example = "plan_change_preview")]
    object: &'static str,
    subscription: String,
    /// The plan it would move to.
    plan: String,
    #[schema(value_type = String, example = "now")]
    at: ChangeAt,
    /// The moment the change is prorated at (asked now): send it with the change to be
    /// charged exactly this.
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    proration_date: Option<String>,
    currency: String,
    /// The unused part of the paid period, at the old plan's price.
    credit: i64,
    /// The rest of the period (or the new plan's first period), at the new plan's price.
    charge: i64,
    /// Charged at once: `charge - credit`.
    amount_due: i64,
    /// Until when it is paid once changed.
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    period_end: Option<String>,
    /// When the new plan's price (`next_charge_amount`) is charged next.
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    next_charge_at: Option<String>,
    next_charge_amount: i64,
}

/// The change a body asks: `plan` (an id, or `{"id"}`; also `plan_id`), `at`, `proration_date`.
fn change_request(body: &serde_json::Map<String, Value>) -> Result<ChangeRequest, AppError> {
    let r = Reader::new(body);
    let mut errors = Errors::default();
    let plan_id = match (body.get("plan"), body.get("plan_id")) {
        (Some(Value::Object(plan)), _) => Reader::new(plan).string("id", 255, &mut errors),
        (Some(_), _) => r.string("plan", 255, &mut errors),
        (None, _) => r.string("plan_id", 255, &mut errors),
    };
    errors.require("plan", plan_id.is_none());
    let at = r.choice("at", ChangeAt::parse, &mut errors).unwrap_or(ChangeAt::Now);
    let proration_date = parse_time(&r, "proration_date", &mut errors);
    errors
        .into_result(|| ChangeRequest { plan_id: plan_id.unwrap_or_default(), at, proration_date })
        .map_err(AppError::from)
}

/// Preview a plan change
///
/// What moving the subscription to `plan` would charge now and when the new plan's price is
/// charged next, exactly as the change then does (send its `proration_date` with the change).
/// Changes nothing.
#[utoipa::path(post, path = "/subscriptions/{id}/change_plan/preview", tag = "Subscriptions", params(("id" = String, Path, description = "The subscription's id (`sbs_…`)")),
    request_body = schemas::subscriptions::PlanChange,
    responses(
        (status = 200, description = "What the change would do", body = ChangePreviewView),
        (status = 409, description = "It is not in its trial or a paid period, or ends or pauses with it", body = crate::web::error::ErrorBody),
    ))]
async fn preview_change(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
    JsonObject(body): JsonObject,
) -> Result<Json<ChangePreviewView>, AppError> {
    let ask = change_request(&body)?;
    let sub = find(&state, shop.id, &id).await?;
    let p = crate::services::subscriptions::preview_change(&state, &sub, &ask).await?;
    Ok(Json(ChangePreviewView {
        object: "plan_change_preview",
        subscription: sub.id,
        plan: p.plan.id.clone(),
        at: p.at,
        proration_date: p.proration_date.map(timestamp),
        currency: p.plan.currency.code.to_string(),
        credit: p.credit,
        charge: p.charge,
        amount_due: p.amount_due,
        period_end: p.period_end.map(timestamp),
        next_charge_at: p.next_charge_at.map(timestamp),
        next_charge_amount: p.plan.amount,
    }))
}

/// Change a subscription's plan
///
/// To another plan of the same currency and mode: `at: now` (the default) credits the unused
/// part of the paid period and charges the new plan's price for the rest at once (prorated to
/// the second; another interval starts the new plan's period now), `subscription.plan_changed`;
/// a declined charge changes nothing (502). `at: period_end` moves it when its trial or paid
/// period ends (`subscription.plan_change_scheduled`; asked with its own plan, that is
/// withdrawn). A change that would leave a credit is refused now (422): make it at the period end.
#[utoipa::path(post, path = "/subscriptions/{id}/change_plan", tag = "Subscriptions", params(("id" = String, Path, description = "The subscription's id (`sbs_…`)")),
    request_body = schemas::subscriptions::PlanChange,
    responses(
        (status = 200, description = "The subscription (with the change's charge as `last_transaction`)", body = SubscriptionView),
        (status = 409, description = "It is not in its trial or a paid period, ends or pauses with it, or a charge of it is in flight", body = crate::web::error::ErrorBody),
        (status = 502, description = "The change's charge was declined: nothing changed", body = crate::web::error::ErrorBody),
    ))]
async fn change_plan(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
    JsonObject(body): JsonObject,
) -> Result<Json<SubscriptionView>, AppError> {
    let ask = change_request(&body)?;
    let sub = find(&state, shop.id, &id).await?;
    let sub = crate::services::subscriptions::change_plan(&state, &sub, &ask).await?;
    Ok(Json(sub.view(&state).await?))
}

/// Update a subscription
///
/// `cancel_at_period_end: true` ends it when its paid period (or trial) ends: nothing more
/// is charged, and it moves to `canceled` then (`subscription.cancellation_requested`, with
/// the optional `cancel_reason`); `false` withdraws that while it is still pending
/// (`subscription.cancellation_withdrawn`). Asking for what already is changes nothing. 409
/// for a subscription that has ended, or that is not in its trial or a paid period when
/// asked to end with it.
#[utoipa::path(post, path = "/subscriptions/{id}", tag = "Subscriptions", params(("id" = String, Path, description = "The subscription's id (`sbs_…`)")),
    request_body = schemas::subscriptions::SubscriptionUpdate,
    responses(
        (status = 200, description = "The subscription", body = SubscriptionView),
        (status = 409, description = "The subscription has ended, or cannot end with its period now", body = crate::web::error::ErrorBody),
    ))]
async fn update(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
    JsonObject(body): JsonObject,
) -> Result<Json<SubscriptionView>, AppError> {
    let r = Reader::new(&body);
    let mut errors = Errors::default();
    let at_period_end = r.boolean("cancel_at_period_end", &mut errors);
    let reason = r.string("cancel_reason", 255, &mut errors);
    errors.into_result(|| ()).map_err(AppError::from)?;
    let sub = find(&state, shop.id, &id).await?;
    match at_period_end {
        Some(true) => crate::services::subscriptions::cancel_at_period_end(&state, &sub, reason).await?,
        Some(false) => crate::services::subscriptions::keep(&state, &sub).await?,
        None => {}
    }
    let sub = find(&state, shop.id, &id).await?;
    Ok(Json(SubscriptionView::load(&state.db, &state.config, &sub).await?))
}

/// Test mode: how the card behaves
///
/// Adds to the card's schedule: from `from` (default: the subscription's current time, its
/// clock's) the card behaves as `outcome`, until a later entry. The same `from` again
/// replaces that entry; a `from` before the current time is 422.
#[utoipa::path(post, path = "/subscriptions/{id}/test_card_outcome", tag = "Subscriptions", params(("id" = String, Path, description = "The subscription's id (`sbs_…`)")),
    request_body = schemas::subscriptions::TestCardOutcome,
    responses(
        (status = 200, description = "The subscription", body = SubscriptionView),
        (status = 409, description = "A live subscription (only test ones can be told), or a shop whose processor is bePaid or Stripe (their test cards decide)", body = crate::web::error::ErrorBody),
    ))]
async fn test_card_outcome(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
    JsonObject(body): JsonObject,
) -> Result<Json<SubscriptionView>, AppError> {
    let sub = find(&state, shop.id, &id).await?;
    let r = Reader::new(&body);
    let mut errors = Errors::default();
    // Outcomes of charges only: a refund follows the card the payment was made with.
    let of_charges = |word: &str| Behaviour::parse(word).filter(|b| *b != Behaviour::RefundFails);
    let outcome = r.choice("outcome", of_charges, &mut errors);
    errors.require("outcome", outcome.is_none());
    let from = parse_time(&r, "from", &mut errors);
    errors.into_result(|| ()).map_err(AppError::from)?;
    if !sub.test {
        return Err(AppError::Conflict("Only test subscriptions can be told how their card behaves".into()));
    }
    // Only the simulated processor reads the schedule; a real one's test cards decide.
    let acquirer = crate::services::processors::acquirer(&state, shop.id, true).await?;
    if !acquirer.is_some_and(|a| a.is_simulated()) {
        return Err(AppError::Conflict(
            "The shop's payment processor (bePaid or Stripe) charges this card, and only the simulated processor \
             follows a schedule of test outcomes: give the subscription one of the processor's test cards instead"
                .into(),
        ));
    }
    // The schedule is of what is to come: from the subscription's now (its clock's time).
    let now = crate::services::subscriptions::now_of(&state, &sub).await?;
    let from = from.unwrap_or(now);
    if from < now {
        let message = format!("must not be before the subscription's current time, {}", timestamp(now));
        return Err(AppError::Validation(Errors::one("from", message)));
    }
    let schedules = db::subscriptions::test_outcomes_of(&state.db, &[sub.id.as_str()]).await?;
    let schedule = schedules.get(&sub.id).map_or(&[][..], Vec::as_slice);
    let replaces = schedule.iter().any(|e| e.effective_from == crate::db::now_millis(from));
    if schedule.len() >= MAX_SCHEDULE && !replaces {
        let message = format!("the card's schedule holds at most {MAX_SCHEDULE} entries");
        return Err(AppError::Validation(Errors::one("from", message)));
    }
    let outcome = outcome.unwrap_or(Behaviour::Succeeds);
    db::subscriptions::schedule_test_outcome(&state.db, &sub.id, outcome, from, Utc::now()).await?;
    Ok(Json(SubscriptionView::load(&state.db, &state.config, &sub).await?))
}

/// A moment given as RFC 3339 text (`2026-11-22T10:15:30Z`) or Unix seconds.
pub fn parse_time(r: &Reader, field: &str, errors: &mut Errors) -> Option<DateTime<Utc>> {
    let value = r.value(field)?;
    let parsed = match value {
        Value::Number(n) => whole_number(n).and_then(|s| DateTime::from_timestamp(s, 0)),
        Value::String(s) => DateTime::parse_from_rfc3339(s.trim()).ok().map(|t| t.with_timezone(&Utc)),
        _ => None,
    };
    // Times far beyond any billing schedule would overflow its arithmetic.
    let parsed = parsed.filter(|t| (1970..=9999).contains(&chrono::Datelike::year(t)));
    if parsed.is_none() {
        errors.add(
            &r.key(field),
            "must be an RFC 3339 time (2026-11-22T10:15:30Z) or Unix seconds, in the years 1970 to 9999",
        );
    }
    parsed
}
