//! The Russian of the overview, payments and refunds pages.

/// The texts of the overview, payments and refunds pages, by their English.
pub const RU: &[(&str, &str)] = &[];
