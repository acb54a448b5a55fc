//! Stored payments: every attempt to pay, whatever its outcome.

mod answers;
mod pages;
mod settling;

pub use answers::*;
pub use pages::*;
pub use settling::*;

use crate::domain::tax::ChargeTax;
use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, OnConflict, Query, SelectStatement, SimpleExpr, UnionType};
use sea_orm::{
    ActiveModelTrait, ActiveValue::NotSet, ColumnTrait, Condition, ConnectionTrait, DatabaseBackend,
    DatabaseConnection, DbErr, EntityTrait, QueryFilter, QueryOrder, QuerySelect, Set,
};

use super::entities::payments::{ActiveModel, Column, Entity, Model};
use super::{ListError, Listed, Page, ShopOwned};
use crate::domain::card::{CardRef, Outcome};
use crate::domain::currency::{CURRENCIES, Currency};
use crate::domain::ids::{PAYMENT, new_id};
use crate::domain::payment::{PaymentFilter, PaymentSearch, SearchTerms};
use crate::domain::refund::Refundable;
use crate::domain::vocab::{PaymentStatus, TransactionType};

impl ShopOwned for Entity {
    const SEQ: Column = Column::Seq;
    const ID: Column = Column::Id;
    const SHOP: Column = Column::ShopId;
    fn public_id(row: &Model) -> &str {
        &row.id
    }
}

/// What a payment is for and who pays.
pub struct NewPayment<'a> {
    pub shop_id: i64,
    pub product_id: Option<&'a str>,
    pub plan_id: Option<&'a str>,
    pub subscription_id: Option<&'a str>,
    pub customer_id: Option<&'a str>,
    pub amount: i64,
    pub currency: Currency,
    pub transaction_type: TransactionType,
    pub test: bool,
    pub card: &'a CardRef,
    /// Set for the billing engine's charges (unique per subscription, period and attempt).
    pub billing_key: Option<String>,
    /// The coupon that took this much off (`amount` is what is charged).
    pub discount: Option<(&'a str, i64)>,
    /// What the customer typed on paydesk's page (JSON): the customer a paid page makes.
    pub customer_details: Option<String>,
    /// The tax `amount` holds, as it was charged; none for an untaxed charge.
    pub tax: Option<ChargeTax>,
}

/// A page of the shop's payments that pass `filter`, newest first.
pub async fn list(
    db: &impl ConnectionTrait,
    shop_id: i64,
    page: &Page,
    filter: &PaymentFilter,
) -> Result<Listed<Model>, ListError> {
    super::list_where::<Entity>(db, shop_id, page, filtered(filter)).await
}

/// A page of the shop's payments a dashboard search finds, the latest made first (a test
/// clock's charges stand at the clock's time), continuing after the payment `page` names.
pub async fn search(
    db: &DatabaseConnection,
    shop_id: i64,
    page: &Page,
    search: &PaymentSearch,
) -> Result<Listed<Model>, ListError> {
    let after = match &page.starting_after {
        Some(after) => {
            let mark: Option<(DateTime<Utc>, i64)> = Entity::find()
                .select_only()
                .columns([Column::CreatedAt, Column::Seq])
                .filter(Column::ShopId.eq(shop_id))
                .filter(Column::Id.eq(after.as_str()))
                .into_tuple()
                .one(db)
                .await?;
            Some(mark.ok_or(ListError::UnknownCursor)?)
        }
        None => None,
    };
    let mut rows = searched_after(db, shop_id, search, after, page.limit + 1).await?;
    let more = rows.len() as u64 > page.limit;
    rows.truncate(page.limit as usize);
    let next_after = rows.last().filter(|_| more).map(|r| r.id.clone());
    Ok(Listed { rows, next_after })
}

/// Up to `limit` payments a dashboard search finds, made before `after` (a payment's time
/// and `seq`: where the previous page ended), newest first: an export reads them page by page.
pub async fn searched_after(
    db: &DatabaseConnection,
    shop_id: i64,
    search: &PaymentSearch,
    after: Option<(DateTime<Utc>, i64)>,
    limit: u64,
) -> Result<Vec<Model>, DbErr> {
    caught_up(db, search).await;
    search_query(db.get_database_backend(), shop_id, search, after, limit).all(db).await
}

/// What the CSV export shows of a payment (about half of its columns: the rest is read for
/// nothing, a million times over).
#[derive(Debug, sea_orm::DerivePartialModel, sea_orm::FromQueryResult)]
#[sea_orm(entity = "Entity")]
pub struct Exported {
    pub seq: i64,
    pub id: String,
    pub created_at: DateTime<Utc>,
    pub amount: i64,
    pub currency: Currency,
    pub status: PaymentStatus,
    pub test: bool,
    pub card_brand: String,
    pub card_last4: String,
    pub card_holder: String,
    pub refunded_amount: i64,
    pub disputed_amount: i64,
    pub dispute_fees: i64,
    pub failure_code: Option<String>,
    pub product_id: Option<String>,
    pub plan_id: Option<String>,
    pub subscription_id: Option<String>,
    pub customer_id: Option<String>,
}

/// Up to `limit` payments of an export (see [`searched_after`]). The word indexes catch up
/// before its first page only: the export holds what was made when it began.
pub async fn exported_after(
    db: &DatabaseConnection,
    shop_id: i64,
    search: &PaymentSearch,
    after: Option<(DateTime<Utc>, i64)>,
    limit: u64,
) -> Result<Vec<Exported>, DbErr> {
    if after.is_none() {
        caught_up(db, search).await;
    }
    search_query(db.get_database_backend(), shop_id, search, after, limit)
        .into_partial_model::<Exported>()
        .all(db)
        .await
}

/// Waits for SQLite's word indexes to hold every payment and customer made so far, when
/// `search` has text to look for (see [`super::search_index`]).
async fn caught_up(db: &DatabaseConnection, search: &PaymentSearch) {
    if search.terms.is_some() {
        super::search_index::before_search(db).await;
    }
}

/// The query of a page of [`search`]: at most `limit` payments made before `after` (a
/// payment's time and `seq`), newest first, read in the order of the index
/// `ix_payments_shop_time` (or `ix_payments_shop_status_time`). Typed text finds its payments
/// through indexes, each kind by its own (see [`found`]), before they are put in order.
pub fn search_query(
    backend: DatabaseBackend,
    shop_id: i64,
    search: &PaymentSearch,
    after: Option<(DateTime<Utc>, i64)>,
    limit: u64,
) -> sea_orm::Select<Entity> {
    let mut query = Entity::find().filter(Column::ShopId.eq(shop_id)).filter(searched(search));
    if let Some((at, seq)) = after {
        // As one comparison of pairs, which both databases read as a range of the index.
        let before = Expr::tuple([Expr::col(Column::CreatedAt).into(), Expr::col(Column::Seq).into()])
            .lt(Expr::tuple([Expr::value(at), Expr::value(seq)]));
        query = query.filter(before);
    }
    let Some(terms) = &search.terms else {
        return query.order_by_desc(Column::CreatedAt).order_by_desc(Column::Seq).limit(limit);
    };
    query = query.filter(Column::Seq.in_subquery(found(backend, shop_id, terms)));
    if backend == DatabaseBackend::Sqlite {
        // SQLite would rather walk the shop's payments in order until a page of them is found;
        // the order asked as an expression (`+`) no index holds makes it read what the search
        // found and sort that instead.
        return query.order_by_desc(Expr::cust("+\"created_at\"")).order_by_desc(Column::Seq).limit(limit);
    }
    query.order_by_desc(Column::CreatedAt).order_by_desc(Column::Seq).limit(limit)
}

/// The condition of a dashboard search's filters.
fn searched(search: &PaymentSearch) -> Condition {
    let mut condition = filtered(&search.filter);
    if let Some(test) = search.test {
        condition = condition.add(Column::Test.eq(test));
    }
    if let Some(from) = search.from {
        condition = condition.add(Column::CreatedAt.gte(from));
    }
    if let Some(until) = search.until {
        condition = condition.add(Column::CreatedAt.lt(until));
    }
    condition
}

/// The `seq` of the shop's payments that typed text finds: those of the customers whose
/// e-mail or names have words starting with its words, those whose card holder's name has,
/// and the one with that id, the card's last four, or that amount. Each is read from an index
/// of its own.
fn found(backend: DatabaseBackend, shop_id: i64, terms: &SearchTerms) -> SelectStatement {
    use super::entities::customers::{Column as C, Entity as Customers};
    let text = terms.text.as_str();
    // What the word indexes find is not filtered by shop again (the outer query is; the
    // customers are the shop's): with the shop's index at hand, SQLite would walk all of the
    // shop's payments to test each. The exact matches are read from indexes by shop.
    let payments =
        |condition: Condition| Query::select().column(Column::Seq).from(Entity).cond_where(condition).to_owned();
    let mine = |condition: Condition| payments(Condition::all().add(Column::ShopId.eq(shop_id)).add(condition));
    let customers = Query::select()
        .column(C::Id)
        .from(Customers)
        .and_where(C::ShopId.eq(shop_id))
        .cond_where(super::holding(backend, (C::Seq, "customers_search", &["email", "first_name", "last_name"]), text))
        .to_owned();
    let theirs = if backend == DatabaseBackend::Postgres {
        // As an array the customers are looked up one by one in the payments' index, whatever
        // PostgreSQL guesses of how many a search finds.
        let customers = SimpleExpr::SubQuery(None, Box::new(customers.into_sub_query_statement()));
        Expr::cust_with_exprs("\"customer_id\" = ANY(ARRAY($1))", [customers])
    } else {
        Column::CustomerId.in_subquery(customers)
    };
    let mut found = payments(Condition::all().add(theirs));
    // On SQLite the FTS5 table's rowids are the payments' `seq`: asked of the payments too,
    // it scanned them for those in its list.
    let holders = super::fts_holding(backend, "payments_search", text)
        .unwrap_or_else(|| payments(super::holding(backend, (Column::Seq, "payments_search", &["card_holder"]), text)));
    found.union(UnionType::All, holders);
    if let Some(id) = &terms.id {
        found.union(UnionType::All, mine(Condition::all().add(Column::Id.eq(id.as_str()))));
    }
    if let Some(last4) = &terms.last4 {
        found.union(UnionType::All, mine(Condition::all().add(Column::CardLast4.eq(last4.as_str()))));
    }
    for (exponent, amount) in &terms.amounts {
        let codes: Vec<Currency> = CURRENCIES.iter().filter(|c| c.exponent == *exponent).copied().collect();
        // SQLite's sampled statistics (`PRAGMA optimize`) may find few amounts among the first
        // rows of the index, and then it read every payment instead: it is told that an amount
        // is rare.
        let amount = match backend {
            DatabaseBackend::Sqlite => Expr::cust_with_values("likelihood(\"amount\" = ?, 0.001)", [*amount]),
            _ => Column::Amount.eq(*amount),
        };
        found.union(UnionType::All, mine(Condition::all().add(amount).add(Column::Currency.is_in(codes))));
    }
    found
}

/// The condition of the filters of a list.
fn filtered(filter: &PaymentFilter) -> Condition {
    let mut condition = Condition::all();
    for (column, value) in [
        (Column::ProductId, &filter.product),
        (Column::PlanId, &filter.plan),
        (Column::SubscriptionId, &filter.subscription),
        (Column::CustomerId, &filter.customer),
    ] {
        if let Some(value) = value {
            condition = condition.add(column.eq(value.as_str()));
        }
    }
    if let Some(status) = filter.status {
        condition = condition.add(Column::Status.eq(status));
    }
    condition
}

/// Money a shop took in one quarter hour, one currency and mode (kept by triggers on
/// `payments`, migration m20261124_000013): net of refunds, currency, the quarter hour's
/// start, test, and how many payments took it.
pub type Taken = (i64, Currency, DateTime<Utc>, bool, i64);

/// The length of the stretches money taken is summed over, in seconds.
pub const TOTALS_SPAN: i64 = 900;

/// The shop's money taken per quarter hour since `since` (all of it without it): a month of
/// a busy shop is a few thousand rows, however many payments it had.
pub async fn taken_since(
    db: &impl ConnectionTrait,
    shop_id: i64,
    since: Option<DateTime<Utc>>,
) -> Result<Vec<Taken>, DbErr> {
    use super::entities::payment_totals::{Column as T, Entity as Totals};
    // Kept by triggers on `payments` as rows of change, summed here (`db::summaries`).
    let mut query = Totals::find()
        .select_only()
        .column_as(super::summed(T::Net), "net")
        .columns([T::Currency, T::Bucket, T::Test])
        .column_as(super::summed(T::Payments), "payments")
        .filter(T::ShopId.eq(shop_id))
        .group_by(T::Currency)
        .group_by(T::Bucket)
        .group_by(T::Test)
        .having(super::summed(T::Payments).ne(0));
    if let Some(since) = since {
        query = query.filter(T::Bucket.gte(since.timestamp().div_euclid(TOTALS_SPAN) * TOTALS_SPAN));
    }
    let rows: Vec<(i64, Currency, i64, bool, i64)> = query.into_tuple().all(db).await?;
    Ok(rows
        .into_iter()
        .filter_map(|(net, currency, bucket, test, n)| {
            Some((net, currency, DateTime::from_timestamp(bucket, 0)?, test, n))
        })
        .collect())
}

/// Records an attempt before the acquirer is asked, so that no charge goes unrecorded.
pub async fn insert_processing(
    db: &impl ConnectionTrait,
    new: NewPayment<'_>,
    now: DateTime<Utc>,
) -> Result<Model, DbErr> {
    processing_row(new, now).insert(db).await
}

/// The row of an attempt about to be made (its id is already chosen).
pub fn processing_row(new: NewPayment<'_>, now: DateTime<Utc>) -> ActiveModel {
    let now = super::now_millis(now);
    ActiveModel {
        seq: NotSet,
        id: Set(new_id(PAYMENT)),
        shop_id: Set(new.shop_id),
        product_id: Set(new.product_id.map(str::to_string)),
        plan_id: Set(new.plan_id.map(str::to_string)),
        subscription_id: Set(new.subscription_id.map(str::to_string)),
        customer_id: Set(new.customer_id.map(str::to_string)),
        amount: Set(new.amount),
        currency: Set(new.currency),
        transaction_type: Set(new.transaction_type),
        status: Set(PaymentStatus::Processing),
        test: Set(new.test),
        card_token: Set(new.card.token.clone()),
        card_fingerprint: Set(new.card.fingerprint.clone()),
        card_brand: Set(new.card.brand.clone()),
        card_last4: Set(new.card.last4.clone()),
        card_exp_month: Set(new.card.exp_month),
        card_exp_year: Set(new.card.exp_year),
        card_holder: Set(new.card.holder.clone()),
        acquirer_reference: Set(None),
        capture_reference: Set(None),
        failure_code: Set(None),
        failure_message: Set(None),
        captured_at: Set(None),
        voided_at: Set(None),
        refunded_amount: Set(0),
        refunding_amount: Set(0),
        billing_key: Set(new.billing_key),
        coupon_id: Set(new.discount.map(|d| d.0.to_string())),
        discount_amount: Set(new.discount.map_or(0, |d| d.1)),
        disputed_amount: Set(0),
        dispute_fees: Set(0),
        dispute_id: Set(None),
        dispute_status: Set(None),
        fraud_warning: Set(None),
        fraud_warned_at: Set(None),
        network_at: Set(crate::domain::card::network_of(&new.card.token)
            .map(|_| now + crate::domain::dispute::simulated::AFTER_PAYMENT)),
        recheck_at: Set(None),
        action_url: Set(None),
        checkout_token: Set(None),
        customer_details: Set(new.customer_details),
        tax_rate_id: Set(new.tax.as_ref().map(|t| t.rate_id.clone())),
        tax_behavior: Set(new.tax.as_ref().map(|t| t.behavior)),
        tax_amount: Set(new.tax.as_ref().map_or(0, |t| t.amount)),
        reverse_charge: Set(new.tax.as_ref().is_some_and(|t| t.reverse_charge)),
        settling: Set(None),
        settling_at: Set(None),
        created_at: Set(now),
        updated_at: Set(now),
    }
}

/// Stores many attempts in few statements; answers whether every row went in (a key another
/// run wrote first keeps that run's row instead).
pub async fn insert_rows(db: &impl ConnectionTrait, rows: Vec<ActiveModel>) -> Result<bool, DbErr> {
    let first_wins = OnConflict::column(Column::BillingKey).do_nothing().to_owned();
    let mut inserted = 0;
    for chunk in rows.chunks(400) {
        match Entity::insert_many(chunk.to_vec()).on_conflict(first_wins.clone()).exec_without_returning(db).await {
            Ok(count) => inserted += count as usize,
            Err(DbErr::RecordNotInserted) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(inserted == rows.len())
}

/// The engine's payments with these billing keys.
pub async fn find_by_billing_keys(db: &impl ConnectionTrait, keys: Vec<String>) -> Result<Vec<Model>, DbErr> {
    let mut found = Vec::new();
    for chunk in keys.chunks(500) {
        found.extend(Entity::find().filter(Column::BillingKey.is_in(chunk.to_vec())).all(db).await?);
    }
    Ok(found)
}

impl Model {
    /// Where the payment stands as refunds see it.
    pub fn refundable(&self) -> Refundable {
        Refundable {
            status: self.status,
            amount: self.amount,
            refunded: self.refunded_amount,
            refunding: self.refunding_amount,
            disputed: self.disputed_amount,
        }
    }

    /// The price it paid before its discount and any tax added on top: the price of the
    /// product, or of the plan's period, it was made for when it was priced.
    pub fn list_price(&self) -> i64 {
        let added = match self.tax_behavior {
            Some(crate::domain::tax::TaxBehavior::Exclusive) => self.tax_amount,
            _ => 0,
        };
        self.amount.saturating_sub(added).saturating_add(self.discount_amount)
    }

    /// The processor's reference that refunds name: a held payment's capture where the
    /// processor gave it one of its own, else the payment's.
    pub fn refund_reference(&self) -> &str {
        self.capture_reference.as_deref().or(self.acquirer_reference.as_deref()).unwrap_or_default()
    }

    /// The card the payment was made with, as the acquirer knows it.
    pub fn card(&self) -> CardRef {
        CardRef {
            token: self.card_token.clone(),
            brand: self.card_brand.clone(),
            last4: self.card_last4.clone(),
            exp_month: self.card_exp_month,
            exp_year: self.card_exp_year,
            holder: self.card_holder.clone(),
            fingerprint: self.card_fingerprint.clone(),
        }
    }

    /// The card as pages name it: `Visa •••• 4242`; `—` while it is not known (typed on the
    /// processor's page, and not gone through).
    pub fn card_label(&self) -> String {
        if self.card_last4.is_empty() {
            return "—".into();
        }
        format!("{} •••• {}", crate::domain::card::brand_name(&self.card_brand), self.card_last4)
    }
}

/// Takes the payment to name its customer, in the transaction that will: whether it still
/// has none (the row then stays locked to this transaction; another settling that named one
/// first leaves it as it is).
pub async fn claim_unnamed(db: &impl ConnectionTrait, id: &str) -> Result<bool, DbErr> {
    let claimed = Entity::update_many()
        .col_expr(Column::CustomerId, Expr::value(Option::<String>::None))
        .filter(Column::Id.eq(id))
        .filter(Column::CustomerId.is_null())
        .exec(db)
        .await?;
    Ok(claimed.rows_affected == 1)
}

/// Names the customer who made the payment (known once the card went through).
pub async fn set_customer(db: &impl ConnectionTrait, payment: Model, customer_id: &str) -> Result<Model, DbErr> {
    Entity::update_many()
        .col_expr(Column::CustomerId, Expr::value(Some(customer_id)))
        .filter(Column::Id.eq(payment.id.as_str()))
        .exec(db)
        .await?;
    Ok(Model { customer_id: Some(customer_id.to_string()), ..payment })
}

/// Makes a payment made on a page the charge of a subscription under `billing_key`, if it
/// is not already another's and no other payment holds the key; whether it was. A key held
/// already leaves the caller's transaction as it was (the update runs in a savepoint).
pub async fn attach(
    txn: &crate::db::Txn,
    id: &str,
    subscription_id: &str,
    customer_id: &str,
    billing_key: &str,
) -> Result<bool, DbErr> {
    let savepoint = txn.savepoint().await?;
    let attached = Entity::update_many()
        .col_expr(Column::SubscriptionId, Expr::value(Some(subscription_id)))
        .col_expr(Column::CustomerId, Expr::value(Some(customer_id)))
        .col_expr(Column::BillingKey, Expr::value(Some(billing_key)))
        .filter(Column::Id.eq(id))
        .filter(Column::BillingKey.is_null())
        .exec(&savepoint)
        .await;
    match attached {
        Ok(attached) => {
            savepoint.commit().await?;
            Ok(attached.rows_affected == 1)
        }
        Err(e) if matches!(e.sql_err(), Some(sea_orm::SqlErr::UniqueConstraintViolation(_))) => {
            savepoint.rollback().await?;
            Ok(false)
        }
        Err(e) => Err(e),
    }
}

/// The customer's payments at the shop, newest first (at most `limit`).
pub async fn of_customer(
    db: &impl ConnectionTrait,
    shop_id: i64,
    customer_id: &str,
    limit: u64,
) -> Result<Vec<Model>, DbErr> {
    Entity::find()
        .filter(Column::ShopId.eq(shop_id))
        .filter(Column::CustomerId.eq(customer_id))
        .order_by_desc(Column::Seq)
        .limit(limit)
        .all(db)
        .await
}

/// Up to `limit` of the shop's payments that took money and have no invoice, after the one at
/// `after` (its `seq`), oldest first: those made before the shop's invoices started.
pub async fn taken_without_invoice(
    db: &impl ConnectionTrait,
    shop_id: i64,
    after: i64,
    limit: u64,
) -> Result<Vec<Model>, DbErr> {
    use sea_orm::sea_query::Expr;
    use sea_orm::{QueryOrder, QuerySelect};
    let taken = [PaymentStatus::Succeeded, PaymentStatus::PartiallyRefunded, PaymentStatus::Refunded];
    Entity::find()
        .filter(Column::ShopId.eq(shop_id))
        .filter(Column::Seq.gt(after))
        .filter(Column::Status.is_in(taken))
        .filter(Column::Amount.gt(0))
        .filter(Expr::cust("NOT EXISTS (SELECT 1 FROM documents d WHERE d.source = 'payment:' || payments.id)"))
        .order_by_asc(Column::Seq)
        .limit(limit)
        .all(db)
        .await
}
