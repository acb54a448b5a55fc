//! `/plans`: create, read and list subscription plans (spec 2.2, 4.2).

use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use chrono::Utc;
use serde::Serialize;

use super::auth::ApiShop;
use super::json::JsonObject;
use super::{list_response, page_from_query, timestamp};
use crate::config::Config;
use crate::db::{self, entities::plans};
use crate::domain::currency::Currency;
use crate::domain::plan::PlanFields;
use crate::domain::vocab::{IntervalUnit, Language};
use crate::error::AppError;
use crate::state::AppState;
use crate::urls;

/// Routes of plans.
pub fn router() -> Router<AppState> {
    Router::new().route("/plans", post(create).get(list)).route("/plans/{id}", get(show))
}

/// A plan as the API returns it.
#[derive(Serialize)]
pub struct PlanView {
    id: String,
    title: String,
    currency: Currency,
    language: Language,
    plan: Schedule,
    trial: TrialView,
    number_payment_attempts: i32,
    test: bool,
    infinite: bool,
    billing_cycles: Option<i32>,
    prevent_payments_at_night: bool,
    pay_url: String,
    shop_id: i64,
    created_at: String,
    updated_at: String,
}

#[derive(Serialize)]
struct Schedule {
    amount: i64,
    interval: i32,
    interval_unit: IntervalUnit,
}

/// The trial section: always an object, with nulls when the plan has no trial.
#[derive(Serialize)]
struct TrialView {
    amount: Option<i64>,
    interval: Option<i32>,
    interval_unit: Option<IntervalUnit>,
    as_first_payment: bool,
}

impl PlanView {
    /// The API's view of a stored plan.
    pub fn new(p: &plans::Model, config: &Config) -> Self {
        let f = p.fields();
        PlanView {
            id: p.id.clone(),
            title: f.title,
            currency: f.currency,
            language: f.language,
            plan: Schedule { amount: f.amount, interval: f.interval, interval_unit: f.interval_unit },
            trial: TrialView {
                amount: f.trial.map(|t| t.amount),
                interval: f.trial.map(|t| t.interval),
                interval_unit: f.trial.map(|t| t.interval_unit),
                as_first_payment: f.trial_as_first_payment,
            },
            number_payment_attempts: f.number_payment_attempts,
            test: f.test,
            infinite: f.infinite,
            billing_cycles: f.billing_cycles,
            prevent_payments_at_night: f.prevent_payments_at_night,
            pay_url: urls::plan_pay(config, &p.id),
            shop_id: p.shop_id,
            created_at: timestamp(p.created_at),
            updated_at: timestamp(p.updated_at),
        }
    }
}

async fn create(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    JsonObject(body): JsonObject,
) -> Result<impl IntoResponse, AppError> {
    let fields = PlanFields::parse(&body)?;
    let plan = db::plans::insert(&state.db, shop.id, &fields, Utc::now()).await?;
    Ok((StatusCode::CREATED, Json(PlanView::new(&plan, &state.config))))
}

async fn show(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Json<PlanView>, AppError> {
    let plan = db::find::<plans::Entity>(&state.db, shop.id, &id).await?.ok_or(AppError::NotFound("Plan"))?;
    Ok(Json(PlanView::new(&plan, &state.config)))
}

async fn list(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    RawQuery(query): RawQuery,
) -> Result<Response, AppError> {
    let page = page_from_query(query.as_deref())?;
    let listed = db::list::<plans::Entity>(&state.db, shop.id, &page).await;
    list_response(&state, "/plans", &page, listed, |p| PlanView::new(p, &state.config))
}
