//! `/products/{id}/pay`: the hosted page of a product.

use askama::Template;
use askama_web::WebTemplate;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::Response;
use axum::routing::get;
use axum::{Json, Router};
use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
use serde_json::json;

use super::page::price;
use super::respond;
use crate::api::products::pay_url;
use crate::app::AppState;
use crate::db::{entities::products, shops};
use crate::domain::vocab::VisibleField;
use crate::error::AppError;

pub fn router() -> Router<AppState> {
    Router::new().route("/products/{id}/pay", get(show))
}

/// One customer-data input of the form.
pub struct FieldInput {
    pub name: &'static str,
    pub label: &'static str,
    pub kind: &'static str,
    pub autocomplete: &'static str,
}

impl From<VisibleField> for FieldInput {
    fn from(f: VisibleField) -> Self {
        let (label, kind, autocomplete) = match f {
            VisibleField::FirstName => ("First name", "text", "given-name"),
            VisibleField::LastName => ("Last name", "text", "family-name"),
            VisibleField::Country => ("Country (two-letter code)", "text", "country"),
            VisibleField::State => ("State", "text", "address-level1"),
            VisibleField::City => ("City", "text", "address-level2"),
            VisibleField::Address => ("Address", "text", "street-address"),
            VisibleField::Zip => ("ZIP or postal code", "text", "postal-code"),
            VisibleField::Phone => ("Phone", "tel", "tel"),
            VisibleField::BirthDate => ("Date of birth", "date", "bday"),
            VisibleField::Email => ("E-mail", "email", "email"),
            VisibleField::TaxpayerId => ("Taxpayer ID", "text", "off"),
        };
        FieldInput { name: f.as_str(), label, kind, autocomplete }
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "pay/product.html")]
struct ProductPage {
    lang: &'static str,
    id: String,
    pay_url: String,
    shop_name: String,
    name: String,
    description: String,
    price: String,
    test: bool,
    fields: Vec<FieldInput>,
}

async fn show(State(state): State<AppState>, Path(id): Path<String>, headers: HeaderMap) -> Response {
    let loaded = load(&state, &id).await;
    respond(&headers, loaded, |p| Json(json!({"id": p.id, "object": "product", "pay_url": p.pay_url})))
}

async fn load(state: &AppState, id: &str) -> Result<ProductPage, AppError> {
    let product = products::Entity::find()
        .filter(products::Column::Id.eq(id))
        .one(&state.db)
        .await?
        .ok_or(AppError::NotFound("Product"))?;
    let shop = shops::find(&state.db, product.shop_id).await?.ok_or(AppError::NotFound("Product"))?;
    let fields = product.fields();
    Ok(ProductPage {
        lang: fields.language.as_str(),
        pay_url: pay_url(&state.config, &product.id),
        id: product.id,
        shop_name: shop.name,
        price: price(product.amount, &product.currency),
        name: product.name,
        description: product.description,
        test: product.test,
        fields: fields.visible_fields.into_iter().map(FieldInput::from).collect(),
    })
}
