//! Inserts gathered inside a transaction and sent in one round trip: what a change writes
//! beside itself (its timeline line, its events, their audit records, movements and mails)
//! reads nothing back, and each statement sent on its own passed to the database and back
//! (on SQLite, to the connection's thread), where the transaction's writer turn waited.
//! On SQLite the statements go as one text, run in order; on PostgreSQL as one statement,
//! each insert but the last a `WITH` part of it (rows inserted in a `WITH` part satisfy the
//! foreign keys of the others, checked when the statement ends).

use sea_orm::sea_query::{Alias, CommonTableExpression, InsertStatement, OnConflict, WithClause};
use sea_orm::sea_query::{PostgresQueryBuilder, SqliteQueryBuilder};
use sea_orm::{ActiveModelTrait, ConnectionTrait, DatabaseBackend, DbErr, EntityTrait, Insert, Iterable, QueryTrait};
use sea_orm::{Statement, Value};

/// The most values one statement of a batch binds (SQLite allows 32,766 a statement,
/// PostgreSQL 65,535); a batch with more goes as several statements.
const VALUES: usize = 30_000;

/// Inserts to send together, in the order they were added (see the module's text).
pub struct Batch {
    backend: DatabaseBackend,
    parts: Vec<Part>,
}

enum Part {
    /// An insert and how many values it binds.
    Insert(Box<InsertStatement>, usize),
    /// Statements of SQLite's own, with their values.
    Sqlite(&'static str, Vec<Value>),
}

impl Batch {
    pub fn new(db: &impl ConnectionTrait) -> Batch {
        Batch { backend: db.get_database_backend(), parts: Vec::new() }
    }

    pub fn backend(&self) -> DatabaseBackend {
        self.backend
    }

    /// Adds the insert of `rows` (each with the same columns set), with `on_conflict` if any.
    pub fn insert<A: ActiveModelTrait>(&mut self, rows: Vec<A>, on_conflict: Option<&OnConflict>) {
        let Some(first) = rows.first() else { return };
        let columns = <A::Entity as EntityTrait>::Column::iter().filter(|c| first.get(*c).is_set()).count().max(1);
        let mut rows = rows.into_iter().peekable();
        while rows.peek().is_some() {
            let chunk: Vec<A> = rows.by_ref().take(VALUES / columns).collect();
            let count = chunk.len() * columns;
            let mut insert = Insert::many(chunk).into_query();
            if let Some(on_conflict) = on_conflict {
                insert.on_conflict(on_conflict.clone());
            }
            self.parts.push(Part::Insert(Box::new(insert), count));
        }
    }

    /// Adds statements in SQLite's SQL and their values: for SQLite only.
    pub fn sqlite(&mut self, sql: &'static str, values: Vec<Value>) {
        debug_assert_eq!(self.backend, DatabaseBackend::Sqlite);
        self.parts.push(Part::Sqlite(sql, values));
    }

    /// Runs what was added, in `db` (the transaction it was gathered for).
    pub async fn send(self, db: &impl ConnectionTrait) -> Result<(), DbErr> {
        for (sql, values) in self.statements() {
            db.execute(Statement::from_sql_and_values(db.get_database_backend(), sql, values)).await?;
        }
        Ok(())
    }

    /// The statements to run: as few as the values allow.
    fn statements(self) -> Vec<(String, Vec<Value>)> {
        let mut groups: Vec<(Vec<Part>, usize)> = Vec::new();
        for part in self.parts {
            let count = match &part {
                Part::Insert(_, count) => *count,
                Part::Sqlite(_, values) => values.len(),
            };
            match groups.last_mut() {
                Some((parts, sum)) if *sum + count <= VALUES => {
                    parts.push(part);
                    *sum += count;
                }
                _ => groups.push((vec![part], count)),
            }
        }
        let backend = self.backend;
        groups.into_iter().map(|(parts, _)| one_statement(backend, parts)).collect()
    }
}

/// `parts` as one statement of `backend`.
fn one_statement(backend: DatabaseBackend, parts: Vec<Part>) -> (String, Vec<Value>) {
    if backend == DatabaseBackend::Postgres {
        let mut inserts: Vec<InsertStatement> = parts
            .into_iter()
            .map(|part| match part {
                Part::Insert(insert, _) => *insert,
                Part::Sqlite(..) => unreachable!("SQLite's statements are added on SQLite only"),
            })
            .collect();
        let last = inserts.pop().expect("a group has a part");
        let (sql, values) = match inserts.is_empty() {
            true => last.build(PostgresQueryBuilder),
            false => {
                let mut with = WithClause::new();
                for (i, insert) in inserts.into_iter().enumerate() {
                    with.cte(
                        CommonTableExpression::new().query(insert).table_name(Alias::new(format!("w{i}"))).to_owned(),
                    );
                }
                with.query(last).build(PostgresQueryBuilder)
            }
        };
        return (sql, values.0);
    }
    let (mut text, mut all) = (String::new(), Vec::new());
    for part in parts {
        let (sql, values) = match part {
            Part::Insert(insert, _) => {
                let (sql, values) = insert.build(SqliteQueryBuilder);
                (sql, values.0)
            }
            Part::Sqlite(sql, values) => (sql.to_string(), values),
        };
        if !text.is_empty() {
            text.push_str("; ");
        }
        text.push_str(&sql);
        all.extend(values);
    }
    (text, all)
}
