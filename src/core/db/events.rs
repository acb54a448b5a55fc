//! The event log: append-only, written in the transaction of the change each event records.

use chrono::Utc;
use sea_orm::{ActiveValue::NotSet, ColumnTrait, Condition, ConnectionTrait, DbErr, EntityTrait, QueryFilter, Set};

use super::entities::events::{ActiveModel, Column, Entity, Model};
use super::{ListError, Listed, Page, ShopOwned};
use crate::domain::audit::Change;
use crate::domain::event::{EventFilter, EventType};
use crate::domain::ids::{EVENT, new_id};

impl ShopOwned for Entity {
    const SEQ: Column = Column::Seq;
    const ID: Column = Column::Id;
    const SHOP: Column = Column::ShopId;
    fn public_id(row: &Model) -> &str {
        &row.id
    }
}

/// An event about to be recorded: what happened to which object of which shop, and the
/// object as the API shows it now.
#[derive(Debug, Clone)]
pub struct NewEvent {
    pub shop_id: i64,
    pub kind: EventType,
    pub object_id: String,
    pub test: bool,
    pub data: serde_json::Value,
    /// The child transaction a capture, void or refund event reports (`{"uid", "amount"}`).
    pub child: Option<serde_json::Value>,
}

/// Appends events (with new ids, created now).
pub async fn append(db: &impl ConnectionTrait, events: &[NewEvent]) -> Result<Vec<String>, DbErr> {
    let now = super::now_millis(Utc::now());
    let rows: Vec<ActiveModel> = events
        .iter()
        .map(|e| ActiveModel {
            seq: NotSet,
            id: Set(new_id(EVENT)),
            shop_id: Set(e.shop_id),
            kind: Set(e.kind),
            object_id: Set(e.object_id.clone()),
            test: Set(e.test),
            data: Set(e.data.to_string()),
            child_transaction: Set(e.child.as_ref().map(|c| c.to_string())),
            fanned_out: Set(false),
            created_at: Set(now),
        })
        .collect();
    let ids: Vec<String> = rows.iter().map(|r| r.id.clone().unwrap()).collect();
    for chunk in rows.chunks(300) {
        Entity::insert_many(chunk.to_vec()).exec_without_returning(db).await?;
    }
    // A change someone made is in the audit trail too, linked to its event (which holds the
    // object as it became): the engine's own work is not.
    for (row, id) in rows.iter().zip(&ids) {
        let (shop_id, kind, object_id) = (*row.shop_id.as_ref(), *row.kind.as_ref(), row.object_id.as_ref());
        let link = vec![Change::of("event", None::<String>, id)];
        super::audit::record_acting(db, shop_id, kind.as_str(), (kind.object(), object_id), link, Utc::now()).await?;
    }
    Ok(ids)
}

/// The oldest events whose deliveries are not queued yet (at most `limit`).
pub async fn not_fanned_out(db: &impl ConnectionTrait, limit: u64) -> Result<Vec<Model>, DbErr> {
    use sea_orm::{QueryOrder, QuerySelect};
    Entity::find().filter(Column::FannedOut.eq(false)).order_by_asc(Column::Seq).limit(limit).all(db).await
}

/// Marks events as having their deliveries queued.
pub async fn mark_fanned_out(db: &impl ConnectionTrait, ids: Vec<String>) -> Result<(), DbErr> {
    use sea_orm::sea_query::Expr;
    Entity::update_many().col_expr(Column::FannedOut, Expr::value(true)).filter(Column::Id.is_in(ids)).exec(db).await?;
    Ok(())
}

/// Events by id, whoever's they are (the delivery worker's view).
pub async fn by_ids(db: &impl ConnectionTrait, ids: Vec<String>) -> Result<Vec<Model>, DbErr> {
    Entity::find().filter(Column::Id.is_in(ids)).all(db).await
}

/// A page of the shop's events that pass `filter`, newest first.
pub async fn list(
    db: &impl ConnectionTrait,
    shop_id: i64,
    page: &Page,
    filter: &EventFilter,
) -> Result<Listed<Model>, ListError> {
    let mut condition = Condition::all();
    if !filter.types.is_empty() {
        condition = condition.add(Column::Kind.is_in(filter.types.iter().map(|t| t.as_str())));
    }
    if let Some(object_id) = &filter.object_id {
        condition = condition.add(Column::ObjectId.eq(object_id.as_str()));
    }
    if let Some(since) = filter.since {
        condition = condition.add(Column::CreatedAt.gte(since));
    }
    if let Some(until) = filter.until {
        condition = condition.add(Column::CreatedAt.lt(until));
    }
    super::list_where::<Entity>(db, shop_id, page, condition).await
}
