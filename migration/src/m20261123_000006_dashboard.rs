use sea_orm_migration::prelude::*;

use crate::{seq_column, timestamp};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum Users {
    Table,
    Seq,
    Id,
    ShopId,
    Email,
    PasswordHash,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden, Clone, Copy)]
enum Sessions {
    Table,
    Id,
    Record,
    ExpiresAt,
}

#[derive(DeriveIden, Clone, Copy)]
enum Payments {
    Table,
    ShopId,
    CreatedAt,
    CapturedAt,
}

#[derive(DeriveIden, Clone, Copy)]
enum Shops {
    Table,
    Id,
    Timezone,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Users::Table)
                    .col(seq_column(Users::Seq))
                    .col(ColumnDef::new(Users::Id).string().not_null().unique_key())
                    .col(ColumnDef::new(Users::ShopId).big_integer().not_null())
                    .col(ColumnDef::new(Users::Email).string().not_null().unique_key())
                    .col(ColumnDef::new(Users::PasswordHash).string().not_null())
                    .col(timestamp(Users::CreatedAt))
                    .col(timestamp(Users::UpdatedAt))
                    .foreign_key(ForeignKey::create().from(Users::Table, Users::ShopId).to(Shops::Table, Shops::Id))
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(Sessions::Table)
                    .col(ColumnDef::new(Sessions::Id).string().not_null().primary_key())
                    .col(ColumnDef::new(Sessions::Record).text().not_null())
                    .col(timestamp(Sessions::ExpiresAt))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("ix_sessions_expires_at")
                    .table(Sessions::Table)
                    .col(Sessions::ExpiresAt)
                    .to_owned(),
            )
            .await?;
        // The overview sums a shop's payments taken since a day: by creation or by capture.
        for (name, col) in
            [("ix_payments_shop_created", Payments::CreatedAt), ("ix_payments_shop_captured", Payments::CapturedAt)]
        {
            let index = Index::create().name(name).table(Payments::Table).col(Payments::ShopId).col(col).to_owned();
            manager.create_index(index).await?;
        }
        manager
            .alter_table(
                Table::alter()
                    .table(Shops::Table)
                    .add_column(ColumnDef::new(Shops::Timezone).string().null())
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.alter_table(Table::alter().table(Shops::Table).drop_column(Shops::Timezone).to_owned()).await?;
        for name in ["ix_payments_shop_created", "ix_payments_shop_captured"] {
            manager.drop_index(Index::drop().name(name).table(Payments::Table).to_owned()).await?;
        }
        manager.drop_table(Table::drop().table(Sessions::Table).to_owned()).await?;
        manager.drop_table(Table::drop().table(Users::Table).to_owned()).await
    }
}
