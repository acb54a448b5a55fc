//! Subscription plans in the dashboard: the list, the create form with every field of the
//! API, and a plan's page with its schedule in plain words and its pay link.

use askama::Template;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use chrono::Utc;
use serde_json::{Map, Value};

use super::form::{FormView, PostedForm, TypedAmounts, minor_units, nest, ticked_wins};
use super::list::{ListQuery, search_archivable};
use super::schedule::{describe, every, span};
use super::taxing::Choices;
use super::{Chrome, Merchant, Page, Words, local, ok, render, see_other};
use crate::db::{self, entities::plans};
use crate::domain::currency;
use crate::domain::payment::PaymentFilter;
use crate::domain::plan::PlanEdit;
use crate::domain::plan::PlanFields;
use crate::domain::subscription::SubscriptionFilter;
use crate::domain::vocab::IntervalUnit;
use crate::services::catalog::rate_allowed;
use crate::web::error::AppError;
use crate::web::state::AppState;
use crate::web::urls;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/dashboard/plans", get(list).post(create))
        .route("/dashboard/plans/new", get(new))
        .route("/dashboard/plans/{id}", get(show).post(update))
        .route("/dashboard/plans/{id}/edit", get(edit))
        .route("/dashboard/plans/{id}/qr.svg", get(qr))
        .route("/dashboard/plans/{id}/archive", post(archive))
}

struct Row {
    id: String,
    title: String,
    price: String,
    trial: String,
    test: bool,
    created: String,
}

#[derive(Template)]
#[template(path = "dashboard/plans/list.html")]
struct ListPage {
    chrome: Chrome,
    /// The archived ones are listed.
    archived: bool,
    q: String,
    rows: Vec<Row>,
    next: Option<String>,
}

async fn list(State(state): State<AppState>, m: Merchant, Query(query): Query<ListQuery>) -> Page {
    let archived = query.archived();
    let found = search_archivable::<plans::Entity>(&state, &m, query, "/dashboard/plans").await?;
    let rows = found
        .rows
        .iter()
        .map(|p| {
            let f = p.fields();
            Row {
                id: p.id.clone(),
                price: format!("{} {}", m.money(f.amount, f.currency), every(f.interval, f.interval_unit, m.words)),
                trial: f.trial.map_or("—".into(), |t| span(t.interval, t.interval_unit, m.words)),
                title: f.title,
                test: f.test,
                created: local(p.created_at, m.tz),
            }
        })
        .collect();
    ok(&ListPage { chrome: m.chrome("plans").await, q: found.q, rows, next: found.next, archived })
}

#[derive(Template)]
#[template(path = "dashboard/plans/form.html")]
struct FormPage {
    chrome: Chrome,
    form: FormView,
    choices: Choices,
    units: &'static [&'static str],
    languages: &'static [(&'static str, String)],
    currencies: &'static [&'static str],
}

impl FormPage {
    async fn new(state: &AppState, m: &Merchant, form: FormView) -> Result<Self, AppError> {
        Ok(FormPage {
            chrome: m.chrome("plans").await,
            form,
            choices: Choices::of(state, m, None, false).await?,
            units: IntervalUnit::WORDS,
            languages: crate::web::locale::language_names(),
            currencies: currency::codes(),
        })
    }
}

async fn new(State(state): State<AppState>, m: Merchant) -> Page {
    let form = FormView::filled(vec![
        ("currency", "EUR".into()),
        ("language", m.words.language().to_string()),
        ("plan.interval", "1".into()),
        ("plan.interval_unit", "month".into()),
        ("trial.interval_unit", "day".into()),
        ("number_payment_attempts", "3".into()),
        ("infinite", "true".into()),
        ("tax_behavior", "inclusive".into()),
    ]);
    ok(&FormPage::new(&state, &m, form).await?)
}

/// The form as the API's request: prices in major units become minimal units, an empty
/// trial section is left out, and the flat `plan.*` and `trial.*` names become sections. Also
/// what the form itself refuses (an ambiguous price), told in `words`.
fn request(form: &PostedForm, words: Words) -> (Map<String, Value>, TypedAmounts) {
    let checkboxes = ["infinite", "test", "prevent_payments_at_night", "trial.as_first_payment"];
    let mut flat = form.to_json(&checkboxes, &["visible_fields"]);
    ticked_wins(&mut flat, &[("infinite", "billing_cycles")]);
    let amounts = minor_units(&mut flat, &["plan.amount", "trial.amount"], words);
    let given = |key: &str| flat.get(key).is_some_and(|v| !v.is_null());
    let trial_given = given("trial.amount") || given("trial.interval");
    if !trial_given {
        flat.remove("trial.interval_unit");
        flat.remove("trial.as_first_payment");
    }
    (nest(flat), amounts)
}

async fn create(State(state): State<AppState>, m: Merchant, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let (body, amounts) = request(&form, m.words);
    let parsed = match PlanFields::parse(&body) {
        Ok(f) => rate_allowed(&state.db, m.shop.id, f.taxing.rate_id.as_deref(), None).await?.map(|()| f),
        Err(e) => Err(e),
    };
    match amounts.refuse(parsed) {
        Ok(fields) => {
            let plan = db::plans::insert(&state.db, m.shop.id, &fields, Utc::now()).await?;
            m.flash(m.t("Plan created. Share its pay link to take subscriptions.")).await;
            see_other(&format!("/dashboard/plans/{}", plan.id))
        }
        Err(errors) => {
            let page = FormPage::new(&state, &m, FormView::sent(&form, errors, m.words)).await?;
            Ok(render(StatusCode::UNPROCESSABLE_ENTITY, &page))
        }
    }
}

#[derive(Template)]
#[template(path = "dashboard/plans/show.html")]
struct ShowPage {
    chrome: Chrome,
    p: plans::Model,
    summary: String,
    pay_url: String,
    qr_url: String,
    links: Vec<(String, String)>,
    /// A live link on an instance that takes no live payments: its page says so.
    live_off: bool,
    created: String,
    subscriptions: Vec<super::tables::SubscriptionRow>,
    payments: Vec<super::tables::PaymentRow>,
}

async fn find(state: &AppState, m: &Merchant, id: &str) -> Result<plans::Model, AppError> {
    db::find::<plans::Entity>(&state.db, m.shop.id, id).await?.ok_or(AppError::NotFound("Plan"))
}

async fn show(State(state): State<AppState>, m: Merchant, Path(id): Path<String>) -> Page {
    let p = find(&state, &m, &id).await?;
    let filter = SubscriptionFilter { plan: Some(p.id.clone()), ..Default::default() };
    let subscriptions = super::tables::recent_subscriptions(&state, &m, filter, 10).await?;
    let payments = super::tables::recent_payments(
        &state,
        &m,
        PaymentFilter { plan: Some(p.id.clone()), ..Default::default() },
        10,
    )
    .await?;
    let page = ShowPage {
        summary: describe(&p.fields(), &m),
        pay_url: urls::plan_pay(&state.config, &p.id),
        qr_url: format!("/dashboard/plans/{}/qr.svg", p.id),
        live_off: !p.test && !crate::services::payments::live_payments_allowed(&state, p.shop_id).await?,
        links: vec![(urls::plan_pay(&state.config, &p.id), m.t("Open the subscription page").into())],
        created: local(p.created_at, m.tz),
        chrome: m.chrome("plans").await,
        subscriptions,
        payments,
        p,
    };
    ok(&page)
}

async fn qr(State(state): State<AppState>, m: Merchant, Path(id): Path<String>) -> Result<impl IntoResponse, AppError> {
    let p = find(&state, &m, &id).await?;
    super::qr_svg(&urls::plan_pay(&state.config, &p.id))
}

/// Archives the plan (`archive=yes`) or brings it back (anything else); either is undone
/// the same way.
async fn archive(State(state): State<AppState>, m: Merchant, Path(id): Path<String>, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let found = find(&state, &m, &id).await?;
    let archive = form.get("archive") == Some("yes");
    crate::services::catalog::archive_plan(&state, m.shop.id, &found.id, archive).await?;
    m.flash(match archive {
        true => m.t("Plan archived: its page takes no new subscriptions; those running go on."),
        false => m.t("Plan restored: its page takes subscriptions again."),
    })
    .await;
    see_other(&format!("/dashboard/plans/{id}"))
}

#[derive(Template)]
#[template(path = "dashboard/plans/edit.html")]
struct EditPage {
    chrome: Chrome,
    id: String,
    form: FormView,
    choices: Choices,
    languages: &'static [(&'static str, String)],
}

impl EditPage {
    async fn new(state: &AppState, m: &Merchant, p: plans::Model, form: FormView) -> Result<Self, AppError> {
        // Whether the price holds the tax is what running subscriptions agreed to: not offered.
        let mut choices = Choices::of(state, m, p.tax_rate_id.as_deref(), false).await?;
        choices.behaviors.clear();
        Ok(EditPage {
            chrome: m.chrome("plans").await,
            id: p.id,
            form,
            choices,
            languages: crate::web::locale::language_names(),
        })
    }
}

async fn edit(State(state): State<AppState>, m: Merchant, Path(id): Path<String>) -> Page {
    let p = find(&state, &m, &id).await?;
    let mut values = vec![
        ("title", p.title.clone()),
        ("language", p.language.to_string()),
        ("tax_rate_id", p.tax_rate_id.clone().unwrap_or_default()),
    ];
    values.extend(p.visible_fields().into_iter().map(|f| ("visible_fields", f.as_str().to_string())));
    let form = FormView::filled(values);
    ok(&EditPage::new(&state, &m, p, form).await?)
}

async fn update(State(state): State<AppState>, m: Merchant, Path(id): Path<String>, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let p = find(&state, &m, &id).await?;
    let parsed = match PlanEdit::parse(&form.to_json(&[], &["visible_fields"])) {
        Ok(edit) => {
            let (chosen, current) = (edit.tax_rate_id.as_deref(), p.tax_rate_id.as_deref());
            rate_allowed(&state.db, m.shop.id, chosen, current).await?.map(|()| edit)
        }
        Err(e) => Err(e),
    };
    match parsed {
        Ok(edit) => {
            crate::services::catalog::update_plan(&state, m.shop.id, &p.id, &edit).await?;
            m.flash(m.t("Plan saved.")).await;
            see_other(&format!("/dashboard/plans/{id}"))
        }
        Err(errors) => {
            let page = EditPage::new(&state, &m, p, FormView::sent(&form, errors, m.words)).await?;
            Ok(render(StatusCode::UNPROCESSABLE_ENTITY, &page))
        }
    }
}
