//! The payment form as a template sees it: the asked-for fields with their labels, values
//! and errors, the card fields (never with the number or CVC filled back in), the CSRF token.

use std::collections::HashMap;

use crate::domain::Errors;
use crate::domain::vocab::VisibleField;
use crate::i18n::Texts;

/// One customer-data input.
pub struct FieldView {
    pub name: &'static str,
    pub label: &'static str,
    pub kind: &'static str,
    pub autocomplete: &'static str,
    pub value: String,
    pub error: Option<String>,
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
    /// The acquirer's reason when the last attempt was declined or failed.
    pub failure: Option<(String, String)>,
    pub submit: String,
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
        let error = |name: &str| errors.get(name).map(|m| t.message(&m[0]));
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
                        value: value(f.as_str()),
                        error: error(f.as_str()),
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
            failure: None,
            submit,
        }
    }
}

fn input_kind(field: VisibleField) -> (&'static str, &'static str) {
    match field {
        VisibleField::FirstName => ("text", "given-name"),
        VisibleField::LastName => ("text", "family-name"),
        VisibleField::Country => ("text", "country"),
        VisibleField::State => ("text", "address-level1"),
        VisibleField::City => ("text", "address-level2"),
        VisibleField::Address => ("text", "street-address"),
        VisibleField::Zip => ("text", "postal-code"),
        VisibleField::Phone => ("tel", "tel"),
        VisibleField::BirthDate => ("date", "bday"),
        VisibleField::Email => ("email", "email"),
        VisibleField::TaxpayerId => ("text", "off"),
    }
}

/// Reads an `application/x-www-form-urlencoded` body; a repeated name keeps its last value.
pub fn parse_form(body: &[u8]) -> HashMap<String, String> {
    url::form_urlencoded::parse(body).into_owned().collect()
}
