//! Stored customers.

use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveModelTrait, ActiveValue::NotSet, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder,
    Set,
};

use super::entities::customers::{ActiveModel, Column, Entity, Model};
use super::{Searchable, ShopOwned};
use crate::domain::customer::CustomerFields;
use crate::domain::ids::{CUSTOMER, new_id};

impl ShopOwned for Entity {
    const SEQ: Column = Column::Seq;
    const ID: Column = Column::Id;
    const SHOP: Column = Column::ShopId;
    fn public_id(row: &Model) -> &str {
        &row.id
    }
}

impl Searchable for Entity {
    const NAMES: &'static [Column] = &[Column::Email, Column::FirstName, Column::LastName];
}

/// Stores a new customer of the shop.
pub async fn insert(
    db: &impl ConnectionTrait,
    shop_id: i64,
    f: CustomerFields,
    now: DateTime<Utc>,
) -> Result<Model, DbErr> {
    let now = super::now_millis(now);
    ActiveModel {
        seq: NotSet,
        id: Set(new_id(CUSTOMER)),
        shop_id: Set(shop_id),
        first_name: Set(f.first_name),
        last_name: Set(f.last_name),
        address: Set(f.address),
        city: Set(f.city),
        country: Set(f.country),
        zip: Set(f.zip),
        state: Set(f.state),
        phone: Set(f.phone),
        email: Set(f.email),
        ip: Set(f.ip),
        external_id: Set(f.external_id),
        created_at: Set(now),
        updated_at: Set(now),
    }
    .insert(db)
    .await
}

/// The shop's newest customer with this e-mail, or a new one with `fields`.
pub async fn find_or_insert_by_email(
    db: &impl ConnectionTrait,
    shop_id: i64,
    fields: CustomerFields,
    now: DateTime<Utc>,
) -> Result<Model, DbErr> {
    let existing = Entity::find()
        .filter(Column::ShopId.eq(shop_id))
        .filter(Column::Email.eq(fields.email.as_str()))
        .order_by_desc(Column::Seq)
        .one(db)
        .await?;
    match existing {
        Some(customer) => Ok(customer),
        None => insert(db, shop_id, fields, now).await,
    }
}
