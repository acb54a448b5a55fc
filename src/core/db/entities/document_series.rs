use sea_orm::entity::prelude::*;

use crate::domain::invoice::DocumentKind;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "document_series")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub shop_id: i64,
    #[sea_orm(primary_key, auto_increment = false)]
    pub kind: DocumentKind,
    #[sea_orm(primary_key, auto_increment = false)]
    pub test: bool,
    pub prefix: String,
    /// The number the next document of the series takes.
    pub next_number: i64,
    /// The highest number issued (0 before the first): the next number is never set at or
    /// below it.
    pub last_issued: i64,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
