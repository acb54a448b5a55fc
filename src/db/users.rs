//! The merchants' dashboard users: an e-mail and an argon2id password hash, in one shop.

use argon2::Argon2;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, DatabaseConnection, DbErr, EntityTrait, IntoActiveModel, QueryFilter, QueryOrder,
    Set, SqlErr, TransactionTrait,
};

use super::entities::{shops, users};
use crate::domain::ids::{USER, new_id};

/// Why a user could not be created.
#[derive(Debug, thiserror::Error)]
pub enum NewUserError {
    #[error("the e-mail address is taken")]
    EmailTaken,
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// A job for the password-hashing threads.
type Job = Box<dyn FnOnce() + Send>;

/// The password-hashing threads: two, fed from one queue, whatever the load. Each hash takes
/// about 19 MiB and tens of milliseconds of a core; more at once would only trade memory for
/// nothing. Two long-lived threads (rather than the runtime's blocking pool, which starts
/// threads as it needs them) also keep the allocator from holding a 19 MiB block in every
/// thread's arena.
fn hashers() -> Option<std::sync::MutexGuard<'static, std::sync::mpsc::Sender<Job>>> {
    static QUEUE: std::sync::OnceLock<std::sync::Mutex<std::sync::mpsc::Sender<Job>>> = std::sync::OnceLock::new();
    let queue = QUEUE.get_or_init(|| {
        let (sender, receiver) = std::sync::mpsc::channel::<Job>();
        let receiver = std::sync::Arc::new(std::sync::Mutex::new(receiver));
        for i in 0..2 {
            let receiver = receiver.clone();
            let worker = move || loop {
                let job = receiver.lock().map(|r| r.recv());
                match job {
                    Ok(Ok(job)) => job(),
                    _ => return,
                }
            };
            std::thread::Builder::new().name(format!("argon2-{i}")).spawn(worker).expect("a hashing thread");
        }
        std::sync::Mutex::new(sender)
    });
    queue.lock().ok()
}

/// Runs `work` on a hashing thread; `None` if the threads are gone.
async fn on_hasher<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (done, result) = tokio::sync::oneshot::channel();
    hashers()?.send(Box::new(move || drop(done.send(work())))).ok()?;
    result.await.ok()
}

/// Hashes a password with argon2id (on a hashing thread: it takes tens of milliseconds).
pub async fn hash_password(password: String) -> Result<String, DbErr> {
    on_hasher(move || {
        Argon2::default().hash_password(password.as_bytes()).map(|h| h.to_string()).map_err(|e| e.to_string())
    })
    .await
    .ok_or_else(|| DbErr::Custom("the password-hashing threads stopped".into()))?
    .map_err(DbErr::Custom)
}

/// Whether `password` matches `hash` (also on a hashing thread).
pub async fn password_matches(password: String, hash: String) -> bool {
    on_hasher(move || Argon2::default().verify_password(password.as_bytes(), hash.as_str()).is_ok())
        .await
        .unwrap_or(false)
}

/// A hash that no password matches, checked when the e-mail is unknown so that a login
/// takes as long whether or not the address has an account.
pub async fn dummy_hash() -> String {
    static DUMMY: tokio::sync::OnceCell<String> = tokio::sync::OnceCell::const_new();
    DUMMY
        .get_or_init(|| async { hash_password(crate::domain::ids::random_hex(16)).await.unwrap_or_default() })
        .await
        .clone()
}

/// Creates a shop and its first user in one transaction (sign-up).
pub async fn sign_up(
    db: &DatabaseConnection,
    shop_name: &str,
    email: &str,
    password_hash: String,
    now: DateTime<Utc>,
) -> Result<(shops::Model, users::Model), NewUserError> {
    let txn = db.begin().await?;
    let shop = super::shops::create(&txn, shop_name, None, now).await?.shop;
    let user = insert(&txn, shop.id, email, password_hash, now).await?;
    txn.commit().await?;
    Ok((shop, user))
}

/// Adds a user to a shop.
pub async fn insert(
    db: &impl sea_orm::ConnectionTrait,
    shop_id: i64,
    email: &str,
    password_hash: String,
    now: DateTime<Utc>,
) -> Result<users::Model, NewUserError> {
    let now = super::now_millis(now);
    let row = users::ActiveModel {
        id: Set(new_id(USER)),
        shop_id: Set(shop_id),
        email: Set(email.to_string()),
        password_hash: Set(password_hash),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    };
    row.insert(db).await.map_err(|e| match e.sql_err() {
        Some(SqlErr::UniqueConstraintViolation(_)) => NewUserError::EmailTaken,
        _ => NewUserError::Db(e),
    })
}

/// The user with this (normalised) e-mail.
pub async fn by_email(db: &DatabaseConnection, email: &str) -> Result<Option<users::Model>, DbErr> {
    users::Entity::find().filter(users::Column::Email.eq(email)).one(db).await
}

/// The user with this id.
pub async fn by_id(db: &DatabaseConnection, id: &str) -> Result<Option<users::Model>, DbErr> {
    users::Entity::find().filter(users::Column::Id.eq(id)).one(db).await
}

/// A shop's users, oldest first.
pub async fn of_shop(db: &DatabaseConnection, shop_id: i64) -> Result<Vec<users::Model>, DbErr> {
    users::Entity::find().filter(users::Column::ShopId.eq(shop_id)).order_by_asc(users::Column::Seq).all(db).await
}

/// Stores a new password hash.
pub async fn set_password(
    db: &DatabaseConnection,
    user: users::Model,
    password_hash: String,
    now: DateTime<Utc>,
) -> Result<users::Model, DbErr> {
    let mut row = user.into_active_model();
    row.password_hash = Set(password_hash);
    row.updated_at = Set(super::now_millis(now));
    row.update(db).await
}
