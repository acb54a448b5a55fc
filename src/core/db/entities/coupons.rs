use sea_orm::entity::prelude::*;

use crate::domain::coupon::CouponDuration;
use crate::domain::currency::Currency;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "coupons")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub seq: i64,
    #[sea_orm(unique)]
    pub id: String,
    pub shop_id: i64,
    /// In capitals; unique per shop and mode.
    pub code: String,
    #[sea_orm(column_type = "Text", nullable)]
    pub name: Option<String>,
    pub percent_off: Option<i32>,
    pub amount_off: Option<i64>,
    pub currency: Option<Currency>,
    pub duration: CouponDuration,
    pub duration_in_periods: Option<i32>,
    pub redeem_by: Option<DateTimeUtc>,
    pub max_redemptions: Option<i32>,
    pub times_redeemed: i32,
    /// The plans it applies to, comma-separated; none for every plan.
    #[sea_orm(column_type = "Text", nullable)]
    pub plans: Option<String>,
    pub test: bool,
    pub archived_at: Option<DateTimeUtc>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
