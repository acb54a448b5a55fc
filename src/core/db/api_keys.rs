//! A shop's API keys: each found by its secret's digest (a unique index), so authenticating a
//! request is one lookup whatever the number of keys. The shop row names its standard key's
//! digest and keeps that key sealed, for the Basic auth of its notifications; the standard
//! key cannot be restricted or revoked, only rolled. Every change is conditional on the row
//! as it must be (not revoked, not rolled yet), so two changes at once leave one winner.

use chrono::{DateTime, Duration, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder, QuerySelect, Set,
};
use serde_json::json;

use super::entities::api_keys::{ActiveModel, Column, Entity, Model};
use super::entities::shops;
use super::{ListError, Listed, Page, ShopOwned};
use crate::domain::audit::{Change, Entry};
use crate::domain::ids::{API_KEY, new_id};

/// How many characters of a secret are kept to tell keys apart (`sk_` and four more).
pub const PREFIX_CHARS: usize = 7;

/// How often a key's last use is written at most.
pub const USE_WRITTEN_EVERY: Duration = Duration::minutes(1);

impl ShopOwned for Entity {
    const SEQ: Column = Column::Seq;
    const ID: Column = Column::Id;
    const SHOP: Column = Column::ShopId;
    fn public_id(row: &Model) -> &str {
        &row.id
    }
}

/// A key to make: its secret's digest and the start of it, and what it may do.
pub struct NewKey<'a> {
    pub shop_id: i64,
    pub name: &'a str,
    pub digest: &'a str,
    pub prefix: &'a str,
    pub created_by: &'a str,
    pub expires_at: Option<DateTime<Utc>>,
    pub permissions: Option<String>,
    pub networks: Option<String>,
}

/// What a restriction of a key sets: each field left as it is when `None`; permissions and
/// networks as stored, `Some(None)` lifting them.
pub struct Limits {
    pub name: Option<String>,
    pub permissions: Option<Option<String>>,
    pub networks: Option<Option<String>>,
}

/// Why a change of a key was not made.
#[derive(Debug, PartialEq, Eq)]
pub enum Refused {
    /// The shop has no key of that id that still works.
    Gone,
    /// It was rolled already, to this key.
    Rolled(String),
    /// It is the shop's standard key (the one its notifications carry): it can only be rolled.
    Standard,
}

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
    status(key, now) == "active"
}

/// The shop's key with this id.
pub async fn find(db: &impl ConnectionTrait, shop_id: i64, id: &str) -> Result<Option<Model>, DbErr> {
    super::find::<Entity>(db, shop_id, id).await
}

/// A page of the shop's keys, newest first.
pub async fn list(db: &impl ConnectionTrait, shop_id: i64, page: &Page) -> Result<Listed<Model>, ListError> {
    super::list::<Entity>(db, shop_id, page).await
}

/// The shop's keys whose last use is the latest, for the dashboard's "last requests".
pub async fn lately_used(db: &impl ConnectionTrait, shop_id: i64, limit: u64) -> Result<Vec<Model>, DbErr> {
    lately_used_query(shop_id, limit).all(db).await
}

/// The query of [`lately_used`], in the order of `ix_api_keys_last_used`.
pub fn lately_used_query(shop_id: i64, limit: u64) -> sea_orm::Select<Entity> {
    Entity::find()
        .filter(Column::ShopId.eq(shop_id))
        .filter(Column::LastUsedAt.is_not_null())
        .order_by_desc(Column::LastUsedAt)
        .limit(limit)
}

/// Makes a key and records `audit` on it, in one transaction.
pub async fn create(
    db: &sea_orm::DatabaseConnection,
    key: NewKey<'_>,
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<Model, DbErr> {
    let txn = super::begin(db).await?;
    let made = insert(&txn, &key, None, now).await?;
    let changes = vec![
        Change::of("name", None::<String>, &made.name),
        Change::of("permissions", None::<String>, permissions_json(&made)),
        Change::of("networks", None::<String>, &made.networks),
        Change::of("expires_at", None::<String>, made.expires_at.map(Change::moment)),
    ];
    super::audit::record(&txn, &audit.clone().on("api_key", &made.id).changing(changes), now).await?;
    txn.commit().await?;
    Ok(made)
}

async fn insert(
    txn: &impl ConnectionTrait,
    key: &NewKey<'_>,
    sealed: Option<String>,
    now: DateTime<Utc>,
) -> Result<Model, DbErr> {
    ActiveModel {
        seq: sea_orm::ActiveValue::NotSet,
        id: Set(new_id(API_KEY)),
        shop_id: Set(key.shop_id),
        name: Set(key.name.to_string()),
        prefix: Set(Some(key.prefix.to_string())),
        digest: Set(key.digest.to_string()),
        created_by: Set(key.created_by.to_string()),
        created_at: Set(super::now_millis(now)),
        expires_at: Set(key.expires_at.map(super::now_millis)),
        revoked_at: Set(None),
        permissions: Set(key.permissions.clone()),
        networks: Set(key.networks.clone()),
        rolled_to: Set(None),
        sealed: Set(sealed),
        last_used_at: Set(None),
        last_used_from: Set(None),
        warned_at: Set(None),
    }
    .insert(txn)
    .await
}

/// Sets a key's name, permissions and networks and records what changed as `audit`; the
/// standard key takes no permissions.
pub async fn restrict(
    db: &sea_orm::DatabaseConnection,
    (shop_id, id): (i64, &str),
    limits: Limits,
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<Result<Model, Refused>, DbErr> {
    let (txn, before) = begin_change(db, shop_id, id).await?;
    let Some(before) = before else { return Ok(Err(Refused::Gone)) };
    if before.revoked_at.is_some() || before.expires_at.is_some_and(|at| at <= now) {
        return Ok(Err(Refused::Gone));
    }
    if limits.permissions.as_ref().is_some_and(Option::is_some) && standard(&txn, &before).await? {
        return Ok(Err(Refused::Standard));
    }
    let mut row: ActiveModel = before.clone().into();
    row.name = Set(limits.name.unwrap_or_else(|| before.name.clone()));
    if let Some(permissions) = limits.permissions {
        row.permissions = Set(permissions);
    }
    if let Some(networks) = limits.networks {
        row.networks = Set(networks);
    }
    let after = row.update(&txn).await?;
    let changes: Vec<Change> = [
        Change::of("name", &before.name, &after.name),
        Change::of("permissions", permissions_json(&before), permissions_json(&after)),
        Change::of("networks", &before.networks, &after.networks),
    ]
    .into_iter()
    .filter(|c| c.before != c.after)
    .collect();
    if !changes.is_empty() {
        super::audit::record(&txn, &audit.clone().on("api_key", id).changing(changes), now).await?;
    }
    txn.commit().await?;
    Ok(Ok(after))
}

/// The successor a roll makes: its secret's digest, start and (for the standard key) sealed
/// secret, the notifications' key once its predecessor stops.
pub struct Successor<'a> {
    pub digest: &'a str,
    pub prefix: &'a str,
    pub sealed: &'a str,
    pub created_by: &'a str,
}

/// Rolls a key: its successor, with its name, permissions, networks and expiry, works at
/// once, and the key goes on until `until` (its expiry, if sooner). A key rolls once: the second of two
/// rolls at once is refused with the first one's successor. Rolling the standard key makes
/// the successor the shop's standard key when the old one stops.
pub async fn roll(
    db: &sea_orm::DatabaseConnection,
    (shop_id, id): (i64, &str),
    successor: Successor<'_>,
    until: DateTime<Utc>,
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<Result<(Model, Model), Refused>, DbErr> {
    let (txn, before) = begin_change(db, shop_id, id).await?;
    let Some(before) = before else { return Ok(Err(Refused::Gone)) };
    if let Some(rolled_to) = before.rolled_to.clone() {
        return Ok(Err(Refused::Rolled(rolled_to)));
    }
    if !usable(&before, now) {
        return Ok(Err(Refused::Gone));
    }
    let is_standard = standard(&txn, &before).await?;
    let key = NewKey {
        shop_id,
        name: &before.name,
        digest: successor.digest,
        prefix: successor.prefix,
        created_by: successor.created_by,
        expires_at: before.expires_at,
        permissions: before.permissions.clone(),
        networks: before.networks.clone(),
    };
    let made = insert(&txn, &key, is_standard.then(|| successor.sealed.to_string()), now).await?;
    let ends = before.expires_at.map_or(until, |at| at.min(until));
    let rolled = Entity::update_many()
        .col_expr(Column::RolledTo, Expr::value(Some(made.id.clone())))
        .col_expr(Column::ExpiresAt, Expr::value(Some(super::now_millis(ends))))
        .filter(Column::Id.eq(id))
        .filter(Column::RolledTo.is_null())
        .exec(&txn)
        .await?;
    if rolled.rows_affected != 1 {
        return Err(DbErr::Custom(format!("key {id} was rolled while its row was held")));
    }
    let changes = vec![
        Change::of("expires_at", before.expires_at.map(Change::moment), Change::moment(ends)),
        Change::of("rolled_to", None::<String>, &made.id),
    ];
    super::audit::record(&txn, &audit.clone().on("api_key", id).changing(changes), now).await?;
    if is_standard {
        promote(&txn, shop_id, now).await?;
    }
    let after = find(&txn, shop_id, id).await?.ok_or_else(|| DbErr::RecordNotFound(id.into()))?;
    txn.commit().await?;
    Ok(Ok((after, made)))
}

/// Revokes a key: it stops at once. The standard key is refused: roll it instead.
pub async fn revoke(
    db: &sea_orm::DatabaseConnection,
    (shop_id, id): (i64, &str),
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<Result<Model, Refused>, DbErr> {
    let (txn, before) = begin_change(db, shop_id, id).await?;
    let Some(before) = before else { return Ok(Err(Refused::Gone)) };
    if before.revoked_at.is_some() {
        return Ok(Ok(before));
    }
    if standard(&txn, &before).await? && before.rolled_to.is_none() {
        return Ok(Err(Refused::Standard));
    }
    Entity::update_many()
        .col_expr(Column::RevokedAt, Expr::value(Some(super::now_millis(now))))
        .filter(Column::Id.eq(id))
        .filter(Column::RevokedAt.is_null())
        .exec(&txn)
        .await?;
    let change = Change::of("revoked_at", None::<String>, Change::moment(now));
    super::audit::record(&txn, &audit.clone().on("api_key", id).changing(vec![change]), now).await?;
    promote(&txn, shop_id, now).await?;
    let after = find(&txn, shop_id, id).await?.ok_or_else(|| DbErr::RecordNotFound(id.into()))?;
    txn.commit().await?;
    Ok(Ok(after))
}

/// Whether `key` is its shop's standard key (`shop_digest` being the digest the shop names),
/// or the successor it was rolled to, the standard key once the overlap ends.
pub fn is_standard(key: &Model, shop_digest: &str) -> bool {
    (key.digest == shop_digest && key.revoked_at.is_none()) || key.sealed.is_some()
}

/// [`is_standard`], reading the shop's row for its digest.
async fn standard(db: &impl ConnectionTrait, key: &Model) -> Result<bool, DbErr> {
    let shop = shops::Entity::find_by_id(key.shop_id).one(db).await?;
    Ok(is_standard(key, shop.as_ref().map_or("", |s| s.secret_digest.as_str())))
}

/// A key's state at `now`, as the API and the dashboard name it: `active`, `expired` or
/// `revoked`.
pub fn status(key: &Model, now: DateTime<Utc>) -> &'static str {
    match (key.revoked_at, key.expires_at) {
        (Some(_), _) => "revoked",
        (None, Some(at)) if at <= now => "expired",
        _ => "active",
    }
}

/// When the shop's standard key has stopped (its overlap ended, or it was revoked) and was
/// rolled, makes its successor the standard key: the shop row then names and seals it (the
/// notifications' key), conditional on the row still naming the old one.
pub async fn promote(txn: &impl ConnectionTrait, shop_id: i64, now: DateTime<Utc>) -> Result<bool, DbErr> {
    let mut promoted = false;
    // A successor may itself have stopped (rolled at once, or revoked) before its turn came:
    // the chain is followed to the first that works, a few steps at most.
    for _ in 0..8 {
        let Some(shop) = shops::Entity::find_by_id(shop_id).one(txn).await? else { break };
        let Some(current) = by_digest(txn, &shop.secret_digest).await? else { break };
        if usable(&current, now) {
            break;
        }
        let Some(next) = current.rolled_to.as_deref() else { break };
        let Some(successor) = find(txn, shop_id, next).await? else { break };
        let Some(sealed) = successor.sealed.clone() else { break };
        // The trigger on `shops` leaves the old key expired (not revoked) and unseals any
        // other waiting successor; this one's seal now lives on the shop's row.
        let moved = shops::Entity::update_many()
            .col_expr(shops::Column::SecretDigest, Expr::value(successor.digest.clone()))
            .col_expr(shops::Column::SecretSealed, Expr::value(Some(sealed)))
            .col_expr(shops::Column::UpdatedAt, Expr::value(super::now_millis(now)))
            .filter(shops::Column::Id.eq(shop_id))
            .filter(shops::Column::SecretDigest.eq(&shop.secret_digest))
            .exec(txn)
            .await?;
        Entity::update_many()
            .col_expr(Column::Sealed, Expr::value(None::<String>))
            .filter(Column::Id.eq(next))
            .exec(txn)
            .await?;
        promoted |= moved.rows_affected == 1;
    }
    Ok(promoted)
}

/// The shops whose standard key's successor waits to become the standard key, for
/// [`promote`] once its predecessor stopped (a partial index holds the few waiting).
pub async fn waiting_successors(db: &impl ConnectionTrait) -> Result<Vec<i64>, DbErr> {
    waiting_query().into_tuple().all(db).await
}

/// The query of [`waiting_successors`], from `ix_api_keys_sealed`.
pub fn waiting_query() -> sea_orm::Select<Entity> {
    Entity::find().select_only().column(Column::ShopId).filter(Column::Sealed.is_not_null())
}

/// Writes a key's last use, unless one was written less than [`USE_WRITTEN_EVERY`] before
/// `at`: at most one write a minute per key, whatever the number of requests and instances.
pub async fn used(db: &impl ConnectionTrait, id: &str, at: DateTime<Utc>, from: Option<String>) -> Result<(), DbErr> {
    Entity::update_many()
        .col_expr(Column::LastUsedAt, Expr::value(Some(super::now_millis(at))))
        .col_expr(Column::LastUsedFrom, Expr::value(from))
        .filter(Column::Id.eq(id))
        .filter(Column::LastUsedAt.is_null().or(Column::LastUsedAt.lte(at - USE_WRITTEN_EVERY)))
        .exec(db)
        .await?;
    Ok(())
}

/// Whether `key`'s last use is due to be written again at `at`.
pub fn use_due(key: &Model, at: DateTime<Utc>) -> bool {
    key.last_used_at.is_none_or(|last| last <= at - USE_WRITTEN_EVERY)
}

/// Keys that still work and stop within `ahead` of `now` whose owners were not told yet.
pub async fn expiring(db: &impl ConnectionTrait, now: DateTime<Utc>, ahead: Duration) -> Result<Vec<Model>, DbErr> {
    expiring_query(now, ahead).all(db).await
}

/// The query of [`expiring`], a range of `ix_api_keys_expires_at`.
pub fn expiring_query(now: DateTime<Utc>, ahead: Duration) -> sea_orm::Select<Entity> {
    Entity::find()
        .filter(Column::ExpiresAt.gt(now))
        .filter(Column::ExpiresAt.lte(now + ahead))
        .filter(Column::WarnedAt.is_null())
        .filter(Column::RevokedAt.is_null())
        .order_by_asc(Column::ExpiresAt)
        .limit(100)
}

/// Marks `key` as told of, if no one did; whether this did (the telling is then this
/// caller's, in `txn`).
pub async fn warned(txn: &impl ConnectionTrait, id: &str, now: DateTime<Utc>) -> Result<bool, DbErr> {
    let marked = Entity::update_many()
        .col_expr(Column::WarnedAt, Expr::value(Some(super::now_millis(now))))
        .filter(Column::Id.eq(id))
        .filter(Column::WarnedAt.is_null())
        .exec(txn)
        .await?;
    Ok(marked.rows_affected == 1)
}

/// Holds the shop's row for the rest of `txn` (PostgreSQL; SQLite's transaction holds the
/// only write lock already): a change of a key takes the shop first, as a rotation and a
/// promotion do, so that two of them never wait for each other.
async fn hold_shop(txn: &impl ConnectionTrait, shop_id: i64) -> Result<(), DbErr> {
    shops::Entity::find_by_id(shop_id).lock_exclusive().one(txn).await?;
    Ok(())
}

/// Begins a change of the shop's key `id`: the shop held (see [`hold_shop`]), and the key as
/// it is now, its row held for the rest of the transaction.
async fn begin_change(
    db: &sea_orm::DatabaseConnection,
    shop_id: i64,
    id: &str,
) -> Result<(super::Txn, Option<Model>), DbErr> {
    let txn = super::begin(db).await?;
    hold_shop(&txn, shop_id).await?;
    let held = Entity::update_many()
        .col_expr(Column::Name, Expr::col(Column::Name).into())
        .filter(Column::ShopId.eq(shop_id))
        .filter(Column::Id.eq(id));
    let key = super::update_returning(&txn, held).await?;
    Ok((txn, key))
}

/// A key's permissions as the audit trail shows them.
fn permissions_json(key: &Model) -> serde_json::Value {
    match key.permissions.as_deref().map(serde_json::from_str::<serde_json::Value>) {
        Some(Ok(value)) => value,
        _ => json!(null),
    }
}
