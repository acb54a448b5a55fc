//! The payment form as a template sees it: the asked-for fields with their labels, values
//! and errors, the card fields (never with the number or CVC filled back in), the CSRF token.

use std::collections::HashMap;

use crate::domain::Errors;
use crate::domain::vocab::VisibleField;
use crate::web::i18n::Texts;

/// One customer-data input.
pub struct FieldView {
    pub name: &'static str,
    pub label: &'static str,
    pub kind: &'static str,
    pub autocomplete: &'static str,
    pub value: String,
    pub error: Option<String>,
    /// A list to choose from (countries, by name in the page's language) instead of text.
    pub options: Option<&'static [(&'static str, String)]>,
    /// Asked only when the chosen country has states (the US and Canada): shown then (CSS,
    /// no script), and required by the server only then.
    pub for_states: bool,
    /// May be left empty (a company, a VAT id).
    pub optional: bool,
}

/// A plan page's coupon form: the code typed, why it was refused, or what it takes off
/// (then the payment form carries the code).
#[derive(Clone, Default)]
pub struct CouponView {
    pub code: String,
    pub error: Option<String>,
    pub note: Option<String>,
}

/// Everything the form partial (`pay/form.html`) shows.
pub struct FormView {
    pub action: String,
    pub csrf: String,
    /// This rendering's checkout attempt: the first submit of it pays, repeats do not.
    pub attempt: String,
    pub fields: Vec<FieldView>,
    pub holder: String,
    pub month: String,
    pub year: String,
    pub number_error: Option<String>,
    pub expiry_error: Option<String>,
    pub cvc_error: Option<String>,
    pub holder_error: Option<String>,
    pub has_errors: bool,
    /// The card is typed here (else on the processor's page, after this form).
    pub card: bool,
    /// The acquirer's reason when the last attempt was declined or failed.
    pub failure: Option<(String, String)>,
    pub submit: String,
    /// The coupon form, on a plan's page of a shop with coupons to redeem.
    pub coupon: Option<CouponView>,
}

impl FormView {
    /// The form asking for `fields` and a card, refilled from `sent` with `errors` shown.
    pub fn new(
        t: &'static Texts,
        action: String,
        csrf: String,
        fields: &[VisibleField],
        sent: &HashMap<String, String>,
        errors: &Errors,
        submit: String,
    ) -> Self {
        let value = |name: &str| sent.get(name).map(|v| v.trim().to_string()).unwrap_or_default();
        let error = |name: &str| errors.get(name).map(|m| t.problem(name, &m[0]));
        let country_asked = fields.contains(&VisibleField::Country);
        // The state comes right after the country it depends on.
        let mut fields = fields.to_vec();
        if country_asked && let Some(at) = fields.iter().position(|f| *f == VisibleField::State) {
            fields.remove(at);
            let country = fields.iter().position(|f| *f == VisibleField::Country).unwrap_or(0);
            fields.insert(country + 1, VisibleField::State);
        }
        FormView {
            action,
            csrf,
            attempt: crate::domain::ids::random_hex(16),
            fields: fields
                .iter()
                .map(|&f| {
                    let (kind, autocomplete) = input_kind(f);
                    FieldView {
                        name: f.as_str(),
                        label: t.field_label(f),
                        kind,
                        autocomplete,
                        value: match f {
                            VisibleField::Country => value(f.as_str()).to_ascii_uppercase(),
                            _ => value(f.as_str()),
                        },
                        error: error(f.as_str()),
                        options: (f == VisibleField::Country).then(|| crate::web::locale::countries(t.language)),
                        for_states: f == VisibleField::State && country_asked,
                        optional: f.optional(),
                    }
                })
                .collect(),
            holder: value("card_holder"),
            month: value("card_exp_month"),
            year: value("card_exp_year"),
            number_error: error("card_number"),
            expiry_error: error("card_expiry"),
            cvc_error: error("card_cvc"),
            holder_error: error("card_holder"),
            has_errors: !errors.is_empty(),
            card: true,
            failure: None,
            submit,
            coupon: None,
        }
    }
}

fn input_kind(field: VisibleField) -> (&'static str, &'static str) {
    match field {
        VisibleField::FirstName => ("text", "given-name"),
        VisibleField::LastName => ("text", "family-name"),
        VisibleField::Country => ("select", "country"),
        VisibleField::State => ("text", "address-level1"),
        VisibleField::City => ("text", "address-level2"),
        VisibleField::Address => ("text", "street-address"),
        VisibleField::Zip => ("text", "postal-code"),
        VisibleField::Phone => ("tel", "tel"),
        VisibleField::BirthDate => ("date", "bday"),
        VisibleField::Email => ("email", "email"),
        VisibleField::TaxpayerId | VisibleField::VatId => ("text", "off"),
        VisibleField::Company => ("text", "organization"),
    }
}

/// Reads an `application/x-www-form-urlencoded` body; a repeated name keeps its last value.
pub fn parse_form(body: &[u8]) -> HashMap<String, String> {
    url::form_urlencoded::parse(body).into_owned().collect()
}
