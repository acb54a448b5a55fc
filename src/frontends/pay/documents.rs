//! `/documents/{id}`: an invoice's or credit note's page, public by its unguessable id as a
//! receipt is, in its language, printable as it is; and its PDF (`/documents/{id}/pdf`) and
//! e-invoice XML (`/documents/{id}/xml`).

use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::page::respond_page;
use crate::db::{self, entities::documents};
use crate::web::documents::{self as files, Format, Sheet, Words};
use crate::web::error::AppError;
use crate::web::i18n::{Texts, texts};
use crate::web::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/documents/{id}", get(show))
        .route("/documents/{id}/pdf", get(pdf))
        .route("/documents/{id}/xml", get(xml))
}

#[derive(Template, WebTemplate)]
#[template(path = "pay/document.html")]
struct DocumentPage {
    t: &'static Texts,
    w: &'static Words,
    id: String,
    number: String,
    shop_name: String,
    sheet: Sheet,
}

async fn find(state: &AppState, id: &str) -> Result<documents::Model, AppError> {
    db::find_public::<documents::Entity>(&state.db, id).await?.ok_or(AppError::NotFound("Document"))
}

async fn show(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    let page = async {
        let d = find(&state, &id).await?;
        let shop = crate::services::shops::find(&state, d.shop_id).await?;
        let c = files::content(&d).map_err(|e| AppError::Internal(e.to_string()))?;
        Ok::<_, AppError>(DocumentPage {
            t: texts(Words::of(d.language).language),
            w: Words::of(d.language),
            sheet: Sheet::of(&d, &c),
            number: d.number_text.clone(),
            shop_name: shop.map(|s| s.name.clone()).unwrap_or_default(),
            id: d.id,
        })
    };
    match page.await {
        Ok(page) => respond_page(StatusCode::OK, page, None, None, &[]),
        Err(e) => e.into_response(),
    }
}

async fn pdf(State(state): State<AppState>, Path(id): Path<String>) -> Result<Response, AppError> {
    files::download(find(&state, &id).await?, Format::Pdf).await
}

async fn xml(State(state): State<AppState>, Path(id): Path<String>) -> Result<Response, AppError> {
    files::download(find(&state, &id).await?, Format::Xml).await
}
