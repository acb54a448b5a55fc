use sea_orm::entity::prelude::*;

use crate::domain::processor::{CardEntry, ProcessorKind};

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "shop_processors")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub shop_id: i64,
    pub kind: ProcessorKind,
    pub card_entry: CardEntry,
    pub gateway_url: String,
    pub checkout_url: String,
    pub test_shop_id: Option<String>,
    /// The test account's secret key, sealed with the vault.
    pub test_secret_sealed: Option<String>,
    /// Its last characters, all that is ever shown.
    pub test_secret_hint: Option<String>,
    pub test_public_key: Option<String>,
    pub live_shop_id: Option<String>,
    pub live_secret_sealed: Option<String>,
    pub live_secret_hint: Option<String>,
    pub live_public_key: Option<String>,
    /// The test account's webhook signing secret (Stripe), sealed.
    pub test_webhook_sealed: Option<String>,
    pub test_webhook_hint: Option<String>,
    /// The signing secret it replaced, still taken until `test_webhook_previous_until`.
    pub test_webhook_previous_sealed: Option<String>,
    pub test_webhook_previous_until: Option<DateTimeUtc>,
    pub live_webhook_sealed: Option<String>,
    pub live_webhook_hint: Option<String>,
    pub live_webhook_previous_sealed: Option<String>,
    pub live_webhook_previous_until: Option<DateTimeUtc>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
