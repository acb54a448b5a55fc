//! Customers in the dashboard: the list (search by e-mail), the create form with the API's
//! rules, and a customer's page with their payments and subscriptions.

use askama::Template;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::routing::get;
use chrono::Utc;

use super::form::{FormView, PostedForm};
use super::list::{ListQuery, search};
use super::{Chrome, Merchant, Page, local, ok, render, see_other};
use crate::db::{self, entities::customers};
use crate::domain::customer::CustomerFields;
use crate::domain::payment::PaymentFilter;
use crate::domain::subscription::SubscriptionFilter;
use crate::error::AppError;
use crate::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/dashboard/customers", get(list).post(create))
        .route("/dashboard/customers/new", get(new))
        .route("/dashboard/customers/{id}", get(show))
}

struct Row {
    id: String,
    email: String,
    name: String,
    country: String,
    created: String,
}

#[derive(Template)]
#[template(path = "dashboard/customers/list.html")]
struct ListPage {
    chrome: Chrome,
    q: String,
    rows: Vec<Row>,
    next: Option<String>,
}

fn full_name(c: &customers::Model) -> String {
    [c.first_name.as_deref(), c.last_name.as_deref()].into_iter().flatten().collect::<Vec<_>>().join(" ")
}

async fn list(State(state): State<AppState>, m: Merchant, Query(query): Query<ListQuery>) -> Page {
    let found = search::<customers::Entity>(&state, &m, query, "/dashboard/customers").await?;
    let rows = found
        .rows
        .iter()
        .map(|c| Row {
            id: c.id.clone(),
            email: c.email.clone(),
            name: full_name(c),
            country: c.country.clone().unwrap_or_default(),
            created: local(c.created_at, m.tz),
        })
        .collect();
    ok(&ListPage { chrome: m.chrome("customers").await, q: found.q, rows, next: found.next })
}

#[derive(Template)]
#[template(path = "dashboard/customers/form.html")]
struct FormPage {
    chrome: Chrome,
    form: FormView,
}

async fn new(m: Merchant) -> Page {
    ok(&FormPage { chrome: m.chrome("customers").await, form: FormView::default() })
}

async fn create(State(state): State<AppState>, m: Merchant, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    match CustomerFields::parse(&form.to_json(&[], &[])) {
        Ok(fields) => {
            let customer = db::customers::insert(&state.db, m.shop.id, fields, Utc::now()).await?;
            m.flash("Customer created.").await;
            see_other(&format!("/dashboard/customers/{}", customer.id))
        }
        Err(errors) => {
            let page = FormPage { chrome: m.chrome("customers").await, form: FormView::sent(&form, errors) };
            Ok(render(StatusCode::UNPROCESSABLE_ENTITY, &page))
        }
    }
}

#[derive(Template)]
#[template(path = "dashboard/customers/show.html")]
struct ShowPage {
    chrome: Chrome,
    c: customers::Model,
    name: String,
    created: String,
    payments: Vec<super::payments::Row>,
    subscriptions: Vec<super::subscriptions::Row>,
}

async fn show(State(state): State<AppState>, m: Merchant, Path(id): Path<String>) -> Page {
    let c = db::find::<customers::Entity>(&state.db, m.shop.id, &id).await?.ok_or(AppError::NotFound("Customer"))?;
    let payments =
        super::payments::recent(&state, &m, PaymentFilter { customer: Some(c.id.clone()), ..Default::default() }, 25)
            .await?;
    let filter = SubscriptionFilter { customer: Some(c.id.clone()), ..Default::default() };
    let subscriptions = super::subscriptions::rows(&state, &m, filter, 25).await?;
    let page = ShowPage {
        name: full_name(&c),
        created: local(c.created_at, m.tz),
        chrome: m.chrome("customers").await,
        payments,
        subscriptions,
        c,
    };
    ok(&page)
}
