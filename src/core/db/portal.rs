//! The subscriber page's tokens: links that open it once before they expire, and the
//! sessions they open. Only SHA-256 digests are stored.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{ActiveModelTrait, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, Set};

use super::entities::portal_tokens::{ActiveModel, Column, Entity, Model};
use super::shops::digest;
use crate::domain::vocab::{Language, PortalTokenKind};

/// What a new token opens: whose page, in which language, back to where.
pub struct Opening<'a> {
    pub shop_id: i64,
    pub customer_id: &'a str,
    pub language: Language,
    pub return_url: Option<&'a str>,
}

/// Stores a new token of `kind` (given in full only to its holder) valid until `expires_at`.
pub async fn insert(
    db: &impl ConnectionTrait,
    kind: PortalTokenKind,
    token: &str,
    opening: &Opening<'_>,
    expires_at: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    ActiveModel {
        digest: Set(digest(token)),
        kind: Set(kind),
        shop_id: Set(opening.shop_id),
        customer_id: Set(opening.customer_id.to_string()),
        language: Set(opening.language),
        return_url: Set(opening.return_url.map(str::to_string)),
        created_at: Set(super::now_millis(now)),
        expires_at: Set(super::now_millis(expires_at)),
        used_at: Set(None),
    }
    .insert(db)
    .await?;
    Ok(())
}

/// The token of `kind`, whatever its state.
pub async fn find(db: &impl ConnectionTrait, kind: PortalTokenKind, token: &str) -> Result<Option<Model>, DbErr> {
    Entity::find().filter(Column::Digest.eq(digest(token))).filter(Column::Kind.eq(kind)).one(db).await
}

/// Uses a link: answers it if it was unused and unexpired at `now`, in one conditional
/// update (of two at once, one wins); `None` otherwise.
pub async fn use_link(db: &impl ConnectionTrait, token: &str, now: DateTime<Utc>) -> Result<Option<Model>, DbErr> {
    let at = super::now_millis(now);
    let used = Entity::update_many()
        .col_expr(Column::UsedAt, Expr::value(Some(at)))
        .filter(Column::Digest.eq(digest(token)))
        .filter(Column::Kind.eq(PortalTokenKind::Link))
        .filter(Column::UsedAt.is_null())
        .filter(Column::ExpiresAt.gt(at))
        .exec(db)
        .await?;
    match used.rows_affected {
        1 => find(db, PortalTokenKind::Link, token).await,
        _ => Ok(None),
    }
}

/// Deletes tokens that expired before `before`.
pub async fn prune(db: &impl ConnectionTrait, before: DateTime<Utc>) -> Result<u64, DbErr> {
    Ok(Entity::delete_many().filter(Column::ExpiresAt.lt(before)).exec(db).await?.rows_affected)
}
