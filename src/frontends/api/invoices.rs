//! `/invoices` and `/credit_notes`: the documents of the merchant's books, as issued. They are
//! only read: paydesk issues them as charges succeed, and never changes one.

use axum::extract::{Path, RawQuery, State};
use axum::response::Response;
use axum::routing::{get, post, put};
use axum::{Json, Router};

use super::auth::ApiShop;
use super::json::JsonObject;
use super::{list_response, page_from_query, schemas};
use crate::db::{self, entities::documents};
use crate::domain::invoice::{DocumentFilter, DocumentKind};
use crate::domain::series::SeriesChange;
use crate::web::documents::Format;
use crate::web::error::AppError;
use crate::web::state::AppState;
use crate::web::views::DocumentView;
use crate::web::views::document::SeriesView;
use chrono::Utc;

/// Routes of invoices and credit notes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/invoices", get(list))
        .route("/invoices/{id}", get(show))
        .route("/invoices/{id}/pdf", get(invoice_pdf))
        .route("/invoices/{id}/xml", get(invoice_xml))
        .route("/invoices/{id}/reissue", post(reissue))
        .route("/credit_notes", get(list_credit_notes))
        .route("/credit_notes/{id}", get(show_credit_note))
        .route("/credit_notes/{id}/pdf", get(credit_note_pdf))
        .route("/credit_notes/{id}/xml", get(credit_note_xml))
        .route("/shop/series", get(series))
        .route("/shop/series/{name}", put(update_series))
}

/// List the shop's number series
///
/// Four series: invoices and credit notes, live and test. Each is a prefix and the number
/// its next document takes; numbers run without gaps.
#[utoipa::path(get, path = "/shop/series", tag = "Invoicing",
    responses((status = 200, description = "The series", body = [SeriesView])))]
async fn series(State(state): State<AppState>, ApiShop(shop): ApiShop) -> Result<Json<Vec<SeriesView>>, AppError> {
    Ok(Json(db::documents::series(&state.db, shop.id).await?.iter().map(SeriesView::from).collect()))
}

/// Change a number series
///
/// Its `prefix`, or the `next_number` its next document takes, or both: a number at or
/// below the last one issued is refused (422), so numbers never repeat. Documents issued
/// before keep their numbers.
#[utoipa::path(put, path = "/shop/series/{name}", tag = "Invoicing",
    params(("name" = String, Path, description = "`invoice`, `credit_note`, `test_invoice` or `test_credit_note`")),
    request_body = Option<schemas::documents::SeriesUpdate>,
    responses((status = 200, description = "The series", body = SeriesView),
        (status = 404, description = "No series has this name", body = crate::web::error::ErrorBody),
        (status = 422, description = "A field is wrong", body = crate::web::error::ErrorBody)))]
async fn update_series(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(name): Path<String>,
    crate::web::guard::Caller(origin): crate::web::guard::Caller,
    JsonObject(body): JsonObject,
) -> Result<Json<SeriesView>, AppError> {
    let (kind, test) = crate::domain::series::named(&name).ok_or(AppError::NotFound("Series"))?;
    let change = SeriesChange::parse(&body)?;
    let audit = super::by_key(shop.id, origin, "series.updated");
    match db::documents::change_series(&state.db, (shop.id, kind, test), &change, &audit, Utc::now()).await? {
        Ok(series) => Ok(Json(SeriesView::from(&series))),
        Err(last) => Err(crate::domain::Errors::one("next_number", crate::domain::series::not_after(last)).into()),
    }
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
    list_response(state, path, query, &page, listed, |d| DocumentView::new(d, &state.config))
}

async fn find(state: &AppState, shop_id: i64, kind: DocumentKind, id: &str) -> Result<documents::Model, AppError> {
    let what = match kind {
        DocumentKind::Invoice => "Invoice",
        DocumentKind::CreditNote => "Credit note",
    };
    db::documents::find(&state.db, shop_id, kind, id).await?.ok_or(AppError::NotFound(what))
}

async fn show_of(state: &AppState, shop_id: i64, kind: DocumentKind, id: &str) -> Result<Json<DocumentView>, AppError> {
    Ok(Json(DocumentView::new(&find(state, shop_id, kind, id).await?, &state.config)))
}

async fn file_of(
    state: &AppState,
    shop_id: i64,
    (kind, id): (DocumentKind, &str),
    format: Format,
) -> Result<Response, AppError> {
    crate::web::documents::download(find(state, shop_id, kind, id).await?, format).await
}

/// Download an invoice's PDF
///
/// A PDF/A-3b in the invoice's language, with its EN 16931 XML attached as `factur-x.xml`
/// (Factur-X, profile EN 16931). The same bytes every time it is asked for.
#[utoipa::path(get, path = "/invoices/{id}/pdf", tag = "Invoicing", params(("id" = String, Path, description = "The invoice's id (`inv_…`)")),
    responses((status = 200, description = "The PDF", content_type = "application/pdf", body = Vec<u8>),
        (status = 404, description = "No such invoice", body = crate::web::error::ErrorBody)))]
async fn invoice_pdf(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Response, AppError> {
    file_of(&state, shop.id, (DocumentKind::Invoice, &id), Format::Pdf).await
}

/// Download an invoice's XML
///
/// The EN 16931 e-invoice: UN/CEFACT Cross Industry Invoice, as Factur-X's EN 16931 profile
/// writes it (the XML the PDF carries).
#[utoipa::path(get, path = "/invoices/{id}/xml", tag = "Invoicing", params(("id" = String, Path, description = "The invoice's id (`inv_…`)")),
    responses((status = 200, description = "The XML", content_type = "application/xml", body = String),
        (status = 404, description = "No such invoice", body = crate::web::error::ErrorBody)))]
async fn invoice_xml(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Response, AppError> {
    file_of(&state, shop.id, (DocumentKind::Invoice, &id), Format::Xml).await
}

/// Issue an invoice again with corrected buyer details
///
/// An issued invoice is never edited: this credits all of it (a credit note) and issues a new
/// invoice, numbered on, with the same lines as charged, naming the `buyer` as corrected and
/// the invoice it replaces. Refunds and disputes of the payment then credit the new invoice.
/// Refused (409) when something was credited of the invoice already, or when it was issued
/// again already (the new invoice is then the one to correct).
#[utoipa::path(post, path = "/invoices/{id}/reissue", tag = "Invoicing", params(("id" = String, Path, description = "The invoice's id (`inv_…`)")),
    request_body = schemas::documents::Reissue,
    responses((status = 201, description = "The new invoice", body = DocumentView),
        (status = 404, description = "No such invoice", body = crate::web::error::ErrorBody),
        (status = 409, description = "Credited in part, or issued again already", body = crate::web::error::ErrorBody),
        (status = 422, description = "A field of the buyer is wrong", body = crate::web::error::ErrorBody)))]
async fn reissue(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
    JsonObject(body): JsonObject,
) -> Result<(axum::http::StatusCode, Json<DocumentView>), AppError> {
    let invoice = find(&state, shop.id, DocumentKind::Invoice, &id).await?;
    let buyer = crate::domain::invoice::parse_buyer(&body)?;
    match crate::services::invoices::reissue(&state.db, &state.config, &invoice, buyer, Utc::now()).await? {
        Ok(new) => Ok((axum::http::StatusCode::CREATED, Json(DocumentView::new(&new, &state.config)))),
        Err(crate::services::invoices::NotReissued::Credited) => Err(AppError::Conflict(
            "Something was credited of this invoice already: correct it with a credit note instead".into(),
        )),
        Err(crate::services::invoices::NotReissued::Replaced) => {
            Err(AppError::Conflict("This invoice was issued again already: correct the new one".into()))
        }
        Err(crate::services::invoices::NotReissued::NotAPayments) => Err(AppError::Conflict(
            "This invoice bills again what a refund's credit note credited: correct the payment's invoice".into(),
        )),
        Err(crate::services::invoices::NotReissued::NeedsVatId) => Err(AppError::Validation(
            crate::domain::Errors::one("buyer.vat_id", "can't be blank: the invoice was reverse-charged"),
        )),
    }
}

/// Download a credit note's PDF
///
/// As an invoice's: a PDF/A-3b with its EN 16931 XML (document type 381) attached.
#[utoipa::path(get, path = "/credit_notes/{id}/pdf", tag = "Invoicing", params(("id" = String, Path, description = "The credit note's id (`cn_…`)")),
    responses((status = 200, description = "The PDF", content_type = "application/pdf", body = Vec<u8>),
        (status = 404, description = "No such credit note", body = crate::web::error::ErrorBody)))]
async fn credit_note_pdf(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Response, AppError> {
    file_of(&state, shop.id, (DocumentKind::CreditNote, &id), Format::Pdf).await
}

/// Download a credit note's XML
#[utoipa::path(get, path = "/credit_notes/{id}/xml", tag = "Invoicing", params(("id" = String, Path, description = "The credit note's id (`cn_…`)")),
    responses((status = 200, description = "The XML", content_type = "application/xml", body = String),
        (status = 404, description = "No such credit note", body = crate::web::error::ErrorBody)))]
async fn credit_note_xml(
    State(state): State<AppState>,
    ApiShop(shop): ApiShop,
    Path(id): Path<String>,
) -> Result<Response, AppError> {
    file_of(&state, shop.id, (DocumentKind::CreditNote, &id), Format::Xml).await
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
