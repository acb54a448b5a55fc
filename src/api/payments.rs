//! `/payments`: every attempt to pay, with capture and void of authorizations.

use axum::extract::{Path, RawQuery, State};
use axum::response::Response;
use axum::routing::{get, post};
use axum::{Json, Router};
use chrono::Utc;
use sea_orm::{ColumnTrait, Condition};
use serde::Serialize;

use super::{list_response, page_from_query, timestamp};
use crate::app::AppState;
use crate::auth::ApiShop;
use crate::db::{self, entities::payments};
use crate::domain::Errors;
use crate::domain::vocab::PaymentStatus;
use crate::error::AppError;

/// Routes of payments.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/payments", get(list))
        .route("/payments/{id}", get(show))
        .route("/payments/{id}/capture", post(capture))
        .route("/payments/{id}/void", post(void))
}

/// A payment as the API returns it.
#[derive(Serialize)]
pub struct PaymentView {
    id: String,
    status: String,
    amount: i64,
    currency: String,
    transaction_type: String,
    test: bool,
    product_id: Option<String>,
    plan_id: Option<String>,
    subscription_id: Option<String>,
    customer_id: Option<String>,
    card: CardView,
    failure_code: Option<String>,
    failure_message: Option<String>,
    captured_at: Option<String>,
    voided_at: Option<String>,
    shop_id: i64,
    created_at: String,
    updated_at: String,
}

/// What is kept of a card: never its number or CVC.
#[derive(Serialize)]
pub struct CardView {
    brand: String,
    last_4: String,
    exp_month: i32,
    exp_year: i32,
    holder: String,
}

impl From<&payments::Model> for PaymentView {
    fn from(p: &payments::Model) -> Self {
        PaymentView {
            id: p.id.clone(),
            status: p.status.clone(),
            amount: p.amount,
            currency: p.currency.clone(),
            transaction_type: p.transaction_type.clone(),
            test: p.test,
            product_id: p.product_id.clone(),
            plan_id: p.plan_id.clone(),
            subscription_id: p.subscription_id.clone(),
            customer_id: p.customer_id.clone(),
            card: CardView {
                brand: p.card_brand.clone(),
                last_4: p.card_last4.clone(),
                exp_month: p.card_exp_month,
                exp_year: p.card_exp_year,
                holder: p.card_holder.clone(),
            },
            failure_code: p.failure_code.clone(),
            failure_message: p.failure_message.clone(),
            captured_at: p.captured_at.map(timestamp),
            voided_at: p.voided_at.map(timestamp),
            shop_id: p.shop_id,
            created_at: timestamp(p.created_at),
            updated_at: timestamp(p.updated_at),
        }
    }
}

/// `?product=&plan=&subscription=&customer=&status=` (or `product_id=` and so on).
fn filters(query: Option<&str>) -> Result<Condition, AppError> {
    filters_of(url::form_urlencoded::parse(query.unwrap_or("").as_bytes()))
}

/// The filters among `pairs` (name, value); other names are ignored.
pub fn filters_of<K: AsRef<str>, V: Into<String> + AsRef<str>>(
    pairs: impl IntoIterator<Item = (K, V)>,
) -> Result<Condition, AppError> {
    use payments::Column;
    let mut condition = Condition::all();
    let mut errors = Errors::default();
    for (key, value) in pairs {
        let column = match key.as_ref().trim_end_matches("_id") {
            "product" => Column::ProductId,
            "plan" => Column::PlanId,
            "subscription" => Column::SubscriptionId,
            "customer" => Column::CustomerId,
            "status" if PaymentStatus::parse(value.as_ref()).is_none() => {
                errors.add("status", "is not included in the list");
                continue;
            }
            "status" => Column::Status,
            _ => continue,
        };
        condition = condition.add(column.eq(value.into()));
    }
    errors.into_result(|| condition).map_err(AppError::from)
}

async fn list(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    RawQuery(query): RawQuery,
) -> Result<Response, AppError> {
    let page = page_from_query(query.as_deref())?;
    let condition = filters(query.as_deref())?;
    let listed = db::list::<payments::Entity>(&state.db, shop.id, &page, condition).await;
    list_response(&state, "/payments", &page, listed, |p| PaymentView::from(p))
}

async fn show(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Json<PaymentView>, AppError> {
    let payment = db::find::<payments::Entity>(&state.db, shop.id, &id).await?.ok_or(AppError::NotFound("Payment"))?;
    Ok(Json(PaymentView::from(&payment)))
}

async fn capture(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Json<PaymentView>, AppError> {
    let payment = crate::payments::capture(&state, shop.id, &id, Utc::now()).await?;
    Ok(Json(PaymentView::from(&payment)))
}

async fn void(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Json<PaymentView>, AppError> {
    let payment = crate::payments::void(&state, shop.id, &id, Utc::now()).await?;
    Ok(Json(PaymentView::from(&payment)))
}
