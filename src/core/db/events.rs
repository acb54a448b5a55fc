//! The event log: append-only, written in the transaction of the change each event records.

use chrono::Utc;
use sea_orm::{ActiveValue::NotSet, ColumnTrait, Condition, ConnectionTrait, DbErr, EntityTrait, QueryFilter, Set};

use super::entities::events::{ActiveModel, Column, Entity, Model};
use super::{Batch, ListError, Listed, Page, ShopOwned};
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

/// Appends events (with new ids, created now); answers their ids.
pub async fn append(db: &impl ConnectionTrait, events: &[NewEvent]) -> Result<Vec<String>, DbErr> {
    let mut batch = Batch::new(db);
    let ids = append_into(db, &mut batch, events).await?;
    batch.send(db).await?;
    Ok(ids)
}

/// [`append`], its statements added to `batch`, which the caller sends in `db`.
pub async fn append_into(
    db: &impl ConnectionTrait,
    batch: &mut Batch,
    events: &[NewEvent],
) -> Result<Vec<String>, DbErr> {
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
    // A change someone made is in the audit trail too, linked to its event (which holds the
    // object as it became): the engine's own work is not.
    let acted: Vec<(i64, EventType, String)> =
        rows.iter().map(|r| (*r.shop_id.as_ref(), *r.kind.as_ref(), r.object_id.as_ref().clone())).collect();
    batch.insert(rows, None);
    for ((shop_id, kind, object_id), id) in acted.into_iter().zip(&ids) {
        let link = vec![Change::of("event", None::<String>, id)];
        let object = (kind.object(), object_id.as_str());
        super::audit::record_acting_into(db, batch, shop_id, kind.as_str(), object, link, Utc::now()).await?;
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
