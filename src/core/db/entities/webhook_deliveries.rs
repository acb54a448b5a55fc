use sea_orm::entity::prelude::*;

use crate::domain::webhook::{DeliveryStatus, Scheme};

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "webhook_deliveries")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub seq: i64,
    #[sea_orm(unique)]
    pub id: String,
    pub shop_id: i64,
    pub event_id: String,
    /// The endpoint (Standard Webhooks); none for a bePaid notification.
    pub endpoint_id: Option<String>,
    #[sea_orm(column_type = "Text")]
    pub url: String,
    pub scheme: Scheme,
    /// One delivery per event and target when fanned out (`event:target`); a redelivery's
    /// is its own.
    pub dedupe_key: String,
    pub status: DeliveryStatus,
    pub attempts: i32,
    pub next_attempt_at: DateTimeUtc,
    pub claim_token: Option<String>,
    pub claimed_until: Option<DateTimeUtc>,
    pub last_status_code: Option<i32>,
    #[sea_orm(column_type = "Text", nullable)]
    pub last_error: Option<String>,
    pub test: bool,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
