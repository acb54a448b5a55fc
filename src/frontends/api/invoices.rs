//! `/invoices` and `/credit_notes`: the documents of the merchant's books, as issued. They are
//! only read: paydesk issues them as charges succeed, and never changes one.

use axum::extract::{Path, RawQuery, State};
use axum::response::Response;
use axum::routing::get;
use axum::{Json, Router};

use super::auth::ApiShop;
use super::{list_response, page_from_query, schemas};
use crate::db;
use crate::domain::invoice::{DocumentFilter, DocumentKind};
use crate::web::error::AppError;
use crate::web::state::AppState;
use crate::web::views::DocumentView;

/// Routes of invoices and credit notes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/invoices", get(list))
        .route("/invoices/{id}", get(show))
        .route("/credit_notes", get(list_credit_notes))
        .route("/credit_notes/{id}", get(show_credit_note))
}

async fn list_of(
    state: &AppState,
    shop_id: i64,
    kind: DocumentKind,
    query: Option<&str>,
) -> Result<Response, AppError> {
    let page = page_from_query(query)?;
    let filter = DocumentFilter::parse(url::form_urlencoded::parse(query.unwrap_or("").as_bytes()))?;
    let listed = db::documents::list(&state.db, shop_id, kind, &page, &filter).await;
    let path = match kind {
        DocumentKind::Invoice => "/invoices",
        DocumentKind::CreditNote => "/credit_notes",
    };
    list_response(state, path, query, &page, listed, |d| DocumentView::from(d))
}

async fn show_of(state: &AppState, shop_id: i64, kind: DocumentKind, id: &str) -> Result<Json<DocumentView>, AppError> {
    let what = match kind {
        DocumentKind::Invoice => "Invoice",
        DocumentKind::CreditNote => "Credit note",
    };
    let document = db::documents::find(&state.db, shop_id, kind, id).await?.ok_or(AppError::NotFound(what))?;
    Ok(Json(DocumentView::from(&document)))
}

/// List invoices
///
/// Every charge that took money has one invoice, issued as it succeeded, once the shop's
/// seller details are complete; test charges' invoices have a series of their own.
#[utoipa::path(get, path = "/invoices", tag = "Invoicing", params(schemas::documents::DocumentFilterParams),
    responses((status = 200, description = "A page of invoices, newest first", body = [DocumentView])))]
async fn list(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    RawQuery(query): RawQuery,
) -> Result<Response, AppError> {
    list_of(&state, shop.id, DocumentKind::Invoice, query.as_deref()).await
}

/// Read an invoice
#[utoipa::path(get, path = "/invoices/{id}", tag = "Invoicing", params(("id" = String, Path, description = "The invoice's id (`inv_…`)")),
    responses((status = 200, description = "The invoice", body = DocumentView)))]
async fn show(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Json<DocumentView>, AppError> {
    show_of(&state, shop.id, DocumentKind::Invoice, &id).await
}

/// List credit notes
#[utoipa::path(get, path = "/credit_notes", tag = "Invoicing", params(schemas::documents::DocumentFilterParams),
    responses((status = 200, description = "A page of credit notes, newest first", body = [DocumentView])))]
async fn list_credit_notes(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    RawQuery(query): RawQuery,
) -> Result<Response, AppError> {
    list_of(&state, shop.id, DocumentKind::CreditNote, query.as_deref()).await
}

/// Read a credit note
#[utoipa::path(get, path = "/credit_notes/{id}", tag = "Invoicing", params(("id" = String, Path, description = "The credit note's id (`cn_…`)")),
    responses((status = 200, description = "The credit note", body = DocumentView)))]
async fn show_credit_note(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Json<DocumentView>, AppError> {
    show_of(&state, shop.id, DocumentKind::CreditNote, &id).await
}
