//! Shops and their API credentials.

use chrono::{DateTime, Utc};
use sea_orm::{ActiveModelTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait, IntoActiveModel, Set};
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
    db: &DatabaseConnection,
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
pub async fn find(db: &DatabaseConnection, shop_id: i64) -> Result<Option<shops::Model>, DbErr> {
    shops::Entity::find_by_id(shop_id).one(db).await
}

/// Changes the shop's name, URL and display time zone.
pub async fn update_settings(
    db: &DatabaseConnection,
    shop: shops::Model,
    settings: &ShopSettings,
    now: DateTime<Utc>,
) -> Result<shops::Model, DbErr> {
    let mut row = shop.into_active_model();
    row.name = Set(settings.name.clone());
    row.url = Set(settings.url.clone());
    row.timezone = Set(settings.timezone.clone());
    row.updated_at = Set(super::now_millis(now));
    row.update(db).await
}

/// Replaces the shop's secret key: the old one stops working at once. Returns the new key,
/// which is shown this once.
pub async fn rotate_secret(db: &DatabaseConnection, shop: shops::Model, now: DateTime<Utc>) -> Result<String, DbErr> {
    let secret_key = new_secret();
    let mut row = shop.into_active_model();
    row.secret_digest = Set(digest(&secret_key));
    row.updated_at = Set(super::now_millis(now));
    row.update(db).await?;
    Ok(secret_key)
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
