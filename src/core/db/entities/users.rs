use sea_orm::entity::prelude::*;

use crate::domain::access::Role;
use crate::domain::vocab::DashboardLanguage;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "users")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub seq: i64,
    #[sea_orm(unique)]
    pub id: String,
    pub shop_id: i64,
    #[sea_orm(unique)]
    pub email: String,
    pub password_hash: String,
    /// An invited user's one-time link: the SHA-256 of its token, until a password is set.
    pub invite_hash: Option<String>,
    pub invite_expires_at: Option<DateTimeUtc>,
    /// The language the user reads the dashboard in.
    pub language: DashboardLanguage,
    /// What the user may do in the shop.
    pub role: Role,
    /// The authenticator's secret of two-step login, sealed by the vault; `None` while it is off.
    #[sea_orm(column_type = "Text", nullable)]
    pub totp_sealed: Option<String>,
    /// The last time step a code was accepted for: a code works once.
    pub totp_last_step: Option<i64>,
    pub totp_enabled_at: Option<DateTimeUtc>,
    /// Locked after too many wrong passwords: no password opens it before this.
    pub locked_until: Option<DateTimeUtc>,
    /// The SHA-256 of the one-time link, mailed to the user, that opens it sooner.
    pub unlock_hash: Option<String>,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
