//! Dashboard sessions, kept in the app's own database so that any instance can serve any
//! merchant. The table comes from paydesk's migrations like every other one, which keeps a
//! single schema on SQLite and PostgreSQL (and a per-test PostgreSQL schema works as is).

use chrono::{DateTime, Utc};
use sea_orm::{ColumnTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter, QueryOrder, Set, SqlErr};
use tower_sessions::session::{Id, Record};
use tower_sessions::session_store::{self, ExpiredDeletion, SessionStore};

use super::entities::sessions::{ActiveModel, Column, Entity, Model};

/// The tower-sessions store over the `sessions` table.
#[derive(Debug, Clone)]
pub struct DbSessionStore {
    db: DatabaseConnection,
}

impl DbSessionStore {
    /// A store over `db`.
    pub fn new(db: DatabaseConnection) -> Self {
        DbSessionStore { db }
    }

    fn row(record: &Record) -> session_store::Result<ActiveModel> {
        let text = serde_json::to_string(record).map_err(|e| session_store::Error::Encode(e.to_string()))?;
        let data = |key: &str| record.data.get(key);
        let text_of = |key: &str| data(key).and_then(|v| v.as_str()).map(str::to_string);
        let time_of = |key: &str| data(key).and_then(|v| v.as_i64()).and_then(|t| DateTime::from_timestamp(t, 0));
        Ok(ActiveModel {
            id: Set(record.id.to_string()),
            record: Set(text),
            expires_at: Set(expiry(record)),
            user_id: Set(text_of(keys::USER)),
            user_agent: Set(text_of(keys::USER_AGENT)),
            address: Set(text_of(keys::ADDRESS)),
            signed_in_at: Set(time_of(keys::SIGNED_IN_AT)),
            seen_at: Set(time_of(keys::SEEN_AT)),
        })
    }
}

/// The keys of a session's record that the store copies into columns, to list a user's
/// sessions: times are Unix seconds.
pub mod keys {
    pub const USER: &str = "user_id";
    pub const USER_AGENT: &str = "user_agent";
    pub const ADDRESS: &str = "address";
    pub const SIGNED_IN_AT: &str = "signed_in_at";
    pub const SEEN_AT: &str = "seen_at";
}

/// A user's sessions that have not expired by the store's time, newest use first.
pub async fn of_user(db: &DatabaseConnection, user_id: &str) -> Result<Vec<Model>, DbErr> {
    Entity::find()
        .filter(Column::UserId.eq(user_id))
        .filter(Column::ExpiresAt.gt(Utc::now()))
        .order_by_desc(Column::SeenAt)
        .all(db)
        .await
}

/// Ends the user's sessions with these ids (theirs only); answers how many ended.
pub async fn end(db: &DatabaseConnection, user_id: &str, ids: Vec<String>) -> Result<u64, DbErr> {
    let ended = Entity::delete_many().filter(Column::UserId.eq(user_id)).filter(Column::Id.is_in(ids)).exec(db).await?;
    Ok(ended.rows_affected)
}

fn expiry(record: &Record) -> DateTime<Utc> {
    DateTime::from_timestamp(record.expiry_date.unix_timestamp(), 0).unwrap_or(DateTime::<Utc>::MIN_UTC)
}

fn backend(e: DbErr) -> session_store::Error {
    session_store::Error::Backend(e.to_string())
}

#[async_trait::async_trait]
impl SessionStore for DbSessionStore {
    async fn create(&self, record: &mut Record) -> session_store::Result<()> {
        // A new id on the (astronomically unlikely) collision, never someone else's session.
        loop {
            match Entity::insert(Self::row(record)?).exec_without_returning(&self.db).await {
                Err(e) if matches!(e.sql_err(), Some(SqlErr::UniqueConstraintViolation(_))) => {
                    record.id = Id::default()
                }
                other => return other.map(|_| ()).map_err(backend),
            }
        }
    }

    /// Updates a stored session, never brings one back: a request that loaded the session
    /// before a logout deleted it cannot resurrect it by saving afterwards.
    async fn save(&self, record: &Record) -> session_store::Result<()> {
        Entity::update_many()
            .set(Self::row(record)?)
            .filter(Column::Id.eq(record.id.to_string()))
            .exec(&self.db)
            .await
            .map_err(backend)?;
        Ok(())
    }

    async fn load(&self, id: &Id) -> session_store::Result<Option<Record>> {
        let row = Entity::find_by_id(id.to_string())
            .filter(Column::ExpiresAt.gt(Utc::now()))
            .one(&self.db)
            .await
            .map_err(backend)?;
        row.map(|r| serde_json::from_str(&r.record).map_err(|e| session_store::Error::Decode(e.to_string())))
            .transpose()
    }

    async fn delete(&self, id: &Id) -> session_store::Result<()> {
        Entity::delete_by_id(id.to_string()).exec(&self.db).await.map_err(backend)?;
        Ok(())
    }
}

#[async_trait::async_trait]
impl ExpiredDeletion for DbSessionStore {
    async fn delete_expired(&self) -> session_store::Result<()> {
        Entity::delete_many().filter(Column::ExpiresAt.lte(Utc::now())).exec(&self.db).await.map_err(backend)?;
        Ok(())
    }
}
