//! The customer object (spec 2.3).

use serde::Serialize;
use utoipa::ToSchema;

use super::timestamp;
use crate::db::entities::customers;

/// A customer as the API returns it.
#[derive(Serialize, ToSchema)]
#[schema(as = Customer)]
pub struct CustomerView {
    id: String,
    first_name: Option<String>,
    last_name: Option<String>,
    address: Option<String>,
    city: Option<String>,
    country: Option<String>,
    zip: Option<String>,
    state: Option<String>,
    phone: Option<String>,
    company: Option<String>,
    /// Normalised: capitals, the country's prefix, no separators.
    vat_id: Option<String>,
    email: String,
    ip: String,
    external_id: Option<String>,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    created_at: String,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    updated_at: String,
}

impl From<&customers::Model> for CustomerView {
    fn from(c: &customers::Model) -> Self {
        CustomerView {
            id: c.id.clone(),
            first_name: c.first_name.clone(),
            last_name: c.last_name.clone(),
            address: c.address.clone(),
            city: c.city.clone(),
            country: c.country.clone(),
            zip: c.zip.clone(),
            state: c.state.clone(),
            phone: c.phone.clone(),
            company: c.company.clone(),
            vat_id: c.vat_id.clone(),
            email: c.email.clone(),
            ip: c.ip.clone(),
            external_id: c.external_id.clone(),
            created_at: timestamp(c.created_at),
            updated_at: timestamp(c.updated_at),
        }
    }
}
