//! Customers: what `POST /customers` (and a new subscription's inline `customer`) accepts.

use super::*;

/// A new customer (spec 2.3). Text fields are at most 255 characters; blank text reads as not
/// sent. Also the inline `customer` of `POST /subscriptions`.
#[derive(ToSchema)]
#[schema(example = json!({
    "email": "ann@example.com", "ip": "203.0.113.9", "first_name": "Ann",
    "country": "US", "state": "NY", "zip": "12207", "external_id": "crm-42"
}))]
pub struct CustomerCreate {
    /// The customer's e-mail address (an HTML5-valid address: no quoted local parts).
    #[schema(
        max_length = 255,
        pattern = r"^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$"
    )]
    email: String,
    /// The customer's IP address.
    ip: IpAddress,
    /// First name.
    #[schema(max_length = 255, pattern = r"^[^\x00]*$")]
    first_name: Option<String>,
    /// Last name.
    #[schema(max_length = 255, pattern = r"^[^\x00]*$")]
    last_name: Option<String>,
    /// Street address.
    #[schema(max_length = 255, pattern = r"^[^\x00]*$")]
    address: Option<String>,
    /// City.
    #[schema(max_length = 255, pattern = r"^[^\x00]*$")]
    city: Option<String>,
    /// Country.
    country: Option<CountryCode>,
    /// State or province: only with `country` `US` or `CA`, and one of that country's codes.
    state: Option<StateCode>,
    /// Postal code; for `country` `US` it must be `NNNNN` or `NNNNN-NNNN`.
    #[schema(max_length = 255, pattern = r"^[^\x00]*$")]
    zip: Option<String>,
    /// Phone number, as typed.
    #[schema(max_length = 255, pattern = r"^[^\x00]*$")]
    phone: Option<String>,
    /// The company the customer buys for, named on their invoices.
    #[schema(max_length = 255, pattern = r"^[^\x00]*$")]
    company: Option<String>,
    /// Their VAT id, in the form of `country`'s ids (`DE123456789`; separators and a missing
    /// prefix are fine); without `country`, its prefix names the country. Kept without
    /// separators, with the prefix. Only the form is checked: paydesk does not ask VIES.
    #[schema(max_length = 255, pattern = r"^[A-Za-z0-9 .\-\u00A0]*$")]
    vat_id: Option<String>,
    /// The merchant's own reference for the customer: text, or a whole number (kept as its
    /// digits).
    #[schema(schema_with = merchant_reference)]
    external_id: Option<String>,
    // `state` only for US and CA, US zip codes.
    #[serde(flatten)]
    #[schema(schema_with = customer_region_rules)]
    rules: Value,
}

/// CustomerCreate: `state` only with `country` US or CA (and one of its codes); a US `zip`
/// is `NNNNN` or `NNNNN-NNNN`. anyOf: a CA customer without a state matches two branches.
fn customer_region_rules() -> AnyOfBuilder {
    // Exact lengths instead of a final `$`, which Python's `re` also matches before a
    // trailing newline (and fuzzers built on it generate one).
    let us_zip = AnyOfBuilder::new()
        .item(absent())
        .item(given(Type::String).pattern(Some("^[0-9]{5}")).min_length(Some(5)).max_length(Some(5)))
        .item(given(Type::String).pattern(Some("^[0-9]{5}-[0-9]{4}")).min_length(Some(10)).max_length(Some(10)));
    AnyOfBuilder::new()
        .item(
            ObjectBuilder::new()
                .title(Some("A US address"))
                .property("country", values([json!("US")]))
                .required("country")
                .property("state", codes_or_null(US_STATES.split_ascii_whitespace()))
                .property("zip", us_zip),
        )
        .item(
            ObjectBuilder::new()
                .title(Some("A Canadian address"))
                .property("country", values([json!("CA")]))
                .required("country")
                .property("state", codes_or_null(CA_PROVINCES.split_ascii_whitespace())),
        )
        .item(
            ObjectBuilder::new()
                .title(Some("Any other country, or none: no state"))
                .property("country", codes_or_null(COUNTRIES.split_ascii_whitespace().filter(|c| *c != "US")))
                .property("state", absent()),
        )
        .description(Some(
            "`state` may be sent only with `country` US or CA, and must be one of that country's codes; \
             with `country` US, `zip` must be NNNNN or NNNNN-NNNN.",
        ))
}

/// What `POST /customers/{id}/portal_sessions` accepts (both optional).
#[derive(ToSchema)]
#[schema(example = json!({"return_url": "https://shop.example/account", "locale": "en"}))]
pub struct PortalSessionCreate {
    /// Where the page's "Back to the shop" leads (an absolute http or https URL).
    #[schema(
        max_length = 2048,
        pattern = r"^$|^https?://([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z]([A-Za-z0-9-]*[A-Za-z0-9])?(:[0-9]{1,4})?([/?#][^\x00]*)?$"
    )]
    return_url: Option<String>,
    /// The page's language: `en` or `ru` (blank or left out: `en`).
    #[schema(pattern = "^(en|ru)?$")]
    locale: Option<String>,
}
