//! The ledger of MRR movements (`mrr_movements`): the standing each subscription was left
//! at, the customers' sums, and the movements written in the transaction of their change.

use std::collections::HashMap;

use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DbErr, EntityTrait, FromQueryResult, QueryFilter, QueryOrder, QuerySelect,
};

use super::entities::events;
use super::entities::mrr_movements::{ActiveModel, Column, Entity, Model};
use crate::domain::currency::Currency;
use crate::domain::mrr::{Movement, Standing};

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
