//! `/products`: create, read, list and update products (spec 2.1, 4.1).

use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use chrono::Utc;
use serde::Serialize;
use serde_json::{Map, Value};

use super::auth::ApiShop;
use super::json::JsonObject;
use super::{list_response, page_from_query, timestamp};
use crate::config::Config;
use crate::db::{self, entities::products};
use crate::domain::currency::Currency;
use crate::domain::product::{ProductFields, visible_fields_from_db};
use crate::domain::vocab::{Language, TransactionType};
use crate::error::AppError;
use crate::state::AppState;
use crate::urls;

/// Routes of products.
pub fn router() -> Router<AppState> {
    Router::new().route("/products", post(create).get(list)).route("/products/{id}", get(show).put(update))
}

/// A product as the API returns it.
#[derive(Serialize)]
pub struct ProductView {
    id: String,
    name: String,
    description: String,
    currency: Currency,
    amount: i64,
    quantity: Option<i64>,
    infinite: bool,
    language: Language,
    transaction_type: TransactionType,
    created_at: String,
    updated_at: String,
    test: bool,
    additional_data: Map<String, Value>,
    pay_url: String,
    payment_url: String,
    confirm_url: String,
    visible_fields: Vec<&'static str>,
    immortal: bool,
    expired_at: Option<String>,
    return_url: Option<String>,
    shop_id: i64,
}

impl ProductView {
    /// The API's view of a stored product.
    pub fn new(p: &products::Model, config: &Config) -> Self {
        let pay_url = urls::product_pay(config, &p.id);
        ProductView {
            id: p.id.clone(),
            name: p.name.clone(),
            description: p.description.clone(),
            currency: p.currency,
            amount: p.amount,
            quantity: p.quantity,
            infinite: p.infinite,
            language: p.language,
            transaction_type: p.transaction_type,
            created_at: timestamp(p.created_at),
            updated_at: timestamp(p.updated_at),
            test: p.test,
            additional_data: Map::new(),
            payment_url: pay_url.clone(),
            pay_url,
            confirm_url: urls::confirm_order(config, &p.id, p.shop_id),
            visible_fields: visible_fields_from_db(&p.visible_fields).iter().map(|f| f.as_str()).collect(),
            immortal: p.immortal,
            expired_at: p.expired_at.map(timestamp),
            return_url: p.return_url.clone(),
            shop_id: p.shop_id,
        }
    }
}

async fn create(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    JsonObject(body): JsonObject,
) -> Result<impl IntoResponse, AppError> {
    let fields = ProductFields::parse(&body, None, shop.id)?;
    let product = db::products::insert(&state.db, shop.id, &fields, Utc::now()).await?;
    Ok((StatusCode::CREATED, Json(ProductView::new(&product, &state.config))))
}

async fn show(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Json<ProductView>, AppError> {
    let product = find(&state, shop.id, &id).await?;
    Ok(Json(ProductView::new(&product, &state.config)))
}

async fn list(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    RawQuery(query): RawQuery,
) -> Result<Response, AppError> {
    let page = page_from_query(query.as_deref())?;
    let listed = db::list::<products::Entity>(&state.db, shop.id, &page).await;
    list_response(&state, "/products", &page, listed, |p| ProductView::new(p, &state.config))
}

async fn update(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
    JsonObject(body): JsonObject,
) -> Result<StatusCode, AppError> {
    let product = find(&state, shop.id, &id).await?;
    let fields = ProductFields::parse(&body, Some(&product.fields()), shop.id)?;
    db::products::update(&state.db, &product, &fields, Utc::now())
        .await?
        .map_err(|refused| AppError::Conflict(refused.to_string()))?;
    Ok(StatusCode::NO_CONTENT)
}

async fn find(state: &AppState, shop_id: i64, id: &str) -> Result<products::Model, AppError> {
    db::find::<products::Entity>(&state.db, shop_id, id).await?.ok_or(AppError::NotFound("Product"))
}
