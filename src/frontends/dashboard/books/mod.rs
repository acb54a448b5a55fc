//! The books in the dashboard: invoices and credit notes (lists with a search, a page per
//! document with its PDF, a CSV of a period for the accountant) and what they are made with
//! (the seller details, the number series and the tax rates).

mod documents;
mod export;
mod settings;

use axum::Router;

use crate::web::state::AppState;

pub fn router() -> Router<AppState> {
    documents::router().merge(export::router()).merge(settings::router())
}
