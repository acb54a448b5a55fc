//! What a subscriber does on their page: cancel (after a confirmation), keep a subscription
//! whose cancel is pending, save a new card.

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use chrono::Utc;

use super::super::form::parse_form;
use super::super::page::Notice;
use super::super::page::respond_page;
use super::words::portal_texts;
use super::{MessageForm, MessagePage, ended, owned, respond, secure, session_of};
use crate::db::entities::{customers, plans, portal_tokens, subscriptions};
use crate::db::{self};
use crate::domain::Errors;
use crate::domain::billing::State as SubState;
use crate::services::payments::PayError;
use crate::web::csrf;
use crate::web::error::AppError;
use crate::web::i18n::texts;
use crate::web::state::AppState;

/// The session's subscription named in the path, after checking the form's CSRF token.
async fn acting_on(
    state: &AppState,
    headers: &HeaderMap,
    id: &str,
    sent: &std::collections::HashMap<String, String>,
) -> Result<Result<(portal_tokens::Model, subscriptions::Model), Response>, AppError> {
    let Some(session) = session_of(state, headers, Utc::now()).await? else { return Ok(Err(ended(headers))) };
    if !csrf::verify(headers, sent.get("csrf").map(String::as_str)) {
        return Ok(Err(Redirect::to("/portal/home").into_response()));
    }
    let sub = owned(state, &session, id).await?;
    Ok(Ok((session, sub)))
}

/// Cancels, after a confirmation: now, or at the end of the paid period.
pub(super) async fn cancel(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, AppError> {
    let sent = parse_form(&body);
    let (session, sub) = match acting_on(&state, &headers, &id, &sent).await? {
        Ok(found) => found,
        Err(response) => return Ok(response),
    };
    let language = session.language;
    let w = portal_texts(language);
    let at_end = sent.get("when").map(String::as_str) == Some("period_end");
    let reason = sent.get("reason").filter(|r| w.reasons.iter().any(|(v, _)| v == r && !v.is_empty())).cloned();
    if sent.get("confirm").map(String::as_str) != Some("yes") {
        let shop = crate::services::shops::find(&state, session.shop_id).await?.ok_or(AppError::NotFound("Shop"))?;
        let (title, body) = match at_end {
            true => {
                let tz = crate::services::shops::zone(&state, &shop);
                let until = sub.active_to.or(sub.renew_at).map(|at| crate::web::locale::date(at, tz, language));
                (w.confirm_end_title, super::words::fill_date(w.confirm_end_body, &until.unwrap_or_default()))
            }
            false => (w.confirm_now_title, w.confirm_now_body.to_string()),
        };
        let mut page = MessagePage::new(language, &shop.name, title, &body);
        // A customer may have several: the page names the one it cancels.
        if let Some(plan) = db::find::<plans::Entity>(&state.db, sub.shop_id, &sub.plan_id).await? {
            page.body.insert(0, format!("{}: {}", w.subscription, plan.title));
        }
        let mut hidden = vec![
            ("when".to_string(), if at_end { "period_end" } else { "now" }.to_string()),
            ("confirm".to_string(), "yes".to_string()),
        ];
        hidden.extend(reason.map(|r| ("reason".to_string(), r)));
        let csrf = sent.get("csrf").cloned().unwrap_or_default();
        page.form = Some(MessageForm {
            action: format!("/portal/subscriptions/{id}/cancel"),
            csrf,
            hidden,
            email: None,
            button: w.confirm_cancel,
            danger: true,
        });
        page.link = Some(("/portal/home".into(), w.back));
        return Ok(respond(StatusCode::OK, page, None));
    }
    let reason = reason.map(|r| format!("subscriber: {r}")).or_else(|| Some("subscriber".to_string()));
    let done = match at_end {
        true => crate::services::subscriptions::cancel_at_period_end(&state, &sub, reason).await.map(|_| "ending"),
        false => crate::services::subscriptions::cancel(&state, sub, reason).await.map(|_| "canceled"),
    };
    match done {
        Ok(done) => Ok(Redirect::to(&format!("/portal/home?done={done}")).into_response()),
        // It ended meanwhile: the page shows how it stands.
        Err(AppError::Conflict(_)) => Ok(Redirect::to("/portal/home").into_response()),
        Err(e) => Err(e),
    }
}

/// Withdraws a cancel still pending.
pub(super) async fn keep(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, AppError> {
    let sent = parse_form(&body);
    let (_, sub) = match acting_on(&state, &headers, &id, &sent).await? {
        Ok(found) => found,
        Err(response) => return Ok(response),
    };
    match crate::services::subscriptions::keep(&state, &sub).await {
        Ok(()) => Ok(Redirect::to("/portal/home?done=kept").into_response()),
        Err(AppError::Conflict(_)) => Ok(Redirect::to("/portal/home").into_response()),
        Err(e) => Err(e),
    }
}

/// Pauses from the end of the paid period, where the shop lets its subscribers.
pub(super) async fn pause(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, AppError> {
    let sent = parse_form(&body);
    let (session, sub) = match acting_on(&state, &headers, &id, &sent).await? {
        Ok(found) => found,
        Err(response) => return Ok(response),
    };
    if !allows_pause(&state, &session).await? {
        return Ok(Redirect::to("/portal/home").into_response());
    }
    let resume = db::subscriptions::ResumePlan { at: None, billing: crate::domain::billing::ResumeBilling::NewPeriod };
    let ask = crate::services::subscriptions::PauseRequest { at_period_end: true, resume };
    match crate::services::subscriptions::pause(&state, &sub, ask).await {
        Ok(_) => Ok(Redirect::to("/portal/home?done=pausing").into_response()),
        Err(AppError::Conflict(_) | AppError::Validation(_)) => Ok(Redirect::to("/portal/home").into_response()),
        Err(e) => Err(e),
    }
}

/// Resumes a paused subscription (a new period, charged now) or withdraws a pause to come,
/// where the shop lets its subscribers.
pub(super) async fn resume(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, AppError> {
    let sent = parse_form(&body);
    let (session, sub) = match acting_on(&state, &headers, &id, &sent).await? {
        Ok(found) => found,
        Err(response) => return Ok(response),
    };
    if !allows_pause(&state, &session).await? {
        return Ok(Redirect::to("/portal/home").into_response());
    }
    let billing = crate::domain::billing::ResumeBilling::NewPeriod;
    match crate::services::subscriptions::resume(&state, &sub, billing).await {
        Ok(resumed) if matches!(resumed.sub.state, SubState::Active | SubState::Trial) => {
            Ok(Redirect::to("/portal/home?done=resumed").into_response())
        }
        Ok(_) => Ok(Redirect::to("/portal/home?done=resume_failed").into_response()),
        Err(AppError::Conflict(_)) => Ok(Redirect::to("/portal/home").into_response()),
        Err(e) => Err(e),
    }
}

/// Whether the session's shop lets subscribers pause and resume.
async fn allows_pause(state: &AppState, session: &portal_tokens::Model) -> Result<bool, AppError> {
    let shop = crate::services::shops::find(state, session.shop_id).await?;
    Ok(shop.is_some_and(|s| s.subscriber_pause))
}

/// The form where a subscriber types a new card for a subscription in its trial or a paid
/// period (nothing is charged now); one in its retries pays what is overdue instead.
pub(super) async fn card_form(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> Result<Response, AppError> {
    let Some(session) = session_of(&state, &headers, Utc::now()).await? else { return Ok(ended(&headers)) };
    let sub = owned(&state, &session, &id).await?;
    card_page(&state, &session, &sub, &headers, &Default::default(), &Errors::default(), StatusCode::OK).await
}

async fn card_page(
    state: &AppState,
    session: &portal_tokens::Model,
    sub: &subscriptions::Model,
    headers: &HeaderMap,
    sent: &std::collections::HashMap<String, String>,
    errors: &Errors,
    status: StatusCode,
) -> Result<Response, AppError> {
    if sub.state == SubState::FailedAttempt {
        return Ok(Redirect::to(&crate::web::urls::subscription_pay(&state.config, &sub.id)).into_response());
    }
    if !matches!(sub.state, SubState::Trial | SubState::Active | SubState::Paused) {
        return Ok(Redirect::to("/portal/home").into_response());
    }
    let Ok(acquirer) = crate::services::payments::acquirer_for(state, sub.shop_id, sub.test).await else {
        return Ok(Redirect::to("/portal/home").into_response());
    };
    let language = session.language;
    let (t, w) = (texts(language), portal_texts(language));
    let shop = crate::services::shops::find(state, sub.shop_id).await?.ok_or(AppError::NotFound("Shop"))?;
    let plan =
        db::find::<plans::Entity>(&state.db, sub.shop_id, &sub.plan_id).await?.ok_or(AppError::NotFound("Plan"))?;
    let now = crate::services::subscriptions::now_of(state, sub).await?;
    let mut summary = super::super::plans::plan_summary(state, t, &plan, &shop, now);
    // Nothing is charged here: the plan's terms of a first payment do not apply.
    summary.terms.clear();
    if !acquirer.is_simulated() {
        summary.test_cards = super::super::page::processor_test_cards(t, sub.test, acquirer.test_cards());
    }
    let (csrf, cookie) = csrf::issue(headers, secure(state));
    let action = format!("/portal/subscriptions/{}/card", sub.id);
    // A processor's page takes the card after this form (and only with a payment: one of
    // nothing). Either way nothing is charged now, and the page says so.
    let submit = if acquirer.hosted() { w.to_card_page } else { w.save_card };
    let notice = Some(Notice { title: w.card_elsewhere_title, body: w.card_elsewhere_body });
    let mut form = super::super::form::FormView::new(t, action, csrf, &[], sent, errors, submit.to_string());
    form.card = !acquirer.hosted();
    let back = Some(("/portal/home".to_string(), w.back));
    let page = super::super::page::PayPage { t, summary, notice, form: Some(form), back };
    Ok(respond_page(status, page, cookie, None, &acquirer.customer_origins()))
}

pub(super) async fn save_card(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, AppError> {
    let sent = parse_form(&body);
    let Some(session) = session_of(&state, &headers, Utc::now()).await? else { return Ok(ended(&headers)) };
    let sub = owned(&state, &session, &id).await?;
    if !csrf::verify(&headers, sent.get("csrf").map(String::as_str)) {
        return card_page(&state, &session, &sub, &headers, &sent, &Errors::default(), StatusCode::FORBIDDEN).await;
    }
    if crate::services::payments::acquirer_for(&state, sub.shop_id, sub.test).await.is_ok_and(|a| a.hosted()) {
        return card_elsewhere(&state, &sub).await;
    }
    let card = match crate::domain::checkout::Checkout::parse(&[], &sent, true, Utc::now()) {
        Ok(checkout) => checkout.card,
        Err(errors) => {
            return card_page(&state, &session, &sub, &headers, &sent, &errors, StatusCode::UNPROCESSABLE_ENTITY).await;
        }
    };
    let Some(card) = card else { return Ok(Redirect::to("/portal/home").into_response()) };
    let token = match crate::services::subscriptions::tokenize(&state, sub.shop_id, &card, sub.test).await {
        Ok(token) => token,
        Err(AppError::Validation(refused)) => {
            let why = refused.get("card.number").or_else(|| refused.get("card")).and_then(|m| m.first().cloned());
            let errors = Errors::one("card_number", why.unwrap_or_default());
            return card_page(&state, &session, &sub, &headers, &sent, &errors, StatusCode::UNPROCESSABLE_ENTITY).await;
        }
        Err(e) => return Err(e),
    };
    match crate::services::subscriptions::replace_card(&state, &sub, &token).await {
        Ok(()) => Ok(Redirect::to("/portal/home?done=card").into_response()),
        Err(AppError::Conflict(_)) => Ok(Redirect::to("/portal/home").into_response()),
        Err(e) => Err(e),
    }
}

/// Sends the subscriber to the processor's page to save a new card (the page already open
/// for it, if any): they come back to their page, which says how it went.
async fn card_elsewhere(state: &AppState, sub: &subscriptions::Model) -> Result<Response, AppError> {
    if !matches!(sub.state, SubState::Trial | SubState::Active) {
        return Ok(Redirect::to("/portal/home").into_response());
    }
    let customer = db::find::<customers::Entity>(&state.db, sub.shop_id, &sub.customer_id).await?;
    let email = customer.map(|c| c.email).unwrap_or_default();
    let now = crate::services::subscriptions::now_of(state, sub).await?;
    match crate::services::payments::card_update_page(state, sub, &email, now).await {
        Ok(payment) => match payment.action_url {
            Some(to) => Ok(Redirect::to(&to).into_response()),
            None => Ok(Redirect::to("/portal/home?done=card_failed").into_response()),
        },
        Err(PayError::Db(e)) => Err(e.into()),
        Err(e) => {
            tracing::warn!(subscription = %sub.id, error = %e, "the processor's card page could not be opened");
            Ok(Redirect::to("/portal/home?done=card_failed").into_response())
        }
    }
}
