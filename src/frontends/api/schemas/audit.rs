//! The audit trail: what `GET /audit_events` accepts.

use super::*;

/// `GET /audit_events`: each filter given narrows the list; the `Link` to the next page keeps
/// them. A `+` in a time must be sent percent-encoded (`%2B`).
#[derive(serde::Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct AuditFilterParams {
    /// Page size, 1 to 1000.
    #[param(minimum = 1, maximum = 1000, default = 100)]
    limit: Option<u64>,
    /// The last id of the previous page (an id of this list, else 404); empty means the first.
    #[param(max_length = 64, pattern = r"^[A-Za-z0-9_]{0,64}$")]
    starting_after: Option<String>,
    /// A user's id (`usr_…`), or a kind of actor: `api_key`, `operator`, `subscriber`,
    /// `processor`, `system`.
    #[param(max_length = 200)]
    actor: Option<String>,
    /// One action (`user.logged_in`), or every action on a kind of object (`user.`).
    #[param(max_length = 200)]
    action: Option<String>,
    /// Records about this object.
    #[param(max_length = 200)]
    object_id: Option<String>,
    /// At or after this moment.
    #[serde(rename = "created[gte]")]
    #[param(value_type = Option<FilterTime>, inline)]
    created_gte: Option<String>,
    /// After this moment.
    #[serde(rename = "created[gt]")]
    #[param(value_type = Option<FilterTime>, inline)]
    created_gt: Option<String>,
    /// At or before this moment.
    #[serde(rename = "created[lte]")]
    #[param(value_type = Option<FilterTime>, inline)]
    created_lte: Option<String>,
    /// Before this moment.
    #[serde(rename = "created[lt]")]
    #[param(value_type = Option<FilterTime>, inline)]
    created_lt: Option<String>,
}
