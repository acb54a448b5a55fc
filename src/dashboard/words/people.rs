//! The Russian of the customers and subscriptions pages.

/// The texts of the customers and subscriptions pages, by their English.
pub const RU: &[(&str, &str)] = &[];
