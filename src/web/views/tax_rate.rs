//! The tax rate object.

use serde::Serialize;
use utoipa::ToSchema;

use super::timestamp;
use crate::db::entities::tax_rates;
use crate::domain::tax::TaxCategory;

/// A tax rate as the API returns it.
#[derive(Serialize, ToSchema)]
#[schema(as = TaxRate)]
pub struct TaxRateView {
    id: String,
    /// `tax_rate`.
    #[schema(example = "tax_rate")]
    object: &'static str,
    /// What invoices call it (`VAT`, `USt`, `НДС`).
    name: String,
    /// The percentage, with at most four decimals.
    #[schema(example = 19.0)]
    percentage: f64,
    /// `standard`, `zero_rated` or `exempt`.
    #[schema(value_type = String, example = "standard")]
    category: TaxCategory,
    /// Where it applies (ISO 3166-1 alpha-2), if said.
    country: Option<String>,
    /// Why a sale at an `exempt` rate is exempt, as its invoices print it.
    exemption_reason: Option<String>,
    /// When it was archived; an archived rate is kept.
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    archived_at: Option<String>,
    shop_id: i64,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    created_at: String,
}

impl From<&tax_rates::Model> for TaxRateView {
    fn from(t: &tax_rates::Model) -> Self {
        TaxRateView {
            id: t.id.clone(),
            object: "tax_rate",
            name: t.name.clone(),
            percentage: t.percentage as f64 / 10_000.0,
            category: t.category,
            country: t.country.clone(),
            exemption_reason: t.exemption_reason.clone(),
            archived_at: t.archived_at.map(timestamp),
            shop_id: t.shop_id,
            created_at: timestamp(t.created_at),
        }
    }
}
