//! `/coupons`: create, read, list and archive coupons; a subscription's discount is given and
//! taken away under `/subscriptions/{id}/discount`.

use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use chrono::Utc;

use super::auth::ApiShop;
use super::json::JsonObject;
use super::subscriptions::parse_time;
use super::{list_response, page_from_query, schemas};
use crate::db::{self, entities::coupons};
use crate::domain::Errors;
use crate::domain::coupon::CouponFields;
use crate::domain::input::Reader;
use crate::web::error::AppError;
use crate::web::state::AppState;
use crate::web::views::{CouponView, SubscriptionView};

/// Routes of coupons and discounts.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/coupons", post(create).get(list))
        .route("/coupons/{id}", get(show))
        .route("/coupons/{id}/archive", post(archive))
        .route("/subscriptions/{id}/discount", post(apply).delete(remove))
}

/// Create a coupon
///
/// A percent (`percent_off`, 1–100) or an amount (`amount_off` with its `currency`) off a
/// subscription's plan periods: `once`, `repeating` for `duration_in_periods`, or `forever`;
/// optionally redeemable until `redeem_by`, at most `max_redemptions` times, for the `plans`
/// named. Its `code` (letters, digits, `-`, `_`) is unique per shop and mode.
#[utoipa::path(post, path = "/coupons", tag = "Coupons",
    request_body = schemas::coupons::CouponCreate,
    responses((status = 201, description = "The coupon", body = CouponView)))]
async fn create(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    JsonObject(body): JsonObject,
) -> Result<impl IntoResponse, AppError> {
    let mut errors = Errors::default();
    let redeem_by = parse_time(&Reader::new(&body), "redeem_by", &mut errors);
    let fields = match CouponFields::parse(&body, redeem_by, Utc::now()) {
        Ok(fields) if errors.is_empty() => fields,
        Ok(_) => return Err(errors.into()),
        Err(more) => {
            more.for_each(|field, message| errors.add(field, message));
            return Err(errors.into());
        }
    };
    let coupon = crate::services::coupons::create(&state, shop.id, &fields, Utc::now()).await?;
    Ok((StatusCode::CREATED, Json(CouponView::from(&coupon))))
}

async fn find(state: &AppState, shop_id: i64, id: &str) -> Result<coupons::Model, AppError> {
    db::find::<coupons::Entity>(&state.db, shop_id, id).await?.ok_or(AppError::NotFound("Coupon"))
}

/// Read a coupon
#[utoipa::path(get, path = "/coupons/{id}", tag = "Coupons", params(("id" = String, Path, description = "The coupon's id (`cpn_…`)")),
    responses((status = 200, description = "The coupon", body = CouponView)))]
async fn show(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Json<CouponView>, AppError> {
    Ok(Json(CouponView::from(&find(&state, shop.id, &id).await?)))
}

/// List coupons
#[utoipa::path(get, path = "/coupons", tag = "Coupons", params(schemas::Paging),
    responses((status = 200, description = "A page of coupons, newest first", body = [CouponView])))]
async fn list(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    RawQuery(query): RawQuery,
) -> Result<Response, AppError> {
    let page = page_from_query(query.as_deref())?;
    let listed = db::list::<coupons::Entity>(&state.db, shop.id, &page).await;
    list_response(&state, "/coupons", query.as_deref(), &page, listed, |c| CouponView::from(c))
}

/// Archive a coupon
///
/// It takes no more redemptions (its code is refused on plan pages and by the API);
/// subscriptions that have its discount keep it. Asked again, it changes nothing.
#[utoipa::path(post, path = "/coupons/{id}/archive", tag = "Coupons", params(("id" = String, Path, description = "The coupon's id (`cpn_…`)")),
    responses((status = 200, description = "The archived coupon", body = CouponView)))]
async fn archive(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Json<CouponView>, AppError> {
    let coupon = find(&state, shop.id, &id).await?;
    crate::services::coupons::archive(&state, shop.id, &coupon.id).await?;
    Ok(Json(CouponView::from(&find(&state, shop.id, &id).await?)))
}

/// Apply a coupon to a subscription
///
/// `coupon`: its code (any case) or id. One redemption is counted; its discount applies to
/// the subscription's plan periods from the next charge on, for the coupon's duration
/// (`subscription.discount_applied`). 422 for a code that cannot be redeemed for the
/// subscription's plan (unknown, archived, expired, used up, another plan or currency); 409
/// for a subscription that has ended or has a discount.
#[utoipa::path(post, path = "/subscriptions/{id}/discount", tag = "Subscriptions", params(("id" = String, Path, description = "The subscription's id (`sbs_…`)")),
    request_body = schemas::coupons::DiscountApply,
    responses(
        (status = 200, description = "The subscription with its discount", body = SubscriptionView),
        (status = 409, description = "It has ended, or has a discount", body = crate::web::error::ErrorBody),
    ))]
async fn apply(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
    JsonObject(body): JsonObject,
) -> Result<Json<SubscriptionView>, AppError> {
    let mut errors = Errors::default();
    let code = Reader::new(&body).string("coupon", 255, &mut errors);
    errors.require("coupon", code.as_deref().is_none_or(|c| c.trim().is_empty()));
    errors.into_result(|| ()).map_err(AppError::from)?;
    let sub = super::subscriptions::find(&state, shop.id, &id).await?;
    let sub = crate::services::coupons::apply(&state, &sub, &code.unwrap_or_default()).await?;
    Ok(Json(SubscriptionView::load(&state.db, &state.config, &sub).await?))
}

/// Remove a subscription's discount
///
/// Its next charges are at the plan's price (`subscription.discount_removed`); the redemption
/// stays counted. Asked again, it changes nothing.
#[utoipa::path(delete, path = "/subscriptions/{id}/discount", tag = "Subscriptions", params(("id" = String, Path, description = "The subscription's id (`sbs_…`)")),
    responses((status = 200, description = "The subscription", body = SubscriptionView)))]
async fn remove(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Json<SubscriptionView>, AppError> {
    let sub = super::subscriptions::find(&state, shop.id, &id).await?;
    let sub = crate::services::coupons::remove(&state, &sub).await?;
    Ok(Json(SubscriptionView::load(&state.db, &state.config, &sub).await?))
}
