//! Storage: the connection (SQLite or PostgreSQL) and the queries of each resource.
//! Every query of a shop's data is filtered by that shop.

use crate::domain::ids::plausible;
use sea_orm::sea_query::{Alias, Expr, Func, IntoColumnRef, Query, SimpleExpr};
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DatabaseBackend, DatabaseConnection, DbErr, EntityTrait, IdenStatic,
    QueryFilter, QueryOrder, QuerySelect, Select,
};

pub use batch::Batch;
use pool::driver_error;
pub use pool::{
    PING_AFTER_IDLE, ROW_BUFFER, WAL_CHECKPOINT_PAGES, close, connect, connect_logged, migration_lock, optimize,
    pool_use,
};
pub use txn::{Txn, begin, insert_then, insert_together};

pub mod api_keys;
pub mod audit;
pub mod backup;
mod batch;
pub mod checkout_attempts;
pub mod coupons;
pub mod customers;
pub mod disputes;
pub mod documents;
pub mod entities;
pub mod events;
pub mod idempotency;
pub mod jobs;
pub mod mails;
pub mod mrr;
mod outbox;
pub mod payments;
pub mod plans;
mod pool;
pub mod portal;
pub mod processors;
pub mod products;
pub mod refunds;
pub mod schema;
pub mod search_index;
pub mod sellers;
pub mod sessions;
pub mod shops;
mod sqlite_functions;
pub mod subscriptions;
pub mod summaries;
pub mod tax_rates;
pub mod test_clocks;
pub mod throttle;
pub mod two_step;
mod txn;
pub mod users;
pub mod webhooks;

/// A table of a shop's objects: a public `id`, the owning `shop_id`, and `seq`, the
/// insertion order that lists walk newest first.
pub trait ShopOwned: EntityTrait {
    /// The insertion-order column.
    const SEQ: Self::Column;
    /// The public id column.
    const ID: Self::Column;
    /// The owning shop's column.
    const SHOP: Self::Column;
    /// The public id of a row.
    fn public_id(row: &Self::Model) -> &str;
}

/// Objects the dashboard finds by a name (a product's name, a plan's title, an e-mail).
pub trait Searchable: ShopOwned {
    /// The columns a search looks in.
    const NAMES: &'static [Self::Column];
    /// Their word index (see [`holding`]).
    const SEARCH: &'static str;
}

/// Objects a merchant can archive (products, plans): their links then take no payments.
pub trait Archivable: ShopOwned {
    const ARCHIVED_AT: Self::Column;
    const UPDATED_AT: Self::Column;
}

/// Archives (`Some` moment) or brings back (`None`) one of the shop's `E`, if it is not so
/// already; whether this changed it.
pub async fn set_archived<E: Archivable>(
    db: &impl ConnectionTrait,
    shop_id: i64,
    id: &str,
    archived_at: Option<chrono::DateTime<chrono::Utc>>,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<bool, DbErr> {
    let result = E::update_many()
        .col_expr(E::ARCHIVED_AT, Expr::value(archived_at.map(now_millis)))
        .col_expr(E::UPDATED_AT, Expr::value(now_millis(now)))
        .filter(E::SHOP.eq(shop_id))
        .filter(E::ID.eq(id))
        .filter(match archived_at {
            Some(_) => E::ARCHIVED_AT.is_null(),
            None => E::ARCHIVED_AT.is_not_null(),
        })
        .exec(db)
        .await?;
    Ok(result.rows_affected == 1)
}

/// Archives one of the shop's `E` in its own transaction, with the audit record `action` on
/// the object `(kind, id)` when this changed it; whether it did (an archived one stays so).
pub async fn archive_recorded<E: Archivable>(
    db: &DatabaseConnection,
    (shop_id, id): (i64, &str),
    (action, kind): (&str, &str),
    now: chrono::DateTime<chrono::Utc>,
) -> Result<bool, DbErr> {
    use crate::domain::audit::Change;
    let txn = begin(db).await?;
    let changed = set_archived::<E>(&txn, shop_id, id, Some(now), now).await?;
    if changed {
        let change = vec![Change::of("archived_at", None::<String>, Change::moment(now))];
        audit::record_acting(&txn, shop_id, action, (kind, id), change, now).await?;
    }
    txn.commit().await?;
    Ok(changed)
}

/// One page of a list: at most `limit` rows older than `starting_after`.
#[derive(Debug, Clone)]
pub struct Page {
    pub limit: u64,
    pub starting_after: Option<String>,
}

/// What a list found: the rows, and the id to continue after when more follow them.
pub struct Listed<M> {
    pub rows: Vec<M>,
    pub next_after: Option<String>,
}

/// Errors of a list query.
#[derive(Debug, thiserror::Error)]
pub enum ListError {
    /// `starting_after` names no object of this shop.
    #[error("starting_after is not an id of this list")]
    UnknownCursor,
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// The shop's object with this id, if it is the shop's.
pub async fn find<E: ShopOwned>(db: &impl ConnectionTrait, shop_id: i64, id: &str) -> Result<Option<E::Model>, DbErr> {
    if !plausible(id) {
        return Ok(None);
    }
    owned::<E>(shop_id).filter(E::ID.eq(id)).one(db).await
}

/// The object with this id, whoever's it is: for the public pages and the engine, which
/// start from an id rather than a shop.
pub async fn find_public<E: ShopOwned>(db: &impl ConnectionTrait, id: &str) -> Result<Option<E::Model>, DbErr> {
    if !plausible(id) {
        return Ok(None);
    }
    E::find().filter(E::ID.eq(id)).one(db).await
}

/// Runs `update` (meant for one row) and answers that row as saved, in one statement
/// (`RETURNING`); `None` when no row matched its filter.
pub async fn update_returning<E: EntityTrait>(
    db: &impl ConnectionTrait,
    update: sea_orm::UpdateMany<E>,
) -> Result<Option<E::Model>, DbErr> {
    use sea_orm::QueryTrait;
    let mut update = update.into_query();
    let statement = db.get_database_backend().build(update.returning_all());
    E::find().from_raw_sql(statement).one(db).await
}

/// The shop's objects with these ids, in one query, by id.
pub async fn by_ids<E: ShopOwned>(
    db: &impl ConnectionTrait,
    shop_id: i64,
    ids: &[&str],
) -> Result<std::collections::HashMap<String, E::Model>, DbErr> {
    let Some(query) = with_ids::<E>(shop_id, ids) else { return Ok(Default::default()) };
    let rows = query.all(db).await?;
    Ok(rows.into_iter().map(|row| (E::public_id(&row).to_string(), row)).collect())
}

/// `columns` of the shop's objects with these ids, in one query, each row as the tuple `T`
/// (the id first, as the caller lists it): for a page that names what it shows, without
/// reading every column of it.
pub async fn columns_by_ids<E: ShopOwned, T: sea_orm::TryGetableMany>(
    db: &impl ConnectionTrait,
    shop_id: i64,
    ids: &[&str],
    columns: impl IntoIterator<Item = E::Column>,
) -> Result<Vec<T>, DbErr> {
    let Some(query) = with_ids::<E>(shop_id, ids) else { return Ok(Vec::new()) };
    query.select_only().columns(columns).into_tuple().all(db).await
}

/// The query of the shop's objects with these ids; `None` when none could be one.
fn with_ids<E: ShopOwned>(shop_id: i64, ids: &[&str]) -> Option<sea_orm::Select<E>> {
    let mut ids: Vec<&str> = ids.iter().copied().filter(|id| plausible(id)).collect();
    ids.sort_unstable();
    ids.dedup();
    if ids.is_empty() {
        return None;
    }
    // The shop is tested as an expression no index holds: PostgreSQL's plan of this prepared
    // statement, made while the table was small, otherwise walked the shop's rows by its
    // index for good (1.2 s a batch of the billing engine's events at 100,000 payments).
    Some(E::find().filter(E::ID.is_in(ids.iter().copied())).filter(Expr::col(E::SHOP).add(0).eq(shop_id)))
}

/// A page of the shop's objects, newest first.
pub async fn list<E: ShopOwned>(
    db: &impl ConnectionTrait,
    shop_id: i64,
    page: &Page,
) -> Result<Listed<E::Model>, ListError> {
    list_where::<E>(db, shop_id, page, Condition::all()).await
}

/// A page of the shop's objects where each word of `q` is within one of `E::NAMES`
/// (case-insensitive; all of them for an empty `q`), newest first.
pub async fn search<E: Searchable>(
    db: &DatabaseConnection,
    shop_id: i64,
    page: &Page,
    q: &str,
) -> Result<Listed<E::Model>, ListError> {
    search_where::<E>(db, shop_id, page, q, Condition::all()).await
}

/// Like [`search`], among the archived objects (`archived`) or the others.
pub async fn search_archived<E: Searchable + Archivable>(
    db: &DatabaseConnection,
    shop_id: i64,
    page: &Page,
    q: &str,
    archived: bool,
) -> Result<Listed<E::Model>, ListError> {
    let column = Expr::col(E::ARCHIVED_AT);
    let condition = Condition::all().add(if archived { column.is_not_null() } else { column.is_null() });
    search_where::<E>(db, shop_id, page, q, condition).await
}

/// Like [`search`], among the objects that also meet `condition`.
async fn search_where<E: Searchable>(
    db: &DatabaseConnection,
    shop_id: i64,
    page: &Page,
    q: &str,
    condition: Condition,
) -> Result<Listed<E::Model>, ListError> {
    if !words(q).is_empty() {
        search_index::before_search(db).await;
    }
    let backend = db.get_database_backend();
    list_in_order::<E>(db, shop_id, page, condition.add(found::<E>(backend, q)), found_order::<E>(backend, q)).await
}

/// The first `limit` of the shop's objects [`search`] finds: the query, to see its plan.
pub fn search_query<E: Searchable>(backend: DatabaseBackend, shop_id: i64, q: &str, limit: u64) -> Select<E> {
    owned::<E>(shop_id).filter(found::<E>(backend, q)).order_by_desc(found_order::<E>(backend, q)).limit(limit)
}

/// The order of a search's objects, newest first. PostgreSQL cannot tell how few objects a
/// word finds, and would rather walk every object newest first until a page of them turns up
/// (all of them, for a word one object has); ordered by an expression no index holds
/// (`seq + 0`), it reads what the word index finds, and sorts that.
fn found_order<E: Searchable>(backend: DatabaseBackend, q: &str) -> SimpleExpr {
    if backend == DatabaseBackend::Postgres && !words(q).is_empty() {
        return Expr::cust(format!("\"{}\" + 0", E::SEQ.as_str()));
    }
    Expr::col(E::SEQ).into()
}

/// The objects where each word of `q` starts a word of one of `E::NAMES`.
fn found<E: Searchable>(backend: DatabaseBackend, q: &str) -> Condition {
    let names: Vec<&str> = E::NAMES.iter().map(|c| c.as_str()).collect();
    holding(backend, (E::SEQ, E::SEARCH, &names), q)
}

/// Where a search looks: a table's `seq` column, its word index (on SQLite, the FTS5 table of
/// that name), and the text columns that index holds.
pub(crate) type Searched<'a, C> = (C, &'a str, &'a [&'a str]);

/// What separates the words of a search besides spaces (as the indexes split them: see
/// [`migration::SEPARATORS`]).
const SEPARATORS: &str = "!\"#$%&'()*,/:;<=>?[\\]^`{|}~";

/// The rows where each word of `q` starts a word of one of the `searched` columns, in any
/// case and with `ё` read as `е` (all rows when `q` has no word), read from the table's word
/// index: SQLite's FTS5 table, PostgreSQL's GIN index of [`migration::search_words`].
pub(crate) fn holding<C: IntoColumnRef>(backend: DatabaseBackend, searched: Searched<'_, C>, q: &str) -> Condition {
    let (seq, index, columns) = searched;
    let words = words(q);
    if words.is_empty() {
        return Condition::all();
    }
    let found = if backend == DatabaseBackend::Sqlite {
        Expr::col(seq).in_subquery(fts_rows(index, &words))
    } else {
        // Each word a prefix of a lexeme taken as it is (quoted: no operator is read in it).
        let query: Vec<String> =
            words.iter().map(|w| format!("'{}':*", w.replace('\\', "\\\\").replace('\'', "''"))).collect();
        let document = migration::search_words(columns);
        Expr::cust_with_values(format!("{document} @@ CAST($1 AS tsquery)"), [query.join(" & ")])
    };
    Condition::all().add(found)
}

/// On SQLite, the `seq` of the rows of the FTS5 table `index` where each word of `q` starts a
/// word ([`holding`] without the table itself); `None` elsewhere, or for no words.
pub(crate) fn fts_holding(
    backend: DatabaseBackend,
    index: &str,
    q: &str,
) -> Option<sea_orm::sea_query::SelectStatement> {
    let words = words(q);
    (backend == DatabaseBackend::Sqlite && !words.is_empty()).then(|| fts_rows(index, &words))
}

/// The rowids of the FTS5 table `index` that hold every word: each a prefix query, side by
/// side.
fn fts_rows(index: &str, words: &[String]) -> sea_orm::sea_query::SelectStatement {
    let query: Vec<String> = words.iter().map(|w| format!("\"{}\"*", w.replace('"', "\"\""))).collect();
    Query::select()
        .expr(Expr::cust("rowid"))
        .from(Alias::new(index))
        .and_where(Expr::cust_with_values(format!("\"{index}\" MATCH ?"), [query.join(" ")]))
        .to_owned()
}

/// The words of a search, as searches compare them.
fn words(q: &str) -> Vec<String> {
    fold(q)
        .split(|c: char| c.is_whitespace() || SEPARATORS.contains(c))
        .filter(|w| !w.is_empty())
        .map(String::from)
        .collect()
}

/// Text as searches compare it: lowercase, with `ё` as `е`.
fn fold(text: &str) -> String {
    text.to_lowercase().replace('ё', "е")
}

/// A page of the shop's objects that meet `condition`, newest first.
async fn list_where<E: ShopOwned>(
    db: &impl ConnectionTrait,
    shop_id: i64,
    page: &Page,
    condition: Condition,
) -> Result<Listed<E::Model>, ListError> {
    list_in_order::<E>(db, shop_id, page, condition, Expr::col(E::SEQ).into()).await
}

/// Like [`list_where`], ordered by `order` (`seq`, or an expression of it that keeps its order).
async fn list_in_order<E: ShopOwned>(
    db: &impl ConnectionTrait,
    shop_id: i64,
    page: &Page,
    condition: Condition,
    order: SimpleExpr,
) -> Result<Listed<E::Model>, ListError> {
    let mut query = owned::<E>(shop_id).filter(condition);
    if let Some(after) = &page.starting_after {
        if !plausible(after) {
            return Err(ListError::UnknownCursor);
        }
        let seq: Option<i64> = owned::<E>(shop_id)
            .select_only()
            .column(E::SEQ)
            .filter(E::ID.eq(after.as_str()))
            .into_tuple()
            .one(db)
            .await?;
        query = query.filter(E::SEQ.lt(seq.ok_or(ListError::UnknownCursor)?));
    }
    let mut rows = query.order_by_desc(order).limit(page.limit + 1).all(db).await?;
    let has_more = rows.len() as u64 > page.limit;
    rows.truncate(page.limit as usize);
    let next_after = rows.last().filter(|_| has_more).map(|r| E::public_id(r).to_string());
    Ok(Listed { rows, next_after })
}

/// The sum of `column` over a group, as a 64-bit integer on both databases (PostgreSQL's
/// `sum` of `bigint` is `numeric`).
fn summed(column: impl IntoColumnRef) -> SimpleExpr {
    Expr::expr(Func::sum(Expr::col(column))).cast_as(sea_orm::sea_query::Alias::new("bigint"))
}

fn owned<E: ShopOwned>(shop_id: i64) -> Select<E> {
    E::find().filter(E::SHOP.eq(shop_id))
}

/// Now, cut to the milliseconds that the API shows, so stored and returned times agree.
pub fn now_millis(now: chrono::DateTime<chrono::Utc>) -> chrono::DateTime<chrono::Utc> {
    use chrono::{DurationRound, TimeDelta};
    now.duration_trunc(TimeDelta::milliseconds(1)).unwrap_or(now)
}
