//! `/customers`: create, read and list customers (spec 2.3, 4.3).

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
use crate::db::{self, entities::customers};
use crate::domain::customer::CustomerFields;
use crate::error::AppError;
use crate::state::AppState;

/// Routes of customers.
pub fn router() -> Router<AppState> {
    Router::new().route("/customers", post(create).get(list)).route("/customers/{id}", get(show))
}

/// A customer as the API returns it.
#[derive(Serialize)]
pub struct CustomerView {
    id: String,
    first_name: Option<String>,
    last_name: Option<String>,
    address: Option<String>,
    city: Option<String>,
    country: Option<String>,
    zip: Option<String>,
    state: Option<String>,
    phone: Option<String>,
    email: String,
    ip: String,
    external_id: Option<String>,
    created_at: String,
    updated_at: String,
}

impl From<&customers::Model> for CustomerView {
    fn from(c: &customers::Model) -> Self {
        CustomerView {
            id: c.id.clone(),
            first_name: c.first_name.clone(),
            last_name: c.last_name.clone(),
            address: c.address.clone(),
            city: c.city.clone(),
            country: c.country.clone(),
            zip: c.zip.clone(),
            state: c.state.clone(),
            phone: c.phone.clone(),
            email: c.email.clone(),
            ip: c.ip.clone(),
            external_id: c.external_id.clone(),
            created_at: timestamp(c.created_at),
            updated_at: timestamp(c.updated_at),
        }
    }
}

async fn create(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    JsonObject(body): JsonObject,
) -> Result<impl IntoResponse, AppError> {
    let fields = CustomerFields::parse(&body)?;
    let customer = db::customers::insert(&state.db, shop.id, fields, Utc::now()).await?;
    Ok((StatusCode::CREATED, Json(CustomerView::from(&customer))))
}

async fn show(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Json<CustomerView>, AppError> {
    let customer =
        db::find::<customers::Entity>(&state.db, shop.id, &id).await?.ok_or(AppError::NotFound("Customer"))?;
    Ok(Json(CustomerView::from(&customer)))
}

async fn list(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    RawQuery(query): RawQuery,
) -> Result<Response, AppError> {
    let page = page_from_query(query.as_deref())?;
    let listed = db::list::<customers::Entity>(&state.db, shop.id, &page).await;
    list_response(&state, "/customers", &page, listed, |c| CustomerView::from(c))
}
