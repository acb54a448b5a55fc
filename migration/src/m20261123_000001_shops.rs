use sea_orm_migration::prelude::*;

use crate::timestamp;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
pub enum Shops {
    Table,
    Id,
    Name,
    Url,
    SecretDigest,
    CreatedAt,
    UpdatedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Shops::Table)
                    .col(ColumnDef::new(Shops::Id).big_integer().not_null().auto_increment().primary_key())
                    .col(ColumnDef::new(Shops::Name).string().not_null())
                    .col(ColumnDef::new(Shops::Url).string().null())
                    .col(ColumnDef::new(Shops::SecretDigest).string().not_null())
                    .col(timestamp(Shops::CreatedAt))
                    .col(timestamp(Shops::UpdatedAt))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(Table::drop().table(Shops::Table).to_owned()).await
    }
}
