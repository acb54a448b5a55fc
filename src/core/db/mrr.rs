//! The ledger of MRR movements (`mrr_movements`): the standing each subscription was left
//! at, the customers' sums, and the movements written in the transaction of their change.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Alias, Expr, OnConflict, Query, SelectStatement, UnionType};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseBackend, DbErr, EntityTrait, FromQueryResult, QueryFilter, QueryOrder,
    QuerySelect,
};

use super::Batch;
use super::entities::events;
use super::entities::mrr_movements::{ActiveModel, Column, Entity, Model};
use crate::domain::billing::State;
use crate::domain::currency::Currency;
use crate::domain::mrr::figures::{Sums, Trials};
use crate::domain::mrr::{Kind, Movement, Standing};

/// A customer's MRR in one currency and mode: its customer, currency code and whether it is
/// test.
pub type Holder = (String, &'static str, bool);

/// Holds these customers' MRR until the transaction ends (PostgreSQL; SQLite's writers take
/// turns anyway), so that two transactions changing subscriptions of one customer classify
/// their movements one after the other. Taken in one statement, in one order (by id), after
/// every other row the transaction changes (see `services::billing::record`).
pub async fn hold(db: &impl ConnectionTrait, customers: &[&str]) -> Result<(), DbErr> {
    if db.get_database_backend() != DatabaseBackend::Postgres {
        return Ok(());
    }
    let mut customers = customers.to_vec();
    customers.sort_unstable();
    customers.dedup();
    for chunk in customers.chunks(500) {
        let keys: Vec<String> = (1..=chunk.len()).map(|i| format!("(${i})")).collect();
        let sql = format!(
            "SELECT pg_advisory_xact_lock(hashtextextended('mrr:' || k, 0)) FROM (VALUES {}) AS v(k)",
            keys.join(", ")
        );
        let values = chunk.iter().map(|c| sea_orm::Value::from(c.to_string()));
        db.execute(sea_orm::Statement::from_sql_and_values(DatabaseBackend::Postgres, sql, values)).await?;
    }
    Ok(())
}

/// One row of [`books`]: a subscription's last standing (`side` 0, by subscription) or a
/// customer's sums in a currency and mode (`side` 1, by customer).
#[derive(FromQueryResult)]
struct Booked {
    side: i32,
    id: String,
    currency: Currency,
    test: bool,
    mrr: i64,
    paused: i64,
}

/// Where each of these subscriptions was last left, and what these customers hold, per
/// currency and mode (a holder absent held nothing ever): one statement for both (per 500).
pub async fn books(
    db: &impl ConnectionTrait,
    subscriptions: &[&str],
    customers: &[&str],
) -> Result<(HashMap<String, Standing>, HashMap<Holder, Standing>), DbErr> {
    let (mut left, mut held) = (HashMap::new(), HashMap::new());
    let (mut subscriptions, mut customers) = (subscriptions.chunks(500), customers.chunks(500));
    while let Some(query) = books_query(subscriptions.next().unwrap_or(&[]), customers.next().unwrap_or(&[])) {
        let rows = Booked::find_by_statement(db.get_database_backend().build(&query)).all(db).await?;
        for b in rows {
            let standing = Standing { mrr: b.mrr, paused: b.paused };
            match b.side {
                0 => left.insert(b.id, standing),
                _ => held.insert((b.id, b.currency.code, b.test), standing),
            };
        }
    }
    Ok((left, held))
}

/// The statement of [`books`] for these subscriptions and customers (none when both are
/// empty): each subscription's last movement, found by its subscription's index, and each
/// customer's sums, from the customers' covering index.
pub fn books_query(subscriptions: &[&str], customers: &[&str]) -> Option<SelectStatement> {
    let bigint = || Alias::new("BIGINT");
    let last = (!subscriptions.is_empty()).then(|| {
        let latest = Query::select()
            .expr(Expr::col(Column::Seq).max())
            .from(Entity)
            .and_where(Column::SubscriptionId.is_in(subscriptions.iter().copied()))
            .group_by_col(Column::SubscriptionId)
            .to_owned();
        Query::select()
            .expr_as(Expr::cust("0"), Alias::new("side"))
            .expr_as(Expr::col(Column::SubscriptionId), Alias::new("id"))
            .columns([Column::Currency, Column::Test])
            .expr_as(Expr::col(Column::MrrAfter), Alias::new("mrr"))
            .expr_as(Expr::col(Column::PausedAfter), Alias::new("paused"))
            .from(Entity)
            .and_where(Column::Seq.in_subquery(latest))
            .to_owned()
    });
    let sums = (!customers.is_empty()).then(|| {
        Query::select()
            .expr_as(Expr::cust("1"), Alias::new("side"))
            .expr_as(Expr::col(Column::CustomerId), Alias::new("id"))
            .columns([Column::Currency, Column::Test])
            .expr_as(Expr::col(Column::Mrr).sum().cast_as(bigint()), Alias::new("mrr"))
            .expr_as(Expr::col(Column::Paused).sum().cast_as(bigint()), Alias::new("paused"))
            .from(Entity)
            .and_where(Column::CustomerId.is_in(customers.iter().copied()))
            .group_by_columns([Column::CustomerId, Column::Currency, Column::Test])
            .to_owned()
    });
    match (last, sums) {
        (Some(mut last), Some(sums)) => Some(last.union(UnionType::All, sums).to_owned()),
        (one, None) | (None, one) => one,
    }
}

/// A movement to write: its subscription's, made by the event `event_id`, leaving the
/// subscription at `after`, at `at` (the subscription's time).
pub struct NewMovement {
    pub shop_id: i64,
    pub test: bool,
    pub currency: Currency,
    pub customer_id: String,
    pub subscription_id: String,
    pub event_id: String,
    pub movement: Movement,
    pub after: Standing,
    pub at: chrono::DateTime<chrono::Utc>,
}

impl From<NewMovement> for ActiveModel {
    fn from(m: NewMovement) -> ActiveModel {
        use sea_orm::{ActiveValue::NotSet, Set};
        ActiveModel {
            seq: NotSet,
            shop_id: Set(m.shop_id),
            test: Set(m.test),
            currency: Set(m.currency),
            customer_id: Set(m.customer_id),
            subscription_id: Set(m.subscription_id),
            event_id: Set(m.event_id),
            kind: Set(m.movement.kind),
            mrr: Set(m.movement.mrr),
            paused: Set(m.movement.paused),
            subscribers: Set(m.movement.subscribers),
            mrr_after: Set(m.after.mrr),
            paused_after: Set(m.after.paused),
            occurred_at: Set(super::now_millis(m.at)),
        }
    }
}

/// Writes movements; one whose event made one already is left out.
pub async fn insert(db: &impl ConnectionTrait, rows: Vec<NewMovement>) -> Result<(), DbErr> {
    let mut batch = Batch::new(db);
    insert_into(&mut batch, rows);
    batch.send(db).await
}

/// [`insert`], added to `batch`.
pub fn insert_into(batch: &mut Batch, rows: Vec<NewMovement>) {
    let once = OnConflict::column(Column::EventId).do_nothing().to_owned();
    batch.insert(rows.into_iter().map(ActiveModel::from).collect(), Some(&once));
}

/// Deletes a shop's movements (before they are made again from its events).
pub async fn delete_shop(db: &impl ConnectionTrait, shop_id: i64) -> Result<u64, DbErr> {
    Ok(Entity::delete_many().filter(Column::ShopId.eq(shop_id)).exec(db).await?.rows_affected)
}

/// A shop's movements in the order they were made.
pub async fn of_shop(db: &impl ConnectionTrait, shop_id: i64) -> Result<Vec<Model>, DbErr> {
    Entity::find().filter(Column::ShopId.eq(shop_id)).order_by_asc(Column::Seq).all(db).await
}

/// Up to `limit` of a shop's `subscription.*` events after `after` (a `seq`), oldest first.
pub async fn subscription_events(
    db: &impl ConnectionTrait,
    shop_id: i64,
    after: i64,
    limit: u64,
) -> Result<Vec<events::Model>, DbErr> {
    events::Entity::find()
        .filter(events::Column::ShopId.eq(shop_id))
        .filter(events::Column::Seq.gt(after))
        .filter(Expr::col(events::Column::Kind).like("subscription.%"))
        .order_by_asc(events::Column::Seq)
        .limit(limit)
        .all(db)
        .await
}

/// The movements of one shop's currency and mode: `(shop_id, test, currency)`.
pub type Ledger = (i64, bool, Currency);

#[derive(FromQueryResult)]
struct Summed {
    kind: Kind,
    mrr: i64,
    paused: i64,
    subscribers: i64,
    count: i64,
}

impl From<&Summed> for Sums {
    fn from(r: &Summed) -> Sums {
        Sums { mrr: r.mrr, paused: r.paused, subscribers: r.subscribers, count: r.count }
    }
}

#[derive(FromQueryResult)]
struct PeriodSum {
    period: i64,
    kind: Kind,
    mrr: i64,
    paused: i64,
    subscribers: i64,
    count: i64,
}

/// The movements of one ledger.
fn of_ledger((shop_id, test, currency): Ledger) -> sea_orm::Select<Entity> {
    Entity::find()
        .filter(Column::ShopId.eq(shop_id))
        .filter(Column::Test.eq(test))
        .filter(Column::Currency.eq(currency))
}

/// The ledger's movements before `until`, summed per kind: where everything stood then.
pub async fn before(
    db: &impl ConnectionTrait,
    ledger: Ledger,
    until: DateTime<Utc>,
) -> Result<Vec<(Kind, Sums)>, DbErr> {
    let rows = before_query(ledger, until).into_model::<Summed>().all(db).await?;
    Ok(rows.iter().map(|r| (r.kind, Sums::from(r))).collect())
}

/// The query [`before`] runs, to see its plan.
pub fn before_query(ledger: Ledger, until: DateTime<Utc>) -> sea_orm::Select<Entity> {
    let sum = |column: Column| Expr::col(column).sum().cast_as(Alias::new("BIGINT"));
    of_ledger(ledger)
        .select_only()
        .column(Column::Kind)
        .column_as(sum(Column::Mrr), "mrr")
        .column_as(sum(Column::Paused), "paused")
        .column_as(sum(Column::Subscribers), "subscribers")
        .column_as(Expr::cust("CAST(COUNT(*) AS BIGINT)"), "count")
        .filter(Column::OccurredAt.lt(until))
        .group_by(Column::Kind)
}

/// Periods as a table `b(i, s, e)` (their place, first instant, first instant after), for
/// a statement of `backend` whose own values come after: the `WITH` clause, its values, and
/// the next placeholder's number.
fn periods_table(
    backend: DatabaseBackend,
    bounds: &[(DateTime<Utc>, DateTime<Utc>)],
) -> (String, Vec<sea_orm::Value>, usize) {
    let mut rows = Vec::with_capacity(bounds.len());
    let mut values = Vec::with_capacity(2 * bounds.len());
    let mut n = 0;
    let mut next = || {
        n += 1;
        placeholder(backend, n)
    };
    for (i, (from, until)) in bounds.iter().enumerate() {
        rows.push(format!("({i}, {}, {})", next(), next()));
        values.push((*from).into());
        values.push((*until).into());
    }
    (format!("WITH b(i, s, e) AS (VALUES {})", rows.join(", ")), values, 2 * bounds.len() + 1)
}

/// The `n`th placeholder of a statement (from 1), which may stand more than once.
fn placeholder(backend: DatabaseBackend, n: usize) -> String {
    match backend {
        DatabaseBackend::Postgres => format!("${n}"),
        _ => format!("?{n}"),
    }
}

/// The ledger's movements in each of these periods (`[from, until)` each), summed per kind:
/// `(the period's place, kind, sums)`, each period read from the ledger's time index.
pub async fn sums(
    db: &impl ConnectionTrait,
    ledger: Ledger,
    bounds: &[(DateTime<Utc>, DateTime<Utc>)],
) -> Result<Vec<(usize, Kind, Sums)>, DbErr> {
    if bounds.is_empty() {
        return Ok(Vec::new());
    }
    let rows = PeriodSum::find_by_statement(sums_statement(db.get_database_backend(), ledger, bounds)).all(db).await?;
    Ok(rows
        .iter()
        .map(|r| {
            let sums = Sums { mrr: r.mrr, paused: r.paused, subscribers: r.subscribers, count: r.count };
            (usize::try_from(r.period).unwrap_or(0), r.kind, sums)
        })
        .collect())
}

/// The statement [`sums`] runs, to see its plan.
pub fn sums_statement(
    backend: DatabaseBackend,
    (shop_id, test, currency): Ledger,
    bounds: &[(DateTime<Utc>, DateTime<Utc>)],
) -> sea_orm::Statement {
    let (periods, mut values, n) = periods_table(backend, bounds);
    let [shop, mode, code] = [n, n + 1, n + 2].map(|i| placeholder(backend, i));
    let sql = format!(
        "{periods} SELECT CAST(b.i AS BIGINT) AS period, m.kind AS kind, CAST(SUM(m.mrr) AS BIGINT) AS mrr, \
         CAST(SUM(m.paused) AS BIGINT) AS paused, CAST(SUM(m.subscribers) AS BIGINT) AS subscribers, \
         CAST(COUNT(*) AS BIGINT) AS count \
         FROM b JOIN mrr_movements m ON m.shop_id = {shop} AND m.test = {mode} AND m.currency = {code} \
         AND m.occurred_at >= b.s AND m.occurred_at < b.e GROUP BY b.i, m.kind"
    );
    values.extend([shop_id.into(), test.into(), currency.into()]);
    sea_orm::Statement::from_sql_and_values(backend, sql, values)
}

/// Where a page of movements starts: after the movement made at `at` with number `seq`.
pub type Cursor = (DateTime<Utc>, i64);

/// Up to `limit` of the ledger's movements in `[from, until)`, of `kind` if given, newest
/// first, after `cursor`: read from the ledger's time index.
pub async fn page(
    db: &impl ConnectionTrait,
    ledger: Ledger,
    (from, until): (DateTime<Utc>, DateTime<Utc>),
    kind: Option<Kind>,
    cursor: Option<Cursor>,
    limit: u64,
) -> Result<Vec<Model>, DbErr> {
    use sea_orm::Condition;
    let mut query = of_ledger(ledger).filter(Column::OccurredAt.gte(from)).filter(Column::OccurredAt.lt(until));
    if let Some(kind) = kind {
        query = query.filter(Column::Kind.eq(kind));
    }
    if let Some((at, seq)) = cursor {
        let earlier = Condition::all().add(Column::OccurredAt.eq(at)).add(Column::Seq.lt(seq));
        query = query
            .filter(Column::OccurredAt.lte(at))
            .filter(Condition::any().add(Column::OccurredAt.lt(at)).add(earlier));
    }
    query.order_by_desc(Column::OccurredAt).order_by_desc(Column::Seq).limit(limit).all(db).await
}

/// A movement as retention reads it: its customer, time, kind and MRR, and its number.
pub type Moved = (String, DateTime<Utc>, Kind, i64, i64);

/// Up to `limit` of the ledger's movements before `until`, oldest first, after `cursor`:
/// from the ledger's time index.
pub async fn history(
    db: &impl ConnectionTrait,
    ledger: Ledger,
    until: DateTime<Utc>,
    cursor: Option<Cursor>,
    limit: u64,
) -> Result<Vec<Moved>, DbErr> {
    use sea_orm::Condition;
    let mut query = of_ledger(ledger)
        .select_only()
        .columns([Column::CustomerId, Column::OccurredAt, Column::Kind, Column::Mrr, Column::Seq])
        .filter(Column::OccurredAt.lt(until));
    if let Some((at, seq)) = cursor {
        let later = Condition::all().add(Column::OccurredAt.eq(at)).add(Column::Seq.gt(seq));
        query =
            query.filter(Column::OccurredAt.gte(at)).filter(Condition::any().add(Column::OccurredAt.gt(at)).add(later));
    }
    query.order_by_asc(Column::OccurredAt).order_by_asc(Column::Seq).limit(limit).into_tuple().all(db).await
}

#[derive(FromQueryResult)]
struct Ended {
    period: i64,
    converted: i64,
    lost: i64,
}

/// The ledger's trials due to end in each of these periods: `(the period's place, how many
/// were paid (their subscription made a movement with MRR) and how many ended without)`;
/// each period read from the index of subscriptions by trial end.
pub async fn trials(
    db: &impl ConnectionTrait,
    ledger: Ledger,
    bounds: &[(DateTime<Utc>, DateTime<Utc>)],
) -> Result<Vec<(usize, Trials)>, DbErr> {
    let (shop_id, _, currency) = ledger;
    let plans: Vec<String> = super::entities::plans::Entity::find()
        .select_only()
        .column(super::entities::plans::Column::Id)
        .filter(super::entities::plans::Column::ShopId.eq(shop_id))
        .filter(super::entities::plans::Column::Currency.eq(currency))
        .into_tuple()
        .all(db)
        .await?;
    if bounds.is_empty() || plans.is_empty() {
        return Ok(Vec::new());
    }
    let statement = trials_statement(db.get_database_backend(), ledger, &plans, bounds);
    let rows = Ended::find_by_statement(statement).all(db).await?;
    Ok(rows
        .into_iter()
        .map(|r| (usize::try_from(r.period).unwrap_or(0), Trials { converted: r.converted, lost: r.lost }))
        .collect())
}

/// The statement [`trials`] runs over the subscriptions of `plans` (those of the ledger's
/// currency), to see its plan.
pub fn trials_statement(
    backend: DatabaseBackend,
    (shop_id, test, _): Ledger,
    plans: &[String],
    bounds: &[(DateTime<Utc>, DateTime<Utc>)],
) -> sea_orm::Statement {
    let (periods, mut values, n) = periods_table(backend, bounds);
    let [shop, mode] = [n, n + 1].map(|i| placeholder(backend, i));
    let of_plans: Vec<String> = (0..plans.len()).map(|i| placeholder(backend, n + 2 + i)).collect();
    let of_plans = of_plans.join(", ");
    let ended: Vec<String> = State::ALL.iter().filter(|s| s.has_ended()).map(|s| format!("'{}'", s.as_str())).collect();
    let ended = ended.join(", ");
    let paid = "EXISTS (SELECT 1 FROM mrr_movements m WHERE m.subscription_id = x.id AND m.mrr_after > 0)";
    // A count per period, each a scan of the index by trial end (PostgreSQL does not guess a
    // join on the periods' bounds selective enough to use it).
    let count = |which: String| {
        format!(
            "(SELECT CAST(COUNT(*) AS BIGINT) FROM subscriptions x WHERE x.shop_id = {shop} AND x.test = {mode} \
             AND x.trial_ends_at >= b.s AND x.trial_ends_at < b.e AND x.plan_id IN ({of_plans}) AND {which})"
        )
    };
    let sql = format!(
        "{periods} SELECT CAST(b.i AS BIGINT) AS period, {} AS converted, {} AS lost FROM b",
        count(paid.to_string()),
        count(format!("x.state IN ({ended}) AND NOT {paid}"))
    );
    values.extend([shop_id.into(), test.into()]);
    values.extend(plans.iter().map(|p| sea_orm::Value::from(p.clone())));
    sea_orm::Statement::from_sql_and_values(backend, sql, values)
}

/// Where a read of the ledger customer by customer goes on: after this customer's movement
/// made at this time with this number.
pub type CustomerCursor = (String, DateTime<Utc>, i64);

/// A movement as MRR per subscriber reads it: its customer, time, number and change of MRR.
pub type Change = (String, DateTime<Utc>, i64, i64);

/// Up to `limit` of the ledger's movements before `until`, customer by customer (by id) and
/// oldest first within each, after `cursor`: from the ledger's index by customer.
pub async fn by_customer(
    db: &impl ConnectionTrait,
    ledger: Ledger,
    until: DateTime<Utc>,
    cursor: Option<CustomerCursor>,
    limit: u64,
) -> Result<Vec<Change>, DbErr> {
    by_customer_query(ledger, until, cursor, limit).into_tuple().all(db).await
}

/// The query [`by_customer`] runs, to see its plan.
pub fn by_customer_query(
    ledger: Ledger,
    until: DateTime<Utc>,
    cursor: Option<CustomerCursor>,
    limit: u64,
) -> sea_orm::Select<Entity> {
    use sea_orm::Condition;
    let mut query = of_ledger(ledger)
        .select_only()
        .columns([Column::CustomerId, Column::OccurredAt, Column::Seq, Column::Mrr])
        .filter(Column::OccurredAt.lt(until));
    if let Some((customer, at, seq)) = cursor {
        let later = Condition::any()
            .add(Column::OccurredAt.gt(at))
            .add(Condition::all().add(Column::OccurredAt.eq(at)).add(Column::Seq.gt(seq)));
        let same = Condition::all().add(Column::CustomerId.eq(customer.clone())).add(later);
        query = query
            .filter(Column::CustomerId.gte(customer.clone()))
            .filter(Condition::any().add(Column::CustomerId.gt(customer)).add(same));
    }
    query.order_by_asc(Column::CustomerId).order_by_asc(Column::OccurredAt).order_by_asc(Column::Seq).limit(limit)
}
