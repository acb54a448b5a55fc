use sea_orm_migration::prelude::*;

use crate::{index, timestamp};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum PortalTokens {
    Table,
    Digest,
    Kind,
    ShopId,
    CustomerId,
    Language,
    ReturnUrl,
    CreatedAt,
    ExpiresAt,
    UsedAt,
}

/// The subscriber page's tokens, kept as SHA-256 digests: links (single use, expiring) and
/// the sessions a used link opens.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use PortalTokens as T;
        manager
            .create_table(
                Table::create()
                    .table(T::Table)
                    .col(ColumnDef::new(T::Digest).string().not_null().primary_key())
                    .col(ColumnDef::new(T::Kind).string().not_null())
                    .col(ColumnDef::new(T::ShopId).big_integer().not_null())
                    .col(ColumnDef::new(T::CustomerId).string().not_null())
                    .col(ColumnDef::new(T::Language).string().not_null())
                    .col(ColumnDef::new(T::ReturnUrl).text().null())
                    .col(timestamp(T::CreatedAt))
                    .col(timestamp(T::ExpiresAt))
                    .col(ColumnDef::new(T::UsedAt).timestamp_with_time_zone().null())
                    .to_owned(),
            )
            .await?;
        manager.create_index(index("ix_portal_tokens_expiry", T::Table, &[T::ExpiresAt])).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(Table::drop().table(PortalTokens::Table).to_owned()).await
    }
}
