//! A shop's credentials. Its API secret is kept as a digest, to check it, and sealed, to send
//! it back in the Basic auth of notifications; its RSA key pair signs notifications
//! (`Content-Signature`). The key pair is made the first time it is needed (a notification,
//! the settings page, `GET /shop`), once: instances that make one at the same moment agree
//! on the first one stored.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use chrono::{DateTime, Utc};
use ring::rand::SystemRandom;
use ring::signature::{RSA_PKCS1_SHA256, RsaKeyPair};
use rsa::pkcs8::{EncodePrivateKey, EncodePublicKey, LineEnding};
use sea_orm::DbErr;

use crate::db::entities::shops;
use crate::db::shops::{CreatedShop, StoredSecret};
use crate::db::{self};
use crate::external::vault::Vault;
use crate::web::error::AppError;
use crate::web::state::AppState;

/// What a shop's API secret is sealed for.
pub fn secret_context(digest: &str) -> String {
    format!("shop-secret:{digest}")
}

fn signing_context(shop_id: i64) -> String {
    format!("shop-signing-key:{shop_id}")
}

/// A new secret key, and how it is stored.
pub fn new_secret(vault: &Vault) -> (String, StoredSecret) {
    let secret_key = db::shops::new_secret();
    let digest = db::shops::digest(&secret_key);
    let sealed = vault.seal(secret_key.as_bytes(), &secret_context(&digest));
    let prefix = secret_key.chars().take(db::api_keys::PREFIX_CHARS).collect();
    (secret_key, StoredSecret { digest, sealed, prefix })
}

/// Creates a shop with a new secret key (shown this once).
pub async fn create_shop(
    db: &sea_orm::DatabaseConnection,
    vault: &Vault,
    name: &str,
    url: Option<String>,
    now: DateTime<Utc>,
) -> Result<CreatedShop, DbErr> {
    use crate::domain::audit::{Actor, Change, Entry, Origin};
    let (secret_key, stored) = new_secret(vault);
    let txn = crate::db::begin(db).await?;
    let shop = db::shops::create(&txn, name, url, stored, "paydesk shop create", now).await?;
    let origin = Origin { user_agent: Some("paydesk shop create".into()), ..Origin::default() };
    let changes = vec![Change::of("name", None::<String>, name), Change::of("url", None::<String>, &shop.url)];
    let entry = Entry::new(shop.id, Actor::operator(), origin, "shop.created").on("shop", shop.id.to_string());
    db::audit::record(&txn, &entry.changing(changes), now).await?;
    txn.commit().await?;
    Ok(CreatedShop { shop, secret_key })
}

/// Replaces the shop's secret key; the new key, or `None` when another rotation won. The old
/// key is refused at once by every instance (keys are read at each request); the answer waits
/// until every instance forgot the shop (see [`crate::services::shops`]), whose row names the
/// key its notifications carry.
pub async fn rotate_secret(
    state: &AppState,
    shop: shops::Model,
    audit: &crate::domain::audit::Entry,
    now: DateTime<Utc>,
) -> Result<Option<String>, DbErr> {
    let (secret_key, stored) = new_secret(&state.vault);
    Ok(crate::services::shops::rotate_secret(state, shop, stored, audit, now).await?.then_some(secret_key))
}

/// The shop's API secret in clear, for the Basic auth of its notifications; `None` for a
/// secret made before paydesk kept it (until the key is rotated).
pub fn api_secret(vault: &Vault, shop: &shops::Model) -> Option<String> {
    let sealed = shop.secret_sealed.as_deref()?;
    vault.open_text(sealed, &secret_context(&shop.secret_digest)).ok()
}

/// The shop's key pair: its private key (PKCS#8 DER) and public key (PEM), made now if the
/// shop has none yet.
pub async fn key_pair(state: &AppState, shop: &shops::Model) -> Result<KeyPair, AppError> {
    let vault = &state.vault;
    let stored = match (&shop.signing_key_sealed, &shop.public_key) {
        (Some(_), Some(_)) => shop.clone(),
        _ => {
            let (private_der, public_pem) = tokio::task::spawn_blocking(generate)
                .await
                .map_err(|_| AppError::Internal("generating a key pair stopped".into()))??;
            let sealed = vault.seal(&private_der, &signing_context(shop.id));
            let stored = db::shops::set_key_pair(&state.db, shop.id, sealed, public_pem);
            crate::services::shops::changing(state, shop.id, stored).await?.ok_or(AppError::NotFound("Shop"))?
        }
    };
    let (Some(sealed), Some(public_pem)) = (stored.signing_key_sealed, stored.public_key) else {
        return Err(AppError::Internal(format!("shop {} has no key pair", shop.id)));
    };
    let private_der = vault
        .open(&sealed, &signing_context(shop.id))
        .map_err(|e| AppError::Internal(format!("the signing key of shop {}: {e}", shop.id)))?;
    let private = RsaKeyPair::from_pkcs8(&private_der)
        .map_err(|e| AppError::Internal(format!("an unusable signing key of shop {}: {e}", shop.id)))?;
    Ok(KeyPair { private, public_pem })
}

/// A shop's RSA key pair.
pub struct KeyPair {
    private: RsaKeyPair,
    /// The public key, PEM (SPKI, `-----BEGIN PUBLIC KEY-----`).
    pub public_pem: String,
}

impl KeyPair {
    /// The public key as bePaid's back office shows it: the base64 of the PEM without its
    /// header lines and line breaks (what bePaid's PHP and Ruby libraries take).
    pub fn public_base64(&self) -> String {
        self.public_pem.lines().filter(|l| !l.starts_with("-----")).collect()
    }

    /// The `Content-Signature` of `body`: base64 of its RSA-SHA256 (PKCS#1 v1.5) signature.
    pub fn sign(&self, body: &[u8]) -> Result<String, AppError> {
        let key = &self.private;
        let mut signature = vec![0u8; key.public().modulus_len()];
        key.sign(&RSA_PKCS1_SHA256, &SystemRandom::new(), body, &mut signature)
            .map_err(|_| AppError::Internal("signing failed".into()))?;
        Ok(STANDARD.encode(signature))
    }
}

/// A new 2048-bit RSA key pair: PKCS#8 DER and public PEM.
fn generate() -> Result<(Vec<u8>, String), AppError> {
    let mut rng = argon2::password_hash::rand_core::OsRng;
    let fail = |e: &dyn std::fmt::Display| AppError::Internal(format!("making a key pair: {e}"));
    let private = rsa::RsaPrivateKey::new(&mut rng, 2048).map_err(|e| fail(&e))?;
    let der = private.to_pkcs8_der().map_err(|e| fail(&e))?.as_bytes().to_vec();
    let pem = rsa::RsaPublicKey::from(&private).to_public_key_pem(LineEnding::LF).map_err(|e| fail(&e))?;
    Ok((der, pem))
}
