//! Request bodies of tax rates.

use utoipa::ToSchema;

use super::*;

/// A new tax rate.
#[derive(ToSchema)]
#[schema(example = json!({"name": "VAT", "percentage": 19, "country": "DE"}))]
pub struct TaxRateCreate {
    /// What invoices call it.
    #[schema(min_length = 1, max_length = 100, pattern = r"^[^\x00]*\S[^\x00]*$")]
    name: String,
    /// 0 to 100: a JSON number (read as the four-decimal number nearest it, and one above 0
    /// as at least 0.0001), or its digits in a string with at most four decimals.
    #[schema(schema_with = any_percentage)]
    percentage: Option<Value>,
    /// `standard` (the default), `zero_rated` or `exempt`.
    #[schema(value_type = Option<String>, example = "standard", pattern = "^(standard|zero_rated|exempt)$")]
    category: Option<String>,
    /// Where it applies.
    country: Option<CountryCode>,
    /// For `exempt` only, and then required: why, as invoices print it.
    #[schema(max_length = 255, pattern = r"^[^\x00]*\S[^\x00]*$")]
    exemption_reason: Option<String>,
    // A standard rate above 0 %; the others at 0 %, an exempt one with its reason.
    #[serde(flatten)]
    #[schema(schema_with = tax_rate_rules)]
    rules: Value,
}

/// Up to four decimals as digits: 0 to 100.
const PERCENT_DIGITS: &str = r"^[ \t\n\r]*0*(100(\.0{1,4})?|[0-9]{1,2}(\.[0-9]{1,4})?)[ \t\n\r]*$";

/// The same, above 0.
const POSITIVE_DIGITS: &str = r"^[ \t\n\r]*0*(100(\.0{1,4})?|[1-9][0-9]?(\.[0-9]{1,4})?|0\.([1-9][0-9]{0,3}|0[1-9][0-9]{0,2}|00[1-9][0-9]?|000[1-9]))[ \t\n\r]*$";

fn any_percentage() -> OneOfBuilder {
    OneOfBuilder::new()
        .item(ObjectBuilder::new().schema_type(Type::Null))
        .item(ObjectBuilder::new().schema_type(Type::Number).minimum(Some(0)).maximum(Some(100)))
        .item(ObjectBuilder::new().schema_type(Type::String).pattern(Some(PERCENT_DIGITS)))
}

fn positive_percentage() -> OneOfBuilder {
    OneOfBuilder::new()
        .item(ObjectBuilder::new().schema_type(Type::Number).exclusive_minimum(Some(0)).maximum(Some(100)))
        .item(ObjectBuilder::new().schema_type(Type::String).pattern(Some(POSITIVE_DIGITS)))
}

/// Zero, or not sent.
fn zero_percentage() -> OneOfBuilder {
    OneOfBuilder::new()
        .item(ObjectBuilder::new().schema_type(Type::Null))
        .item(ObjectBuilder::new().schema_type(Type::Number).minimum(Some(0)).maximum(Some(0)))
        .item(ObjectBuilder::new().schema_type(Type::String).pattern(Some(r"^[ \t\n\r]*0+(\.0{1,4})?[ \t\n\r]*$")))
}

/// TaxRateCreate: a `standard` rate above 0 % without a reason; a `zero_rated` one at 0 %
/// without a reason; an `exempt` one at 0 % with its reason.
fn tax_rate_rules() -> OneOfBuilder {
    OneOfBuilder::new()
        .item(
            ObjectBuilder::new()
                .title(Some("A standard rate"))
                .property("category", codes_or_null(["standard"]))
                .property("percentage", positive_percentage())
                .required("percentage")
                .property("exemption_reason", absent()),
        )
        .item(
            ObjectBuilder::new()
                .title(Some("A zero rate"))
                .property("category", values([json!("zero_rated")]))
                .required("category")
                .property("percentage", zero_percentage())
                .property("exemption_reason", absent()),
        )
        .item(
            ObjectBuilder::new()
                .title(Some("An exemption"))
                .property("category", values([json!("exempt")]))
                .required("category")
                .property("percentage", zero_percentage())
                .property("exemption_reason", given(Type::String))
                .required("exemption_reason"),
        )
        .description(Some(
            "A `standard` rate (the default) above 0 %; a `zero_rated` one at 0 %; an `exempt` one at 0 % with its `exemption_reason`.",
        ))
}

/// The shop's seller details, as a whole: a field not sent, `null` or blank is emptied.
#[derive(ToSchema)]
#[schema(example = json!({"legal_name": "Corner Books GmbH", "address_line1": "Hauptstraße 1", "city": "Berlin",
    "postal_code": "10115", "country": "DE", "vat_id": "DE123456789"}))]
pub struct SellerUpdate {
    #[schema(max_length = 200, pattern = r"^[^\x00]*$")]
    legal_name: Option<String>,
    #[schema(max_length = 200, pattern = r"^[^\x00]*$")]
    address_line1: Option<String>,
    #[schema(max_length = 200, pattern = r"^[^\x00]*$")]
    address_line2: Option<String>,
    #[schema(max_length = 100, pattern = r"^[^\x00]*$")]
    city: Option<String>,
    #[schema(max_length = 20, pattern = r"^[^\x00]*$")]
    postal_code: Option<String>,
    country: Option<CountryCode>,
    /// In the form of the `country`'s VAT ids (its prefix may be left out; spaces, dots and
    /// dashes are ignored). Needs `country`.
    #[schema(max_length = 20, pattern = r"^( *|[ .\u00a0-]*([A-Za-z0-9][ .\u00a0-]*){1,20})$")]
    vat_id: Option<String>,
    #[schema(max_length = 100, pattern = r"^[^\x00]*$")]
    registration_number: Option<String>,
    #[schema(max_length = 1000, pattern = r"^[^\x00]*$")]
    invoice_footer: Option<String>,
    // A VAT id only with its country.
    #[serde(flatten)]
    #[schema(schema_with = seller_rules)]
    rules: Value,
}

/// SellerUpdate: `vat_id` only with `country` (a blank one is none).
fn seller_rules() -> OneOfBuilder {
    OneOfBuilder::new()
        .item(
            ObjectBuilder::new().title(Some("No VAT id")).property(
                "vat_id",
                OneOfBuilder::new().item(absent()).item(given(Type::String).pattern(Some(r"^ *$"))),
            ),
        )
        .item(
            ObjectBuilder::new()
                .title(Some("A VAT id and its country"))
                .property("vat_id", given(Type::String).pattern(Some(r"[^ ]")))
                .required("vat_id")
                .property("country", given(Type::String))
                .required("country"),
        )
        .description(Some("A `vat_id` needs the `country` whose form it has."))
}
