use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "recovery_codes")]
pub struct Model {
    /// SHA-256 of the user's id and the code (hex): the code itself is shown once, never kept.
    #[sea_orm(primary_key, auto_increment = false)]
    pub digest: String,
    pub user_id: String,
    pub created_at: DateTimeUtc,
    /// When the code was used (each works once).
    pub used_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
