//! Events: what `GET /events` accepts.

use super::*;

/// `GET /events`: each filter given narrows the list; the `Link` to the next page keeps them.
/// A `+` in a time must be sent percent-encoded (`%2B`): a bare `+` reads as a space.
#[derive(serde::Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct EventFilterParams {
    /// Page size, 1 to 1000.
    #[param(minimum = 1, maximum = 1000, default = 100)]
    limit: Option<u64>,
    /// The last id of the previous page (an id of this list, else 404); empty means the first.
    #[param(max_length = 64, pattern = r"^[A-Za-z0-9_]{0,64}$")]
    starting_after: Option<String>,
    /// One event type, or every type of an object (`payment.*`).
    #[serde(rename = "type")]
    #[param(value_type = Option<EventTypeFilter>, inline)]
    kind: Option<String>,
    /// Events about this object (`pay_…`, `sbs_…`, ...); empty means any.
    object_id: Option<String>,
    /// Created at or after this moment.
    #[serde(rename = "created[gte]")]
    #[param(value_type = Option<FilterTime>, inline)]
    created_gte: Option<String>,
    /// Created after this moment.
    #[serde(rename = "created[gt]")]
    #[param(value_type = Option<FilterTime>, inline)]
    created_gt: Option<String>,
    /// Created at or before this moment.
    #[serde(rename = "created[lte]")]
    #[param(value_type = Option<FilterTime>, inline)]
    created_lte: Option<String>,
    /// Created before this moment.
    #[serde(rename = "created[lt]")]
    #[param(value_type = Option<FilterTime>, inline)]
    created_lt: Option<String>,
}
