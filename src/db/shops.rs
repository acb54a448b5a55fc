//! Shops and their API credentials.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{ActiveModelTrait, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, IntoActiveModel, QueryFilter, Set};
use sha2::{Digest, Sha256};

use super::entities::shops;
use crate::domain::account::ShopSettings;
use crate::domain::ids::random_hex;

/// A new shop and its secret key, which is shown this once.
pub struct CreatedShop {
    pub shop: shops::Model,
    pub secret_key: String,
}

/// A secret key as stored: its digest (to check it) and the key sealed under the
/// key-encryption key (to send it back in notifications).
pub struct StoredSecret {
    pub digest: String,
    pub sealed: String,
}

/// Creates a shop with this secret key.
pub async fn create(
    db: &impl ConnectionTrait,
    name: &str,
    url: Option<String>,
    secret: StoredSecret,
    now: DateTime<Utc>,
) -> Result<shops::Model, DbErr> {
    let now = super::now_millis(now);
    shops::ActiveModel {
        name: Set(name.to_string()),
        url: Set(url),
        secret_digest: Set(secret.digest),
        secret_sealed: Set(Some(secret.sealed)),
        timezone: Set(None),
        signing_key_sealed: Set(None),
        public_key: Set(None),
        notification_url: Set(None),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(db)
    .await
}

/// Stores the shop's key pair, unless it has one already (another instance made it first);
/// answers the shop as stored.
pub async fn set_key_pair(
    db: &impl ConnectionTrait,
    shop_id: i64,
    private_sealed: String,
    public_pem: String,
) -> Result<Option<shops::Model>, DbErr> {
    shops::Entity::update_many()
        .col_expr(shops::Column::SigningKeySealed, Expr::value(Some(private_sealed)))
        .col_expr(shops::Column::PublicKey, Expr::value(Some(public_pem)))
        .filter(shops::Column::Id.eq(shop_id))
        .filter(shops::Column::PublicKey.is_null())
        .exec(db)
        .await?;
    find(db, shop_id).await
}

/// The default notification URLs of these shops.
pub async fn notification_urls(
    db: &impl ConnectionTrait,
    shop_ids: &[i64],
) -> Result<std::collections::HashMap<i64, Option<String>>, DbErr> {
    use sea_orm::QuerySelect;
    let rows: Vec<(i64, Option<String>)> = shops::Entity::find()
        .select_only()
        .columns([shops::Column::Id, shops::Column::NotificationUrl])
        .filter(shops::Column::Id.is_in(shop_ids.iter().copied()))
        .into_tuple()
        .all(db)
        .await?;
    Ok(rows.into_iter().collect())
}

/// Sets where the shop's notifications go by default.
pub async fn set_notification_url(
    db: &impl ConnectionTrait,
    shop_id: i64,
    url: Option<String>,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    shops::Entity::update_many()
        .col_expr(shops::Column::NotificationUrl, Expr::value(url))
        .col_expr(shops::Column::UpdatedAt, Expr::value(super::now_millis(now)))
        .filter(shops::Column::Id.eq(shop_id))
        .exec(db)
        .await?;
    Ok(())
}

/// The shop with this id (for public pages, which show its name).
pub async fn find(db: &impl ConnectionTrait, shop_id: i64) -> Result<Option<shops::Model>, DbErr> {
    shops::Entity::find_by_id(shop_id).one(db).await
}

/// Changes the shop's name, URL and display time zone.
pub async fn update_settings(
    db: &impl ConnectionTrait,
    shop: shops::Model,
    settings: &ShopSettings,
    now: DateTime<Utc>,
) -> Result<shops::Model, DbErr> {
    // Only what the merchant changed is written: another user's edit of another setting stays.
    let mut row = shop.clone().into_active_model();
    if shop.name != settings.name {
        row.name = Set(settings.name.clone());
    }
    if shop.url != settings.url {
        row.url = Set(settings.url.clone());
    }
    if shop.timezone != settings.timezone {
        row.timezone = Set(settings.timezone.clone());
    }
    row.updated_at = Set(super::now_millis(now));
    row.update(db).await
}

/// Replaces the shop's secret key, if it is still the one `shop` was read with: the old one
/// stops working at once. Answers false when another rotation won the race (its key is the
/// one that works).
pub async fn rotate_secret(
    db: &impl ConnectionTrait,
    shop: shops::Model,
    secret: StoredSecret,
    now: DateTime<Utc>,
) -> Result<bool, DbErr> {
    let rotated = shops::Entity::update_many()
        .col_expr(shops::Column::SecretDigest, Expr::value(secret.digest))
        .col_expr(shops::Column::SecretSealed, Expr::value(Some(secret.sealed)))
        .col_expr(shops::Column::UpdatedAt, Expr::value(super::now_millis(now)))
        .filter(shops::Column::Id.eq(shop.id))
        .filter(shops::Column::SecretDigest.eq(shop.secret_digest))
        .exec(db)
        .await?;
    Ok(rotated.rows_affected == 1)
}

/// 256 random bits, with a prefix that makes leaked keys easy to recognise.
pub fn new_secret() -> String {
    format!("sk_{}", random_hex(32))
}

/// SHA-256 of a high-entropy secret: fast enough for every API request, and a stolen table
/// of digests does not give the keys back.
pub fn digest(secret: &str) -> String {
    Sha256::digest(secret.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// Sends `payload` on PostgreSQL's notification `channel` to every session listening.
pub async fn notify(db: &impl ConnectionTrait, channel: &str, payload: &str) -> Result<(), DbErr> {
    let statement = sea_orm::Statement::from_sql_and_values(
        sea_orm::DatabaseBackend::Postgres,
        "SELECT pg_notify($1, $2)",
        [channel.into(), payload.into()],
    );
    db.execute(statement).await.map(|_| ())
}

/// Whether every user of the shop must sign in with two-step login.
pub async fn set_two_step_required(
    db: &impl ConnectionTrait,
    shop_id: i64,
    required: bool,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    shops::Entity::update_many()
        .col_expr(shops::Column::TwoStepRequired, Expr::value(required))
        .col_expr(shops::Column::UpdatedAt, Expr::value(super::now_millis(now)))
        .filter(shops::Column::Id.eq(shop_id))
        .exec(db)
        .await?;
    Ok(())
}

/// How many minutes the shop's dashboard sessions live unused.
pub async fn set_session_idle(
    db: &impl ConnectionTrait,
    shop_id: i64,
    minutes: i32,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    shops::Entity::update_many()
        .col_expr(shops::Column::SessionIdleMinutes, Expr::value(minutes))
        .col_expr(shops::Column::UpdatedAt, Expr::value(super::now_millis(now)))
        .filter(shops::Column::Id.eq(shop_id))
        .exec(db)
        .await?;
    Ok(())
}

/// Whether subscribers may pause and resume on their page.
pub async fn set_subscriber_pause(
    db: &impl ConnectionTrait,
    shop_id: i64,
    allowed: bool,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    shops::Entity::update_many()
        .col_expr(shops::Column::SubscriberPause, Expr::value(allowed))
        .col_expr(shops::Column::UpdatedAt, Expr::value(super::now_millis(now)))
        .filter(shops::Column::Id.eq(shop_id))
        .exec(db)
        .await?;
    Ok(())
}
