use sea_orm::entity::prelude::*;

use crate::domain::mail::{MailKind, MailStatus};

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "mails")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub seq: i64,
    #[sea_orm(unique)]
    pub id: String,
    pub shop_id: i64,
    /// Whom it goes to, when known as a customer of the shop.
    pub customer_id: Option<String>,
    pub kind: MailKind,
    /// The payment, refund or subscription it is about (the customer, for a link).
    pub object_id: String,
    /// The event that caused it, whose snapshot of the object it tells of.
    pub event_id: Option<String>,
    /// One mail per cause: `{event}:{kind}`, or a reminder's kind, subscription and charge.
    pub dedupe_key: String,
    pub test: bool,
    pub status: MailStatus,
    /// Filled when it is rendered, before its first attempt; every retry sends the same.
    #[sea_orm(column_type = "Text", nullable)]
    pub to_address: Option<String>,
    pub language: Option<String>,
    #[sea_orm(column_type = "Text", nullable)]
    pub subject: Option<String>,
    #[sea_orm(column_type = "Text", nullable)]
    pub text_body: Option<String>,
    #[sea_orm(column_type = "Text", nullable)]
    pub html_body: Option<String>,
    #[sea_orm(column_type = "Text")]
    pub message_id: String,
    pub attempts: i32,
    pub next_attempt_at: DateTimeUtc,
    pub claim_token: Option<String>,
    pub claimed_until: Option<DateTimeUtc>,
    pub last_code: Option<i32>,
    #[sea_orm(column_type = "Text", nullable)]
    pub last_error: Option<String>,
    pub sent_at: Option<DateTimeUtc>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
