//! `/subscriptions/{id}/pay`: the `redirect_url` of a subscription created through the API
//! without a card. The customer enters the card here and the first charge is made.

use axum::Router;
use axum::body::Bytes;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::Checkout;
use super::form::parse_form;
use crate::db::entities::{plans, shops, subscriptions};
use crate::db::{self};
use crate::domain::Errors;
use crate::domain::billing::State as SubState;
use crate::services::payments::pay_subscription;
use crate::web::error::AppError;
use crate::web::guard::ClientIp;
use crate::web::i18n::texts;
use crate::web::state::AppState;
use crate::web::urls;

pub fn router() -> Router<AppState> {
    Router::new().route("/subscriptions/{id}/pay", get(show).post(submit))
}

async fn load(
    state: &AppState,
    id: &str,
) -> Result<(subscriptions::Model, plans::Model, std::sync::Arc<shops::Model>), AppError> {
    let sub =
        db::find_public::<subscriptions::Entity>(&state.db, id).await?.ok_or(AppError::NotFound("Subscription"))?;
    let plan =
        db::find_public::<plans::Entity>(&state.db, &sub.plan_id).await?.ok_or(AppError::NotFound("Subscription"))?;
    let shop = crate::services::shops::find(state, sub.shop_id).await?.ok_or(AppError::NotFound("Subscription"))?;
    Ok((sub, plan, shop))
}

async fn checkout<'a>(
    state: &'a AppState,
    sub: &subscriptions::Model,
    plan: &plans::Model,
    shop: &'a shops::Model,
    now: chrono::DateTime<chrono::Utc>,
) -> Checkout<'a> {
    let t = texts(plan.fields().language);
    let page = Checkout {
        state,
        target: sub.id.clone(),
        t,
        summary: super::plans::plan_summary(state, t, plan, shop, now),
        action: urls::subscription_pay(&state.config, &sub.id),
        after: sub.return_url.clone().or_else(|| shop.url.clone()),
        shop,
        fields: Vec::new(),
        submit: t.subscribe.to_string(),
        test: sub.test,
        card: true,
        elsewhere: Vec::new(),
        payable: false,
        coupon: None,
    };
    page.entry().await
}

async fn show(State(state): State<AppState>, Path(id): Path<String>, headers: HeaderMap) -> Response {
    let (sub, plan, shop) = match load(&state, &id).await {
        Ok(found) => found,
        Err(e) => return e.into_response(),
    };
    let now = match crate::services::subscriptions::now_of(&state, &sub).await {
        Ok(now) => now,
        Err(e) => return e.into_response(),
    };
    let page = checkout(&state, &sub, &plan, &shop, now).await;
    let t = page.t;
    if sub.state.has_ended() {
        return page.notice(StatusCode::CONFLICT, t.subscription_ended_title, t.subscription_ended_body);
    }
    // Waiting for its card, or in its retries: a new card (here or on the processor's page)
    // pays what is due now.
    if !matches!(sub.state, SubState::Redirecting | SubState::FailedAttempt) {
        return page.notice(StatusCode::CONFLICT, t.card_saved_title, t.card_saved_body);
    }
    page.form(StatusCode::OK, &headers, &Default::default(), &Errors::default(), None)
}

async fn submit(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ClientIp(client): ClientIp,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, AppError> {
    let (sub, plan, shop) = load(&state, &id).await?;
    // No state check here: a repeated submit of the form is shown its first result, and the
    // start itself is guarded (a subscription takes one card, once).
    let now = crate::services::subscriptions::now_of(&state, &sub).await?;
    let page = checkout(&state, &sub, &plan, &shop, now).await;
    page.submit(&headers, client, parse_form(&body), |checkout| {
        pay_subscription(&state, &plan, sub.clone(), checkout, now)
    })
    .await
}
