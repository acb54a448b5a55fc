//! `/portal/home`: the customer's subscriptions and payments at the shop.

use crate::domain::invoice::DocumentKind;
use askama::Template;
use askama_web::WebTemplate;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use chrono::Utc;

use super::super::page::respond_page;
use super::words::{PortalTexts, portal_texts, state_label};
use super::{ended, secure, session_of};
use crate::db::entities::{payments, plans, products, subscriptions};
use crate::db::{self};
use crate::domain::billing::State as SubState;
use crate::domain::vocab::{IntervalUnit, Language, PaymentStatus};
use crate::web::csrf;
use crate::web::error::AppError;
use crate::web::i18n::{Texts, texts};
use crate::web::state::AppState;

/// A subscription as its subscriber sees it.
struct SubLine {
    id: String,
    title: String,
    test: bool,
    state: &'static str,
    price: String,
    next: Option<String>,
    ends: Option<String>,
    card: Option<String>,
    /// Where to pay what is overdue (or confirm a payment the bank asked them for).
    pay_url: Option<String>,
    /// Where a subscription waiting for its first card is given it (and starts).
    start_url: Option<String>,
    /// Where to give a new card (on paydesk's page or the processor's).
    card_url: Option<String>,
    cancellable: bool,
    /// Whether it can end with its paid period (else only now).
    at_period_end: bool,
    keepable: bool,
    /// The shop lets subscribers pause: from the end of this paid period.
    pausable: bool,
    /// Paused, or set to pause: it can go on (paused, with a new period charged now).
    resumable: bool,
    /// Paused: since when (a date), and whether a new period is charged when it resumes.
    paused: bool,
}

/// A payment in the list.
struct PaymentLine {
    date: String,
    order: String,
    amount: String,
    status: &'static str,
    receipt: String,
}

#[derive(Template, WebTemplate)]
#[template(path = "pay/portal_home.html")]
struct HomePage {
    t: &'static Texts,
    w: &'static PortalTexts,
    shop_name: String,
    email: String,
    csrf: String,
    flash: Option<&'static str>,
    subscriptions: Vec<SubLine>,
    payments: Vec<PaymentLine>,
    documents: Vec<DocumentLine>,
    back: Option<String>,
}

/// An invoice or credit note of the customer's: its day, what it is, its number and amount,
/// its page and PDF.
struct DocumentLine {
    date: String,
    kind: &'static str,
    number: String,
    amount: String,
    page: String,
    pdf: String,
}

#[derive(serde::Deserialize, Default)]
pub(super) struct HomeQuery {
    done: Option<String>,
}

pub(super) async fn home(
    State(state): State<AppState>,
    Query(query): Query<HomeQuery>,
    headers: HeaderMap,
) -> Result<Response, AppError> {
    let now = Utc::now();
    let Some(session) = session_of(&state, &headers, now).await? else { return Ok(ended(&headers)) };
    let language = session.language;
    let (t, w) = (texts(language), portal_texts(language));
    let shop = crate::services::shops::find(&state, session.shop_id).await?.ok_or(AppError::NotFound("Shop"))?;
    let customer = db::find::<crate::db::entities::customers::Entity>(&state.db, shop.id, &session.customer_id)
        .await?
        .ok_or(AppError::NotFound("Customer"))?;
    let tz = crate::services::shops::zone(&state, &shop);
    let subs = db::subscriptions::of_customer(&state.db, shop.id, &customer.id, 50).await?;
    let plan_ids: Vec<&str> = subs.iter().map(|s| s.plan_id.as_str()).collect();
    let plans = db::plans::by_ids_of_any_shop(&state.db, &plan_ids).await?;
    let mut subscriptions = Vec::new();
    for sub in &subs {
        let Some(plan) = plans.get(&sub.plan_id) else { continue };
        let mut line = sub_line(&state, t, language, sub, plan, tz).await;
        if !shop.subscriber_pause {
            (line.pausable, line.resumable) = (false, false);
        }
        subscriptions.push(line);
    }
    let paid = db::payments::of_customer(&state.db, shop.id, &customer.id, 50).await?;
    let mut payments = Vec::new();
    for p in paid.iter().filter(|p| p.status != PaymentStatus::Processing) {
        payments.push(PaymentLine {
            date: crate::web::locale::date(p.created_at, tz, language),
            order: order_of(&state, &plans, p).await?,
            amount: t.price(p.amount, p.currency),
            status: payment_status(language, p.status),
            receipt: crate::web::urls::receipt(&state.config, &p.id),
        });
    }
    let documents = db::documents::of_customer(&state.db, shop.id, &customer.id, 50)
        .await?
        .into_iter()
        .map(|d| DocumentLine {
            date: crate::web::locale::date(d.issued_at, tz, language),
            kind: match d.kind {
                DocumentKind::Invoice => w.invoice,
                DocumentKind::CreditNote => w.credit_note,
            },
            amount: t.price(d.gross_total, d.currency),
            page: crate::web::urls::document(&state.config, &d.id),
            pdf: format!("{}/pdf", crate::web::urls::document(&state.config, &d.id)),
            number: d.number_text,
        })
        .collect();
    let flash = match query.done.as_deref() {
        Some("canceled") => Some(w.canceled_notice),
        Some("ending") => Some(w.ending_notice),
        Some("kept") => Some(w.kept_notice),
        Some("pausing") => Some(w.pausing_notice),
        Some("resumed") => Some(w.resumed_notice),
        Some("resume_failed") => Some(w.resume_failed_notice),
        Some("card") => Some(w.card_notice),
        Some("card_failed") => Some(w.card_failed_notice),
        Some("card_waiting") => Some(w.card_waiting_notice),
        _ => None,
    };
    let (csrf, cookie) = csrf::issue(&headers, secure(&state));
    let page = HomePage {
        t,
        w,
        shop_name: shop.name.clone(),
        email: customer.email,
        csrf,
        flash,
        subscriptions,
        payments,
        documents,
        back: session.return_url.clone().or_else(|| shop.url.clone()),
    };
    Ok(respond_page(StatusCode::OK, page, cookie, None, &[]))
}

async fn sub_line(
    state: &AppState,
    t: &Texts,
    language: Language,
    sub: &subscriptions::Model,
    plan: &plans::Model,
    tz: chrono_tz::Tz,
) -> SubLine {
    let when = |at| match plan.interval_unit {
        IntervalUnit::Hour => crate::web::locale::date_time(at, tz, language),
        _ => crate::web::locale::date(at, tz, language),
    };
    let coupon = db::coupons::of_subscription(&state.db, sub).await.ok().flatten();
    // Shown as charged: with the plan's tax when its price has it added.
    let taxed =
        async |amount| crate::services::taxes::of_subscription(&state.db, sub, plan, amount).await.unwrap_or(amount);
    let next = match sub.next_charge(plan, coupon.as_ref()) {
        Some((amount, at)) => Some(t.on_date(&t.price(taxed(amount).await, plan.currency), &when(at))),
        None => None,
    };
    let charged = taxed(plan.amount).await;
    let open = matches!(sub.state, SubState::Trial | SubState::Active);
    let ends = match (sub.cancel_at_period_end && open, sub.active_to.or(sub.renew_at)) {
        (true, Some(at)) => Some(when(at)),
        _ => None,
    };
    let waiting = sub.state == SubState::Redirecting && sub.started_at.is_some();
    SubLine {
        id: sub.id.clone(),
        title: plan.title.clone(),
        test: sub.test,
        state: state_label(language, sub.state),
        price: format!("{} {}", t.price(charged, plan.currency), t.every(plan.interval, plan.interval_unit)),
        next,
        ends,
        card: sub.card_last4.as_ref().map(|last4| {
            let brand = crate::domain::card::brand_name(sub.card_brand.as_deref().unwrap_or(""));
            format!("{brand} •••• {last4}")
        }),
        pay_url: (sub.state == SubState::FailedAttempt || waiting)
            .then(|| crate::web::urls::subscription_pay(&state.config, &sub.id)),
        // Not started yet: its card page starts it.
        start_url: (sub.state == SubState::Redirecting && sub.started_at.is_none())
            .then(|| crate::web::urls::subscription_pay(&state.config, &sub.id)),
        card_url: (open || sub.state == SubState::Paused).then(|| format!("/portal/subscriptions/{}/card", sub.id)),
        cancellable: !sub.state.has_ended() && !sub.cancel_at_period_end,
        at_period_end: open,
        keepable: open && sub.cancel_at_period_end,
        pausable: open && !sub.cancel_at_period_end && !sub.pause_at_period_end,
        resumable: sub.state == SubState::Paused || (open && sub.pause_at_period_end),
        paused: sub.state == SubState::Paused,
    }
}

async fn order_of(
    state: &AppState,
    plans: &std::collections::HashMap<String, plans::Model>,
    p: &payments::Model,
) -> Result<String, AppError> {
    if let Some(plan) = p.plan_id.as_ref().and_then(|id| plans.get(id)) {
        return Ok(plan.title.clone());
    }
    Ok(match (&p.product_id, &p.plan_id) {
        (Some(id), _) => {
            db::find::<products::Entity>(&state.db, p.shop_id, id).await?.map(|p| p.name).unwrap_or_default()
        }
        (_, Some(id)) => {
            db::find::<plans::Entity>(&state.db, p.shop_id, id).await?.map(|p| p.title).unwrap_or_default()
        }
        _ => String::new(),
    })
}

fn payment_status(language: Language, status: PaymentStatus) -> &'static str {
    let ru = language == Language::Ru;
    match (status, ru) {
        (PaymentStatus::Succeeded, false) => "paid",
        (PaymentStatus::Succeeded, true) => "оплачен",
        (PaymentStatus::PartiallyRefunded, false) => "partly refunded",
        (PaymentStatus::PartiallyRefunded, true) => "частично возвращён",
        (PaymentStatus::Refunded, false) => "refunded",
        (PaymentStatus::Refunded, true) => "возвращён",
        (PaymentStatus::Authorized, false) => "held",
        (PaymentStatus::Authorized, true) => "заблокирован",
        (PaymentStatus::Voided, false) => "released",
        (PaymentStatus::Voided, true) => "разблокирован",
        (_, false) => "failed",
        (_, true) => "не прошёл",
    }
}
