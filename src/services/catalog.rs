//! What a merchant changes in their catalogue, from the dashboard or the API alike: archiving
//! a product or plan (its link then takes no payments; subscriptions running on a plan go on)
//! and bringing it back, and a plan's title and page language. Each change is an event,
//! recorded with it; a change to what already is changes nothing and records nothing.

use chrono::Utc;

use crate::db::entities::{plans, products, tax_rates};
use crate::db::events::NewEvent;
use crate::db::{self, Archivable};
use crate::domain::Errors;
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
    let kind = if archive { EventType::ProductArchived } else { EventType::ProductRestored };
    let event = |p: &products::Model| events::product(kind, p, &state.config);
    set_archived::<products::Entity>(state, (shop_id, id), archive, event).await?.ok_or(AppError::NotFound("Product"))
}

/// Archives the shop's plan (`archive`) or brings it back; answers it as it then is.
pub async fn archive_plan(state: &AppState, shop_id: i64, id: &str, archive: bool) -> Result<plans::Model, AppError> {
    let kind = if archive { EventType::PlanArchived } else { EventType::PlanRestored };
    let event = |p: &plans::Model| events::plan(kind, p, &state.config);
    set_archived::<plans::Entity>(state, (shop_id, id), archive, event).await?.ok_or(AppError::NotFound("Plan"))
}

/// Archives or brings back one of the shop's `E`, with the `event` of that change when it
/// changed it; answers it as it then is (`None` if it is not the shop's).
async fn set_archived<E: Archivable>(
    state: &AppState,
    (shop_id, id): (i64, &str),
    archive: bool,
    event: impl Fn(&E::Model) -> NewEvent,
) -> Result<Option<E::Model>, AppError> {
    let now = Utc::now();
    let txn = crate::db::begin(&state.db).await?;
    let changed = db::set_archived::<E>(&txn, shop_id, id, archive.then_some(now), now).await?;
    let found = db::find::<E>(&txn, shop_id, id).await?;
    if let Some(row) = found.as_ref().filter(|_| changed) {
        events::record(&txn, &state.config, vec![event(row)]).await?;
    }
    txn.commit().await?;
    Ok(found)
}

/// Gives the shop's plan a new title and page language (`plan.updated` when either changed);
/// answers it as it then is.
pub async fn update_plan(state: &AppState, shop_id: i64, id: &str, edit: &PlanEdit) -> Result<plans::Model, AppError> {
    let txn = crate::db::begin(&state.db).await?;
    let changed = db::plans::update(&txn, shop_id, id, edit, Utc::now()).await?;
    let plan = db::find::<plans::Entity>(&txn, shop_id, id).await?.ok_or(AppError::NotFound("Plan"))?;
    if changed {
        events::record(&txn, &state.config, vec![events::plan(EventType::PlanUpdated, &plan, &state.config)]).await?;
    }
    txn.commit().await?;
    Ok(plan)
}

/// Whether a product's or plan's `chosen` tax rate may be chosen: one of the shop's rates, and
/// not archived unless it is the `current` one (a product keeps the rate it has).
pub async fn rate_allowed(
    db: &impl sea_orm::ConnectionTrait,
    shop_id: i64,
    chosen: Option<&str>,
    current: Option<&str>,
) -> Result<Result<(), Errors>, sea_orm::DbErr> {
    let Some(id) = chosen else { return Ok(Ok(())) };
    Ok(match db::find::<tax_rates::Entity>(db, shop_id, id).await? {
        None => Err(Errors::one("tax_rate_id", "does not exist")),
        Some(rate) if rate.archived_at.is_some() && current != Some(id) => {
            Err(Errors::one("tax_rate_id", "is archived"))
        }
        Some(_) => Ok(()),
    })
}
