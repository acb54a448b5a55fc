//! Two-step login's storage: a user's sealed authenticator secret with the last time step a
//! code was accepted for, and their recovery codes (digests).
//! Every use is a conditional update, so a code accepted twice at once is accepted once.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait, PaginatorTrait, QueryFilter, Set,
};

use super::entities::{recovery_codes, users};
use crate::domain::audit::{Change, Entry, SECRET};

/// Turns two-step login on for `user_id` with the `sealed` secret, the step of the code that
/// confirmed it, and new recovery codes (their digests); `false` when it was already on (a
/// second click of the same form).
pub async fn enable(
    db: &DatabaseConnection,
    user_id: &str,
    sealed: String,
    step: i64,
    digests: Vec<String>,
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<bool, DbErr> {
    let txn = crate::db::begin(db).await?;
    let done = users::Entity::update_many()
        .col_expr(users::Column::TotpSealed, Expr::value(sealed))
        .col_expr(users::Column::TotpLastStep, Expr::value(step))
        .col_expr(users::Column::TotpEnabledAt, Expr::value(super::now_millis(now)))
        .col_expr(users::Column::UpdatedAt, Expr::value(super::now_millis(now)))
        .filter(users::Column::Id.eq(user_id))
        .filter(users::Column::TotpSealed.is_null())
        .exec(&txn)
        .await?;
    if done.rows_affected != 1 {
        return Ok(false);
    }
    replace_codes(&txn, user_id, digests, now).await?;
    let changes = vec![Change::secret("authenticator", false), Change::secret("recovery_codes", false)];
    super::audit::record(&txn, &audit.clone().on("user", user_id).changing(changes), now).await?;
    txn.commit().await?;
    Ok(true)
}

/// New recovery codes for `user_id` (their digests) in place of the old ones, recorded as
/// `audit` (`two_step.codes_renewed`).
pub async fn renew_codes(
    db: &DatabaseConnection,
    user_id: &str,
    digests: Vec<String>,
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    let txn = crate::db::begin(db).await?;
    replace_codes(&txn, user_id, digests, now).await?;
    let changes = vec![Change::secret("recovery_codes", true)];
    super::audit::record(&txn, &audit.clone().on("user", user_id).changing(changes), now).await?;
    txn.commit().await
}

/// Replaces a user's recovery codes with new ones (their digests).
async fn replace_codes(
    db: &impl ConnectionTrait,
    user_id: &str,
    digests: Vec<String>,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    recovery_codes::Entity::delete_many().filter(recovery_codes::Column::UserId.eq(user_id)).exec(db).await?;
    let rows = digests.into_iter().map(|digest| recovery_codes::ActiveModel {
        digest: Set(digest),
        user_id: Set(user_id.to_string()),
        created_at: Set(super::now_millis(now)),
        used_at: Set(None),
    });
    recovery_codes::Entity::insert_many(rows).exec_without_returning(db).await?;
    Ok(())
}

/// Turns two-step login off for `user_id`: the secret and the recovery codes go. `false`
/// when it was off. Recorded as `audit` (by the user, an owner or the operator).
pub async fn disable(db: &DatabaseConnection, user_id: &str, audit: &Entry, now: DateTime<Utc>) -> Result<bool, DbErr> {
    let txn = crate::db::begin(db).await?;
    let done = users::Entity::update_many()
        .col_expr(users::Column::TotpSealed, Expr::value(Option::<String>::None))
        .col_expr(users::Column::TotpLastStep, Expr::value(Option::<i64>::None))
        .col_expr(users::Column::TotpEnabledAt, Expr::value(Option::<DateTime<Utc>>::None))
        .col_expr(users::Column::UpdatedAt, Expr::value(super::now_millis(now)))
        .filter(users::Column::Id.eq(user_id))
        .filter(users::Column::TotpSealed.is_not_null())
        .exec(&txn)
        .await?;
    recovery_codes::Entity::delete_many().filter(recovery_codes::Column::UserId.eq(user_id)).exec(&txn).await?;
    if done.rows_affected == 1 {
        let changes = vec![Change::of("authenticator", SECRET, None::<String>)];
        super::audit::record(&txn, &audit.clone().on("user", user_id).changing(changes), now).await?;
    }
    txn.commit().await?;
    Ok(done.rows_affected == 1)
}

/// Spends time step `step` of `user_id`'s authenticator: `true` once, for a step later than
/// every step spent before; a code used again, or an older one, is refused.
pub async fn spend_step(db: &impl ConnectionTrait, user_id: &str, step: i64) -> Result<bool, DbErr> {
    let done = users::Entity::update_many()
        .col_expr(users::Column::TotpLastStep, Expr::value(step))
        .filter(users::Column::Id.eq(user_id))
        .filter(users::Column::TotpSealed.is_not_null())
        .filter(Condition::any().add(users::Column::TotpLastStep.is_null()).add(users::Column::TotpLastStep.lt(step)))
        .exec(db)
        .await?;
    Ok(done.rows_affected == 1)
}

/// Spends the recovery code with `digest` of `user_id`: `true` once.
pub async fn spend_code(
    db: &impl ConnectionTrait,
    user_id: &str,
    digest: &str,
    now: DateTime<Utc>,
) -> Result<bool, DbErr> {
    let done = recovery_codes::Entity::update_many()
        .col_expr(recovery_codes::Column::UsedAt, Expr::value(super::now_millis(now)))
        .filter(recovery_codes::Column::Digest.eq(digest))
        .filter(recovery_codes::Column::UserId.eq(user_id))
        .filter(recovery_codes::Column::UsedAt.is_null())
        .exec(db)
        .await?;
    Ok(done.rows_affected == 1)
}

/// How many of `user_id`'s recovery codes are left.
pub async fn codes_left(db: &impl ConnectionTrait, user_id: &str) -> Result<u64, DbErr> {
    recovery_codes::Entity::find()
        .filter(recovery_codes::Column::UserId.eq(user_id))
        .filter(recovery_codes::Column::UsedAt.is_null())
        .count(db)
        .await
}
