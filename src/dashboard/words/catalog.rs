//! The Russian of the products and plans pages.

/// The texts of the products and plans pages, by their English.
pub const RU: &[(&str, &str)] = &[];
