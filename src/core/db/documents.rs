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
/// documents issued. The numbers are taken by an update of the series' row, held until the
/// transaction ends: a document issued at the same time elsewhere waits and takes the numbers
/// after, and a transaction that rolls back gives its numbers back, so a series has no gaps.
pub async fn issue(
    txn: &impl ConnectionTrait,
    mut documents: Vec<NewDocument>,
    now: DateTime<Utc>,
) -> Result<Vec<Model>, DbErr> {
    let sources: Vec<&str> = documents.iter().map(|d| d.source.as_str()).collect();
    let mut issued = Vec::new();
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
    let mut rows = Vec::with_capacity(documents.len());
    let mut series: Vec<(i64, DocumentKind, bool)> = documents.iter().map(|d| (d.shop_id, d.kind, d.test)).collect();
    series.sort_by_key(|&(shop, kind, test)| (shop, kind.as_str(), test));
    series.dedup();
    for (shop_id, kind, test) in series {
        let of_series: Vec<&NewDocument> =
            documents.iter().filter(|d| (d.shop_id, d.kind, d.test) == (shop_id, kind, test)).collect();
        let (prefix, first) = take_numbers(txn, (shop_id, kind, test), of_series.len() as i64, now).await?;
        for (number, d) in (first..).zip(of_series) {
            rows.push(row(d, &prefix, number)?);
        }
    }
    let mut models = Vec::with_capacity(rows.len());
    for row in rows {
        models.push(Entity::insert(row).exec_with_returning(txn).await?);
    }
    Ok(models)
}

fn row(d: &NewDocument, prefix: &str, number: i64) -> Result<ActiveModel, DbErr> {
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
        issued_at: Set(super::now_millis(d.issued_at)),
        content: Set(content),
    })
}

/// Takes `count` numbers of a series (`shop`, `kind`, `test`), made on first use: its prefix
/// and the first number taken.
async fn take_numbers(
    txn: &impl ConnectionTrait,
    (shop_id, kind, test): (i64, DocumentKind, bool),
    count: i64,
    now: DateTime<Utc>,
) -> Result<(String, i64), DbErr> {
    let now = super::now_millis(now);
    let new = series::ActiveModel {
        shop_id: Set(shop_id),
        kind: Set(kind),
        test: Set(test),
        prefix: Set(kind.default_prefix(test).to_owned()),
        next_number: Set(1),
        last_issued: Set(0),
        updated_at: Set(now),
    };
    let key = [series::Column::ShopId, series::Column::Kind, series::Column::Test];
    Series::insert(new)
        .on_conflict(OnConflict::columns(key).do_nothing().to_owned())
        .exec_without_returning(txn)
        .await?;
    let next = Expr::col(series::Column::NextNumber);
    Series::update_many()
        .col_expr(series::Column::NextNumber, next.clone().add(count))
        .col_expr(series::Column::LastIssued, next.add(count - 1))
        .col_expr(series::Column::UpdatedAt, Expr::value(now))
        .filter(series::Column::ShopId.eq(shop_id))
        .filter(series::Column::Kind.eq(kind))
        .filter(series::Column::Test.eq(test))
        .exec(txn)
        .await?;
    // The row is this transaction's until it ends (SQLite's holds the only write lock).
    let taken = Series::find_by_id((shop_id, kind, test)).one(txn).await?;
    let taken = taken.ok_or_else(|| DbErr::RecordNotFound(format!("series {kind} of shop {shop_id}")))?;
    Ok((taken.prefix, taken.next_number - count))
}

/// A page of the shop's documents of `kind` that pass `filter`, newest first.
pub async fn list(
    db: &impl ConnectionTrait,
    shop_id: i64,
    kind: DocumentKind,
    page: &Page,
    filter: &DocumentFilter,
) -> Result<Listed<Model>, ListError> {
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
    super::list_where::<Entity>(db, shop_id, page, condition).await
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

/// The invoice of a payment, if it has one.
pub async fn invoice_of_payment(db: &impl ConnectionTrait, payment_id: &str) -> Result<Option<Model>, DbErr> {
    Entity::find().filter(Column::Source.eq(payment_source(payment_id))).order_by_asc(Column::Seq).one(db).await
}

/// What the credit notes of an invoice credit in all (their gross).
pub async fn credited(db: &impl ConnectionTrait, invoice_id: &str) -> Result<i64, DbErr> {
    let totals: Vec<i64> = Entity::find()
        .select_only()
        .column(Column::GrossTotal)
        .filter(Column::InvoiceId.eq(invoice_id))
        .filter(Column::Kind.eq(DocumentKind::CreditNote))
        .into_tuple()
        .all(db)
        .await?;
    Ok(totals.into_iter().sum())
}
