use sea_orm::entity::prelude::*;

use crate::domain::vocab::{Language, PortalTokenKind};

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "portal_tokens")]
pub struct Model {
    /// SHA-256 of the token (hex): the token itself is only in the link or the cookie.
    #[sea_orm(primary_key, auto_increment = false)]
    pub digest: String,
    /// A link (single use, opens a session) or a session.
    pub kind: PortalTokenKind,
    pub shop_id: i64,
    pub customer_id: String,
    /// The language the subscriber page is shown in.
    pub language: Language,
    /// Where the page's "back to the shop" leads (an API-minted session's `return_url`).
    #[sea_orm(column_type = "Text", nullable)]
    pub return_url: Option<String>,
    pub created_at: DateTimeUtc,
    pub expires_at: DateTimeUtc,
    /// When a link was used (it opens no second session).
    pub used_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
