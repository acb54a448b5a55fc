//! `/customers`: create, read and list customers (spec 2.3, 4.3).

use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use chrono::Utc;

use super::auth::ApiShop;
use super::json::JsonObject;
use super::{list_response, page_from_query, schemas};
use crate::db::{self, entities::customers};
use crate::domain::customer::CustomerFields;
use crate::domain::portal::PortalSessionRequest;
use crate::web::error::AppError;
use crate::web::state::AppState;
use crate::web::views::CustomerView;

/// Routes of customers.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/customers", post(create).get(list))
        .route("/customers/{id}", get(show))
        .route("/customers/{id}/portal_sessions", post(portal_session))
}

/// Create a customer
#[utoipa::path(post, path = "/customers", tag = "Customers",
    request_body = schemas::customers::CustomerCreate,
    responses((status = 201, description = "The customer", body = CustomerView)))]
async fn create(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    JsonObject(body): JsonObject,
) -> Result<impl IntoResponse, AppError> {
    let fields = CustomerFields::parse(&body)?;
    let customer = db::customers::insert(&state.db, shop.id, fields, Utc::now()).await?;
    Ok((StatusCode::CREATED, Json(CustomerView::from(&customer))))
}

/// Read a customer
#[utoipa::path(get, path = "/customers/{id}", tag = "Customers", params(("id" = String, Path, description = "The customer's id (`cst_…`)")),
    responses((status = 200, description = "The customer", body = CustomerView)))]
async fn show(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Json<CustomerView>, AppError> {
    let customer =
        db::find::<customers::Entity>(&state.db, shop.id, &id).await?.ok_or(AppError::NotFound("Customer"))?;
    Ok(Json(CustomerView::from(&customer)))
}

/// List customers
#[utoipa::path(get, path = "/customers", tag = "Customers", params(schemas::Paging),
    responses((status = 200, description = "A page of customers, newest first", body = [CustomerView])))]
async fn list(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    RawQuery(query): RawQuery,
) -> Result<Response, AppError> {
    let page = page_from_query(query.as_deref())?;
    let listed = db::list::<customers::Entity>(&state.db, shop.id, &page).await;
    list_response(&state, "/customers", query.as_deref(), &page, listed, |c| CustomerView::from(c))
}

/// A link to the customer's subscriber page, valid for an hour and opening it once; send
/// the customer to `url`.
#[utoipa::path(post, path = "/customers/{id}/portal_sessions", tag = "Customers",
    params(("id" = String, Path, description = "The customer's id (`cst_…`)")),
    request_body = Option<schemas::customers::PortalSessionCreate>,
    responses((status = 201, description = "The link", body = PortalSessionView)))]
async fn portal_session(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
    JsonObject(body): JsonObject,
) -> Result<impl IntoResponse, AppError> {
    let customer =
        db::find::<customers::Entity>(&state.db, shop.id, &id).await?.ok_or(AppError::NotFound("Customer"))?;
    let asked = PortalSessionRequest::parse(&body)?;
    let now = Utc::now();
    let (url, expires_at) =
        crate::services::portal::mint(&state, &customer, asked.locale, asked.return_url.as_deref(), now).await?;
    let view = PortalSessionView {
        object: "portal_session",
        customer: customer.id,
        url,
        return_url: asked.return_url,
        locale: asked.locale,
        created_at: crate::web::views::timestamp(now),
        expires_at: crate::web::views::timestamp(expires_at),
    };
    Ok((StatusCode::CREATED, Json(view)))
}

/// A link to a customer's subscriber page.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[schema(as = PortalSession)]
pub struct PortalSessionView {
    /// `portal_session`.
    object: &'static str,
    customer: String,
    /// The link: it opens the page once, until `expires_at`.
    url: String,
    return_url: Option<String>,
    locale: crate::domain::vocab::Language,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    created_at: String,
    #[schema(format = DateTime, example = "2026-11-22T11:15:30.123Z")]
    expires_at: String,
}
