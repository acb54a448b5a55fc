//! The merchant's books: invoices and credit notes, numbered from their shop's series in the
//! transaction that issues them, and never changed once written.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{
    ActiveValue::NotSet, ColumnTrait, Condition, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect, Set,
};

use super::entities::document_series::{self as series, Entity as Series};
use super::entities::documents::{ActiveModel, Column, Entity, Model};
use super::{ListError, Listed, Page, ShopOwned};
use crate::domain::currency::Currency;
use crate::domain::ids::{CREDIT_NOTE, INVOICE, new_id};
use crate::domain::invoice::{Content, DocumentFilter, DocumentKind, DocumentLanguage, number_text};

impl ShopOwned for Entity {
    const SEQ: Column = Column::Seq;
    const ID: Column = Column::Id;
    const SHOP: Column = Column::ShopId;
    fn public_id(row: &Model) -> &str {
        &row.id
    }
}

/// A document about to be issued: what it is for, and what it says.
#[derive(Debug, Clone)]
pub struct NewDocument {
    pub shop_id: i64,
    pub kind: DocumentKind,
    pub test: bool,
    /// What it is issued for (`payment:pay_…`): a source has one document.
    pub source: String,
    pub payment_id: Option<String>,
    pub invoice_id: Option<String>,
    pub customer_id: Option<String>,
    pub subscription_id: Option<String>,
    pub currency: Currency,
    pub language: DocumentLanguage,
    pub issued_at: DateTime<Utc>,
    pub content: Content,
}

/// The source of a payment's invoice.
pub fn payment_source(payment_id: &str) -> String {
    format!("payment:{payment_id}")
}

/// Issues `documents` in the caller's transaction, each numbered from its shop's series of
/// its kind and mode in the order given; a source issued already is left out. Answers the
/// documents issued. Each series' numbers are taken first, which holds its row until the
/// transaction ends: a document issued at the same time elsewhere waits, and is then seen
/// here (its source is not issued twice, and the numbers taken for it are given back) or
/// takes the numbers after. A transaction that rolls back gives its numbers back, so a series
/// has no gaps. A live document is dated when its number is taken, so that dates follow
/// numbers; a test one keeps its time (its test clock's).
pub async fn issue(
    txn: &impl ConnectionTrait,
    mut documents: Vec<NewDocument>,
    now: DateTime<Utc>,
) -> Result<Vec<Model>, DbErr> {
    let key = |d: &NewDocument| (d.shop_id, d.kind, d.test);
    let mut series: Vec<(i64, DocumentKind, bool)> = documents.iter().map(key).collect();
    series.sort_by_key(|&(shop, kind, test)| (shop, kind.as_str(), test));
    series.dedup();
    let mut taken = Vec::with_capacity(series.len());
    for s in series {
        let count = documents.iter().filter(|d| key(d) == s).count() as i64;
        let (prefix, first) = take_numbers(txn, s, count, now).await?;
        taken.push((s, count, prefix, first, Utc::now()));
    }
    let mut issued = std::collections::HashSet::new();
    let sources: Vec<&str> = documents.iter().map(|d| d.source.as_str()).collect();
    for chunk in sources.chunks(500) {
        let found: Vec<String> = Entity::find()
            .select_only()
            .column(Column::Source)
            .filter(Column::Source.is_in(chunk.iter().copied()))
            .into_tuple()
            .all(txn)
            .await?;
        issued.extend(found);
    }
    documents.retain(|d| !issued.contains(&d.source));
    let mut models = Vec::with_capacity(documents.len());
    for (s, count, prefix, first, taken_at) in taken {
        let of_series: Vec<&NewDocument> = documents.iter().filter(|d| key(d) == s).collect();
        let unused = count - of_series.len() as i64;
        for (number, d) in (first..).zip(of_series) {
            let issued_at = if d.test { d.issued_at } else { taken_at.max(d.issued_at) };
            models.push(Entity::insert(row(d, &prefix, number, issued_at)?).exec_with_returning(txn).await?);
        }
        if unused > 0 {
            give_back(txn, s, unused).await?;
        }
    }
    Ok(models)
}

fn row(d: &NewDocument, prefix: &str, number: i64, issued_at: DateTime<Utc>) -> Result<ActiveModel, DbErr> {
    let totals = d.content.totals();
    let content = serde_json::to_string(&d.content).map_err(|e| DbErr::Custom(e.to_string()))?;
    let id_prefix = match d.kind {
        DocumentKind::Invoice => INVOICE,
        DocumentKind::CreditNote => CREDIT_NOTE,
    };
    Ok(ActiveModel {
        seq: NotSet,
        id: Set(new_id(id_prefix)),
        shop_id: Set(d.shop_id),
        kind: Set(d.kind),
        test: Set(d.test),
        number: Set(number),
        number_text: Set(number_text(prefix, number)),
        source: Set(d.source.clone()),
        payment_id: Set(d.payment_id.clone()),
        invoice_id: Set(d.invoice_id.clone()),
        customer_id: Set(d.customer_id.clone()),
        subscription_id: Set(d.subscription_id.clone()),
        currency: Set(d.currency),
        net_total: Set(totals.net),
        tax_total: Set(totals.tax),
        gross_total: Set(totals.gross),
        language: Set(d.language),
        issued_at: Set(super::now_millis(issued_at)),
        content: Set(content),
    })
}

/// The shop's series, each as it stands (one never used yet as it would start).
pub async fn series(db: &impl ConnectionTrait, shop_id: i64) -> Result<Vec<series::Model>, DbErr> {
    let stored = Series::find().filter(series::Column::ShopId.eq(shop_id)).all(db).await?;
    Ok(crate::domain::series::NAMES
        .iter()
        .map(|&(_, kind, test)| {
            let found = stored.iter().find(|s| (s.kind, s.test) == (kind, test)).cloned();
            found.unwrap_or_else(|| fresh(shop_id, kind, test, DateTime::<Utc>::UNIX_EPOCH))
        })
        .collect())
}

fn fresh(shop_id: i64, kind: DocumentKind, test: bool, now: DateTime<Utc>) -> series::Model {
    series::Model {
        shop_id,
        kind,
        test,
        prefix: kind.default_prefix(test).to_owned(),
        next_number: 1,
        last_issued: 0,
        updated_at: now,
    }
}

/// Changes a series' prefix or next number, with its record in the audit trail. A next
/// number at or below the last one issued is refused: the last number issued is then
/// answered as the error. A document issued at the same time waits for the change, or the
/// change for it, so the check always sees the last number issued.
pub async fn change_series(
    db: &sea_orm::DatabaseConnection,
    (shop_id, kind, test): (i64, DocumentKind, bool),
    change: &crate::domain::series::SeriesChange,
    audit: &crate::domain::audit::Entry,
    now: DateTime<Utc>,
) -> Result<Result<series::Model, i64>, DbErr> {
    let txn = super::begin(db).await?;
    let at = super::now_millis(now);
    let new: series::ActiveModel = fresh(shop_id, kind, test, at).into();
    let key = [series::Column::ShopId, series::Column::Kind, series::Column::Test];
    Series::insert(new)
        .on_conflict(OnConflict::columns(key).do_nothing().to_owned())
        .exec_without_returning(&txn)
        .await?;
    let mut update = Series::update_many().col_expr(series::Column::UpdatedAt, Expr::value(at));
    if let Some(prefix) = &change.prefix {
        update = update.col_expr(series::Column::Prefix, Expr::value(prefix.as_str()));
    }
    if let Some(next) = change.next_number {
        update =
            update.col_expr(series::Column::NextNumber, Expr::value(next)).filter(series::Column::LastIssued.lt(next));
    }
    // Held on PostgreSQL until the commit (SQLite's transaction holds the only write lock),
    // so that the record's "before" is what the change replaced.
    let mut held = Series::find_by_id((shop_id, kind, test));
    if txn.get_database_backend() == sea_orm::DatabaseBackend::Postgres {
        held = held.lock_exclusive();
    }
    let before = held.one(&txn).await?;
    let moved = update
        .filter(series::Column::ShopId.eq(shop_id))
        .filter(series::Column::Kind.eq(kind))
        .filter(series::Column::Test.eq(test))
        .exec(&txn)
        .await?;
    let after = Series::find_by_id((shop_id, kind, test)).one(&txn).await?;
    let (Some(before), Some(after)) = (before, after) else {
        return Err(DbErr::RecordNotFound(format!("series {kind} of shop {shop_id}")));
    };
    if moved.rows_affected == 0 {
        return Ok(Err(after.last_issued));
    }
    let audited = |s: &series::Model| serde_json::json!({"prefix": s.prefix, "next_number": s.next_number});
    let changed = crate::domain::audit::changes(&audited(&before), &audited(&after), &[]);
    if !changed.is_empty() {
        let name = crate::domain::series::name_of(kind, test);
        let entry = audit.clone().on("series", name.to_owned()).changing(changed);
        super::audit::record(&txn, &entry, now).await?;
    }
    txn.commit().await?;
    Ok(Ok(after))
}

/// Holds a series (`shop`, `kind`, `test`), made on first use, until the transaction ends:
/// on PostgreSQL by updating its row; SQLite's transaction holds the only write lock.
pub async fn hold(
    txn: &impl ConnectionTrait,
    (shop_id, kind, test): (i64, DocumentKind, bool),
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    let now = super::now_millis(now);
    let new: series::ActiveModel = fresh(shop_id, kind, test, now).into();
    let key = [series::Column::ShopId, series::Column::Kind, series::Column::Test];
    // One statement: the series made, or its row written (and so held) as it is.
    let touch = OnConflict::columns(key).update_column(series::Column::UpdatedAt).to_owned();
    Series::insert(new).on_conflict(touch).exec_without_returning(txn).await?;
    Ok(())
}

/// Takes `count` numbers of a series, made on first use, holding its row until the
/// transaction ends: its prefix and the first number taken. One statement (SQLite has
/// `RETURNING` since 3.35; sea-orm's insert does not use it for an upsert).
async fn take_numbers(
    txn: &impl ConnectionTrait,
    (shop_id, kind, test): (i64, DocumentKind, bool),
    count: i64,
    now: DateTime<Utc>,
) -> Result<(String, i64), DbErr> {
    use sea_orm::QueryTrait;
    let now = super::now_millis(now);
    let first_use = series::Model { next_number: 1 + count, last_issued: count, ..fresh(shop_id, kind, test, now) };
    let next = Expr::col((Series, series::Column::NextNumber));
    let take = OnConflict::columns([series::Column::ShopId, series::Column::Kind, series::Column::Test])
        .value(series::Column::NextNumber, next.clone().add(count))
        .value(series::Column::LastIssued, next.add(count - 1))
        .value(series::Column::UpdatedAt, Expr::value(now))
        .to_owned();
    let mut upsert = Series::insert(series::ActiveModel::from(first_use)).on_conflict(take).into_query();
    upsert.returning(
        sea_orm::sea_query::Query::returning().columns([series::Column::Prefix, series::Column::NextNumber]),
    );
    let taken = txn.query_one(txn.get_database_backend().build(&upsert)).await?;
    let taken = taken.ok_or_else(|| DbErr::RecordNotFound(format!("series {kind} of shop {shop_id}")))?;
    let (prefix, next): (String, i64) = (taken.try_get("", "prefix")?, taken.try_get("", "next_number")?);
    Ok((prefix, next - count))
}

/// Gives back the last `count` numbers taken of a series the transaction holds (their
/// documents were issued elsewhere meanwhile): its next number moves back, and its last
/// issued is the highest number it holds.
async fn give_back(
    txn: &impl ConnectionTrait,
    (shop_id, kind, test): (i64, DocumentKind, bool),
    count: i64,
) -> Result<(), DbErr> {
    let last: Option<i64> = Entity::find()
        .select_only()
        .column_as(Column::Number.max(), "number")
        .filter(Column::ShopId.eq(shop_id))
        .filter(Column::Kind.eq(kind))
        .filter(Column::Test.eq(test))
        .into_tuple()
        .one(txn)
        .await?
        .flatten();
    Series::update_many()
        .col_expr(series::Column::NextNumber, Expr::col(series::Column::NextNumber).sub(count))
        .col_expr(series::Column::LastIssued, Expr::value(last.unwrap_or(0)))
        .filter(series::Column::ShopId.eq(shop_id))
        .filter(series::Column::Kind.eq(kind))
        .filter(series::Column::Test.eq(test))
        .exec(txn)
        .await?;
    Ok(())
}

/// A page of the shop's documents of `kind` that pass `filter`, newest first.
pub async fn list(
    db: &impl ConnectionTrait,
    shop_id: i64,
    kind: DocumentKind,
    page: &Page,
    filter: &DocumentFilter,
) -> Result<Listed<Model>, ListError> {
    super::list_where::<Entity>(db, shop_id, page, condition(kind, filter)).await
}

/// The first `limit` documents [`list`] shows: the query, to see its plan.
pub fn list_query(shop_id: i64, kind: DocumentKind, filter: &DocumentFilter, limit: u64) -> sea_orm::Select<Entity> {
    Entity::find()
        .filter(Column::ShopId.eq(shop_id))
        .filter(condition(kind, filter))
        .order_by_desc(Column::Seq)
        .limit(limit)
}

/// The documents of `kind` that pass `filter`.
fn condition(kind: DocumentKind, filter: &DocumentFilter) -> Condition {
    let mut condition = Condition::all().add(Column::Kind.eq(kind));
    let ids = [
        (Column::CustomerId, &filter.customer),
        (Column::SubscriptionId, &filter.subscription),
        (Column::PaymentId, &filter.payment),
        (Column::InvoiceId, &filter.invoice),
    ];
    for (column, value) in ids {
        if let Some(value) = value {
            condition = condition.add(column.eq(value.as_str()));
        }
    }
    if let Some(number) = &filter.number {
        condition = condition.add(match number.parse::<i64>() {
            Ok(n) => Condition::any().add(Column::Number.eq(n)).add(Column::NumberText.eq(number.as_str())),
            Err(_) => Condition::all().add(Column::NumberText.eq(number.as_str())),
        });
    }
    if let Some(since) = filter.since {
        condition = condition.add(Column::IssuedAt.gte(since));
    }
    if let Some(until) = filter.until {
        condition = condition.add(Column::IssuedAt.lt(until));
    }
    condition
}

/// The shop's document of `kind` with this id.
pub async fn find(
    db: &impl ConnectionTrait,
    shop_id: i64,
    kind: DocumentKind,
    id: &str,
) -> Result<Option<Model>, DbErr> {
    Ok(super::find::<Entity>(db, shop_id, id).await?.filter(|d| d.kind == kind))
}

/// The invoice of a payment, if it has one: the latest issued for it (one issued again for
/// corrected details replaces the first).
pub async fn invoice_of_payment(db: &impl ConnectionTrait, payment_id: &str) -> Result<Option<Model>, DbErr> {
    let Some(first) = by_source(db, &payment_source(payment_id)).await? else { return Ok(None) };
    // An invoice issued again for corrected details stands in for the one it replaces.
    let latest = Entity::find()
        .filter(Column::ShopId.eq(first.shop_id))
        .filter(Column::Kind.eq(DocumentKind::Invoice))
        .filter(Column::PaymentId.eq(payment_id))
        .filter(Column::Source.starts_with(REISSUE))
        .order_by_desc(Column::Seq)
        .one(db)
        .await?;
    Ok(Some(latest.unwrap_or(first)))
}

/// How the source of an invoice issued again begins: `reissue:inv_…` (the invoice it replaces).
pub const REISSUE: &str = "reissue:";

/// The documents that correct an invoice (its credit notes, and the corrective invoices of
/// refunds that failed after they were credited), oldest first.
pub async fn of_invoice(db: &impl ConnectionTrait, invoice: &Model) -> Result<Vec<Model>, DbErr> {
    Entity::find()
        .filter(Column::ShopId.eq(invoice.shop_id))
        .filter(Column::InvoiceId.eq(invoice.id.as_str()))
        .order_by_asc(Column::Seq)
        .all(db)
        .await
}

/// The document issued for `source`, if any.
pub async fn by_source(db: &impl ConnectionTrait, source: &str) -> Result<Option<Model>, DbErr> {
    Entity::find().filter(Column::Source.eq(source)).one(db).await
}

/// A customer's latest `limit` invoices and credit notes, newest first (each kind read from
/// its own index).
pub async fn of_customer(
    db: &impl ConnectionTrait,
    shop_id: i64,
    customer_id: &str,
    limit: u64,
) -> Result<Vec<Model>, DbErr> {
    let filter = DocumentFilter { customer: Some(customer_id.to_owned()), ..DocumentFilter::default() };
    let mut found = Vec::new();
    for kind in [DocumentKind::Invoice, DocumentKind::CreditNote] {
        found.extend(list_query(shop_id, kind, &filter, limit).all(db).await?);
    }
    found.sort_by_key(|d| std::cmp::Reverse(d.seq));
    found.truncate(limit as usize);
    Ok(found)
}

/// A page of the shop's documents of `kind` a dashboard search finds, newest first: by their
/// number (as printed, or its digits), else those of the customers the words find (by e-mail
/// or name); all of them without words.
pub async fn search(
    db: &sea_orm::DatabaseConnection,
    shop_id: i64,
    kind: DocumentKind,
    page: &Page,
    q: &str,
) -> Result<Listed<Model>, ListError> {
    let q = q.trim();
    if q.is_empty() {
        return list(db, shop_id, kind, page, &DocumentFilter::default()).await;
    }
    let by_number = DocumentFilter { number: Some(q.to_owned()), ..DocumentFilter::default() };
    let found = list(db, shop_id, kind, page, &by_number).await?;
    if !found.rows.is_empty() || page.starting_after.is_some() && looks_like_number(q) {
        return Ok(found);
    }
    let customers_page = Page { limit: 50, starting_after: None };
    let customers = super::search::<super::entities::customers::Entity>(db, shop_id, &customers_page, q).await?;
    if customers.rows.is_empty() {
        return Ok(Listed { rows: Vec::new(), next_after: None });
    }
    let ids: Vec<String> = customers.rows.into_iter().map(|c| c.id).collect();
    let condition = Condition::all().add(Column::Kind.eq(kind)).add(Column::CustomerId.is_in(ids));
    super::list_where::<Entity>(db, shop_id, page, condition).await
}

/// Whether the words read as a document's number: digits at their end.
fn looks_like_number(q: &str) -> bool {
    q.ends_with(|c: char| c.is_ascii_digit())
}

/// Up to `limit` of the shop's documents of `kind` and mode (`test`) issued in
/// `[since, until)`, in the order they were issued, after `after` (the issue time and `seq` of
/// the last one read): a period's books, read a page at a time from their index.
pub async fn of_period(
    db: &impl ConnectionTrait,
    of: (i64, DocumentKind, bool),
    period: (DateTime<Utc>, DateTime<Utc>),
    after: Option<(DateTime<Utc>, i64)>,
    limit: u64,
) -> Result<Vec<Model>, DbErr> {
    period_query(of, period, after, limit).all(db).await
}

/// The query [`of_period`] runs, to see its plan.
pub fn period_query(
    (shop_id, kind, test): (i64, DocumentKind, bool),
    (since, until): (DateTime<Utc>, DateTime<Utc>),
    after: Option<(DateTime<Utc>, i64)>,
    limit: u64,
) -> sea_orm::Select<Entity> {
    // The page starts in the index where the last one ended (with the cursor only in the
    // `OR` below, each page would be read from the period's start).
    let from = after.map_or(since, |(at, _)| at.max(since));
    let mut query = Entity::find()
        .filter(Column::ShopId.eq(shop_id))
        .filter(Column::Kind.eq(kind))
        .filter(Column::IssuedAt.gte(from))
        .filter(Column::IssuedAt.lt(until))
        .filter(Column::Test.eq(test));
    if let Some((at, seq)) = after {
        let later = Condition::any()
            .add(Column::IssuedAt.gt(at))
            .add(Condition::all().add(Column::IssuedAt.eq(at)).add(Column::Seq.gt(seq)));
        query = query.filter(later);
    }
    query.order_by_asc(Column::IssuedAt).order_by_asc(Column::Seq).limit(limit)
}
