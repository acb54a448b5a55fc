use sea_orm::entity::prelude::*;

use crate::domain::currency::Currency;
use crate::domain::dispute::{DisputeStage, DisputeStatus};

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "disputes")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub seq: i64,
    #[sea_orm(unique)]
    pub id: String,
    pub shop_id: i64,
    pub payment_id: String,
    pub subscription_id: Option<String>,
    pub customer_id: Option<String>,
    /// The disputed payment's card, as its processor identifies it across entries.
    pub card_fingerprint: Option<String>,
    pub test: bool,
    /// The processor's id of the dispute (unique per shop).
    pub reference: String,
    pub stage: DisputeStage,
    pub status: DisputeStatus,
    pub reason: String,
    pub amount: i64,
    pub currency: Currency,
    pub fee: Option<i64>,
    pub evidence_due_by: Option<DateTimeUtc>,
    /// The evidence (a JSON object of texts), staged or submitted.
    pub evidence: Option<String>,
    pub evidence_submitted_at: Option<DateTimeUtc>,
    pub submission_count: i32,
    /// The merchant accepted the dispute (gave up).
    pub accepted: bool,
    pub funds_withdrawn_at: Option<DateTimeUtc>,
    pub funds_reinstated_at: Option<DateTimeUtc>,
    /// What it took from the merchant and keeps now.
    pub withdrawn_amount: i64,
    pub withdrawn_fee: i64,
    /// When the simulated processor's card network acts on it next.
    pub network_at: Option<DateTimeUtc>,
    pub closed_at: Option<DateTimeUtc>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
