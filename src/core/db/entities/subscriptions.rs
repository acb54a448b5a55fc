use sea_orm::entity::prelude::*;

use crate::domain::billing::{ResumeBilling, State};

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "subscriptions")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub seq: i64,
    #[sea_orm(unique)]
    pub id: String,
    pub shop_id: i64,
    pub plan_id: String,
    pub customer_id: String,
    pub state: State,
    pub test: bool,
    pub test_clock_id: Option<String>,
    pub tracking_id: Option<String>,
    #[sea_orm(column_type = "Text", nullable)]
    pub return_url: Option<String>,
    #[sea_orm(column_type = "Text", nullable)]
    pub notification_url: Option<String>,
    #[sea_orm(column_type = "Text", nullable)]
    pub additional_data: Option<String>,
    pub card_token: Option<String>,
    pub card_brand: Option<String>,
    pub card_last4: Option<String>,
    pub card_exp_month: Option<i32>,
    pub card_exp_year: Option<i32>,
    pub card_holder: Option<String>,
    /// What identifies the card across entries (its processor's fingerprint).
    pub card_fingerprint: Option<String>,
    pub started_at: Option<DateTimeUtc>,
    /// When its trial ends, as its plan said when it started (a plan change keeps it); `null`
    /// without a trial, or for a subscription started before paydesk kept it.
    pub trial_ends_at: Option<DateTimeUtc>,
    pub anchor_at: Option<DateTimeUtc>,
    pub period: i64,
    pub paid_cycles: i32,
    pub failed_attempts: i32,
    pub has_success: bool,
    pub renew_at: Option<DateTimeUtc>,
    pub active_to: Option<DateTimeUtc>,
    pub last_payment_id: Option<String>,
    pub cancel_reason: Option<String>,
    pub cancelled_at: Option<DateTimeUtc>,
    /// Cancelled by the merchant "at the end of the paid period": ends then, uncharged.
    pub cancel_at_period_end: bool,
    /// The period that starts at `anchor_at` (0, unless a resume counted periods afresh).
    pub anchor_period: i64,
    /// Paused by the merchant "from the end of the paid period": pauses then, uncharged.
    pub pause_at_period_end: bool,
    /// When it was last paused.
    pub paused_at: Option<DateTimeUtc>,
    /// When a paused subscription resumes by itself, and how (a pause from the end of the
    /// period carries them until it takes effect).
    pub resume_at: Option<DateTimeUtc>,
    pub resume_billing: Option<ResumeBilling>,
    /// The plan it changes to: asked now, once its prorated `change_amount` is charged (under
    /// the key of `change_id`, prorated at `change_at`); without an amount, when its trial or
    /// paid period ends.
    pub change_plan_id: Option<String>,
    pub change_id: Option<String>,
    pub change_amount: Option<i64>,
    pub change_at: Option<DateTimeUtc>,
    /// Its discount: the coupon, the plan periods paid when it was applied, and for how many
    /// periods it lasts (none: for ever).
    pub coupon_id: Option<String>,
    pub discount_from: Option<i32>,
    pub discount_periods: Option<i32>,
    /// When its reminders (trial ending, renewal, card expiring) are looked at next; none
    /// until first looked at.
    pub remind_at: Option<DateTimeUtc>,
    pub claim_token: Option<String>,
    pub claimed_until: Option<DateTimeUtc>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
