//! What a merchant changes in their catalogue, from the dashboard or the API alike: archiving
//! a product or plan (its link then takes no payments; subscriptions running on a plan go on)
//! and bringing it back, and a plan's title and page language. Each change is an event,
//! recorded with it; a change to what already is changes nothing and records nothing.

use chrono::Utc;
use sea_orm::TransactionTrait;

use crate::db::entities::{plans, products};
use crate::db::{self};
use crate::domain::event::EventType;
use crate::domain::plan::PlanEdit;
use crate::services::events;
use crate::web::error::AppError;
use crate::web::state::AppState;

/// Archives the shop's product (`archive`) or brings it back; answers it as it then is.
pub async fn archive_product(
    state: &AppState,
    shop_id: i64,
    id: &str,
    archive: bool,
) -> Result<products::Model, AppError> {
    let now = Utc::now();
    let txn = state.db.begin().await?;
    let changed = db::set_archived::<products::Entity>(&txn, shop_id, id, archive.then_some(now), now).await?;
    let product = db::find::<products::Entity>(&txn, shop_id, id).await?.ok_or(AppError::NotFound("Product"))?;
    if changed {
        let kind = if archive { EventType::ProductArchived } else { EventType::ProductRestored };
        events::record(&txn, &state.config, vec![events::product(kind, &product, &state.config)]).await?;
    }
    txn.commit().await?;
    Ok(product)
}

/// Archives the shop's plan (`archive`) or brings it back; answers it as it then is.
pub async fn archive_plan(state: &AppState, shop_id: i64, id: &str, archive: bool) -> Result<plans::Model, AppError> {
    let now = Utc::now();
    let txn = state.db.begin().await?;
    let changed = db::set_archived::<plans::Entity>(&txn, shop_id, id, archive.then_some(now), now).await?;
    let plan = db::find::<plans::Entity>(&txn, shop_id, id).await?.ok_or(AppError::NotFound("Plan"))?;
    if changed {
        let kind = if archive { EventType::PlanArchived } else { EventType::PlanRestored };
        events::record(&txn, &state.config, vec![events::plan(kind, &plan, &state.config)]).await?;
    }
    txn.commit().await?;
    Ok(plan)
}

/// Gives the shop's plan a new title and page language (`plan.updated` when either changed);
/// answers it as it then is.
pub async fn update_plan(state: &AppState, shop_id: i64, id: &str, edit: &PlanEdit) -> Result<plans::Model, AppError> {
    let txn = state.db.begin().await?;
    let changed = db::plans::update(&txn, shop_id, id, edit, Utc::now()).await?;
    let plan = db::find::<plans::Entity>(&txn, shop_id, id).await?.ok_or(AppError::NotFound("Plan"))?;
    if changed {
        events::record(&txn, &state.config, vec![events::plan(EventType::PlanUpdated, &plan, &state.config)]).await?;
    }
    txn.commit().await?;
    Ok(plan)
}
