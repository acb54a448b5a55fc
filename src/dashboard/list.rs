//! What the dashboard's lists share: pages of 25 rows, a search box, the link to the next page.

use sea_orm::Condition;
use sea_orm::sea_query::{Expr, Func, IntoColumnRef, LikeExpr, SimpleExpr};
use serde::Deserialize;

use super::{DashError, Merchant};
use crate::app::AppState;
use crate::db::{self, Page as DbPage, ShopOwned};
use crate::error::AppError;

/// Rows per page of the dashboard's lists.
pub const PER_PAGE: u64 = 25;

/// `?q=` (search) and `?after=` (the last id of the previous page).
#[derive(Deserialize, Default)]
pub struct ListQuery {
    pub q: Option<String>,
    pub after: Option<String>,
}

/// One page of a searchable list.
pub struct Found<M> {
    /// The search as it stands in the box.
    pub q: String,
    pub rows: Vec<M>,
    pub next: Option<String>,
}

/// The page of the shop's objects whose `column` contains the search (case-insensitive).
pub async fn search<E: ShopOwned>(
    state: &AppState,
    m: &Merchant,
    query: ListQuery,
    column: E::Column,
    path: &str,
) -> Result<Found<E::Model>, DashError> {
    let q = query.q.unwrap_or_default().trim().to_string();
    let mut condition = Condition::all();
    if !q.is_empty() {
        condition = condition.add(contains(column, &q));
    }
    let page = DbPage { limit: PER_PAGE, starting_after: query.after };
    let listed = db::list::<E>(&state.db, m.shop.id, &page, condition).await.map_err(AppError::from)?;
    let next = next_link(path, &[("q", &q)], listed.next_after);
    Ok(Found { q, rows: listed.rows, next })
}

/// `LIKE` over lowercased text, with the user's `%` and `_` taken literally (the same on
/// SQLite and PostgreSQL).
pub fn contains(column: impl IntoColumnRef, q: &str) -> SimpleExpr {
    let escaped = q.to_lowercase().replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_");
    Expr::expr(Func::lower(Expr::col(column))).like(LikeExpr::new(format!("%{escaped}%")).escape('\\'))
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
