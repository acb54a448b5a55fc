//! The merchants' dashboard users: an e-mail and an argon2id password hash (made by
//! the passwords module), in one shop.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait, IntoActiveModel,
    QueryFilter, QueryOrder, Set, SqlErr,
};

use super::entities::{shops, users};
use crate::domain::access::{Member, MemberChange, Refusal, Role, may_change};
use crate::domain::audit::{Actor, Change, Entry, Origin, Outcome};
use crate::domain::ids::{USER, new_id};
use crate::domain::vocab::DashboardLanguage;

/// Why a user could not be created.
#[derive(Debug, thiserror::Error)]
pub enum NewUserError {
    #[error("the e-mail address is taken")]
    EmailTaken,
    #[error(transparent)]
    Db(#[from] DbErr),
}

/// A shop and its first user, as sign-up makes them.
pub struct SignUpRows<'a> {
    pub shop_name: &'a str,
    pub secret: super::shops::StoredSecret,
    pub email: &'a str,
    pub password_hash: String,
    pub language: DashboardLanguage,
}

/// Creates a shop and its first user in one transaction (sign-up), recorded as the user's
/// `shop.created` from `origin`.
pub async fn sign_up(
    db: &DatabaseConnection,
    new: SignUpRows<'_>,
    origin: &Origin,
    now: DateTime<Utc>,
) -> Result<(shops::Model, users::Model), NewUserError> {
    let SignUpRows { shop_name, secret, email, password_hash, language } = new;
    let txn = crate::db::begin(db).await?;
    let shop = super::shops::create(&txn, shop_name, None, secret, email, now).await?;
    let mut row = new_row(shop.id, email, password_hash, Role::Owner, now);
    row.language = Set(language);
    let user = insert_row(&txn, row).await?;
    let entry = Entry::new(shop.id, Actor::user(&user.id, &user.email, user.role), origin.clone(), "shop.created")
        .on("shop", shop.id.to_string())
        .changing(vec![Change::of("name", None::<String>, shop_name), Change::of("owner", None::<String>, email)]);
    super::audit::record(&txn, &entry, now).await?;
    txn.commit().await?;
    Ok((shop, user))
}

/// Adds a user with `role` to a shop, recorded as `audit` (the operator's `user.created`).
pub async fn insert(
    db: &DatabaseConnection,
    shop_id: i64,
    email: &str,
    password_hash: String,
    role: Role,
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<users::Model, NewUserError> {
    let txn = crate::db::begin(db).await?;
    let user = insert_row(&txn, new_row(shop_id, email, password_hash, role, now)).await?;
    super::audit::record(&txn, &joined(audit, &user), now).await?;
    txn.commit().await?;
    Ok(user)
}

/// `audit` about the new `user`: their address and role.
fn joined(audit: &Entry, user: &users::Model) -> Entry {
    audit.clone().on("user", &user.id).changing(vec![
        Change::of("email", None::<String>, &user.email),
        Change::of("role", None::<String>, user.role.as_str()),
    ])
}

/// An invited user as stored: no password of theirs yet (`placeholder_hash` matches none
/// they know), only the link whose token hashes to `invite_hash`, until `expires_at`.
pub struct Invitation<'a> {
    pub email: &'a str,
    pub role: Role,
    pub placeholder_hash: String,
    pub invite_hash: String,
    pub expires_at: DateTime<Utc>,
}

/// Invites a user to a shop, recorded as `audit` (`user.invited`).
pub async fn invite(
    db: &DatabaseConnection,
    shop_id: i64,
    invitation: Invitation<'_>,
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<users::Model, NewUserError> {
    let mut row = new_row(shop_id, invitation.email, invitation.placeholder_hash, invitation.role, now);
    row.invite_hash = Set(Some(invitation.invite_hash));
    row.invite_expires_at = Set(Some(super::now_millis(invitation.expires_at)));
    let txn = crate::db::begin(db).await?;
    let user = insert_row(&txn, row).await?;
    super::audit::record(&txn, &joined(audit, &user), now).await?;
    txn.commit().await?;
    Ok(user)
}

fn new_row(shop_id: i64, email: &str, password_hash: String, role: Role, now: DateTime<Utc>) -> users::ActiveModel {
    let now = super::now_millis(now);
    users::ActiveModel {
        id: Set(new_id(USER)),
        shop_id: Set(shop_id),
        email: Set(email.to_string()),
        password_hash: Set(password_hash),
        role: Set(role),
        language: Set(DashboardLanguage::En),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
}

/// Stores a new user; an e-mail already taken is the caller's error, not a failure.
async fn insert_row(db: &impl ConnectionTrait, row: users::ActiveModel) -> Result<users::Model, NewUserError> {
    row.insert(db).await.map_err(|e| match e.sql_err() {
        Some(SqlErr::UniqueConstraintViolation(_)) => NewUserError::EmailTaken,
        _ => NewUserError::Db(e),
    })
}

/// The invited user whose link's token hashes to `invite_hash`, while the link works.
pub async fn invited(
    db: &impl ConnectionTrait,
    invite_hash: &str,
    now: DateTime<Utc>,
) -> Result<Option<users::Model>, DbErr> {
    users::Entity::find()
        .filter(users::Column::InviteHash.eq(invite_hash))
        .filter(users::Column::InviteExpiresAt.gt(now))
        .one(db)
        .await
}

/// Sets an invited user's first password (and the language they read) and spends their link,
/// once: `None` if the link was used (or expired) meanwhile. Recorded as the user's
/// `user.joined` from `origin`.
pub async fn accept_invite(
    db: &DatabaseConnection,
    invite_hash: &str,
    password_hash: String,
    language: DashboardLanguage,
    origin: &Origin,
    now: DateTime<Utc>,
) -> Result<Option<users::Model>, DbErr> {
    // Read before the transaction, whose first statement writes: SQLite cannot turn a read
    // into a write once another connection wrote meanwhile (it answers "database is locked").
    let Some(user) = invited(db, invite_hash, now).await? else { return Ok(None) };
    let txn = crate::db::begin(db).await?;
    let result = users::Entity::update_many()
        .col_expr(users::Column::PasswordHash, Expr::value(password_hash))
        .col_expr(users::Column::Language, Expr::value(language))
        .col_expr(users::Column::InviteHash, Expr::value(Option::<String>::None))
        .col_expr(users::Column::InviteExpiresAt, Expr::value(Option::<DateTime<Utc>>::None))
        .col_expr(users::Column::UpdatedAt, Expr::value(super::now_millis(now)))
        .filter(users::Column::Id.eq(user.id.as_str()))
        .filter(users::Column::InviteHash.eq(invite_hash))
        .exec(&txn)
        .await?;
    if result.rows_affected != 1 {
        return Ok(None);
    }
    let entry = Entry::new(user.shop_id, Actor::user(&user.id, &user.email, user.role), origin.clone(), "user.joined")
        .on("user", &user.id)
        .changing(vec![Change::secret("password", false)]);
    super::audit::record(&txn, &entry, now).await?;
    let joined = by_id(&txn, &user.id).await?;
    txn.commit().await?;
    Ok(joined)
}

/// What came of a change to a user of a shop.
#[derive(Debug)]
pub enum MemberChanged {
    /// Made; the user as they were before.
    Done(Box<users::Model>),
    /// There is no such user in the shop (or the actor is gone).
    Missing,
    Refused(Refusal),
}

/// Makes `change` to user `id` of a shop on behalf of user `actor_id`, checked against both
/// as they stand in the same transaction: two owners demoting or removing each other at once
/// leave one of them owner, and an actor removed meanwhile changes nothing. A removed user's
/// sessions end with them.
pub async fn change_member(
    db: &DatabaseConnection,
    shop_id: i64,
    actor_id: &str,
    id: &str,
    change: MemberChange,
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<MemberChanged, DbErr> {
    let txn = crate::db::begin(db).await?;
    // A write first: it takes the shop's users for this transaction (rows locked on
    // PostgreSQL, the write lock on SQLite), so the counts below cannot change under it.
    users::Entity::update_many()
        .col_expr(users::Column::Role, Expr::col(users::Column::Role).into())
        .filter(users::Column::ShopId.eq(shop_id))
        .exec(&txn)
        .await?;
    let members = of_shop(&txn, shop_id).await?;
    let (Some(actor), Some(target)) = (members.iter().find(|u| u.id == actor_id), members.iter().find(|u| u.id == id))
    else {
        return Ok(MemberChanged::Missing);
    };
    let owners = members.iter().filter(|u| u.role == Role::Owner && u.invite_hash.is_none()).count();
    let member = Member { role: target.role, is_actor: actor.id == target.id, joined: target.invite_hash.is_none() };
    let entry = audit.clone().on("user", id);
    if let Err(refusal) = may_change(actor.role, member, change, owners) {
        super::audit::record(&txn, &entry.ended(Outcome::Refused), now).await?;
        txn.commit().await?;
        return Ok(MemberChanged::Refused(refusal));
    }
    let filter = users::Column::ShopId.eq(shop_id).and(users::Column::Id.eq(id));
    let entry = match change {
        MemberChange::Role(role) => entry.changing(vec![Change::of("role", target.role.as_str(), role.as_str())]),
        MemberChange::Remove => entry.changing(vec![
            Change::of("email", &target.email, None::<String>),
            Change::of("role", target.role.as_str(), None::<String>),
        ]),
    };
    super::audit::record(&txn, &entry, now).await?;
    match change {
        MemberChange::Role(role) => {
            users::Entity::update_many()
                .col_expr(users::Column::Role, Expr::value(role))
                .col_expr(users::Column::UpdatedAt, Expr::value(super::now_millis(now)))
                .filter(filter)
                .exec(&txn)
                .await?;
        }
        MemberChange::Remove => {
            users::Entity::delete_many().filter(filter).exec(&txn).await?;
        }
    }
    let before = target.clone();
    txn.commit().await?;
    Ok(MemberChanged::Done(Box::new(before)))
}

/// The user with this (normalised) e-mail.
pub async fn by_email(db: &impl ConnectionTrait, email: &str) -> Result<Option<users::Model>, DbErr> {
    users::Entity::find().filter(users::Column::Email.eq(email)).one(db).await
}

/// The user with this id.
pub async fn by_id(db: &impl ConnectionTrait, id: &str) -> Result<Option<users::Model>, DbErr> {
    users::Entity::find().filter(users::Column::Id.eq(id)).one(db).await
}

/// A shop's users, oldest first.
pub async fn of_shop(db: &impl ConnectionTrait, shop_id: i64) -> Result<Vec<users::Model>, DbErr> {
    users::Entity::find().filter(users::Column::ShopId.eq(shop_id)).order_by_asc(users::Column::Seq).all(db).await
}

/// Stores a new password hash, recorded as `audit` (`user.password_changed`).
pub async fn set_password(
    db: &DatabaseConnection,
    user: users::Model,
    password_hash: String,
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<users::Model, DbErr> {
    let txn = crate::db::begin(db).await?;
    let entry = audit.clone().on("user", &user.id).changing(vec![Change::secret("password", true)]);
    let mut row = user.into_active_model();
    row.password_hash = Set(password_hash);
    row.updated_at = Set(super::now_millis(now));
    let user = row.update(&txn).await?;
    super::audit::record(&txn, &entry, now).await?;
    txn.commit().await?;
    Ok(user)
}

/// Sets the language a user reads the dashboard in.
pub async fn set_language(
    db: &impl ConnectionTrait,
    id: &str,
    language: DashboardLanguage,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    users::Entity::update_many()
        .col_expr(users::Column::Language, Expr::value(language))
        .col_expr(users::Column::UpdatedAt, Expr::value(super::now_millis(now)))
        .filter(users::Column::Id.eq(id))
        .exec(db)
        .await?;
    Ok(())
}

/// Locks user `id` until `until`, to be opened sooner by the link hashing to `unlock_hash`,
/// unless a lock holds at `now` already; `mail` (the link, to the user) is queued and `audit`
/// recorded in the same transaction. Answers whether this call locked it: of many wrong
/// passwords at once, one does, and one mail goes.
pub async fn lock(
    db: &DatabaseConnection,
    id: &str,
    lock: (DateTime<Utc>, String),
    mail: Option<super::mails::NewMail>,
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<bool, DbErr> {
    let (until, unlock_hash) = lock;
    let txn = crate::db::begin(db).await?;
    let result = users::Entity::update_many()
        .col_expr(users::Column::LockedUntil, Expr::value(Some(super::now_millis(until))))
        .col_expr(users::Column::UnlockHash, Expr::value(Some(unlock_hash)))
        .filter(users::Column::Id.eq(id))
        .filter(users::Column::LockedUntil.is_null().or(users::Column::LockedUntil.lte(now)))
        .exec(&txn)
        .await?;
    if result.rows_affected != 1 {
        return Ok(false);
    }
    super::mails::enqueue(&txn, mail.into_iter().collect(), now).await?;
    super::audit::record(&txn, audit, now).await?;
    txn.commit().await?;
    Ok(true)
}

/// The user whose lock's link hashes to `unlock_hash`, while the lock holds.
pub async fn locked_by(
    db: &impl ConnectionTrait,
    unlock_hash: &str,
    now: DateTime<Utc>,
) -> Result<Option<users::Model>, DbErr> {
    users::Entity::find()
        .filter(users::Column::UnlockHash.eq(unlock_hash))
        .filter(users::Column::LockedUntil.gt(now))
        .one(db)
        .await
}

/// Opens the account whose lock's link hashes to `unlock_hash`, once and while the lock
/// holds, recorded as the user's `user.unlocked` from `origin`; answers the user, or `None`
/// when the link was used, ran out or never was.
pub async fn unlock(
    db: &DatabaseConnection,
    unlock_hash: &str,
    origin: &Origin,
    now: DateTime<Utc>,
) -> Result<Option<users::Model>, DbErr> {
    let txn = crate::db::begin(db).await?;
    let Some(user) = locked_by(&txn, unlock_hash, now).await? else { return Ok(None) };
    let result = users::Entity::update_many()
        .col_expr(users::Column::LockedUntil, Expr::value(Option::<DateTime<Utc>>::None))
        .col_expr(users::Column::UnlockHash, Expr::value(Option::<String>::None))
        .filter(users::Column::Id.eq(user.id.as_str()))
        .filter(users::Column::UnlockHash.eq(unlock_hash))
        .filter(users::Column::LockedUntil.gt(now))
        .exec(&txn)
        .await?;
    if result.rows_affected != 1 {
        return Ok(None);
    }
    let entry =
        Entry::new(user.shop_id, Actor::user(&user.id, &user.email, user.role), origin.clone(), "user.unlocked")
            .on("user", &user.id)
            .changing(vec![Change::of("locked_until", user.locked_until.map(Change::moment), None::<String>)]);
    super::audit::record(&txn, &entry, now).await?;
    txn.commit().await?;
    Ok(Some(user))
}
