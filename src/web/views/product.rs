//! The product object (spec 2.1).

use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

use super::timestamp;
use crate::config::Config;
use crate::db::entities::products;
use crate::domain::currency::Currency;
use crate::domain::product::visible_fields_from_db;
use crate::domain::vocab::{Language, TransactionType};
use crate::web::urls;

/// A product as the API returns it.
#[derive(Serialize, ToSchema)]
#[schema(as = Product)]
pub struct ProductView {
    id: String,
    name: String,
    description: String,
    currency: Currency,
    amount: i64,
    quantity: Option<i64>,
    infinite: bool,
    language: Language,
    transaction_type: TransactionType,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    created_at: String,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    updated_at: String,
    /// When the merchant archived it (its link then takes no payments); null while it is not.
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    archived_at: Option<String>,
    test: bool,
    #[schema(value_type = Object)]
    additional_data: Map<String, Value>,
    pay_url: String,
    payment_url: String,
    confirm_url: String,
    #[schema(value_type = Vec<crate::domain::vocab::VisibleField>)]
    visible_fields: Vec<&'static str>,
    immortal: bool,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    expired_at: Option<String>,
    return_url: Option<String>,
    notification_url: Option<String>,
    /// The shop's rate its sales are taxed at (`txr_…`); `null`: untaxed.
    tax_rate_id: Option<String>,
    tax_behavior: crate::domain::tax::TaxBehavior,
    shop_id: i64,
}

impl ProductView {
    /// The API's view of a stored product.
    pub fn new(p: &products::Model, config: &Config) -> Self {
        let pay_url = urls::product_pay(config, &p.id);
        ProductView {
            id: p.id.clone(),
            name: p.name.clone(),
            description: p.description.clone(),
            currency: p.currency,
            amount: p.amount,
            quantity: p.quantity,
            infinite: p.infinite,
            language: p.language,
            transaction_type: p.transaction_type,
            created_at: timestamp(p.created_at),
            updated_at: timestamp(p.updated_at),
            archived_at: p.archived_at.map(timestamp),
            test: p.test,
            additional_data: Map::new(),
            payment_url: pay_url.clone(),
            pay_url,
            confirm_url: urls::confirm_order(config, &p.id, p.shop_id),
            visible_fields: visible_fields_from_db(&p.visible_fields).iter().map(|f| f.as_str()).collect(),
            immortal: p.immortal,
            expired_at: p.expired_at.map(timestamp),
            return_url: p.return_url.clone(),
            notification_url: p.notification_url.clone(),
            tax_rate_id: p.tax_rate_id.clone(),
            tax_behavior: p.tax_behavior,
            shop_id: p.shop_id,
        }
    }
}
