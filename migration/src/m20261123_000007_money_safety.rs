use sea_orm_migration::prelude::*;

use crate::{seq_column, timestamp};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum TestClocks {
    Table,
    AdvanceTo,
    LeaseToken,
    LeaseUntil,
}

#[derive(DeriveIden, Clone, Copy)]
enum CheckoutAttempts {
    Table,
    Id,
    Target,
    Status,
    PaymentId,
    ClaimedUntil,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden, Clone, Copy)]
enum IdempotencyKeys {
    Table,
    Seq,
    ShopId,
    Key,
    Request,
    Fingerprint,
    Status,
    Body,
    LockedUntil,
    CreatedAt,
}

#[derive(DeriveIden, Clone, Copy)]
enum ThrottleHits {
    Table,
    Seq,
    Scope,
    Key,
    At,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // SQLite adds one column per ALTER TABLE.
        for column in [
            ColumnDef::new(TestClocks::AdvanceTo).timestamp_with_time_zone().null().to_owned(),
            ColumnDef::new(TestClocks::LeaseToken).string().null().to_owned(),
            ColumnDef::new(TestClocks::LeaseUntil).timestamp_with_time_zone().null().to_owned(),
        ] {
            let mut column = column;
            manager.alter_table(Table::alter().table(TestClocks::Table).add_column(&mut column).to_owned()).await?;
        }
        manager
            .create_table(
                Table::create()
                    .table(CheckoutAttempts::Table)
                    .col(ColumnDef::new(CheckoutAttempts::Id).string().not_null().primary_key())
                    .col(ColumnDef::new(CheckoutAttempts::Target).string().not_null())
                    .col(ColumnDef::new(CheckoutAttempts::Status).string().not_null())
                    .col(ColumnDef::new(CheckoutAttempts::PaymentId).string().null())
                    .col(ColumnDef::new(CheckoutAttempts::ClaimedUntil).timestamp_with_time_zone().null())
                    .col(timestamp(CheckoutAttempts::CreatedAt))
                    .col(timestamp(CheckoutAttempts::UpdatedAt))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("ix_checkout_attempts_created")
                    .table(CheckoutAttempts::Table)
                    .col(CheckoutAttempts::CreatedAt)
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(IdempotencyKeys::Table)
                    .col(seq_column(IdempotencyKeys::Seq))
                    .col(ColumnDef::new(IdempotencyKeys::ShopId).big_integer().not_null())
                    .col(ColumnDef::new(IdempotencyKeys::Key).string().not_null())
                    .col(ColumnDef::new(IdempotencyKeys::Request).string().not_null())
                    .col(ColumnDef::new(IdempotencyKeys::Fingerprint).string().not_null())
                    .col(ColumnDef::new(IdempotencyKeys::Status).integer().null())
                    .col(ColumnDef::new(IdempotencyKeys::Body).text().null())
                    .col(timestamp(IdempotencyKeys::LockedUntil))
                    .col(timestamp(IdempotencyKeys::CreatedAt))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("ux_idempotency_keys_shop_key")
                    .table(IdempotencyKeys::Table)
                    .col(IdempotencyKeys::ShopId)
                    .col(IdempotencyKeys::Key)
                    .unique()
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("ix_idempotency_keys_created")
                    .table(IdempotencyKeys::Table)
                    .col(IdempotencyKeys::CreatedAt)
                    .to_owned(),
            )
            .await?;
        manager
            .create_table(
                Table::create()
                    .table(ThrottleHits::Table)
                    .col(seq_column(ThrottleHits::Seq))
                    .col(ColumnDef::new(ThrottleHits::Scope).string().not_null())
                    .col(ColumnDef::new(ThrottleHits::Key).string().not_null())
                    .col(timestamp(ThrottleHits::At))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("ix_throttle_hits_scope_key_at")
                    .table(ThrottleHits::Table)
                    .col(ThrottleHits::Scope)
                    .col(ThrottleHits::Key)
                    .col(ThrottleHits::At)
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create().name("ix_throttle_hits_at").table(ThrottleHits::Table).col(ThrottleHits::At).to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in
            [ThrottleHits::Table.into_iden(), IdempotencyKeys::Table.into_iden(), CheckoutAttempts::Table.into_iden()]
        {
            manager.drop_table(Table::drop().table(table).to_owned()).await?;
        }
        for column in [TestClocks::LeaseUntil, TestClocks::LeaseToken, TestClocks::AdvanceTo] {
            manager.alter_table(Table::alter().table(TestClocks::Table).drop_column(column).to_owned()).await?;
        }
        Ok(())
    }
}
