//! Invoices and credit notes: what `GET /invoices` and `GET /credit_notes` accept.

use super::*;

/// `GET /invoices` and `GET /credit_notes`: each filter given narrows the list; the `Link` to
/// the next page keeps them. A `+` in a time must be sent percent-encoded (`%2B`).
#[derive(serde::Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct DocumentFilterParams {
    /// Page size, 1 to 1000.
    #[param(minimum = 1, maximum = 1000, default = 100)]
    limit: Option<u64>,
    /// The last id of the previous page (an id of this list, else 404); empty means the first.
    #[param(max_length = 64, pattern = r"^[A-Za-z0-9_]{0,64}$")]
    starting_after: Option<String>,
    /// Documents of this customer (`cst_…`).
    customer: Option<String>,
    /// Documents of this subscription (`sbs_…`).
    subscription: Option<String>,
    /// Documents of this payment (`pay_…`).
    payment: Option<String>,
    /// Credit notes of this invoice (`inv_…`).
    invoice: Option<String>,
    /// The number as printed (`INV-000042`), or its digits (`42`).
    number: Option<String>,
    /// Issued at or after this moment.
    #[serde(rename = "issued[gte]")]
    #[param(value_type = Option<FilterTime>, inline)]
    issued_gte: Option<String>,
    /// Issued after this moment.
    #[serde(rename = "issued[gt]")]
    #[param(value_type = Option<FilterTime>, inline)]
    issued_gt: Option<String>,
    /// Issued at or before this moment.
    #[serde(rename = "issued[lte]")]
    #[param(value_type = Option<FilterTime>, inline)]
    issued_lte: Option<String>,
    /// Issued before this moment.
    #[serde(rename = "issued[lt]")]
    #[param(value_type = Option<FilterTime>, inline)]
    issued_lt: Option<String>,
}

/// A change of a series: either field, or both.
#[derive(ToSchema)]
#[schema(example = json!({"prefix": "2027-", "next_number": 1001}))]
pub struct SeriesUpdate {
    /// Printed before the number; empty or `null` for none. At most 20 characters, no control
    /// characters, not ending with a digit (the number follows it).
    #[schema(max_length = 20, pattern = r"^([^\x00-\x1f\x7f-\x9f]*[^\x00-\x1f\x7f-\x9f0-9])?$")]
    prefix: Option<String>,
    /// The number the next document takes: above the last one issued (422 otherwise);
    /// absent or `null` leaves it as it is.
    #[schema(minimum = 1, maximum = 999_999_999_999_i64)]
    next_number: Option<i64>,
}

/// An invoice issued again: the buyer as corrected.
#[derive(ToSchema)]
#[schema(example = json!({"buyer": {"name": "Anna Leroy", "company": "Lumière SARL", "address_line1": "1 rue de la Paix",
    "city": "Lyon", "postal_code": "69001", "country": "FR", "vat_id": "FR1A123456789", "email": "anna@example.fr"}}))]
pub struct Reissue {
    buyer: BuyerDetails,
}

/// A buyer as an invoice names them. Text fields at most 255 characters.
#[derive(ToSchema)]
pub struct BuyerDetails {
    /// The person's name (required).
    #[schema(
        max_length = 255,
        pattern = r"^[^\x00]*[^\x00\t\n\v\f\r \x85\xA0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000][^\x00]*$"
    )]
    name: String,
    #[schema(max_length = 255, pattern = r"^[^\x00]*$")]
    company: Option<String>,
    #[schema(max_length = 255, pattern = r"^[^\x00]*$")]
    address_line1: Option<String>,
    #[schema(max_length = 255, pattern = r"^[^\x00]*$")]
    address_line2: Option<String>,
    #[schema(max_length = 255, pattern = r"^[^\x00]*$")]
    city: Option<String>,
    #[schema(max_length = 255, pattern = r"^[^\x00]*$")]
    postal_code: Option<String>,
    #[schema(max_length = 255, pattern = r"^[^\x00]*$")]
    region: Option<String>,
    /// ISO 3166-1 alpha-2.
    country: Option<CountryCode>,
    /// In the form of `country`'s VAT ids (or, without a country, of its prefix's).
    #[schema(max_length = 255, pattern = r"^[A-Za-z0-9 .\-\u00A0]*$")]
    vat_id: Option<String>,
    #[schema(max_length = 255, pattern = r"^[^\x00]*$")]
    email: Option<String>,
}
