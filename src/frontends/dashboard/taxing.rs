//! What the product and plan forms offer to choose from: the shop's tax rates, whether the
//! price holds the tax, and the customer details the page asks for.

use super::{Merchant, Words};
use crate::db;
use crate::domain::tax::{TaxBehavior, format_percentage};
use crate::domain::vocab::VisibleField;
use crate::web::error::AppError;
use crate::web::state::AppState;

/// The choices of a product's or plan's form.
pub struct Choices {
    /// "No tax" first, then the shop's rates in use and the one chosen already.
    pub rates: Vec<(String, String)>,
    pub behaviors: Vec<(String, String)>,
    /// The customer details a page may ask for, with their labels.
    pub fields: Vec<(&'static str, &'static str)>,
}

impl Choices {
    /// The choices for a form whose tax rate is `current`; a plan's page always asks for the
    /// e-mail, so its form does not offer it (`email_offered`).
    pub async fn of(
        state: &AppState,
        m: &Merchant,
        current: Option<&str>,
        email_offered: bool,
    ) -> Result<Self, AppError> {
        let mut rates = vec![(String::new(), m.t("No tax").to_string())];
        for rate in db::tax_rates::choices(&state.db, m.shop.id, current).await? {
            rates.push((rate.id.clone(), format!("{} {} %", rate.name, format_percentage(rate.percentage))));
        }
        let behaviors = vec![
            (TaxBehavior::Inclusive.to_string(), m.t("includes the tax").to_string()),
            (TaxBehavior::Exclusive.to_string(), m.t("has the tax added").to_string()),
        ];
        let fields = VisibleField::ALL
            .iter()
            .filter(|f| email_offered || **f != VisibleField::Email)
            .map(|f| (f.as_str(), label(*f, m.words)))
            .collect();
        Ok(Choices { rates, behaviors, fields })
    }
}

/// How the hosted page labels a customer field, in `words`.
pub fn label(f: VisibleField, words: Words) -> &'static str {
    // The field's name without the customer's hint: "State or province", not "… (two letters, e.g. NY)".
    let label = crate::web::i18n::texts(words.language()).field_label(f);
    label.split(" (").next().unwrap_or(label).split(", ").next().unwrap_or(label)
}
