//! The JSON API for integrations (spec sections 4 and 5): HTTP Basic per shop, JSON bodies,
//! lists as JSON arrays paginated by `limit` and `starting_after` with a `Link` header.

use axum::Json;
use axum::Router;
use axum::http::{HeaderValue, header::LINK};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::db::{ListError, Listed, Page};
use crate::domain::Errors;
use crate::web::error::AppError;
use crate::web::state::AppState;

pub mod api_keys;
pub mod audit;
pub mod auth;
pub mod coupons;
pub mod customers;
pub mod disputes;
pub mod events;
pub mod idempotency;
pub mod invoices;
pub mod json;
pub mod payments;
pub mod plans;
pub mod processor;
pub mod products;
pub mod refunds;
pub mod revenue;
pub mod schemas;
pub mod seller;
pub mod subscriptions;
pub mod tax_rates;
pub mod test_clocks;
pub mod webhooks;

/// Every API route; POSTs honour `Idempotency-Key`.
pub fn router(state: &AppState) -> Router<AppState> {
    Router::new()
        .merge(products::router())
        .merge(plans::router())
        .merge(customers::router())
        .merge(coupons::router())
        .merge(tax_rates::router())
        .merge(invoices::router())
        .merge(revenue::router())
        .merge(seller::router())
        .merge(events::router())
        .merge(audit::router())
        .merge(payments::router())
        .merge(refunds::router())
        .merge(disputes::router())
        .merge(subscriptions::router())
        .merge(test_clocks::router())
        .merge(webhooks::router())
        .merge(processor::router())
        .merge(api_keys::router())
        .route_layer(axum::middleware::from_fn_with_state(state.clone(), idempotency::idempotent))
}

/// Default and largest page size of lists.
pub const DEFAULT_LIMIT: u64 = 100;
/// The largest page a list returns.
pub const MAX_LIMIT: u64 = 1000;

/// Reads `limit` and `starting_after` from a query string; other parameters are ignored.
pub fn page_from_query(query: Option<&str>) -> Result<Page, AppError> {
    let mut page = Page { limit: DEFAULT_LIMIT, starting_after: None };
    let mut errors = Errors::default();
    for (key, value) in url::form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
        match key.as_ref() {
            "limit" => match value.parse::<u64>() {
                Ok(n) if (1..=MAX_LIMIT).contains(&n) => page.limit = n,
                _ => errors.add("limit", format!("must be a whole number from 1 to {MAX_LIMIT}")),
            },
            "starting_after" if !value.is_empty() => page.starting_after = Some(value.into_owned()),
            _ => {}
        }
    }
    errors.into_result(|| page).map_err(AppError::from)
}

/// A list answer: the JSON array of the rows' views, and a `Link: rel="next"` header when
/// more follow.
pub fn list_response<M, T: Serialize>(
    state: &AppState,
    path: &str,
    query: Option<&str>,
    page: &Page,
    listed: Result<Listed<M>, ListError>,
    view: impl Fn(&M) -> T,
) -> Result<Response, AppError> {
    let listed = listed?;
    let items: Vec<T> = listed.rows.iter().map(view).collect();
    Ok(array_response(state, path, query, page, &items, listed.next_after.as_deref()))
}

/// The JSON array `items`, with the `Link` header to the page after `next_after` (with the
/// filters of `query`).
pub fn array_response<T: Serialize>(
    state: &AppState,
    path: &str,
    query: Option<&str>,
    page: &Page,
    items: &[T],
    next_after: Option<&str>,
) -> Response {
    let mut response = Json(items).into_response();
    if let Some(after) = next_after {
        let mut link = url::form_urlencoded::Serializer::new(String::new());
        for (key, value) in url::form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
            if key != "limit" && key != "starting_after" {
                link.append_pair(&key, &value);
            }
        }
        link.append_pair("limit", &page.limit.to_string()).append_pair("starting_after", after);
        let next = format!("<{}{path}?{}>; rel=\"next\"", state.config.base_url, link.finish());
        if let Ok(value) = HeaderValue::from_str(&next) {
            response.headers_mut().insert(LINK, value);
        }
    }
    response
}

/// An entry of the shop's audit trail: `action` by the API key the request authenticated
/// with, from `origin`.
pub fn by_key(shop_id: i64, origin: crate::domain::audit::Origin, action: &str) -> crate::domain::audit::Entry {
    use crate::domain::audit::{Actor, ActorKind, Entry};
    let actor = crate::db::audit::acting::current()
        .map(|(actor, _)| actor)
        .filter(|actor| actor.kind == ActorKind::ApiKey)
        .unwrap_or(Actor { kind: ActorKind::ApiKey, id: None, label: None, role: None });
    Entry::new(shop_id, actor, origin, action)
}
