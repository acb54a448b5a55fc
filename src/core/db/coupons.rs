//! Stored coupons, and their redemptions counted with one conditional update each.

use chrono::{DateTime, Utc};
use sea_orm::DatabaseConnection;
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ActiveValue::NotSet, ColumnTrait, Condition, ConnectionTrait, DbErr, EntityTrait, PaginatorTrait,
    QueryFilter, Set,
};

use super::ShopOwned;
use super::entities::coupons::{ActiveModel, Column, Entity, Model};
use crate::domain::coupon::{CouponFields, Off, normalize_code, periods_of};
use crate::domain::ids::{COUPON, new_id};

impl ShopOwned for Entity {
    const SEQ: Column = Column::Seq;
    const ID: Column = Column::Id;
    const SHOP: Column = Column::ShopId;
    fn public_id(row: &Model) -> &str {
        &row.id
    }
}

impl super::Archivable for Entity {
    const ARCHIVED_AT: Column = Column::ArchivedAt;
    const UPDATED_AT: Column = Column::UpdatedAt;
}

impl Model {
    /// What it takes off.
    pub fn off(&self) -> Off {
        match (self.percent_off, self.amount_off, self.currency) {
            (_, Some(amount), Some(currency)) => Off::Amount(amount, currency),
            (percent, _, _) => Off::Percent(percent.unwrap_or(0)),
        }
    }

    /// For how many plan periods its discount lasts; `None` for ever.
    pub fn periods(&self) -> Option<i32> {
        periods_of(self.duration, self.duration_in_periods)
    }

    /// The plans it applies to; empty for every plan.
    pub fn plan_ids(&self) -> Vec<&str> {
        self.plans.as_deref().map(|p| p.split(',').filter(|id| !id.is_empty()).collect()).unwrap_or_default()
    }

    /// Why it cannot take one more redemption for `plan` at `now`, if it cannot; the
    /// redemption itself is still counted by [`redeem`], which may lose the last one.
    pub fn refusal(&self, plan: &super::entities::plans::Model, now: DateTime<Utc>) -> Option<&'static str> {
        let plans = self.plan_ids();
        match self.off() {
            _ if self.archived_at.is_some() => Some("is no longer valid"),
            _ if self.redeem_by.is_some_and(|by| by <= now) => Some("has expired"),
            _ if self.max_redemptions.is_some_and(|max| self.times_redeemed >= max) => Some("has been used up"),
            _ if !plans.is_empty() && !plans.contains(&plan.id.as_str()) => Some("does not apply to this plan"),
            Off::Amount(_, currency) if currency != plan.currency => Some("does not apply to this plan's currency"),
            _ => None,
        }
    }
}

/// The coupons with these ids, whichever shop they belong to (for the billing engine), by id.
pub async fn by_ids_of_any_shop(
    db: &impl ConnectionTrait,
    ids: &[&str],
) -> Result<std::collections::HashMap<String, Model>, DbErr> {
    if ids.is_empty() {
        return Ok(Default::default());
    }
    let rows = Entity::find().filter(Column::Id.is_in(ids.iter().copied())).all(db).await?;
    Ok(rows.into_iter().map(|c| (c.id.clone(), c)).collect())
}

/// Stores a new coupon of the shop (a code taken in its mode is the unique index's error).
pub async fn insert(
    db: &DatabaseConnection,
    shop_id: i64,
    f: &CouponFields,
    now: DateTime<Utc>,
) -> Result<Model, DbErr> {
    let txn = crate::db::begin(db).await?;
    let at = now;
    let now = super::now_millis(now);
    let (percent, amount, currency) = match f.off {
        Off::Percent(p) => (Some(p), None, None),
        Off::Amount(a, c) => (None, Some(a), Some(c)),
    };
    let created = ActiveModel {
        seq: NotSet,
        id: Set(new_id(COUPON)),
        shop_id: Set(shop_id),
        code: Set(f.code.clone()),
        name: Set(f.name.clone()),
        percent_off: Set(percent),
        amount_off: Set(amount),
        currency: Set(currency),
        duration: Set(f.duration),
        duration_in_periods: Set(f.duration_in_periods),
        redeem_by: Set(f.redeem_by.map(super::now_millis)),
        max_redemptions: Set(f.max_redemptions),
        times_redeemed: Set(0),
        plans: Set(Some(f.plans.join(",")).filter(|p| !p.is_empty())),
        test: Set(f.test),
        archived_at: Set(None),
        created_at: Set(now),
        updated_at: Set(now),
    }
    .insert(&txn)
    .await?;
    let fields = crate::domain::audit::changes(&serde_json::json!({}), &f.audited(), &[]);
    super::audit::record_acting(&txn, shop_id, "coupon.created", ("coupon", &created.id), fields, at).await?;
    txn.commit().await?;
    Ok(created)
}

/// The shop's coupon of this mode with this code (any case), or with this id.
pub async fn by_code_or_id(
    db: &impl ConnectionTrait,
    shop_id: i64,
    test: bool,
    code: &str,
) -> Result<Option<Model>, DbErr> {
    if let Some(found) = super::find::<Entity>(db, shop_id, code.trim()).await? {
        return Ok(Some(found).filter(|c| c.test == test));
    }
    Entity::find()
        .filter(Column::ShopId.eq(shop_id))
        .filter(Column::Test.eq(test))
        .filter(Column::Code.eq(normalize_code(code)))
        .one(db)
        .await
}

/// Whether the shop has a coupon of this mode customers can still redeem at `now` (the
/// plan pages then show a field for its code).
pub async fn any_redeemable(
    db: &impl ConnectionTrait,
    shop_id: i64,
    test: bool,
    now: DateTime<Utc>,
) -> Result<bool, DbErr> {
    let count = Entity::find()
        .filter(Column::ShopId.eq(shop_id))
        .filter(Column::Test.eq(test))
        .filter(Column::ArchivedAt.is_null())
        .filter(Condition::any().add(Column::RedeemBy.is_null()).add(Column::RedeemBy.gt(super::now_millis(now))))
        .filter(
            Condition::any()
                .add(Column::MaxRedemptions.is_null())
                .add(Expr::col(Column::TimesRedeemed).lt(Expr::col(Column::MaxRedemptions))),
        )
        .count(db)
        .await?;
    Ok(count > 0)
}

/// Takes one redemption of the coupon if it is still valid at `now` and has one left: one
/// conditional update, so of many at once only as many as are left succeed.
pub async fn redeem(db: &impl ConnectionTrait, id: &str, now: DateTime<Utc>) -> Result<bool, DbErr> {
    let at = super::now_millis(now);
    let result = Entity::update_many()
        .col_expr(Column::TimesRedeemed, Expr::col(Column::TimesRedeemed).add(1))
        .col_expr(Column::UpdatedAt, Expr::value(at))
        .filter(Column::Id.eq(id))
        .filter(Column::ArchivedAt.is_null())
        .filter(Condition::any().add(Column::RedeemBy.is_null()).add(Column::RedeemBy.gt(at)))
        .filter(
            Condition::any()
                .add(Column::MaxRedemptions.is_null())
                .add(Expr::col(Column::TimesRedeemed).lt(Expr::col(Column::MaxRedemptions))),
        )
        .exec(db)
        .await?;
    Ok(result.rows_affected == 1)
}

/// Gives back a redemption whose first charge was declined.
pub async fn release(db: &impl ConnectionTrait, id: &str, now: DateTime<Utc>) -> Result<(), DbErr> {
    Entity::update_many()
        .col_expr(Column::TimesRedeemed, Expr::col(Column::TimesRedeemed).sub(1))
        .col_expr(Column::UpdatedAt, Expr::value(super::now_millis(now)))
        .filter(Column::Id.eq(id))
        .filter(Column::TimesRedeemed.gt(0))
        .exec(db)
        .await?;
    Ok(())
}

/// The coupon whose discount a subscription's next plan period still takes, if any.
pub async fn of_subscription(
    db: &impl ConnectionTrait,
    sub: &super::entities::subscriptions::Model,
) -> Result<Option<Model>, DbErr> {
    match sub.coupon_id.as_deref().filter(|_| sub.discounted()) {
        Some(id) => super::find_public::<Entity>(db, id).await,
        None => Ok(None),
    }
}
