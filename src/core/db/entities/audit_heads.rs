use sea_orm::entity::prelude::*;

/// The newest record of a shop's audit trail: its number and hash. Every new record takes
/// this row first, so one shop's records are written one at a time.
#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "audit_heads")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub shop_id: i64,
    pub seq: i64,
    pub hash: String,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
