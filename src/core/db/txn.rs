//! Transactions that will write. SQLite takes one writer at a time: a second writer that
//! finds the lock taken waits in SQLite's busy handler, whose sleeps grow to 100 ms, so under
//! a burst of writes some wait far longer than the writes ahead of them took. This process's
//! writers of one SQLite database therefore take turns here first, in the order they came,
//! and each finds the lock free when its turn comes; SQLite's lock and busy timeout still
//! keep other processes (the command line, a second instance) in line. PostgreSQL's writers
//! need no turn: they wait only for the rows they both change. [`insert_together`] and
//! [`insert_then`] make a create and what it writes beside it (its audit record) one
//! statement shared with the creates that came meanwhile: on SQLite one turn of the lock, on
//! PostgreSQL one insert of many rows.

use std::any::TypeId;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::{Arc, LazyLock, Mutex};

use sea_orm::sea_query::{PostgresQueryBuilder, SqlWriterValues, SqliteQueryBuilder};
use sea_orm::sqlx::pool::PoolConnection;
use sea_orm::sqlx::sqlite::{Sqlite, SqlitePool, SqliteRow};
use sea_orm::{
    ActiveModelTrait, ConnectionTrait, DatabaseBackend, DatabaseConnection, DatabaseTransaction, DbErr, EntityTrait,
    ExecResult, Insert, Iterable, QueryResult, QueryTrait, RuntimeErr, Statement, TransactionTrait,
};
use sea_query_binder::SqlxValues;
use tokio::sync::OwnedMutexGuard;

/// What this process keeps for each SQLite database file it writes to: the writers' turn, and
/// the creates waiting to be committed together.
#[derive(Default)]
struct Writers {
    turn: Arc<tokio::sync::Mutex<()>>,
    waiting: Queue<Job>,
}

static WRITERS: LazyLock<Mutex<HashMap<PathBuf, Arc<Writers>>>> = LazyLock::new(Default::default);

/// The creates waiting on each PostgreSQL pool this process writes through, by the address of
/// the pool's settings (one `Arc` a pool, alive while a create of it waits).
static POSTGRES_WAITING: LazyLock<Mutex<HashMap<usize, Queue<PgJob>>>> = LazyLock::new(Default::default);

/// A queue of creates, shared by the requests that add to it and the tasks that commit it.
type Queue<J> = Arc<Mutex<Waiting<J>>>;

/// A transaction begun by [`begin`]: it holds its database's writer turn (on SQLite) until it
/// commits, rolls back or is dropped.
pub struct Txn {
    // Declared first, so dropped (rolled back) before the turn passes on.
    inner: DatabaseTransaction,
    _turn: Option<OwnedMutexGuard<()>>,
}

impl Txn {
    pub async fn commit(self) -> Result<(), DbErr> {
        self.inner.commit().await
    }

    pub async fn rollback(self) -> Result<(), DbErr> {
        self.inner.rollback().await
    }

    /// A savepoint in this transaction: what is done in it is undone alone if it rolls back.
    pub async fn savepoint(&self) -> Result<DatabaseTransaction, DbErr> {
        #[allow(clippy::disallowed_methods)]
        self.inner.begin().await
    }
}

/// Begins a transaction on `db` that may write (see the module's text).
///
/// On SQLite it takes the database's write lock at once, as `BEGIN IMMEDIATE` would, after
/// this process's earlier writers and under the busy timeout for other processes'. A
/// transaction that read first and wrote later could not take the lock once another writer
/// had taken it since: SQLite answers "database is locked" at once (codes 5 and 517),
/// whatever the timeout.
///
/// On PostgreSQL, a plain `BEGIN`, sent from a task of its own: the driver (sqlx 0.8) counts a
/// transaction begun only once the server has answered, so a request dropped while it waited
/// (a client gone, a timeout) left the pooled connection inside a transaction nothing would
/// end, and the next request on it wrote into that transaction ("there is already a
/// transaction in progress"). The task always finishes, and a transaction nobody took is
/// rolled back.
pub async fn begin(db: &DatabaseConnection) -> Result<Txn, DbErr> {
    if db.get_database_backend() != DatabaseBackend::Sqlite {
        let db = db.clone();
        #[allow(clippy::disallowed_methods)]
        let begun = tokio::spawn(async move { db.begin().await });
        let inner = begun.await.map_err(|e| DbErr::Custom(format!("beginning a transaction: {e}")))??;
        return Ok(Txn { inner, _turn: None });
    }
    let turn = writers(db).turn.clone().lock_owned().await;
    #[allow(clippy::disallowed_methods)]
    let inner = db.begin().await?;
    // A write that changes nothing still takes the lock when it starts.
    inner.execute_unprepared(TAKE_WRITE_LOCK).await?;
    Ok(Txn { inner, _turn: Some(turn) })
}

/// The writers of the SQLite database `db`.
fn writers(db: &DatabaseConnection) -> Arc<Writers> {
    let file = db.get_sqlite_connection_pool().connect_options().get_filename().to_path_buf();
    let mut writers = WRITERS.lock().unwrap_or_else(|e| e.into_inner());
    writers.entry(file).or_default().clone()
}

/// Inserts `first` (answering its row as stored) and `then` as one transaction in one round
/// trip, shared with the other creates waiting at that moment: on PostgreSQL as one statement
/// (two inserts of one `WITH`) for every create of the same tables waiting (see
/// [`commit_postgres`]); on SQLite inside one transaction (see [`commit_together`]). Answers
/// `first`'s row once it is committed. A lone create waits for nothing more.
///
/// `then` answers no row. Tasks of their own commit the creates: one for an SQLite file, whose
/// writers take turns anyway; two for each PostgreSQL pool, so that the creates that come
/// while one statement runs wait less (p99 10-13 ms against 12-14 ms with one, at 16
/// connections). A request dropped midway (its client gone) cannot stop a statement between
/// rows.
pub async fn insert_together<A, B>(db: &DatabaseConnection, mut first: A, mut then: B) -> Result<QueryResult, DbErr>
where
    A: ActiveModelTrait + Clone + Send + Sync + 'static,
    B: ActiveModelTrait + Clone + Send + Sync + 'static,
{
    let backend = db.get_database_backend();
    if backend == DatabaseBackend::Postgres {
        let (id, shape) = (id_of(&first), shape(backend, &first, &then));
        let (model, record) = (first.clone(), then.clone());
        let text = Arc::new(move |rows| together_text(backend, &model, &record, rows));
        let (done, answer) = tokio::sync::oneshot::channel();
        let (first, then) = (given(&mut first), given(&mut then));
        let job = PgJob { db: db.clone(), shape, text, id, first, then, done };
        let queue = postgres_waiting(db);
        if enqueue(&queue, job, 2) {
            let done = Done { queue, finished: false };
            tokio::spawn(commit_postgres(done));
        }
        return answer.await.map_err(ended_early)?;
    }
    let recorded = insert_text(&then, false);
    insert_then(db, first, (&recorded, given(&mut then))).await
}

/// On SQLite, inserts `first` (answering its row as stored) and runs `then`, statements in
/// SQLite's SQL and their values, after it in one transaction shared with the creates waiting
/// (see [`commit_together`]), as [`insert_together`] does with a row.
pub async fn insert_then<A>(
    db: &DatabaseConnection,
    mut first: A,
    (then, then_values): (&str, Vec<sea_orm::Value>),
) -> Result<QueryResult, DbErr>
where
    A: ActiveModelTrait + Clone + Send + Sync + 'static,
{
    if db.get_database_backend() != DatabaseBackend::Sqlite {
        return Err(DbErr::Custom("insert_then takes SQLite's statements".into()));
    }
    let text = insert_text(&first, true);
    let mut values = given(&mut first);
    values.extend(then_values);
    commit_on_sqlite(db, format!("{text}; {then}"), values).await
}

/// SQLite's insert of a row of `row`'s shape (table and columns set), answering the row if
/// `returning`; written once for each shape, since sea-query took as long to write it as the
/// rest of a create's work in paydesk.
fn insert_text<A: ActiveModelTrait + Clone + 'static>(row: &A, returning: bool) -> Arc<str> {
    type Texts = HashMap<(TypeId, u64, bool), Arc<str>>;
    static TEXTS: LazyLock<Mutex<Texts>> = LazyLock::new(Default::default);
    let shape = (TypeId::of::<A>(), set(row), returning);
    if let Some(text) = TEXTS.lock().unwrap_or_else(|e| e.into_inner()).get(&shape) {
        return text.clone();
    }
    let mut insert = Insert::one(row.clone()).into_query();
    if returning {
        insert.returning_all();
    }
    let mut sql = SqlWriterValues::new("?", false);
    insert.build_collect_into(SqliteQueryBuilder, &mut sql);
    let (text, values) = sql.into_parts();
    // The values are bound in the order of the columns set, as sea-query writes them.
    debug_assert!(values.0 == given(&mut row.clone()));
    let text: Arc<str> = text.into();
    TEXTS.lock().unwrap_or_else(|e| e.into_inner()).insert(shape, text.clone());
    text
}

/// Queues `sql`, a create's statements, and its `values` to be committed with the creates
/// waiting on the SQLite database `db` (see [`commit_together`]); answers the row its first
/// statement answers.
async fn commit_on_sqlite(
    db: &DatabaseConnection,
    sql: String,
    values: Vec<sea_orm::Value>,
) -> Result<QueryResult, DbErr> {
    let values = sea_orm::sea_query::Values(values);
    let (done, answer) = tokio::sync::oneshot::channel();
    let job = Job { sql, values: SqlxValues(values), done };
    let writers = writers(db);
    if enqueue(&writers.waiting, job, 1) {
        // Made before the task: a task dropped before it first runs still lets go of the queue.
        let done = Done { queue: writers.waiting.clone(), finished: false };
        tokio::spawn(commit_together(db.get_sqlite_connection_pool().clone(), writers, done));
    }
    let row = answer.await.map_err(ended_early)??;
    Ok(QueryResult::from(row))
}

/// Adds `job` to `queue`; answers whether a task must start committing it: while fewer than
/// `tasks` commit that queue.
fn enqueue<J>(queue: &Mutex<Waiting<J>>, job: J, tasks: usize) -> bool {
    let mut waiting = queue.lock().unwrap_or_else(|e| e.into_inner());
    waiting.jobs.push(job);
    let start = waiting.committing < tasks;
    waiting.committing += usize::from(start);
    start
}

/// What a create is answered when the task committing it ended without answering.
fn ended_early(_: tokio::sync::oneshot::error::RecvError) -> DbErr {
    DbErr::Custom("the commit of the insert ended early".into())
}

/// The creates waiting on the PostgreSQL pool of `db`: a statement goes through the pool of
/// the creates it holds.
fn postgres_waiting(db: &DatabaseConnection) -> Queue<PgJob> {
    let key = Arc::as_ptr(&db.get_postgres_connection_pool().connect_options()) as usize;
    let mut all = POSTGRES_WAITING.lock().unwrap_or_else(|e| e.into_inner());
    all.entry(key).or_default().clone()
}

/// The value of `row`'s `id` column, by which a create finds its row among those of a shared
/// statement (`None`: the create is committed alone).
fn id_of<A: ActiveModelTrait>(row: &A) -> Option<String> {
    use sea_orm::IdenStatic;
    let column = <A::Entity as EntityTrait>::Column::iter().find(|c| c.as_str() == "id")?;
    match row.get(column).into_value()? {
        sea_orm::Value::String(Some(id)) => Some(*id),
        _ => None,
    }
}

/// What tells apart the statements of [`insert_together`]: the backend, and each table with
/// the columns it sets.
type Shape = (bool, TypeId, u64, TypeId, u64);

fn shape<A, B>(backend: DatabaseBackend, first: &A, then: &B) -> Shape
where
    A: ActiveModelTrait + 'static,
    B: ActiveModelTrait + 'static,
{
    (backend == DatabaseBackend::Postgres, TypeId::of::<A>(), set(first), TypeId::of::<B>(), set(then))
}

/// The statement of [`insert_together`] on PostgreSQL, `rows` creates of `first`'s and
/// `then`'s shape: the values of every `first` bound before those of every `then`, each row's
/// in the order of its columns. Written once for each shape and number, since sea-query took
/// as long to write it as the rest of a create's work in paydesk.
fn together_text<A, B>(backend: DatabaseBackend, first: &A, then: &B, rows: usize) -> Arc<str>
where
    A: ActiveModelTrait + Clone + 'static,
    B: ActiveModelTrait + Clone + 'static,
{
    type Texts = HashMap<(Shape, usize), Arc<str>>;
    static TEXTS: LazyLock<Mutex<Texts>> = LazyLock::new(Default::default);
    let shape = shape(backend, first, then);
    if let Some(text) = TEXTS.lock().unwrap_or_else(|e| e.into_inner()).get(&(shape, rows)) {
        return text.clone();
    }
    let made = Insert::many(std::iter::repeat_n(first.clone(), rows)).into_query().returning_all().to_owned();
    let recorded = Insert::many(std::iter::repeat_n(then.clone(), rows)).into_query();
    let mut sql = SqlWriterValues::new("$", true);
    let _ = sql.write_str("WITH \"made\" AS (");
    made.build_collect_into(PostgresQueryBuilder, &mut sql);
    let _ = sql.write_str("), \"then\" AS (");
    recorded.build_collect_into(PostgresQueryBuilder, &mut sql);
    let _ = sql.write_str(") SELECT * FROM \"made\"");
    let (text, values) = sql.into_parts();
    // The values are bound in the order of the columns set, as sea-query writes them.
    debug_assert_eq!(values.0.len(), rows * (given(&mut first.clone()).len() + given(&mut then.clone()).len()));
    debug_assert!(rows > 1 || values.0 == [given(&mut first.clone()), given(&mut then.clone())].concat());
    let text: Arc<str> = text.into();
    TEXTS.lock().unwrap_or_else(|e| e.into_inner()).insert((shape, rows), text.clone());
    text
}

/// Which of `row`'s columns are set, one bit each in the entity's order (no table has 64).
fn set<A: ActiveModelTrait>(row: &A) -> u64 {
    let columns = <A::Entity as EntityTrait>::Column::iter();
    assert!(columns.len() <= 64, "a table of more than 64 columns");
    columns.enumerate().filter(|(_, c)| !row.is_not_set(*c)).fold(0, |mask, (i, _)| mask | 1 << i)
}

/// The values `row` sets, in the entity's order of columns.
fn given<A: ActiveModelTrait>(row: &mut A) -> Vec<sea_orm::Value> {
    let columns = <A::Entity as EntityTrait>::Column::iter();
    columns.filter_map(|c| row.take(c).into_value()).collect()
}

/// A create waiting for its commit on SQLite: its statements, their values, and where its
/// row goes.
struct Job {
    sql: String,
    values: SqlxValues,
    done: tokio::sync::oneshot::Sender<Result<SqliteRow, DbErr>>,
}

/// A create waiting for its commit on PostgreSQL: its pool, its shape, the statement of that many
/// creates of it, its id, its values (`first`'s, then `then`'s), and where its row goes.
struct PgJob {
    db: DatabaseConnection,
    shape: Shape,
    text: Arc<dyn Fn(usize) -> Arc<str> + Send + Sync>,
    id: Option<String>,
    first: Vec<sea_orm::Value>,
    then: Vec<sea_orm::Value>,
    done: tokio::sync::oneshot::Sender<Result<QueryResult, DbErr>>,
}

/// The creates waiting on one database, and how many tasks are committing them.
struct Waiting<J> {
    jobs: Vec<J>,
    committing: usize,
}

impl<J> Default for Waiting<J> {
    fn default() -> Self {
        Waiting { jobs: Vec::new(), committing: 0 }
    }
}

/// The committing task's hold on its queue: if the task ends otherwise than with none left
/// (dropped before it ran, or by a panic), those still waiting are answered with an error
/// (dropped), and the next create starts a task again.
struct Done<J> {
    queue: Queue<J>,
    finished: bool,
}

impl<J> Done<J> {
    /// Whether no create waits: then the task lets go of the queue, and the next create
    /// starts one again.
    fn idle(&mut self) -> bool {
        let mut waiting = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        if waiting.jobs.is_empty() {
            waiting.committing -= 1;
            self.finished = true;
        }
        self.finished
    }

    /// Up to [`TOGETHER`] of the creates waiting, in the order they came.
    fn take(&mut self) -> Vec<J> {
        let mut waiting = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        let taken = waiting.jobs.len().min(TOGETHER);
        let rest = waiting.jobs.split_off(taken);
        std::mem::replace(&mut waiting.jobs, rest)
    }
}

impl<J> Drop for Done<J> {
    fn drop(&mut self) {
        if !self.finished {
            let mut waiting = self.queue.lock().unwrap_or_else(|e| e.into_inner());
            waiting.committing -= 1;
            // The creates are left to a task still committing, if there is one.
            if waiting.committing == 0 {
                waiting.jobs.clear();
            }
        }
    }
}

/// How many creates share one transaction at most.
const TOGETHER: usize = 64;

/// Commits the waiting creates of one SQLite database, in turns, until none waits: each turn
/// takes every create waiting by the time it has the write lock, and commits them in one
/// transaction (see [`commit`]). A commit's cost (the pages written to the log, the passes between this task and SQLite's thread) is then shared by the
/// creates that came meanwhile, instead of each waiting for the one before it to commit alone.
/// Runs in a task of its own: a request dropped midway (its client gone) cannot stop a
/// transaction between its statements.
async fn commit_together(pool: SqlitePool, writers: Arc<Writers>, mut done: Done<Job>) {
    loop {
        if done.idle() {
            return;
        }
        let _turn = writers.turn.clone().lock_owned().await;
        let conn = pool.acquire().await;
        // Every create waiting by now: only this task takes them, so there is at least one.
        let jobs = done.take();
        match conn {
            Ok(mut conn) => commit(&mut conn, jobs).await,
            Err(e) => answer_all(jobs.into_iter().map(|j| j.done), &DbErr::Conn(RuntimeErr::SqlxError(e))),
        }
    }
}

/// Commits the waiting creates of one PostgreSQL database until none waits: those of one
/// shape that came in a row share a statement (see [`commit_rows`]), so that a burst of
/// creates costs the database one statement, one transaction and one commit for many, where
/// each had cost it all three.
async fn commit_postgres(mut done: Done<PgJob>) {
    while !done.idle() {
        let mut jobs = done.take();
        while !jobs.is_empty() {
            // The longest run of one shape from the front, cut to a power of two: each
            // connection keeps a prepared statement for each number of rows it was sent.
            let alike = |j: &&PgJob| j.shape == jobs[0].shape && j.id.is_some();
            let rest = jobs.split_off(1 << jobs.iter().take_while(alike).count().max(1).ilog2());
            commit_rows(std::mem::replace(&mut jobs, rest)).await;
        }
    }
}

/// Inserts `jobs`, creates of one shape, in one statement, and answers each with its
/// row (found by its id). If the database refused the statement (a constraint, a value it
/// cannot store), each is tried again alone, so that only the one at fault is answered its
/// error.
async fn commit_rows(jobs: Vec<PgJob>) {
    let db = jobs[0].db.clone();
    let text = (jobs[0].text)(jobs.len());
    let values = jobs.iter().flat_map(|j| j.first.iter()).chain(jobs.iter().flat_map(|j| j.then.iter())).cloned();
    let statement = Statement::from_sql_and_values(DatabaseBackend::Postgres, text.as_ref(), values);
    match db.query_all(statement).await {
        Ok(mut rows) if rows.len() == 1 && jobs.len() == 1 => {
            if let Some(job) = jobs.into_iter().next() {
                let _ = job.done.send(rows.pop().ok_or(DbErr::RecordNotInserted));
            }
        }
        Ok(mut rows) if rows.len() == jobs.len() => {
            for job in jobs {
                let at = rows.iter().position(|r| r.try_get::<String>("", "id").ok() == job.id);
                let _ = job.done.send(at.map(|at| rows.swap_remove(at)).ok_or(DbErr::RecordNotInserted));
            }
        }
        Ok(_) => answer_all(jobs.into_iter().map(|j| j.done), &DbErr::RecordNotInserted),
        Err(e) if jobs.len() == 1 => {
            if let Some(job) = jobs.into_iter().next() {
                let _ = job.done.send(Err(e));
            }
        }
        Err(DbErr::Query(RuntimeErr::SqlxError(sea_orm::sqlx::Error::Database(_)))) => {
            for job in jobs {
                Box::pin(commit_rows(vec![job])).await;
            }
        }
        Err(e) => answer_all(jobs.into_iter().map(|j| j.done), &e),
    }
}

/// Commits `jobs` in one transaction on `conn`, in one call (their statements one after the
/// other between `BEGIN IMMEDIATE` and `COMMIT`), and answers each. If one of them broke a
/// constraint, each is tried again alone, so that only that one is answered its error.
async fn commit(conn: &mut PoolConnection<Sqlite>, jobs: Vec<Job>) {
    let mut sql = String::from("BEGIN IMMEDIATE; ");
    let mut values = Vec::new();
    for job in &jobs {
        sql.push_str(&job.sql);
        sql.push_str("; ");
        values.extend(job.values.0.iter().cloned());
    }
    sql.push_str("COMMIT");
    match run(conn, &sql, values).await {
        // Each create's first insert answers its row; its other statements, none.
        Ok(rows) if rows.len() == jobs.len() => {
            for (job, row) in jobs.into_iter().zip(rows) {
                let _ = job.done.send(Ok(row));
            }
        }
        Ok(_) => answer_all(jobs.into_iter().map(|j| j.done), &DbErr::RecordNotInserted),
        // Alone, its own error (a unique key taken stays recognisable as one).
        Err(e) if jobs.len() == 1 => {
            if let Some(job) = jobs.into_iter().next() {
                let _ = job.done.send(Err(e));
            }
        }
        // A constraint one of them broke: each alone, so only that one is refused.
        Err(DbErr::Query(RuntimeErr::SqlxError(sea_orm::sqlx::Error::Database(e))))
            if e.kind() != sea_orm::sqlx::error::ErrorKind::Other =>
        {
            for job in jobs {
                let sql = format!("BEGIN IMMEDIATE; {}; COMMIT", job.sql);
                let answer = run(conn, &sql, job.values.0.0).await;
                let _ = job.done.send(answer.and_then(|rows| rows.into_iter().next().ok_or(DbErr::RecordNotInserted)));
            }
        }
        // The database's own trouble (its lock held past the busy timeout by another process,
        // the disk, the connection): every one of them is answered with it at once, rather
        // than each waiting for it again alone.
        Err(e) => answer_all(jobs.into_iter().map(|j| j.done), &e),
    }
}

/// Runs `sql`, a whole transaction, on `conn`: its rows, or its error once it is rolled back
/// (or `conn` closed, if it cannot be).
async fn run(
    conn: &mut PoolConnection<Sqlite>,
    sql: &str,
    values: Vec<sea_orm::Value>,
) -> Result<Vec<SqliteRow>, DbErr> {
    let values = SqlxValues(sea_orm::sea_query::Values(values));
    match sea_orm::sqlx::query_with(sql, values).fetch_all(&mut **conn).await {
        Ok(rows) => Ok(rows),
        Err(e) => {
            // A statement that failed leaves the transaction open: it is undone before the
            // connection goes back, or the connection is closed.
            if sea_orm::sqlx::query("ROLLBACK").execute(&mut **conn).await.is_err() {
                conn.close_on_drop();
            }
            Err(DbErr::Query(RuntimeErr::SqlxError(e)))
        }
    }
}

/// Answers every create of `answers` with `error` (as text: a `DbErr` is not `Clone`).
fn answer_all<R>(answers: impl IntoIterator<Item = tokio::sync::oneshot::Sender<Result<R, DbErr>>>, error: &DbErr) {
    for done in answers {
        let _ = done.send(Err(DbErr::Custom(error.to_string())));
    }
}

/// A write of SQLite's that changes nothing, to a table every migrated database has.
const TAKE_WRITE_LOCK: &str = "UPDATE seaql_migrations SET applied_at = applied_at WHERE 1 = 0";

#[async_trait::async_trait]
impl ConnectionTrait for Txn {
    fn get_database_backend(&self) -> DatabaseBackend {
        self.inner.get_database_backend()
    }

    async fn execute(&self, stmt: Statement) -> Result<ExecResult, DbErr> {
        self.inner.execute(stmt).await
    }

    async fn execute_unprepared(&self, sql: &str) -> Result<ExecResult, DbErr> {
        self.inner.execute_unprepared(sql).await
    }

    async fn query_one(&self, stmt: Statement) -> Result<Option<QueryResult>, DbErr> {
        self.inner.query_one(stmt).await
    }

    async fn query_all(&self, stmt: Statement) -> Result<Vec<QueryResult>, DbErr> {
        self.inner.query_all(stmt).await
    }

    fn support_returning(&self) -> bool {
        self.inner.support_returning()
    }
}
