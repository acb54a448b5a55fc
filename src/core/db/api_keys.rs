//! A shop's API keys: each found by its secret's digest (a unique index), so authenticating a
//! request is one lookup whatever the number of keys. The shop row names its primary key's
//! digest and keeps that key sealed, for the Basic auth of its notifications.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter};

use super::entities::api_keys::{Column, Entity, Model};

/// How many characters of a secret are kept to tell keys apart (`sk_` and four more).
pub const PREFIX_CHARS: usize = 7;

/// Says of `shop_id`'s key of `digest` (made by the triggers on `shops` when the shop is
/// created or its key rotated) that its secret begins with `prefix` and who made it; an error
/// if the shop has no such key (its digest was another's: the shop's write is undone).
pub async fn describe(
    db: &impl ConnectionTrait,
    shop_id: i64,
    digest: &str,
    prefix: &str,
    created_by: &str,
) -> Result<(), DbErr> {
    let described = Entity::update_many()
        .col_expr(Column::Prefix, Expr::value(Some(prefix)))
        .col_expr(Column::CreatedBy, Expr::value(created_by))
        .filter(Column::ShopId.eq(shop_id))
        .filter(Column::Digest.eq(digest))
        .exec(db)
        .await?;
    match described.rows_affected {
        1 => Ok(()),
        _ => Err(DbErr::Custom(format!("shop {shop_id} has no key of the digest it was given"))),
    }
}

/// The key whose secret has `digest`, whatever its state.
pub async fn by_digest(db: &impl ConnectionTrait, digest: &str) -> Result<Option<Model>, DbErr> {
    Entity::find().filter(Column::Digest.eq(digest)).one(db).await
}

/// Whether `key` lets requests in at `now`: neither revoked nor expired.
pub fn usable(key: &Model, now: DateTime<Utc>) -> bool {
    key.revoked_at.is_none() && key.expires_at.is_none_or(|at| at > now)
}
