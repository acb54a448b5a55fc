//! The seller object: who the shop's invoices name.

use serde::Serialize;
use utoipa::ToSchema;

use crate::domain::seller::Seller;

/// The shop's seller details as the API returns them.
#[derive(Serialize, ToSchema)]
#[schema(as = Seller)]
pub struct SellerView {
    /// `seller`.
    #[schema(example = "seller")]
    object: &'static str,
    legal_name: Option<String>,
    address_line1: Option<String>,
    address_line2: Option<String>,
    city: Option<String>,
    postal_code: Option<String>,
    /// ISO 3166-1 alpha-2.
    country: Option<String>,
    /// In capitals, without spaces, with the country's prefix (`DE123456789`).
    vat_id: Option<String>,
    registration_number: Option<String>,
    /// Printed at the foot of every invoice.
    invoice_footer: Option<String>,
    /// What invoices cannot be issued without and is still empty; invoices can start once
    /// this is empty.
    #[schema(example = json!(["legal_name", "address_line1", "city", "country"]))]
    missing: Vec<&'static str>,
}

impl From<&Seller> for SellerView {
    fn from(s: &Seller) -> Self {
        SellerView {
            object: "seller",
            legal_name: s.legal_name.clone(),
            address_line1: s.address_line1.clone(),
            address_line2: s.address_line2.clone(),
            city: s.city.clone(),
            postal_code: s.postal_code.clone(),
            country: s.country.clone(),
            vat_id: s.vat_id.clone(),
            registration_number: s.registration_number.clone(),
            invoice_footer: s.invoice_footer.clone(),
            missing: s.missing(),
        }
    }
}
