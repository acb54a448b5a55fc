//! Subscribing: through the API (with or without a card) or a plan's hosted page. The first
//! charge is made at once with the customer present; the engine makes the rest. What a
//! merchant (or a subscriber on their page) then changes: an end ([`ending`]), a pause and a
//! resume ([`pausing`]), a change of plan ([`plan_change`]).

mod ending;
mod pausing;
mod plan_change;

pub use ending::{cancel, cancel_at_period_end, keep, replace_card};
pub use pausing::{PauseRequest, pause, resume};
pub use plan_change::{ChangePreview, ChangeRequest, change_plan, preview_change};

use chrono::{DateTime, Utc};
use sea_orm::DbErr;

use crate::db::entities::{customers, plans, subscriptions, test_clocks};
use crate::db::subscriptions::NewSubscription;
use crate::db::{self};
use crate::domain::Errors;
use crate::domain::billing::{State as SubState, Terms, begin};
use crate::domain::subscription::{CustomerRef, SubscriptionRequest};
use crate::domain::webhook::public_url;
use crate::external::acquirer::{CardRef, CardRefused};
use crate::services::payments::{PayError, acquirer_for};
use crate::web::error::AppError;
use crate::web::state::AppState;
use crate::web::views::SubscriptionView;

/// A subscription as a merchant's change left it, with the view the change's event recorded
/// of it: the API answers that view, read again only where the change went on after its
/// event (a charge made after it) or recorded none.
pub struct Changed {
    pub sub: subscriptions::Model,
    view: Option<SubscriptionView>,
}

impl Changed {
    fn recorded(sub: subscriptions::Model, view: SubscriptionView) -> Changed {
        Changed { sub, view: Some(view) }
    }

    fn unrecorded(sub: subscriptions::Model) -> Changed {
        Changed { sub, view: None }
    }

    /// The subscription as the API shows it.
    pub async fn view(self, state: &AppState) -> Result<SubscriptionView, DbErr> {
        match self.view {
            Some(view) => Ok(view),
            None => SubscriptionView::load(&state.db, &state.config, &self.sub).await,
        }
    }
}

fn invalid(field: &str, message: &str) -> AppError {
    let errors = Errors::one(field, message);
    AppError::Validation(errors)
}

/// Creates a subscription of the shop from an API request; with a card, makes the first
/// charge. `now` is the real time (a test clock's time replaces it).
pub async fn create(
    state: &AppState,
    shop_id: i64,
    request: SubscriptionRequest,
    now: DateTime<Utc>,
) -> Result<subscriptions::Model, AppError> {
    if let Some(made) = made_already(state, shop_id, request.id.as_deref()).await? {
        return Ok(made);
    }
    let allow_private = state.config.webhooks_allow_private;
    public_url(request.notification_url.as_deref(), "notification_url", allow_private)?;
    let plan = db::find::<plans::Entity>(&state.db, shop_id, &request.plan_id)
        .await?
        .ok_or_else(|| invalid("plan.id", "is not a plan of this shop"))?;
    if plan.archived_at.is_some() {
        return Err(invalid("plan.id", "is archived: it takes no new subscriptions"));
    }
    let (clock, now) = match &request.test_clock {
        Some(id) => {
            let clock = db::find::<test_clocks::Entity>(&state.db, shop_id, id)
                .await?
                .ok_or_else(|| invalid("test_clock", "is not a test clock of this shop"))?;
            if !plan.test {
                return Err(invalid("test_clock", "works only with test plans"));
            }
            (Some(clock.id), clock.frozen_time)
        }
        None => (None, now),
    };
    let card = match &request.card {
        Some(input) => Some(tokenize(state, shop_id, input, plan.test).await?),
        None => None,
    };
    let customer = match request.customer {
        CustomerRef::Existing(id) => db::find::<customers::Entity>(&state.db, shop_id, &id)
            .await?
            .ok_or_else(|| invalid("customer.id", "is not a customer of this shop"))?,
        CustomerRef::New(fields) => db::customers::insert(&state.db, shop_id, *fields, now).await?,
    };
    let chosen = request.id.clone();
    let new = NewSubscription {
        id: request.id,
        shop_id,
        plan_id: plan.id.clone(),
        customer_id: customer.id,
        test: plan.test,
        test_clock_id: clock,
        tracking_id: request.tracking_id,
        return_url: request.return_url,
        notification_url: request.notification_url,
        additional_data: request.additional_data,
        progress: begin(&Terms::from(&plan.fields())),
    };
    let txn = crate::db::begin(&state.db).await?;
    let sub = match db::subscriptions::insert(&txn, new, now).await {
        Ok(sub) => sub,
        // The same chosen id sent twice at once: the other request started it.
        Err(e) if chosen.is_some() && crate::web::error::duplicate(&e) => {
            drop(txn);
            return made_already(state, shop_id, chosen.as_deref())
                .await?
                .ok_or_else(|| AppError::Conflict("This subscription's id is taken".into()));
        }
        Err(e) => return Err(e.into()),
    };
    // With a card, the first charge's line begins the timeline (and says it was created).
    if card.is_none() {
        crate::services::events::timeline(&txn, &state.config, vec![crate::services::events::created(&sub, now)])
            .await?;
    }
    txn.commit().await?;
    match card {
        Some(card) => crate::services::billing::start(state, &plan, sub, &card, now)
            .await?
            .ok_or_else(|| AppError::Conflict("The subscription was started by another request".into())),
        None => Ok(sub),
    }
}

/// The subscription started earlier under the id its asker chose, if any.
async fn made_already(
    state: &AppState,
    shop_id: i64,
    id: Option<&str>,
) -> Result<Option<subscriptions::Model>, AppError> {
    match id {
        Some(id) => Ok(db::find::<subscriptions::Entity>(&state.db, shop_id, id).await?),
        None => Ok(None),
    }
}

/// Turns a card into the acquirer's token, refusing what test or live mode does not take.
pub async fn tokenize(
    state: &AppState,
    shop_id: i64,
    card: &crate::domain::card::CardInput,
    test: bool,
) -> Result<CardRef, AppError> {
    let acquirer = match acquirer_for(state, shop_id, test).await {
        Ok(acquirer) => acquirer,
        Err(PayError::LiveUnavailable) => {
            return Err(invalid(
                "card",
                "cannot be charged: the shop's payment processor takes no payments in this mode",
            ));
        }
        Err(PayError::Db(e)) => return Err(e.into()),
        Err(e) => return Err(AppError::Internal(e.to_string())),
    };
    let refused = |refused: CardRefused| invalid("card.number", &refused.to_string());
    let card = acquirer.tokenize(card, test).await.map_err(refused)?;
    match crate::services::disputes::refusal(state, shop_id, test, &card).await? {
        Some(refusal) => Err(refused(refusal)),
        None => Ok(card),
    }
}

/// The time of a subscription: its test clock's, else the real one.
pub async fn now_of(state: &AppState, sub: &subscriptions::Model) -> Result<DateTime<Utc>, AppError> {
    Ok(db::test_clocks::time_of(&state.db, sub.shop_id, sub.test_clock_id.as_deref(), Utc::now()).await?)
}

/// Why a pause or resume that lost its guarded update was refused: the subscription ended
/// or changed meanwhile, or a charge of it is in flight (try again in a moment).
async fn refused(state: &AppState, sub: &subscriptions::Model) -> AppError {
    match db::find::<subscriptions::Entity>(&state.db, sub.shop_id, &sub.id).await {
        Err(e) => e.into(),
        Ok(None) => AppError::NotFound("Subscription"),
        Ok(Some(s)) if s.state.has_ended() => ended(s.state),
        Ok(Some(s)) if s.state != sub.state => {
            AppError::Conflict(format!("The subscription changed meanwhile: it is now {}", s.state))
        }
        Ok(Some(_)) => AppError::Conflict("A charge of the subscription is in flight: try again in a moment".into()),
    }
}

fn ended(state: SubState) -> AppError {
    AppError::Conflict(format!("The subscription has already ended: it is {state}"))
}
