//! The Russian of the settings, team and webhooks pages.

/// The texts of the settings, team and webhooks pages, by their English.
pub const RU: &[(&str, &str)] = &[];
