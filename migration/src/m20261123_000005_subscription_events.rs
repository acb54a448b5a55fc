use sea_orm_migration::prelude::*;

use crate::{seq_column, timestamp};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum SubscriptionEvents {
    Table,
    Seq,
    Id,
    ShopId,
    SubscriptionId,
    FromState,
    ToState,
    PaymentId,
    Reason,
    RenewAt,
    OccurredAt,
    CreatedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use SubscriptionEvents as E;
        manager
            .create_table(
                Table::create()
                    .table(E::Table)
                    .col(seq_column(E::Seq))
                    .col(ColumnDef::new(E::Id).string().not_null().unique_key())
                    .col(ColumnDef::new(E::ShopId).big_integer().not_null())
                    .col(ColumnDef::new(E::SubscriptionId).string().not_null())
                    .col(ColumnDef::new(E::FromState).string().null())
                    .col(ColumnDef::new(E::ToState).string().not_null())
                    .col(ColumnDef::new(E::PaymentId).string().null())
                    .col(ColumnDef::new(E::Reason).string().null())
                    .col(ColumnDef::new(E::RenewAt).timestamp_with_time_zone().null())
                    .col(timestamp(E::OccurredAt))
                    .col(timestamp(E::CreatedAt))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("ix_subscription_events_subscription")
                    .table(E::Table)
                    .col(E::SubscriptionId)
                    .col(E::Seq)
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(Table::drop().table(SubscriptionEvents::Table).to_owned()).await
    }
}
