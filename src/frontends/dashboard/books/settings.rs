//! `/dashboard/settings/invoicing`: what invoices are made with: the seller details (with what
//! they still lack before invoices can start), the number series and the tax rates. Changes
//! ask for the password again (they decide what the shop's legal documents say) and go into
//! the audit trail, as through the API.

use askama::Template;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use chrono::Utc;

use super::super::form::{FormView, PostedForm};
use super::super::{Chrome, Merchant, Page, k, local, ok, render, see_other};
use crate::db::{self, entities::tax_rates};
use crate::domain::Errors;
use crate::domain::invoice::number_text;
use crate::domain::seller::Seller;
use crate::domain::series::{NAMES, SeriesChange, not_after};
use crate::domain::tax::{TaxCategory, TaxRateFields, format_percentage};
use crate::web::error::AppError;
use crate::web::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/dashboard/settings/invoicing", get(page))
        .route("/dashboard/settings/seller", post(seller))
        .route("/dashboard/settings/series/{name}", post(series))
        .route("/dashboard/settings/tax_rates", post(create_rate))
        .route("/dashboard/settings/tax_rates/{id}/archive", post(archive_rate))
}

/// What a seller detail is called (a key of the dashboard's words).
pub fn label(field: &str) -> &'static str {
    match field {
        "legal_name" => k("Legal name"),
        "address_line1" => k("Address"),
        "address_line2" => k("Address, second line"),
        "city" => k("City"),
        "postal_code" => k("Postal code"),
        "country" => k("Country"),
        "vat_id" => k("VAT ID"),
        "registration_number" => k("Company registration"),
        _ => k("Invoice footer"),
    }
}

/// A number series as the page shows it.
struct SeriesRow {
    name: &'static str,
    label: &'static str,
    prefix: String,
    next_number: String,
    next: String,
    last_issued: i64,
    /// Why the last change of this series was refused.
    error: Option<String>,
}

/// A tax rate in the table.
struct RateRow {
    id: String,
    name: String,
    percentage: String,
    category: &'static str,
    country: String,
    archived: Option<String>,
}

#[derive(Template)]
#[template(path = "dashboard/books/settings.html")]
struct SettingsPage {
    chrome: Chrome,
    seller: FormView,
    missing: Vec<&'static str>,
    countries: &'static [(&'static str, String)],
    series: Vec<SeriesRow>,
    rates: Vec<RateRow>,
    rate_form: FormView,
    categories: Vec<(String, String)>,
}

/// What the page shows besides the forms, with these forms as sent (or as stored).
async fn settings(
    state: &AppState,
    m: &Merchant,
    seller: Option<FormView>,
    series_error: Option<(&str, String)>,
    rate_form: Option<FormView>,
) -> Result<SettingsPage, AppError> {
    let stored = db::sellers::find(&state.db, m.shop.id).await?;
    let missing = stored.missing().into_iter().map(label).collect();
    let seller = seller.unwrap_or_else(|| {
        FormView::filled(
            stored.fields().into_iter().map(|(name, value)| (name, value.unwrap_or_default().to_string())).collect(),
        )
    });
    let series = db::documents::series(&state.db, m.shop.id)
        .await?
        .into_iter()
        .map(|s| {
            let name = crate::domain::series::name_of(s.kind, s.test);
            SeriesRow {
                name,
                label: match name {
                    "invoice" => k("Invoices"),
                    "credit_note" => k("Credit notes"),
                    "test_invoice" => k("Test invoices"),
                    _ => k("Test credit notes"),
                },
                next: number_text(&s.prefix, s.next_number),
                prefix: s.prefix,
                next_number: s.next_number.to_string(),
                last_issued: s.last_issued,
                error: series_error.as_ref().filter(|(n, _)| *n == name).map(|(_, e)| e.clone()),
            }
        })
        .collect();
    let rates = db::tax_rates::choices(&state.db, m.shop.id, None)
        .await?
        .into_iter()
        .map(|r: tax_rates::Model| RateRow {
            id: r.id,
            name: r.name,
            percentage: format!("{} %", format_percentage(r.percentage)),
            category: category(r.category),
            country: r.country.unwrap_or_default(),
            archived: r.archived_at.map(|t| local(t, m.tz)),
        })
        .collect();
    let categories = TaxCategory::ALL.iter().map(|c| (c.as_str().to_owned(), m.t(category(*c)).to_owned())).collect();
    Ok(SettingsPage {
        chrome: m.chrome("settings").await,
        seller,
        missing,
        countries: crate::web::locale::countries(m.words.language()),
        series,
        rates,
        rate_form: rate_form.unwrap_or_else(|| FormView::filled(vec![("category", "standard".into())])),
        categories,
    })
}

fn category(c: TaxCategory) -> &'static str {
    match c {
        TaxCategory::Standard => k("standard"),
        TaxCategory::ZeroRated => k("zero-rated"),
        TaxCategory::Exempt => k("exempt"),
    }
}

async fn page(State(state): State<AppState>, m: Merchant) -> Page {
    ok(&settings(&state, &m, None, None, None).await?)
}

async fn seller(State(state): State<AppState>, m: Merchant, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    match Seller::parse(&form.to_json(&[], &[])) {
        Ok(seller) => {
            db::sellers::replace(&state.db, m.shop.id, &seller, &m.audit("seller.updated"), Utc::now()).await?;
            m.flash(m.t("Seller details saved.")).await;
            see_other("/dashboard/settings/invoicing")
        }
        Err(errors) => {
            let page = settings(&state, &m, Some(FormView::sent(&form, errors, m.words)), None, None).await?;
            Ok(render(StatusCode::UNPROCESSABLE_ENTITY, &page))
        }
    }
}

async fn series(State(state): State<AppState>, m: Merchant, Path(name): Path<String>, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let Some(&(name, kind, test)) = NAMES.iter().find(|(n, _, _)| *n == name) else {
        return Err(AppError::NotFound("Series"));
    };
    let refused = match SeriesChange::parse(&form.to_json(&[], &[])) {
        Ok(change) => {
            let audit = m.audit("series.updated");
            match db::documents::change_series(&state.db, (m.shop.id, kind, test), &change, &audit, Utc::now()).await? {
                Ok(_) => {
                    m.flash(m.t("Numbering saved.")).await;
                    return see_other("/dashboard/settings/invoicing");
                }
                Err(last) => Errors::one("next_number", not_after(last)),
            }
        }
        Err(errors) => errors,
    };
    let message = refused.message();
    let page = settings(&state, &m, None, Some((name, message)), None).await?;
    Ok(render(StatusCode::UNPROCESSABLE_ENTITY, &page))
}

async fn create_rate(State(state): State<AppState>, m: Merchant, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    match TaxRateFields::parse(&form.to_json(&[], &[])) {
        Ok(fields) => {
            db::tax_rates::insert(&state.db, m.shop.id, &fields, Utc::now()).await?;
            m.flash(m.t("Tax rate made. Products and plans can now choose it.")).await;
            see_other("/dashboard/settings/invoicing")
        }
        Err(errors) => {
            let page = settings(&state, &m, None, None, Some(FormView::sent(&form, errors, m.words))).await?;
            Ok(render(StatusCode::UNPROCESSABLE_ENTITY, &page))
        }
    }
}

async fn archive_rate(State(state): State<AppState>, m: Merchant, Path(id): Path<String>, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let rate = db::find::<tax_rates::Entity>(&state.db, m.shop.id, &id).await?.ok_or(AppError::NotFound("Tax rate"))?;
    let archived = ("tax_rate.archived", "tax_rate");
    db::archive_recorded::<tax_rates::Entity>(&state.db, (m.shop.id, &rate.id), archived, Utc::now()).await?;
    m.flash(m.t("Tax rate archived: products and plans that chose it keep it; no other can choose it.")).await;
    see_other("/dashboard/settings/invoicing")
}
