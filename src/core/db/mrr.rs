//! The ledger of MRR movements (`mrr_movements`): the standing each subscription was left
//! at, the customers' sums, and the movements written in the transaction of their change.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Alias, Expr, OnConflict, SimpleExpr};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseBackend, DbErr, EntityTrait, FromQueryResult, QueryFilter, QueryOrder,
    QuerySelect,
};

use super::entities::mrr_movements::{ActiveModel, Column, Entity, Model};
use super::entities::{events, plans, subscriptions};
use crate::domain::billing::State;
use crate::domain::currency::Currency;
use crate::domain::mrr::figures::{Sums, Trials};
use crate::domain::mrr::{Kind, Movement, Standing};

/// A customer's MRR in one currency and mode: its customer, currency code and whether it is
/// test.
pub type Holder = (String, &'static str, bool);

/// Where each of these subscriptions was last left.
pub async fn standings(db: &impl ConnectionTrait, ids: &[&str]) -> Result<HashMap<String, Standing>, DbErr> {
    let mut found = HashMap::new();
    for chunk in ids.chunks(500) {
        let last = Entity::find()
            .select_only()
            .column_as(Column::Seq.max(), "seq")
            .filter(Column::SubscriptionId.is_in(chunk.iter().copied()))
            .group_by(Column::SubscriptionId);
        let rows =
            Entity::find().filter(Column::Seq.in_subquery(sea_orm::QueryTrait::into_query(last))).all(db).await?;
        for m in rows {
            found.insert(m.subscription_id, Standing { mrr: m.mrr_after, paused: m.paused_after });
        }
    }
    Ok(found)
}

/// Holds these customers' MRR until the transaction ends (PostgreSQL; SQLite's writers take
/// turns anyway), so that two transactions changing subscriptions of one customer classify
/// their movements one after the other. Taken in one order (by id), as each transaction
/// records its subscriptions' events last.
pub async fn hold(db: &impl ConnectionTrait, customers: &[&str]) -> Result<(), DbErr> {
    if db.get_database_backend() != DatabaseBackend::Postgres {
        return Ok(());
    }
    let mut customers = customers.to_vec();
    customers.sort_unstable();
    customers.dedup();
    for customer in customers {
        let sql = "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))";
        let key = format!("mrr:{customer}");
        db.execute(sea_orm::Statement::from_sql_and_values(DatabaseBackend::Postgres, sql, [key.into()])).await?;
    }
    Ok(())
}

#[derive(FromQueryResult)]
struct Held {
    customer_id: String,
    currency: Currency,
    test: bool,
    mrr: i64,
    paused: i64,
}

/// What these customers hold, per currency and mode; a holder absent held nothing ever.
pub async fn holdings(db: &impl ConnectionTrait, customers: &[&str]) -> Result<HashMap<Holder, Standing>, DbErr> {
    let mut found = HashMap::new();
    for chunk in customers.chunks(500) {
        let rows = Entity::find()
            .select_only()
            .column(Column::CustomerId)
            .column(Column::Currency)
            .column(Column::Test)
            .column_as(Expr::col(Column::Mrr).sum().cast_as(sea_orm::sea_query::Alias::new("BIGINT")), "mrr")
            .column_as(Expr::col(Column::Paused).sum().cast_as(sea_orm::sea_query::Alias::new("BIGINT")), "paused")
            .filter(Column::CustomerId.is_in(chunk.iter().copied()))
            .group_by(Column::CustomerId)
            .group_by(Column::Currency)
            .group_by(Column::Test)
            .into_model::<Held>()
            .all(db)
            .await?;
        for h in rows {
            found.insert((h.customer_id, h.currency.code, h.test), Standing { mrr: h.mrr, paused: h.paused });
        }
    }
    Ok(found)
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
    let mut rows = rows.into_iter().map(ActiveModel::from).peekable();
    while rows.peek().is_some() {
        let chunk: Vec<ActiveModel> = rows.by_ref().take(500).collect();
        let made = Entity::insert_many(chunk)
            .on_conflict(OnConflict::column(Column::EventId).do_nothing().to_owned())
            .exec_without_returning(db)
            .await;
        match made {
            Ok(_) | Err(DbErr::RecordNotInserted) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
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
    bucket: i64,
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

/// The quarter hour (seconds since the epoch) the time in `column` falls in.
fn quarter_hour(backend: DatabaseBackend, column: &str) -> SimpleExpr {
    match backend {
        DatabaseBackend::Postgres => Expr::cust(format!("(floor(extract(epoch FROM {column}) / 900) * 900)::bigint")),
        _ => Expr::cust(format!("CAST(strftime('%s', {column}) AS INTEGER) / 900 * 900")),
    }
}

/// The ledger's movements in `[from, until)`, summed per kind and per quarter hour (for the
/// periods of any time zone), from its time index. With no `from`, every movement until.
pub async fn sums(
    db: &impl ConnectionTrait,
    ledger: Ledger,
    range: (Option<DateTime<Utc>>, DateTime<Utc>),
    per_quarter_hour: bool,
) -> Result<Vec<(DateTime<Utc>, Kind, Sums)>, DbErr> {
    let query = sums_query(db.get_database_backend(), ledger, range, per_quarter_hour);
    let rows = query.into_model::<Summed>().all(db).await?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let at = DateTime::from_timestamp(r.bucket, 0).unwrap_or_default();
            (at, r.kind, Sums { mrr: r.mrr, paused: r.paused, subscribers: r.subscribers, count: r.count })
        })
        .collect())
}

/// The query [`sums`] runs, to see its plan.
pub fn sums_query(
    backend: DatabaseBackend,
    ledger: Ledger,
    (from, until): (Option<DateTime<Utc>>, DateTime<Utc>),
    per_quarter_hour: bool,
) -> sea_orm::Select<Entity> {
    let sum = |column: Column| Expr::col(column).sum().cast_as(Alias::new("BIGINT"));
    let bucket = match per_quarter_hour {
        true => quarter_hour(backend, "occurred_at"),
        false => Expr::val(0i64).into(),
    };
    let mut query = of_ledger(ledger)
        .select_only()
        .column_as(bucket.clone(), "bucket")
        .column(Column::Kind)
        .column_as(sum(Column::Mrr), "mrr")
        .column_as(sum(Column::Paused), "paused")
        .column_as(sum(Column::Subscribers), "subscribers")
        .column_as(Expr::cust("count(*)"), "count")
        .filter(Column::OccurredAt.lt(until));
    if let Some(from) = from {
        query = query.filter(Column::OccurredAt.gte(from));
    }
    if per_quarter_hour {
        query = query.group_by(bucket);
    }
    query.group_by(Column::Kind)
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
    bucket: i64,
    converted: i64,
    lost: i64,
}

/// The ledger's trials due to end in `[from, until)`, per quarter hour of that end: how many
/// were paid (their subscription made a movement with MRR) and how many ended without;
/// from the index of subscriptions by trial end.
pub async fn trials(
    db: &impl ConnectionTrait,
    ledger: Ledger,
    range: (DateTime<Utc>, DateTime<Utc>),
) -> Result<Vec<(DateTime<Utc>, Trials)>, DbErr> {
    let rows = trials_query(db.get_database_backend(), ledger, range).into_model::<Ended>().all(db).await?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let at = DateTime::from_timestamp(r.bucket, 0).unwrap_or_default();
            (at, Trials { converted: r.converted, lost: r.lost })
        })
        .collect())
}

/// The query [`trials`] runs, to see its plan.
pub fn trials_query(
    backend: DatabaseBackend,
    (shop_id, test, currency): Ledger,
    (from, until): (DateTime<Utc>, DateTime<Utc>),
) -> sea_orm::Select<subscriptions::Entity> {
    use subscriptions::Column as S;
    let paid = "EXISTS (SELECT 1 FROM mrr_movements m \
                WHERE m.subscription_id = subscriptions.id AND m.mrr_after > 0)";
    let ended: Vec<String> = State::ALL.iter().filter(|s| s.has_ended()).map(|s| format!("'{}'", s.as_str())).collect();
    let ended = ended.join(", ");
    let count = |condition: String| Expr::cust(format!("CAST(SUM(CASE WHEN {condition} THEN 1 ELSE 0 END) AS BIGINT)"));
    let bucket = quarter_hour(backend, "subscriptions.trial_ends_at");
    let plans = plans::Entity::find()
        .select_only()
        .column(plans::Column::Id)
        .filter(plans::Column::ShopId.eq(shop_id))
        .filter(plans::Column::Currency.eq(currency));
    subscriptions::Entity::find()
        .select_only()
        .column_as(bucket.clone(), "bucket")
        .column_as(count(paid.to_owned()), "converted")
        .column_as(count(format!("NOT {paid} AND subscriptions.state IN ({ended})")), "lost")
        .filter(S::ShopId.eq(shop_id))
        .filter(S::Test.eq(test))
        .filter(S::TrialEndsAt.gte(from))
        .filter(S::TrialEndsAt.lt(until))
        .filter(S::PlanId.in_subquery(sea_orm::QueryTrait::into_query(plans)))
        .group_by(bucket)
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
