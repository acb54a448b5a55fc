//! `/plans/{id}/pay`: the hosted page of a subscription plan. Merchants' sites may send the
//! customer here by GET or by a form POST.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use axum::routing::get;
use axum::{Json, Router};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde_json::json;

use super::page::price;
use super::respond;
use crate::api::plans::pay_url;
use crate::app::AppState;
use crate::db::{entities::plans, shops};
use crate::domain::plan::PlanFields;
use crate::domain::vocab::IntervalUnit;
use crate::error::AppError;

pub fn router() -> Router<AppState> {
    Router::new().route("/plans/{id}/pay", get(show).post(show))
}

#[derive(Template, WebTemplate)]
#[template(path = "pay/plan.html")]
struct PlanPage {
    lang: &'static str,
    id: String,
    pay_url: String,
    shop_name: String,
    title: String,
    price: String,
    every: String,
    trial: Option<String>,
    test: bool,
}

async fn show(State(state): State<AppState>, Path(id): Path<String>, headers: HeaderMap) -> Response {
    let loaded = load(&state, &id).await;
    respond(&headers, loaded, |p| Json(json!({"id": p.id, "object": "plan", "pay_url": p.pay_url})))
}

async fn load(state: &AppState, id: &str) -> Result<PlanPage, AppError> {
    let plan = plans::Entity::find()
        .filter(plans::Column::Id.eq(id))
        .one(&state.db)
        .await?
        .ok_or(AppError::NotFound("Plan"))?;
    let shop = shops::find(&state.db, plan.shop_id).await?.ok_or(AppError::NotFound("Plan"))?;
    let f: PlanFields = plan.fields();
    Ok(PlanPage {
        lang: f.language.as_str(),
        pay_url: pay_url(&state.config, &plan.id),
        id: plan.id,
        shop_name: shop.name,
        price: price(f.amount, &f.currency),
        every: every(f.interval, f.interval_unit),
        trial: f
            .trial
            .map(|t| format!("{} for the first {}", price(t.amount, &f.currency), span(t.interval, t.interval_unit))),
        title: f.title,
        test: f.test,
    })
}

/// "every month", "every 3 days".
fn every(n: i32, unit: IntervalUnit) -> String {
    if n == 1 { format!("every {unit}") } else { format!("every {}", span(n, unit)) }
}

/// "1 day", "3 months".
fn span(n: i32, unit: IntervalUnit) -> String {
    if n == 1 { format!("1 {unit}") } else { format!("{n} {unit}s") }
}
