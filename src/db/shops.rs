//! Shops and their API credentials.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{ActiveModelTrait, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, IntoActiveModel, QueryFilter, Set};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::entities::shops;
use crate::domain::account::ShopSettings;
use crate::domain::ids::random_hex;

/// A new shop and its secret key, which is shown this once and stored only as a digest.
pub struct CreatedShop {
    pub shop: shops::Model,
    pub secret_key: String,
}

/// Creates a shop with a fresh secret key.
pub async fn create(
    db: &impl ConnectionTrait,
    name: &str,
    url: Option<String>,
    now: DateTime<Utc>,
) -> Result<CreatedShop, DbErr> {
    let secret_key = new_secret();
    let now = super::now_millis(now);
    let shop = shops::ActiveModel {
        name: Set(name.to_string()),
        url: Set(url),
        secret_digest: Set(digest(&secret_key)),
        timezone: Set(None),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(db)
    .await?;
    Ok(CreatedShop { shop, secret_key })
}

/// The shop, if `secret_key` is its key. Takes the same time whether or not the shop exists.
pub async fn authenticate(
    db: &impl ConnectionTrait,
    shop_id: i64,
    secret_key: &str,
) -> Result<Option<shops::Model>, DbErr> {
    let given = digest(secret_key);
    let shop = shops::Entity::find_by_id(shop_id).one(db).await?;
    let stored = shop.as_ref().map_or("", |s| s.secret_digest.as_str());
    let matches: bool = given.as_bytes().ct_eq(stored.as_bytes()).into();
    Ok(shop.filter(|_| matches))
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
/// stops working at once. Returns the new key, which is shown this once; `None` when another
/// rotation won the race (its key is the one that works).
pub async fn rotate_secret(
    db: &impl ConnectionTrait,
    shop: shops::Model,
    now: DateTime<Utc>,
) -> Result<Option<String>, DbErr> {
    let secret_key = new_secret();
    let rotated = shops::Entity::update_many()
        .col_expr(shops::Column::SecretDigest, Expr::value(digest(&secret_key)))
        .col_expr(shops::Column::UpdatedAt, Expr::value(super::now_millis(now)))
        .filter(shops::Column::Id.eq(shop.id))
        .filter(shops::Column::SecretDigest.eq(shop.secret_digest))
        .exec(db)
        .await?;
    Ok((rotated.rows_affected == 1).then_some(secret_key))
}

/// 256 random bits, with a prefix that makes leaked keys easy to recognise.
fn new_secret() -> String {
    format!("sk_{}", random_hex(32))
}

/// SHA-256 of a high-entropy secret: fast enough for every API request, and a stolen table
/// of digests does not give the keys back.
fn digest(secret: &str) -> String {
    Sha256::digest(secret.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}
