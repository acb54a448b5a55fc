//! `/dashboard/invoices` and `/dashboard/credit_notes`: the lists, searched by number or
//! customer, and a page per document as it was issued.

use askama::Template;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::routing::get;

use super::super::list::{ListQuery, next_link};
use super::super::{Chrome, Merchant, Page, local, ok};
use crate::db::{self, Page as DbPage, entities::documents};
use crate::domain::invoice::{DocumentKind, DocumentLanguage};
use crate::web::documents::{Sheet, Words};
use crate::web::error::AppError;
use crate::web::state::AppState;
use crate::web::urls;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/dashboard/invoices", get(invoices))
        .route("/dashboard/invoices/{id}", get(invoice))
        .route("/dashboard/credit_notes", get(credit_notes))
        .route("/dashboard/credit_notes/{id}", get(credit_note))
}

const PER_PAGE: u64 = 50;

/// A document in a list.
struct Row {
    id: String,
    number: String,
    issued: String,
    buyer: String,
    total: String,
    payment_id: Option<String>,
    test: bool,
}

#[derive(Template)]
#[template(path = "dashboard/books/list.html")]
struct ListPage {
    chrome: Chrome,
    /// `invoices` or `credit_notes`: the section's path and key.
    section: &'static str,
    /// The list's own path.
    path: String,
    title: &'static str,
    rows: Vec<Row>,
    q: String,
    next: Option<String>,
    /// What the seller details still lack before invoices can start.
    missing: Vec<&'static str>,
}

fn section_of(kind: DocumentKind) -> (&'static str, &'static str) {
    match kind {
        DocumentKind::Invoice => ("invoices", "Invoices"),
        DocumentKind::CreditNote => ("credit_notes", "Credit notes"),
    }
}

async fn list(state: &AppState, m: &Merchant, kind: DocumentKind, query: ListQuery) -> Page {
    let (key, title) = section_of(kind);
    let q = query.q.unwrap_or_default().trim().to_string();
    let page = DbPage { limit: PER_PAGE, starting_after: query.after };
    let listed = db::documents::search(&state.db, m.shop.id, kind, &page, &q).await?;
    let rows = listed
        .rows
        .iter()
        .map(|d| Row {
            id: d.id.clone(),
            number: d.number_text.clone(),
            issued: local(d.issued_at, m.tz),
            buyer: buyer(d),
            total: m.money(d.gross_total, d.currency),
            payment_id: d.payment_id.clone(),
            test: d.test,
        })
        .collect();
    let seller = db::sellers::find(&state.db, m.shop.id).await?;
    let missing = seller.missing().into_iter().map(|field| super::settings::label(field)).collect();
    ok(&ListPage {
        chrome: m.chrome(key).await,
        section: key,
        path: format!("/dashboard/{key}"),
        title,
        rows,
        next: next_link(&format!("/dashboard/{key}"), &[("q", &q)], listed.next_after),
        q,
        missing,
    })
}

/// Who a document names as its buyer: their company, else their name.
fn buyer(d: &documents::Model) -> String {
    let content = crate::web::documents::content(d).unwrap_or_default();
    content.buyer.company.filter(|c| !c.is_empty()).unwrap_or(content.buyer.name)
}

async fn invoices(State(state): State<AppState>, m: Merchant, Query(query): Query<ListQuery>) -> Page {
    list(&state, &m, DocumentKind::Invoice, query).await
}

async fn credit_notes(State(state): State<AppState>, m: Merchant, Query(query): Query<ListQuery>) -> Page {
    list(&state, &m, DocumentKind::CreditNote, query).await
}

#[derive(Template)]
#[template(path = "dashboard/books/show.html")]
struct ShowPage {
    chrome: Chrome,
    d: documents::Model,
    section: &'static str,
    sheet: Sheet,
    w: &'static Words,
    /// The document's page for its customer.
    hosted: String,
    /// An invoice's credit notes and corrections, or a credit note's invoice: (path, number).
    related: Vec<(String, String)>,
    language: &'static str,
}

async fn show(state: &AppState, m: &Merchant, kind: DocumentKind, id: &str) -> Page {
    let (key, title) = section_of(kind);
    let d = db::documents::find(&state.db, m.shop.id, kind, id).await?.ok_or(AppError::NotFound(title))?;
    let content = crate::web::documents::content(&d).map_err(|e| AppError::Internal(e.to_string()))?;
    let related = match kind {
        DocumentKind::Invoice => db::documents::of_invoice(&state.db, &d)
            .await?
            .into_iter()
            .map(|r| (format!("/dashboard/{}/{}", section_of(r.kind).0, r.id), r.number_text))
            .collect(),
        DocumentKind::CreditNote => match d.invoice_id.as_deref() {
            Some(invoice) => match db::documents::find(&state.db, m.shop.id, DocumentKind::Invoice, invoice).await? {
                Some(i) => vec![(format!("/dashboard/invoices/{}", i.id), i.number_text)],
                None => Vec::new(),
            },
            None => Vec::new(),
        },
    };
    ok(&ShowPage {
        chrome: m.chrome(key).await,
        section: key,
        sheet: Sheet::of(&d, &content),
        w: Words::of(d.language),
        hosted: urls::document(&state.config, &d.id),
        related,
        language: match d.language {
            DocumentLanguage::En => "en",
            DocumentLanguage::Ru => "ru",
        },
        d,
    })
}

async fn invoice(State(state): State<AppState>, m: Merchant, Path(id): Path<String>) -> Page {
    show(&state, &m, DocumentKind::Invoice, &id).await
}

async fn credit_note(State(state): State<AppState>, m: Merchant, Path(id): Path<String>) -> Page {
    show(&state, &m, DocumentKind::CreditNote, &id).await
}
