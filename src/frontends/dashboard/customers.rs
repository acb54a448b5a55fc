//! Customers in the dashboard: the list (search by e-mail and name, CSV export), the create form with the API's
//! rules, and a customer's page with their payments and subscriptions.

use askama::Template;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use chrono::Utc;

use super::form::{FormView, PostedForm};
use super::list::{ListQuery, search};
use super::tables::{PaymentRow, SubscriptionRow, full_name, recent_payments, recent_subscriptions};
use super::{Chrome, Merchant, Page, local, ok, render, see_other};
use crate::db::{self, entities::customers, entities::plans};
use crate::domain::customer::CustomerFields;
use crate::domain::payment::PaymentFilter;
use crate::domain::subscription::SubscriptionFilter;
use crate::domain::subscription::SubscriptionRequest;
use crate::web::csv::Csv;
use crate::web::error::AppError;
use crate::web::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/dashboard/customers", get(list).post(create))
        .route("/dashboard/customers/export.csv", get(export))
        .route("/dashboard/customers/new", get(new))
        .route("/dashboard/customers/{id}", get(show).post(update))
        .route("/dashboard/customers/{id}/edit", get(edit))
        .route("/dashboard/customers/{id}/subscriptions", post(subscribe))
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
    export: String,
}

/// The customer's country, named in the user's language.
fn country(c: &customers::Model, m: &Merchant) -> String {
    c.country.as_deref().map(|code| crate::web::locale::country_name(code, m.words.language())).unwrap_or_default()
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
            country: country(c, &m),
            created: local(c.created_at, m.tz),
        })
        .collect();
    let export = url::form_urlencoded::Serializer::new(String::new()).append_pair("q", &found.q).finish();
    let export = format!("/dashboard/customers/export.csv?{export}");
    ok(&ListPage { chrome: m.chrome("customers").await, q: found.q, rows, next: found.next, export })
}

/// Customers an export reads at a time.
const EXPORT_PAGE: u64 = 1000;

/// The customers a search finds (all of them without one), as CSV sent while it is read.
async fn export(State(state): State<AppState>, m: Merchant, Query(query): Query<ListQuery>) -> Page {
    let q = query.q.unwrap_or_default().trim().to_string();
    let header = Csv::new(&[
        "id",
        "email",
        "first_name",
        "last_name",
        "phone",
        "country",
        "state",
        "city",
        "address",
        "zip",
        "external_id",
        "created_at",
        "company",
        "vat_id",
    ]);
    let shop = m.shop.id;
    let read = move |after: Option<String>| {
        let (state, q) = (state.clone(), q.clone());
        async move {
            let page = db::Page { limit: EXPORT_PAGE, starting_after: after };
            let listed = db::search::<customers::Entity>(&state.db, shop, &page, &q).await?;
            Ok((listed.rows, listed.next_after))
        }
    };
    let pages = crate::web::csv::pages(read, |rows: Vec<customers::Model>| {
        let mut csv = Csv::empty();
        for c in &rows {
            export_row(&mut csv, c);
        }
        csv.take()
    });
    Ok(crate::web::csv::stream(&format!("customers-{}.csv", Utc::now().format("%Y%m%d")), header, pages))
}

/// One customer's row of the export.
fn export_row(csv: &mut Csv, c: &customers::Model) {
    let text = |v: &Option<String>| v.clone().unwrap_or_default();
    csv.row(&[
        &c.id,
        &c.email,
        &text(&c.first_name),
        &text(&c.last_name),
        &text(&c.phone),
        &text(&c.country),
        &text(&c.state),
        &text(&c.city),
        &text(&c.address),
        &text(&c.zip),
        &text(&c.external_id),
        &c.created_at.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
        &text(&c.company),
        &text(&c.vat_id),
    ]);
}

#[derive(Template)]
#[template(path = "dashboard/customers/form.html")]
struct FormPage {
    chrome: Chrome,
    /// `None` while creating.
    id: Option<String>,
    form: FormView,
    /// Every country as `(code, name)`, by name in the user's language.
    countries: &'static [(&'static str, String)],
}

impl FormPage {
    async fn new(m: &Merchant, id: Option<String>, form: FormView) -> FormPage {
        let countries = crate::web::locale::countries(m.words.language());
        FormPage { chrome: m.chrome("customers").await, id, form, countries }
    }
}

async fn new(m: Merchant) -> Page {
    ok(&FormPage::new(&m, None, FormView::default()).await)
}

async fn find(state: &AppState, m: &Merchant, id: &str) -> Result<customers::Model, AppError> {
    db::find::<customers::Entity>(&state.db, m.shop.id, id).await?.ok_or(AppError::NotFound("Customer"))
}

/// Every detail of a customer may change: its id, payments and subscriptions stay.
async fn edit(State(state): State<AppState>, m: Merchant, Path(id): Path<String>) -> Page {
    let c = find(&state, &m, &id).await?;
    let text = |v: &Option<String>| v.clone().unwrap_or_default();
    let form = FormView::filled(vec![
        ("email", c.email.clone()),
        ("ip", c.ip.clone()),
        ("first_name", text(&c.first_name)),
        ("last_name", text(&c.last_name)),
        ("address", text(&c.address)),
        ("city", text(&c.city)),
        ("zip", text(&c.zip)),
        ("country", text(&c.country)),
        ("state", text(&c.state)),
        ("phone", text(&c.phone)),
        ("company", text(&c.company)),
        ("vat_id", text(&c.vat_id)),
        ("external_id", text(&c.external_id)),
    ]);
    ok(&FormPage::new(&m, Some(c.id), form).await)
}

async fn update(State(state): State<AppState>, m: Merchant, Path(id): Path<String>, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let c = find(&state, &m, &id).await?;
    match CustomerFields::parse(&form.to_json(&[], &[])) {
        Ok(fields) => {
            if !db::customers::update(&state.db, m.shop.id, &c.id, fields, Utc::now()).await? {
                return Err(AppError::NotFound("Customer"));
            }
            m.flash(m.t("Customer saved.")).await;
            see_other(&format!("/dashboard/customers/{id}"))
        }
        Err(errors) => {
            let page = FormPage::new(&m, Some(c.id), FormView::sent(&form, errors, m.words)).await;
            Ok(render(StatusCode::UNPROCESSABLE_ENTITY, &page))
        }
    }
}

async fn create(State(state): State<AppState>, m: Merchant, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    match CustomerFields::parse(&form.to_json(&[], &[])) {
        Ok(fields) => {
            let customer = db::customers::insert(&state.db, m.shop.id, fields, Utc::now()).await?;
            m.flash(m.t("Customer created.")).await;
            see_other(&format!("/dashboard/customers/{}", customer.id))
        }
        Err(errors) => {
            let page = FormPage::new(&m, None, FormView::sent(&form, errors, m.words)).await;
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
    country: String,
    created: String,
    payments: Vec<PaymentRow>,
    subscriptions: Vec<SubscriptionRow>,
    mails: Vec<super::mails::MailRow>,
    /// Whether this instance sends mail.
    mailing: bool,
    /// The shop's plans to start a subscription on: id, title and price.
    plans: Vec<(String, String)>,
    form: FormView,
    /// The subscribe form's one-time id (see [`super::form::new_once`]).
    once: String,
}

async fn show(State(state): State<AppState>, m: Merchant, Path(id): Path<String>) -> Page {
    show_page(&state, &m, &id, FormView::default()).await
}

async fn show_page(state: &AppState, m: &Merchant, id: &str, form: FormView) -> Page {
    let c = find(state, m, id).await?;
    let page = db::Page { limit: 500, starting_after: None };
    let listed = db::search_archived::<plans::Entity>(&state.db, m.shop.id, &page, "", false).await?;
    let texts = crate::web::i18n::texts(m.words.language());
    let plans = listed
        .rows
        .iter()
        .map(|p| {
            let f = p.fields();
            let price = format!("{} {}", m.money(f.amount, f.currency), texts.every(f.interval, f.interval_unit));
            let label = match p.test {
                true => m.f("{} ({}, test)", &[&p.title, &price]),
                false => format!("{} ({price})", p.title),
            };
            (p.id.clone(), label)
        })
        .collect();
    let payments =
        recent_payments(state, m, PaymentFilter { customer: Some(c.id.clone()), ..Default::default() }, 25).await?;
    let filter = SubscriptionFilter { customer: Some(c.id.clone()), ..Default::default() };
    let subscriptions = recent_subscriptions(state, m, filter, 25).await?;
    let refused = form.has_errors();
    let mails = super::mails::rows_for(state, m, &c.id).await?;
    let page = ShowPage {
        mails,
        mailing: state.mailer.is_some(),
        once: super::form::new_once(),
        plans,
        form,
        name: full_name(&c),
        country: country(&c, m),
        created: local(c.created_at, m.tz),
        chrome: m.chrome("customers").await,
        payments,
        subscriptions,
        c,
    };
    Ok(render(if refused { StatusCode::UNPROCESSABLE_ENTITY } else { StatusCode::OK }, &page))
}

/// Starts a subscription of the customer on a plan: it waits for the customer to enter a
/// card at its link, which its page shows to send.
async fn subscribe(State(state): State<AppState>, m: Merchant, Path(id): Path<String>, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let body = serde_json::json!({"plan_id": form.get("plan_id").unwrap_or(""), "customer_id": id});
    let body = body.as_object().cloned().unwrap_or_default();
    let chosen = super::form::once_id(crate::domain::ids::SUBSCRIPTION, m.shop.id, &id, form.get("once"));
    let created = match SubscriptionRequest::parse(&body, Utc::now()) {
        Ok(request) => {
            let request = SubscriptionRequest { id: chosen, ..request };
            crate::services::subscriptions::create(&state, m.shop.id, request, Utc::now()).await
        }
        Err(errors) => Err(AppError::Validation(errors)),
    };
    match created {
        Ok(sub) => {
            m.flash(
                m.t("Subscription started. Send the customer its card link below: it starts once they enter a card."),
            )
            .await;
            see_other(&format!("/dashboard/subscriptions/{}", sub.id))
        }
        Err(AppError::Validation(errors)) => {
            let mut shown = crate::domain::Errors::default();
            errors.for_each(|_, message| shown.add("plan_id", message));
            show_page(&state, &m, &id, FormView::sent(&form, shown, m.words)).await
        }
        Err(e) => Err(e),
    }
}
