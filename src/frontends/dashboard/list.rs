//! What the dashboard's lists share: pages of 25 rows, a search box, the link to the next page.

use serde::Deserialize;

use super::Merchant;
use crate::db::{self, Archivable, Listed, Page as DbPage, Searchable};
use crate::web::error::AppError;
use crate::web::state::AppState;

/// Rows per page of the dashboard's lists.
pub const PER_PAGE: u64 = 25;

/// `?q=` (search), `?after=` (the last id of the previous page), and `?archived=yes` (the
/// archived products or plans instead of the others).
#[derive(Deserialize, Default)]
pub struct ListQuery {
    pub q: Option<String>,
    pub after: Option<String>,
    pub archived: Option<String>,
}

impl ListQuery {
    /// Whether the archived ones are asked for.
    pub fn archived(&self) -> bool {
        self.archived.as_deref() == Some("yes")
    }

    /// The search as typed (trimmed) and the page asked for.
    fn search(&self) -> (String, DbPage) {
        let q = self.q.as_deref().unwrap_or_default().trim().to_string();
        (q, DbPage { limit: PER_PAGE, starting_after: self.after.clone() })
    }
}

/// One page of a searchable list.
pub struct Found<M> {
    /// The search as it stands in the box.
    pub q: String,
    pub rows: Vec<M>,
    pub next: Option<String>,
}

/// The page of the shop's objects whose name contains the search (case-insensitive).
pub async fn search<E: Searchable>(
    state: &AppState,
    m: &Merchant,
    query: ListQuery,
    path: &str,
) -> Result<Found<E::Model>, AppError> {
    let (q, page) = query.search();
    let listed = db::search::<E>(&state.db, m.shop.id, &page, &q).await?;
    Ok(found(path, q, query.archived(), listed))
}

/// Like [`search`], among the archived objects when the list asks for them (`?archived=yes`),
/// else among the others.
pub async fn search_archivable<E: Searchable + Archivable>(
    state: &AppState,
    m: &Merchant,
    query: ListQuery,
    path: &str,
) -> Result<Found<E::Model>, AppError> {
    let (q, page) = query.search();
    let listed = db::search_archived::<E>(&state.db, m.shop.id, &page, &q, query.archived()).await?;
    Ok(found(path, q, query.archived(), listed))
}

/// The page found for search `q`; its next link keeps the search and `archived`.
fn found<M>(path: &str, q: String, archived: bool, listed: Listed<M>) -> Found<M> {
    let next = next_link(path, &[("q", &q), ("archived", if archived { "yes" } else { "" })], listed.next_after);
    Found { q, rows: listed.rows, next }
}

/// The link to the next page of a list, keeping its other parameters.
pub fn next_link(path: &str, params: &[(&str, &str)], next_after: Option<String>) -> Option<String> {
    next_after.map(|after| {
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        for (k, v) in params.iter().filter(|(_, v)| !v.is_empty()) {
            query.append_pair(k, v);
        }
        query.append_pair("after", &after);
        format!("{path}?{}", query.finish())
    })
}
