//! Products in the dashboard: a searchable list, the create and edit forms (the API's rules
//! and messages), the pay link with a copy button and a QR code, and a preview of the page.

use askama::Template;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use chrono::{NaiveDateTime, TimeZone, Utc};
use chrono_tz::Tz;
use serde_json::{Map, Value};

use super::form::{FormView, PostedForm, TypedAmounts, minor_units, ticked_wins};
use super::list::{ListQuery, search_archivable};
use super::taxing::Choices;
use super::{Chrome, Merchant, Page, Words, local, ok, render, see_other};
use crate::db::{self, entities::products};
use crate::domain::payment::PaymentFilter;
use crate::domain::product::ProductFields;
use crate::domain::vocab::TransactionType;
use crate::domain::webhook::public_url;
use crate::domain::{Errors, currency};
use crate::services::catalog::rate_allowed;
use crate::web::error::AppError;
use crate::web::state::AppState;
use crate::web::urls;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/dashboard/products", get(list).post(create))
        .route("/dashboard/products/new", get(new))
        .route("/dashboard/products/{id}", get(show).post(update))
        .route("/dashboard/products/{id}/edit", get(edit))
        .route("/dashboard/products/{id}/qr.svg", get(qr))
        .route("/dashboard/products/{id}/archive", post(archive))
}

struct Row {
    id: String,
    name: String,
    price: String,
    stock: String,
    status: &'static str,
    test: bool,
    created: String,
}

#[derive(Template)]
#[template(path = "dashboard/products/list.html")]
struct ListPage {
    chrome: Chrome,
    /// The archived ones are listed.
    archived: bool,
    q: String,
    rows: Vec<Row>,
    next: Option<String>,
}

/// Where the product stands on its pay link (on sale, sold out, expired), in `words`.
fn status(p: &products::Model, words: Words) -> &'static str {
    let fields = p.fields();
    if p.archived_at.is_some() {
        words.t("Archived")
    } else if fields.is_expired(Utc::now()) {
        words.t("Expired")
    } else if fields.is_sold_out() {
        words.t("Sold out")
    } else {
        words.t("On sale")
    }
}

async fn list(State(state): State<AppState>, m: Merchant, Query(query): Query<ListQuery>) -> Page {
    let archived = query.archived();
    let found = search_archivable::<products::Entity>(&state, &m, query, "/dashboard/products").await?;
    let rows = found
        .rows
        .iter()
        .map(|p| Row {
            id: p.id.clone(),
            name: p.name.clone(),
            price: m.money(p.amount, p.currency),
            stock: p.quantity.map_or("∞".to_string(), |q| q.to_string()),
            status: status(p, m.words),
            test: p.test,
            created: local(p.created_at, m.tz),
        })
        .collect();
    ok(&ListPage { chrome: m.chrome("products").await, q: found.q, rows, next: found.next, archived })
}

#[derive(Template)]
#[template(path = "dashboard/products/form.html")]
struct FormPage {
    chrome: Chrome,
    /// `None` while creating.
    id: Option<String>,
    form: FormView,
    choices: Choices,
    languages: &'static [(&'static str, String)],
    transaction_types: &'static [&'static str],
    currencies: &'static [&'static str],
}

impl FormPage {
    /// The form of the product `id` (`None` while creating), whose tax rate is `rate`.
    async fn new(
        state: &AppState,
        m: &Merchant,
        (id, rate): (Option<String>, Option<&str>),
        form: FormView,
    ) -> Result<Self, AppError> {
        Ok(FormPage {
            chrome: m.chrome("products").await,
            id,
            form,
            choices: Choices::of(state, m, rate, true).await?,
            languages: crate::web::locale::language_names(),
            transaction_types: TransactionType::WORDS,
            currencies: currency::codes(),
        })
    }
}

async fn new(State(state): State<AppState>, m: Merchant) -> Page {
    let form = FormView::filled(vec![
        ("currency", "EUR".into()),
        ("language", m.words.language().to_string()),
        ("transaction_type", "payment".into()),
        ("tax_behavior", "inclusive".into()),
        ("infinite", "true".into()),
        ("immortal", "true".into()),
    ]);
    ok(&FormPage::new(&state, &m, (None, None), form).await?)
}

/// The form as the API's request: price in major units and a local expiry time become the
/// API's minimal units and zoned time; the rest is passed as sent. Also what the form itself
/// refuses (an ambiguous price), told in `words`.
fn request(form: &PostedForm, tz: Tz, words: Words) -> (Map<String, Value>, TypedAmounts) {
    let mut body = form.to_json(&["infinite", "immortal", "test"], &["visible_fields"]);
    ticked_wins(&mut body, &[("infinite", "quantity"), ("immortal", "expired_at")]);
    let amounts = minor_units(&mut body, &["amount"], words);
    if let Some(Value::String(raw)) = body.get("expired_at")
        && let Some(zoned) = zoned(raw, tz)
    {
        body.insert("expired_at".into(), Value::String(zoned));
    }
    (body, amounts)
}

/// `fields`, unless their notification URL names a non-public address.
fn notified_publicly(fields: ProductFields, allow_private: bool) -> Result<ProductFields, Errors> {
    public_url(fields.notification_url.as_deref(), "notification_url", allow_private).map(|()| fields)
}

/// `2026-12-31T23:59` (a browser's local date and time) in `tz`, as the spec's
/// `2026-12-31T23:59:00+01:00`; `None` when it is not such a time.
fn zoned(raw: &str, tz: Tz) -> Option<String> {
    let naive = NaiveDateTime::parse_from_str(raw.trim(), "%Y-%m-%dT%H:%M")
        .or_else(|_| NaiveDateTime::parse_from_str(raw.trim(), "%Y-%m-%dT%H:%M:%S"))
        .ok()?;
    let at = tz.from_local_datetime(&naive).earliest()?;
    Some(at.format("%Y-%m-%dT%H:%M:%S%:z").to_string())
}

fn filled(p: &products::Model, tz: Tz, words: Words) -> FormView {
    let mut values = vec![
        ("name", p.name.clone()),
        ("description", p.description.clone()),
        ("amount", words.typed(p.amount, p.currency)),
        ("currency", p.currency.to_string()),
        ("quantity", p.quantity.map(|q| q.to_string()).unwrap_or_default()),
        ("quantity_was", p.quantity.map(|q| q.to_string()).unwrap_or_default()),
        (
            "expired_at",
            p.expired_at.map(|t| t.with_timezone(&tz).format("%Y-%m-%dT%H:%M").to_string()).unwrap_or_default(),
        ),
        ("return_url", p.return_url.clone().unwrap_or_default()),
        ("notification_url", p.notification_url.clone().unwrap_or_default()),
        ("language", p.language.to_string()),
        ("transaction_type", p.transaction_type.to_string()),
        ("tax_rate_id", p.tax_rate_id.clone().unwrap_or_default()),
        ("tax_behavior", p.tax_behavior.to_string()),
    ];
    for (name, on) in [("infinite", p.infinite), ("immortal", p.immortal), ("test", p.test)] {
        if on {
            values.push((name, "true".into()));
        }
    }
    for f in p.fields().visible_fields {
        values.push(("visible_fields", f.as_str().into()));
    }
    FormView::filled(values)
}

async fn create(State(state): State<AppState>, m: Merchant, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let (body, amounts) = request(&form, m.tz, m.words);
    let allow_private = state.config.webhooks_allow_private;
    let parsed = ProductFields::parse(&body, None, m.shop.id).and_then(|f| notified_publicly(f, allow_private));
    let parsed = match parsed {
        Ok(f) => rate_allowed(&state.db, m.shop.id, f.taxing.rate_id.as_deref(), None).await?.map(|()| f),
        Err(e) => Err(e),
    };
    match amounts.refuse(parsed) {
        Ok(fields) => {
            let product = db::products::insert(&state.db, m.shop.id, &fields, Utc::now()).await?;
            m.flash(m.t("Product created. Share its pay link with your customers.")).await;
            see_other(&format!("/dashboard/products/{}", product.id))
        }
        Err(errors) => {
            let page = FormPage::new(&state, &m, (None, None), FormView::sent(&form, errors, m.words)).await?;
            Ok(render(StatusCode::UNPROCESSABLE_ENTITY, &page))
        }
    }
}

async fn find(state: &AppState, m: &Merchant, id: &str) -> Result<products::Model, AppError> {
    db::find::<products::Entity>(&state.db, m.shop.id, id).await?.ok_or(AppError::NotFound("Product"))
}

async fn edit(State(state): State<AppState>, m: Merchant, Path(id): Path<String>) -> Page {
    let product = find(&state, &m, &id).await?;
    let form = filled(&product, m.tz, m.words);
    let rate = product.tax_rate_id.as_deref();
    ok(&FormPage::new(&state, &m, (Some(product.id.clone()), rate), form).await?)
}

async fn update(State(state): State<AppState>, m: Merchant, Path(id): Path<String>, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let mut product = find(&state, &m, &id).await?;
    // A quantity edit adds the difference from the quantity the form showed: units sold
    // while the merchant edited stay sold.
    if let (Some(_), Some(seen)) = (product.quantity, form.get("quantity_was").and_then(|q| q.trim().parse().ok())) {
        product.quantity = Some(seen);
    }
    let (body, amounts) = request(&form, m.tz, m.words);
    let allow_private = state.config.webhooks_allow_private;
    let parsed = ProductFields::parse(&body, Some(&product.fields()), m.shop.id)
        .and_then(|f| notified_publicly(f, allow_private));
    let parsed = match parsed {
        Ok(f) => {
            let (chosen, current) = (f.taxing.rate_id.as_deref(), product.tax_rate_id.as_deref());
            rate_allowed(&state.db, m.shop.id, chosen, current).await?.map(|()| f)
        }
        Err(e) => Err(e),
    };
    let refused = match amounts.refuse(parsed) {
        Ok(fields) => match db::products::update(&state.db, &product, &fields, Utc::now()).await? {
            Ok(()) => {
                m.flash(m.t("Product saved.")).await;
                return see_other(&format!("/dashboard/products/{id}"));
            }
            Err(refused) => Errors::one("quantity", refused.to_string()),
        },
        Err(errors) => errors,
    };
    let rate = product.tax_rate_id.as_deref();
    let page =
        FormPage::new(&state, &m, (Some(product.id.clone()), rate), FormView::sent(&form, refused, m.words)).await?;
    Ok(render(StatusCode::UNPROCESSABLE_ENTITY, &page))
}

#[derive(Template)]
#[template(path = "dashboard/products/show.html")]
struct ShowPage {
    chrome: Chrome,
    p: products::Model,
    price: String,
    status: &'static str,
    pay_url: String,
    qr_url: String,
    links: Vec<(String, String)>,
    /// A live link on an instance that takes no live payments: its page says so.
    live_off: bool,
    fields: Vec<&'static str>,
    expires: String,
    created: String,
    payments: Vec<super::tables::PaymentRow>,
}

async fn show(State(state): State<AppState>, m: Merchant, Path(id): Path<String>) -> Page {
    let p = find(&state, &m, &id).await?;
    let payments = super::tables::recent_payments(
        &state,
        &m,
        PaymentFilter { product: Some(p.id.clone()), ..Default::default() },
        10,
    )
    .await?;
    let confirm_url = urls::confirm_order(&state.config, &p.id, p.shop_id);
    let page = ShowPage {
        price: m.money(p.amount, p.currency),
        status: status(&p, m.words),
        pay_url: urls::product_pay(&state.config, &p.id),
        qr_url: format!("/dashboard/products/{}/qr.svg", p.id),
        live_off: !p.test && !crate::services::payments::live_payments_allowed(&state, p.shop_id).await?,
        links: vec![
            (format!("/dashboard/products/{}/preview", p.id), m.t("Preview the payment page").into()),
            (confirm_url.clone(), m.f("Order confirmation page: {}", &[&confirm_url])),
        ],
        fields: p.fields().visible_fields.into_iter().map(|f| super::taxing::label(f, m.words)).collect(),
        expires: p.expired_at.map_or(m.t("never").into(), |t| local(t, m.tz)),
        created: local(p.created_at, m.tz),
        chrome: m.chrome("products").await,
        payments,
        p,
    };
    ok(&page)
}

async fn qr(State(state): State<AppState>, m: Merchant, Path(id): Path<String>) -> Result<impl IntoResponse, AppError> {
    let p = find(&state, &m, &id).await?;
    super::qr_svg(&urls::product_pay(&state.config, &p.id))
}

/// Archives the product (`archive=yes`) or brings it back (anything else); either is undone
/// the same way.
async fn archive(State(state): State<AppState>, m: Merchant, Path(id): Path<String>, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let found = find(&state, &m, &id).await?;
    let archive = form.get("archive") == Some("yes");
    crate::services::catalog::archive_product(&state, m.shop.id, &found.id, archive).await?;
    m.flash(match archive {
        true => m.t("Product archived: its pay link now tells customers it is no longer available."),
        false => m.t("Product restored: its pay link takes payments again."),
    })
    .await;
    see_other(&format!("/dashboard/products/{id}"))
}
