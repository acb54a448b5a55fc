//! Coupons: made by the merchant, redeemed by a subscription (the merchant applying one, or a
//! customer typing its code on a plan's page). A redemption is counted with one conditional
//! update in the transaction that gives the subscription its discount, so the last one cannot
//! be taken twice.

use chrono::{DateTime, Utc};

use crate::db::entities::{coupons, plans, subscriptions};
use crate::db::{self};
use crate::domain::Errors;
use crate::domain::coupon::CouponFields;
use crate::domain::event::EventType;
use crate::web::error::AppError;
use crate::web::state::AppState;

/// Creates a coupon of the shop; a code its mode has already is 422.
pub async fn create(
    state: &AppState,
    shop_id: i64,
    fields: &CouponFields,
    now: DateTime<Utc>,
) -> Result<coupons::Model, AppError> {
    let plans: Vec<&str> = fields.plans.iter().map(String::as_str).collect();
    let found = db::by_ids::<plans::Entity>(&state.db, shop_id, &plans).await?;
    if let Some(missing) = plans.iter().find(|id| !found.contains_key(**id)) {
        return Err(AppError::Validation(Errors::one("plans", format!("{missing} is not a plan of this shop"))));
    }
    match db::coupons::insert(&state.db, shop_id, fields, now).await {
        Ok(coupon) => Ok(coupon),
        Err(e) if crate::web::error::duplicate(&e) => {
            Err(AppError::Validation(Errors::one("code", "has already been taken")))
        }
        Err(e) => Err(e.into()),
    }
}

/// Archives the shop's coupon (no code redeems it any more; discounts given go on); answers
/// whether it changed it.
pub async fn archive(state: &AppState, shop_id: i64, id: &str) -> Result<bool, AppError> {
    let action = ("coupon.archived", "coupon");
    Ok(db::archive_recorded::<coupons::Entity>(&state.db, (shop_id, id), action, Utc::now()).await?)
}

/// The shop's coupon a code (or id) names for a subscription of `plan` at `now`, if it can be
/// redeemed: else why not, on `field`.
pub async fn usable(
    state: &AppState,
    plan: &plans::Model,
    code: &str,
    field: &str,
    now: DateTime<Utc>,
) -> Result<coupons::Model, AppError> {
    let coupon = db::coupons::by_code_or_id(&state.db, plan.shop_id, plan.test, code)
        .await?
        .ok_or_else(|| AppError::Validation(Errors::one(field, "is not a valid code")))?;
    match coupon.refusal(plan, now) {
        Some(why) => Err(AppError::Validation(Errors::one(field, why))),
        None => Ok(coupon),
    }
}

/// Applies a coupon (by code or id) to a subscription: one redemption, its discount from the
/// next plan period's charge (`subscription.discount_applied`). 422 for a code that cannot
/// be redeemed (also when the last redemption went to another at the same moment), 409 for a
/// subscription that has ended or has a discount.
pub async fn apply(state: &AppState, sub: &subscriptions::Model, code: &str) -> Result<subscriptions::Model, AppError> {
    if sub.state.has_ended() {
        return Err(AppError::Conflict(format!("The subscription has already ended: it is {}", sub.state)));
    }
    if sub.coupon_id.is_some() {
        return Err(AppError::Conflict("The subscription has a discount already: remove it first".into()));
    }
    let plan =
        db::find::<plans::Entity>(&state.db, sub.shop_id, &sub.plan_id).await?.ok_or(AppError::NotFound("Plan"))?;
    let now = Utc::now();
    let coupon = usable(state, &plan, code, "coupon", now).await?;
    // Read before the transaction: a request holding one connection never waits for another.
    let at = crate::services::subscriptions::now_of(state, sub).await?;
    let txn = crate::db::begin(&state.db).await?;
    if !db::coupons::redeem(&txn, &coupon.id, now).await? {
        return Err(AppError::Validation(Errors::one("coupon", "has been used up")));
    }
    let Some(discounted) = db::subscriptions::apply_discount(&txn, sub, &coupon.id, coupon.periods(), at).await? else {
        // Ended or discounted meanwhile: the redemption is not taken (the transaction rolls back).
        return Err(AppError::Conflict("The subscription changed meanwhile: look again".into()));
    };
    crate::services::events::record_about(&txn, &state.config, EventType::SubscriptionDiscountApplied, &discounted)
        .await?;
    txn.commit().await?;
    Ok(discounted)
}

/// Takes a subscription's discount away (`subscription.discount_removed`); asked again, it
/// changes nothing.
pub async fn remove(state: &AppState, sub: &subscriptions::Model) -> Result<subscriptions::Model, AppError> {
    let at = crate::services::subscriptions::now_of(state, sub).await?;
    let txn = crate::db::begin(&state.db).await?;
    let Some(removed) = db::subscriptions::remove_discount(&txn, sub, at).await? else {
        drop(txn);
        return db::find::<subscriptions::Entity>(&state.db, sub.shop_id, &sub.id)
            .await?
            .ok_or(AppError::NotFound("Subscription"));
    };
    crate::services::events::record_about(&txn, &state.config, EventType::SubscriptionDiscountRemoved, &removed)
        .await?;
    txn.commit().await?;
    Ok(removed)
}
