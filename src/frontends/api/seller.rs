//! `/shop/seller`: who the shop's invoices name.

use axum::extract::State;
use axum::routing::get;
use axum::{Json, Router};
use chrono::Utc;

use super::auth::ApiShop;
use super::json::JsonObject;
use super::schemas;
use crate::db;
use crate::domain::seller::Seller;
use crate::web::error::AppError;
use crate::web::state::AppState;
use crate::web::views::seller::SellerView;

pub fn router() -> Router<AppState> {
    Router::new().route("/shop/seller", get(show).put(update))
}

/// Show the shop's seller details
///
/// Its legal name, address, VAT id, company registration number and invoice footer, and
/// what invoices still need (`missing`).
#[utoipa::path(get, path = "/shop/seller", tag = "Invoicing",
    responses((status = 200, description = "The seller details", body = SellerView)))]
async fn show(State(state): State<AppState>, ApiShop(shop): ApiShop) -> Result<Json<SellerView>, AppError> {
    Ok(Json(SellerView::from(&db::sellers::find(&state.db, shop.id).await?)))
}

/// Set the shop's seller details
///
/// The details as a whole: a field not sent, `null` or blank is emptied. A `vat_id` needs the
/// `country`, and is checked for its form there and kept in one form (capitals, no spaces,
/// with the country's prefix). Invoices issued before keep the details of their day.
#[utoipa::path(put, path = "/shop/seller", tag = "Invoicing",
    request_body = Option<schemas::tax_rates::SellerUpdate>,
    responses((status = 200, description = "The seller details", body = SellerView),
        (status = 422, description = "A field is wrong", body = crate::web::error::ErrorBody)))]
async fn update(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    crate::web::guard::Caller(origin): crate::web::guard::Caller,
    JsonObject(body): JsonObject,
) -> Result<Json<SellerView>, AppError> {
    let seller = Seller::parse(&body)?;
    let audit = super::by_key(shop.id, origin, "seller.updated");
    let stored = db::sellers::replace(&state.db, shop.id, &seller, &audit, Utc::now()).await?;
    Ok(Json(SellerView::from(&stored)))
}
