//! The Russian of what every page shares: the frame, the forms' parts, signing in, errors.

/// The texts of what every page shares: the frame, the forms' parts, signing in, errors, by their English.
pub const RU: &[(&str, &str)] = &[];

/// Values known only when a page runs, translated with `t_data`: statuses, states, the
/// titles and messages of error pages, the names of fields in a refused form's summary.
pub const DATA: &[(&str, &str)] = &[
    ("{} payment|{} payments", "{} платёж|{} платежа|{} платежей"),
];

/// The messages of the API's rules, as a refused form shows them beside its fields (`{}` stands
/// for the number in a message such as `is too long (maximum is {} characters)`).
pub const RULES: &[(&str, &str)] = &[];
