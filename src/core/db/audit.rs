//! The audit trail's rows. A record is written inside the transaction of the change it
//! records, so neither lands without the other. On SQLite, where that transaction is the only
//! writer, it is numbered and chained there and then. On PostgreSQL it waits
//! (`audit_pending`) without holding up the shop's other writers, and [`seal`] then numbers
//! and chains a shop's waiting records into `audit_events`, one shop at a time under the
//! shop's head row, in the order they were written: each instance seals every 50 ms, and
//! every read of the trail seals first, so a change is in the trail by the time anyone looks.
//! Records are never updated; [`prune`] deletes only those older than the retention.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{
    ActiveModelTrait, ActiveValue::Set, ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, DbErr,
    EntityTrait, IntoActiveModel, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect,
};

use super::Batch;
use super::entities::{audit_events, audit_heads, audit_pending};
use crate::domain::access::Role;
use crate::domain::audit::{Actor, ActorKind, Change, Entry, Filter, Origin, Record, chain_hash};
use crate::domain::ids::{AUDIT_EVENT, ordered_id};
use crate::domain::mail::MailKind;

/// Records `entry` at `now` inside `txn`, the transaction of the change it records (never a
/// bare connection: on SQLite the record's statements must commit together); answers the
/// record's id. On PostgreSQL it waits to be chained by [`seal`]; on SQLite, whose
/// transaction holds the only write lock from its start (see [`super::begin`]), it is
/// chained at once (see [`chained_on_sqlite`]).
pub async fn record(txn: &impl ConnectionTrait, entry: &Entry, now: DateTime<Utc>) -> Result<String, DbErr> {
    let mut batch = Batch::new(txn);
    let id = record_into(txn, &mut batch, entry, now).await?;
    batch.send(txn).await?;
    Ok(id)
}

/// [`record`], its statements added to `batch`, which the caller sends in `txn`.
pub async fn record_into(
    txn: &impl ConnectionTrait,
    batch: &mut Batch,
    entry: &Entry,
    now: DateTime<Utc>,
) -> Result<String, DbErr> {
    let (id, row) = waiting(entry, now);
    if batch.backend() == sea_orm::DatabaseBackend::Sqlite {
        let (sql, values) = chained_on_sqlite(entry, &id, row, now);
        batch.sqlite(sql, values);
    } else {
        batch.insert(vec![row], None);
    }
    if entry.notifies_owners() {
        notify_owners(txn, entry, &id, now).await?;
    }
    Ok(id)
}

/// The id and waiting row of `entry` recorded at `now`.
fn waiting(entry: &Entry, now: DateTime<Utc>) -> (String, audit_pending::ActiveModel) {
    let id = ordered_id(AUDIT_EVENT, now);
    let row = audit_pending::ActiveModel {
        n: sea_orm::ActiveValue::NotSet,
        id: Set(id.clone()),
        shop_id: Set(entry.shop_id),
        at: Set(super::now_millis(now)),
        actor_kind: Set(entry.actor.kind),
        actor_id: Set(entry.actor.id.clone()),
        actor_label: Set(entry.actor.label.clone()),
        actor_role: Set(entry.actor.role.map(|r| r.as_str().into())),
        address: Set(entry.origin.address.clone()),
        user_agent: Set(entry.origin.user_agent.clone()),
        request_id: Set(entry.origin.request_id.clone()),
        action: Set(entry.action.clone()),
        object_type: Set(entry.object.as_ref().map(|o| o.0.clone())),
        object_id: Set(entry.object.as_ref().map(|o| o.1.clone())),
        changes: Set(serde_json::to_string(&entry.changes).unwrap_or_else(|_| "[]".into())),
        outcome: Set(entry.outcome),
    };
    (id, row)
}

/// The statements that chain the record `id` of `entry` (its row `row`) on SQLite, with their
/// values: the shop's head (made at number 0 if the shop has none), the record inserted as
/// the number after it with its hash, and the head moved onto it. The hash is finished by
/// the database (`audit_hash`, see `sqlite_functions`) from the head it reads. Sent inside a
/// transaction (from [`super::begin`], or the creates' shared one), whose first statement
/// here writes: SQLite lets one writer in at a time, so the head cannot move between the read
/// and the write, and the record costs its writer no turn of a sealer's. Records that an
/// older paydesk left waiting are chained by [`seal`] after those chained since.
fn chained_on_sqlite(
    entry: &Entry,
    id: &str,
    row: audit_pending::ActiveModel,
    at: DateTime<Utc>,
) -> (&'static str, Vec<sea_orm::Value>) {
    use sea_orm::IdenStatic;
    static SQL: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        let columns: Vec<String> = kept_columns().map(|c| c.as_str().to_string()).collect();
        format!(
            "INSERT INTO audit_heads (shop_id, seq, hash) VALUES (?, 0, '') ON CONFLICT (shop_id) DO NOTHING; \
             INSERT INTO audit_events ({names}, seq, prev_hash, hash) \
             SELECT {values}, seq + 1, hash, audit_hash(hash, ?, seq + 1, ?) FROM audit_heads WHERE shop_id = ?; \
             UPDATE audit_heads SET seq = seq + 1, hash = (SELECT e.hash FROM audit_events e \
             WHERE e.shop_id = audit_heads.shop_id AND e.seq = audit_heads.seq + 1) WHERE shop_id = ?",
            names = columns.iter().map(|c| format!("\"{c}\"")).collect::<Vec<_>>().join(", "),
            values = vec!["?"; columns.len()].join(", "),
        )
    });
    // Hashed as a check will read it back: a number's text does not always parse to the
    // number it was written from.
    let stored = match row.changes.clone().into_value() {
        Some(sea_orm::Value::String(Some(text))) => serde_json::from_str(&text).unwrap_or_default(),
        _ => Vec::new(),
    };
    let read_back = Entry { changes: stored, ..entry.clone() };
    let (before, after) = crate::domain::audit::hashed_around_seq(id, at, &read_back);
    let mut values = vec![entry.shop_id.into()];
    values.extend(kept_columns().map(|c| row.get(c).into_value().unwrap_or(sea_orm::Value::String(None))));
    values.extend([before.into(), after.into(), entry.shop_id.into(), entry.shop_id.into()]);
    (SQL.as_str(), values)
}

/// The columns of a waiting record that its chained copy keeps: all but its place in the
/// queue (`n`), in the table's order.
fn kept_columns() -> impl Iterator<Item = audit_pending::Column> {
    use sea_orm::{IdenStatic, Iterable};
    audit_pending::Column::iter().filter(|c| c.as_str() != "n")
}

/// Inserts `row`, a new object of shop `shop_id` whose id is `object.1`, with the record of
/// `action` by whoever the request acts for (see [`record_acting`]), in one round trip like a
/// plain insert (see [`super::insert_together`] and [`super::insert_then`]); answers the row
/// as stored.
pub async fn insert_recorded<A>(
    db: &DatabaseConnection,
    shop_id: i64,
    row: A,
    (action, object): (&str, (&str, &str)),
    changes: Vec<Change>,
    now: DateTime<Utc>,
) -> Result<<A::Entity as EntityTrait>::Model, DbErr>
where
    A: ActiveModelTrait + sea_orm::ActiveModelBehavior + Clone + Send + Sync + 'static,
    <A::Entity as EntityTrait>::Model: IntoActiveModel<A>,
{
    use sea_orm::FromQueryResult;
    let Some((actor, origin)) = acting::current() else { return row.insert(db).await };
    let entry = Entry::new(shop_id, actor, origin, action).on(object.0, object.1).changing(changes);
    if entry.notifies_owners() {
        let txn = super::begin(db).await?;
        let stored = row.insert(&txn).await?;
        record(&txn, &entry, now).await?;
        txn.commit().await?;
        return Ok(stored);
    }
    let (id, record) = waiting(&entry, now);
    let stored = match db.get_database_backend() {
        sea_orm::DatabaseBackend::Sqlite => {
            super::insert_then(db, row, chained_on_sqlite(&entry, &id, record, now)).await?
        }
        _ => super::insert_together(db, row, record).await?,
    };
    <A::Entity as EntityTrait>::Model::from_query_result(&stored, "")
}

/// How many waiting records one seal chains at once: SQLite's writers wait for it (about
/// 2 ms for 50; there it seals only what an older paydesk left waiting); PostgreSQL's do not,
/// and fewer, larger seals cost it less.
fn seal_batch(backend: sea_orm::DatabaseBackend) -> u64 {
    match backend {
        sea_orm::DatabaseBackend::Postgres => 200,
        _ => 50,
    }
}

/// Chains the shop's waiting records into its trail, in the order they were written;
/// answers how many.
///
/// The records and the shop's head are read, and the chain computed, before the write
/// begins, so the writers of SQLite wait only for the rows' writing (a seal of 200 held them
/// 8 ms, reading and hashing included). The head then moves only from where it was read: a
/// sealer of another instance that came first leaves it elsewhere, and the batch is read
/// again. On PostgreSQL the head's row keeps two sealers of a shop in line.
pub async fn seal(db: &DatabaseConnection, shop: i64) -> Result<u64, DbErr> {
    use audit_pending::Column as P;
    let batch = seal_batch(db.get_database_backend());
    let mut sealed = 0;
    loop {
        // The head first: a seal that lands between the two reads moves it, and this one
        // starts again, rather than chaining again the records that seal took.
        let read = head(db, shop).await?;
        let rows = oldest_waiting(db, shop, batch).await?;
        if rows.is_empty() {
            return Ok(sealed);
        }
        let (from, prev) = read.clone().unwrap_or((0, String::new()));
        let taken: Vec<i64> = rows.iter().map(|r| r.n).collect();
        let (chained, (seq, hash)) = chain(rows, from, prev);
        let txn = super::begin(db).await?;
        let moved = match read {
            None => {
                let head = audit_heads::ActiveModel { shop_id: Set(shop), seq: Set(seq), hash: Set(hash) };
                audit_heads::Entity::insert(head)
                    .on_conflict(OnConflict::column(audit_heads::Column::ShopId).do_nothing().to_owned())
                    .exec_without_returning(&txn)
                    .await?
            }
            Some(_) => {
                audit_heads::Entity::update_many()
                    .col_expr(audit_heads::Column::Seq, Expr::value(seq))
                    .col_expr(audit_heads::Column::Hash, Expr::value(hash))
                    .filter(audit_heads::Column::ShopId.eq(shop))
                    .filter(audit_heads::Column::Seq.eq(from))
                    .exec(&txn)
                    .await?
                    .rows_affected
            }
        };
        if moved != 1 {
            txn.rollback().await?;
            continue;
        }
        let gone = match db.get_database_backend() {
            sea_orm::DatabaseBackend::Postgres => move_chained(&txn, shop, &taken, &chained).await?,
            _ => {
                let chained = chained.into_iter().map(|e| e.into_active_model().reset_all());
                audit_events::Entity::insert_many(chained).exec_without_returning(&txn).await?;
                audit_pending::Entity::delete_many()
                    .filter(P::ShopId.eq(shop))
                    .filter(P::N.is_in(taken.iter().copied()))
                    .exec(&txn)
                    .await?
                    .rows_affected
            }
        };
        if gone != taken.len() as u64 {
            txn.rollback().await?;
            continue;
        }
        txn.commit().await?;
        sealed += taken.len() as u64;
        // Those written meanwhile wait for the next seal, with more: a seal costs the writers
        // a turn, however few it chains.
        if (taken.len() as u64) < batch {
            return Ok(sealed);
        }
    }
}

/// The shop's `batch` oldest waiting records, in the order they were written.
///
/// On PostgreSQL they are read along the shop's index, which stops at the batch's last: the
/// planner's statistics of a queue are always stale (38 rows estimated while 3,600 waited), so
/// left to itself it read every waiting record of the shop and sorted them, 1.7 ms for 200.
async fn oldest_waiting(db: &DatabaseConnection, shop: i64, batch: u64) -> Result<Vec<audit_pending::Model>, DbErr> {
    use audit_pending::Column as P;
    let oldest = audit_pending::Entity::find().filter(P::ShopId.eq(shop)).order_by_asc(P::N).limit(batch);
    if db.get_database_backend() != sea_orm::DatabaseBackend::Postgres {
        return oldest.all(db).await;
    }
    let txn = super::begin(db).await?;
    txn.execute_unprepared("SET LOCAL enable_bitmapscan = off; SET LOCAL enable_sort = off").await?;
    let rows = oldest.all(&txn).await?;
    txn.commit().await?;
    Ok(rows)
}

/// On PostgreSQL, moves the waiting records numbered `taken` into the trail inside the
/// database, each with the number and hashes of its `chained` copy (in the same order), so
/// that only those travel back: a statement of 200 records with every column bound cost
/// paydesk and PostgreSQL more than the records' writes. Answers how many moved.
async fn move_chained(
    txn: &impl ConnectionTrait,
    shop: i64,
    taken: &[i64],
    chained: &[audit_events::Model],
) -> Result<u64, DbErr> {
    use sea_orm::IdenStatic;
    let names: Vec<String> = kept_columns().map(|c| format!("\"{}\"", c.as_str())).collect();
    let copied: Vec<String> = names.iter().map(|c| format!("m.{c}")).collect();
    let sql = format!(
        "WITH link(n, seq, prev_hash, hash) AS (SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[])), \
         moved AS (DELETE FROM audit_pending p USING link WHERE p.shop_id = $5 AND p.n = link.n \
         RETURNING p.*, link.seq, link.prev_hash, link.hash) \
         INSERT INTO audit_events ({}, seq, prev_hash, hash) SELECT {}, m.seq, m.prev_hash, m.hash FROM moved m",
        names.join(", "),
        copied.join(", ")
    );
    let values: [sea_orm::Value; 5] = [
        taken.to_vec().into(),
        chained.iter().map(|e| e.seq).collect::<Vec<i64>>().into(),
        chained.iter().map(|e| e.prev_hash.clone()).collect::<Vec<String>>().into(),
        chained.iter().map(|e| e.hash.clone()).collect::<Vec<String>>().into(),
        shop.into(),
    ];
    let statement = sea_orm::Statement::from_sql_and_values(sea_orm::DatabaseBackend::Postgres, sql, values);
    Ok(txn.execute(statement).await?.rows_affected())
}

/// `rows` chained after the record numbered `seq` whose hash is `hash`: the records, and the
/// number and hash of the last.
fn chain(rows: Vec<audit_pending::Model>, mut seq: i64, mut hash: String) -> (Vec<audit_events::Model>, (i64, String)) {
    let mut chained = Vec::with_capacity(rows.len());
    for row in rows {
        seq += 1;
        let mut event = audit_events::Model {
            id: row.id,
            shop_id: row.shop_id,
            seq,
            at: row.at,
            actor_kind: row.actor_kind,
            actor_id: row.actor_id,
            actor_label: row.actor_label,
            actor_role: row.actor_role,
            address: row.address,
            user_agent: row.user_agent,
            request_id: row.request_id,
            action: row.action,
            object_type: row.object_type,
            object_id: row.object_id,
            changes: row.changes,
            outcome: row.outcome,
            prev_hash: hash,
            hash: String::new(),
        };
        let record = from_row(event.clone());
        event.hash = chain_hash(&record.id, seq, record.at, &record.entry, &record.prev_hash);
        hash = event.hash.clone();
        chained.push(event);
    }
    (chained, (seq, hash))
}

/// Seals the waiting records of every shop; answers how many.
pub async fn seal_all(db: &DatabaseConnection) -> Result<u64, DbErr> {
    let mut sealed = 0;
    for shop in waiting_shops(db).await? {
        sealed += seal(db, shop).await?;
    }
    Ok(sealed)
}

/// The shops with records waiting, found along the index of shop and number one shop at a
/// time. Waiting records come and go thousands a second, and until PostgreSQL's vacuum comes
/// by, their table keeps every one that went: `DISTINCT` read all of them, a table of 16 MB
/// after ten seconds of creates, at every seal.
async fn waiting_shops(db: &DatabaseConnection) -> Result<Vec<i64>, DbErr> {
    let sql = "WITH RECURSIVE shops(shop_id) AS (\
         SELECT min(shop_id) FROM audit_pending \
         UNION ALL SELECT (SELECT min(p.shop_id) FROM audit_pending p WHERE p.shop_id > shops.shop_id) \
         FROM shops WHERE shops.shop_id IS NOT NULL) \
         SELECT shop_id FROM shops WHERE shop_id IS NOT NULL";
    let rows = db.query_all(sea_orm::Statement::from_string(db.get_database_backend(), sql)).await?;
    rows.iter().map(|r| r.try_get_by_index::<i64>(0)).collect()
}

/// Queues a security notice of record `id` to each of the shop's owners, in the record's
/// transaction: the actor too (whoever holds their session may not be them), but not the
/// user an account lock is about, who gets the mail with the link that opens it.
async fn notify_owners(txn: &impl ConnectionTrait, entry: &Entry, id: &str, now: DateTime<Utc>) -> Result<(), DbErr> {
    let locked = entry.object.as_ref().filter(|_| entry.action == "user.locked").map(|(_, id)| id.as_str());
    super::mails::to_owners(txn, entry.shop_id, MailKind::SecurityNotice, id, locked, now).await
}

/// Records, in `txn`, `action` on `object` of shop `shop_id` by whoever the request acts for
/// (see [`acting`]); nothing when no one does (the billing engine, a payer on a pay page).
pub async fn record_acting(
    txn: &impl ConnectionTrait,
    shop_id: i64,
    action: &str,
    object: (&str, &str),
    changes: Vec<Change>,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    let mut batch = Batch::new(txn);
    record_acting_into(txn, &mut batch, shop_id, action, object, changes, now).await?;
    batch.send(txn).await
}

/// [`record_acting`], its statements added to `batch`, which the caller sends in `txn`.
pub async fn record_acting_into(
    txn: &impl ConnectionTrait,
    batch: &mut Batch,
    shop_id: i64,
    action: &str,
    object: (&str, &str),
    changes: Vec<Change>,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    let Some((actor, origin)) = acting::current() else { return Ok(()) };
    let entry = Entry::new(shop_id, actor, origin, action).on(object.0, object.1).changing(changes);
    record_into(txn, batch, &entry, now).await.map(drop)
}

/// Records `entry` on its own, for what changes nothing else: a login, a refusal.
pub async fn record_alone(db: &DatabaseConnection, entry: &Entry, now: DateTime<Utc>) -> Result<String, DbErr> {
    let txn = crate::db::begin(db).await?;
    let id = record(&txn, entry, now).await?;
    txn.commit().await?;
    Ok(id)
}

impl super::ShopOwned for audit_events::Entity {
    const SEQ: audit_events::Column = audit_events::Column::Seq;
    const ID: audit_events::Column = audit_events::Column::Id;
    const SHOP: audit_events::Column = audit_events::Column::ShopId;
    fn public_id(row: &audit_events::Model) -> &str {
        &row.id
    }
}

/// A page of a shop's records that pass `filter`, newest first (waiting ones sealed first).
pub async fn list(
    db: &DatabaseConnection,
    shop_id: i64,
    page: &super::Page,
    filter: &Filter,
) -> Result<super::Listed<Record>, super::ListError> {
    use audit_events::Column as C;
    seal(db, shop_id).await?;
    let mut condition = Condition::all();
    if let Some(actor) = &filter.actor {
        condition = condition.add(match ActorKind::parse(actor) {
            Some(kind) if kind != ActorKind::User => C::ActorKind.eq(kind),
            _ => C::ActorId.eq(actor.as_str()),
        });
    }
    if let Some(action) = &filter.action {
        condition = condition.add(match action.ends_with('.') {
            true => C::Action.starts_with(action.as_str()),
            false => C::Action.eq(action.as_str()),
        });
    }
    if let Some(object) = &filter.object_id {
        condition = condition.add(C::ObjectId.eq(object.as_str()));
    }
    if let Some(from) = filter.from {
        condition = condition.add(C::At.gte(from));
    }
    if let Some(until) = filter.until {
        condition = condition.add(C::At.lt(until));
    }
    let listed = super::list_where::<audit_events::Entity>(db, shop_id, page, condition).await?;
    Ok(super::Listed { rows: listed.rows.into_iter().map(from_row).collect(), next_after: listed.next_after })
}

/// The record with this id, of this shop (waiting ones sealed first).
pub async fn find(db: &DatabaseConnection, shop_id: i64, id: &str) -> Result<Option<Record>, DbErr> {
    seal(db, shop_id).await?;
    let row = audit_events::Entity::find_by_id(id).filter(audit_events::Column::ShopId.eq(shop_id)).one(db).await?;
    Ok(row.map(from_row))
}

/// The shop's oldest record on object `object_id` (an object's creation, where it is kept).
pub async fn first_on(db: &impl ConnectionTrait, shop_id: i64, object_id: &str) -> Result<Option<Record>, DbErr> {
    let row = audit_events::Entity::find()
        .filter(audit_events::Column::ShopId.eq(shop_id))
        .filter(audit_events::Column::ObjectId.eq(object_id))
        .order_by_asc(audit_events::Column::Seq)
        .one(db)
        .await?;
    Ok(row.map(from_row))
}

/// Every shop with records, for checking each chain.
pub async fn shops(db: &impl ConnectionTrait) -> Result<Vec<i64>, DbErr> {
    let heads = audit_heads::Entity::find().order_by_asc(audit_heads::Column::ShopId).all(db).await?;
    Ok(heads.into_iter().map(|h| h.shop_id).collect())
}

/// A shop's records from number `after` on, oldest first, `limit` at a time (for checking
/// the chain without holding it all).
pub async fn chain_from(db: &impl ConnectionTrait, shop_id: i64, after: i64, limit: u64) -> Result<Vec<Record>, DbErr> {
    let rows = audit_events::Entity::find()
        .filter(audit_events::Column::ShopId.eq(shop_id))
        .filter(audit_events::Column::Seq.gt(after))
        .order_by_asc(audit_events::Column::Seq)
        .limit(limit)
        .all(db)
        .await?;
    Ok(rows.into_iter().map(from_row).collect())
}

/// The shop's head: the number and hash of its newest record.
pub async fn head(db: &impl ConnectionTrait, shop_id: i64) -> Result<Option<(i64, String)>, DbErr> {
    Ok(audit_heads::Entity::find_by_id(shop_id).one(db).await?.map(|h| (h.seq, h.hash)))
}

/// How many records a shop has.
pub async fn count(db: &impl ConnectionTrait, shop_id: i64) -> Result<u64, DbErr> {
    audit_events::Entity::find().filter(audit_events::Column::ShopId.eq(shop_id)).count(db).await
}

/// Deletes the records older than `cutoff`; answers how many went.
pub async fn prune(db: &impl ConnectionTrait, cutoff: DateTime<Utc>) -> Result<u64, DbErr> {
    let gone = audit_events::Entity::delete_many().filter(audit_events::Column::At.lt(cutoff)).exec(db).await?;
    Ok(gone.rows_affected)
}

fn from_row(row: audit_events::Model) -> Record {
    let changes: Vec<Change> = serde_json::from_str(&row.changes).unwrap_or_default();
    let entry = Entry {
        shop_id: row.shop_id,
        actor: Actor {
            kind: row.actor_kind,
            id: row.actor_id,
            label: row.actor_label,
            role: row.actor_role.as_deref().and_then(Role::parse),
        },
        origin: Origin { address: row.address, user_agent: row.user_agent, request_id: row.request_id },
        action: row.action,
        object: row.object_type.map(|t| (t, row.object_id.unwrap_or_default())),
        changes,
        outcome: row.outcome,
    };
    Record { id: row.id, seq: row.seq, at: row.at, entry, prev_hash: row.prev_hash, hash: row.hash }
}

/// Who a request acts for, for the changes it makes deep down (a product stored, an event of
/// a capture appended) to be recorded in their own transactions: each request runs in a scope
/// ([`acting::scope`]) that its authentication fills in ([`acting::act_as`]: the API key, a
/// dashboard user, a subscriber, a processor's verified notification). Work a request hands
/// to a task of its own carries the scope along ([`acting::carry`]); the billing engine runs
/// outside any, so its work stays in the event log alone.
pub mod acting {
    use std::sync::{Arc, Mutex};

    use crate::domain::audit::{Actor, Origin};

    type Slot = Arc<Mutex<Option<(Actor, Origin)>>>;

    tokio::task_local! {
        static ACTING: (Slot, Origin);
    }

    /// Runs `work` in a scope of its own, from `origin`, for no one until [`act_as`] says.
    pub async fn scope<F: Future>(origin: Origin, work: F) -> F::Output {
        ACTING.scope((Arc::new(Mutex::new(None)), origin), work).await
    }

    /// Says whom the current request acts for, from now on.
    pub fn act_as(actor: Actor) {
        let _ = ACTING.try_with(|(slot, origin)| {
            if let Ok(mut slot) = slot.lock() {
                *slot = Some((actor, origin.clone()));
            }
        });
    }

    /// Whom the current request acts for, and from where.
    pub fn current() -> Option<(Actor, Origin)> {
        ACTING.try_with(|(slot, _)| slot.lock().ok().and_then(|s| s.clone())).ok().flatten()
    }

    /// `work` in the current scope, to run in a task of its own.
    pub fn carry<F: Future>(work: F) -> impl Future<Output = F::Output> {
        let scope = ACTING.try_with(|(slot, origin)| (slot.clone(), origin.clone())).ok();
        async move {
            match scope {
                Some(scope) => ACTING.scope(scope, work).await,
                None => work.await,
            }
        }
    }

    /// `work` outside any scope: work of paydesk's own that a request only starts.
    pub async fn unattributed<F: Future>(work: F) -> F::Output {
        ACTING.scope((Arc::new(Mutex::new(None)), Origin::default()), work).await
    }
}
