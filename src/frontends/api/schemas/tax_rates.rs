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
    /// 0 to 100, with at most four decimals: a JSON number or its digits in a string.
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
const PERCENT_DIGITS: &str = r"^\s*0*(100(\.0{1,4})?|[0-9]{1,2}(\.[0-9]{1,4})?)\s*$";

/// The same, above 0.
const POSITIVE_DIGITS: &str = r"^\s*0*(100(\.0{1,4})?|[1-9][0-9]?(\.[0-9]{1,4})?|0\.([1-9][0-9]{0,3}|0[1-9][0-9]{0,2}|00[1-9][0-9]?|000[1-9]))\s*$";

fn any_percentage() -> OneOfBuilder {
    OneOfBuilder::new()
        .item(
            ObjectBuilder::new()
                .schema_type(Type::Number)
                .minimum(Some(0))
                .maximum(Some(100))
                .multiple_of(Some(0.0001)),
        )
        .item(ObjectBuilder::new().schema_type(Type::String).pattern(Some(PERCENT_DIGITS)))
}

fn positive_percentage() -> OneOfBuilder {
    OneOfBuilder::new()
        .item(
            ObjectBuilder::new()
                .schema_type(Type::Number)
                .exclusive_minimum(Some(0))
                .maximum(Some(100))
                .multiple_of(Some(0.0001)),
        )
        .item(ObjectBuilder::new().schema_type(Type::String).pattern(Some(POSITIVE_DIGITS)))
}

/// Zero, or not sent.
fn zero_percentage() -> OneOfBuilder {
    OneOfBuilder::new()
        .item(ObjectBuilder::new().schema_type(Type::Null))
        .item(ObjectBuilder::new().schema_type(Type::Number).minimum(Some(0)).maximum(Some(0)))
        .item(ObjectBuilder::new().schema_type(Type::String).pattern(Some(r"^\s*0+(\.0{1,4})?\s*$")))
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
