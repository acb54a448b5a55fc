use sea_orm_migration::prelude::*;

use crate::{index, seq_column, timestamp};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum Shops {
    Table,
    SecretSealed,
    SigningKeySealed,
    PublicKey,
    NotificationUrl,
}

#[derive(DeriveIden, Clone, Copy)]
enum Products {
    Table,
    NotificationUrl,
}

#[derive(DeriveIden, Clone, Copy)]
enum WebhookEndpoints {
    Table,
    Seq,
    Id,
    ShopId,
    Url,
    Description,
    EnabledEvents,
    Enabled,
    SecretSealed,
    PreviousSecretSealed,
    PreviousSecretUntil,
    FailingSince,
    DisabledReason,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden, Clone, Copy)]
enum WebhookDeliveries {
    Table,
    Seq,
    Id,
    ShopId,
    EventId,
    EndpointId,
    Url,
    Scheme,
    DedupeKey,
    Status,
    Attempts,
    NextAttemptAt,
    ClaimToken,
    ClaimedUntil,
    LastStatusCode,
    LastError,
    Test,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden, Clone, Copy)]
enum WebhookAttempts {
    Table,
    Seq,
    DeliveryId,
    ShopId,
    At,
    StatusCode,
    LatencyMs,
    ResponseHead,
    Error,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // SQLite adds one column per ALTER TABLE.
        for column in [Shops::SecretSealed, Shops::SigningKeySealed, Shops::PublicKey, Shops::NotificationUrl] {
            let mut column = ColumnDef::new(column).text().null().to_owned();
            manager.alter_table(Table::alter().table(Shops::Table).add_column(&mut column).to_owned()).await?;
        }
        let mut column = ColumnDef::new(Products::NotificationUrl).text().null().to_owned();
        manager.alter_table(Table::alter().table(Products::Table).add_column(&mut column).to_owned()).await?;

        use WebhookEndpoints as E;
        manager
            .create_table(
                Table::create()
                    .table(E::Table)
                    .col(seq_column(E::Seq))
                    .col(ColumnDef::new(E::Id).string().not_null().unique_key())
                    .col(ColumnDef::new(E::ShopId).big_integer().not_null())
                    .col(ColumnDef::new(E::Url).text().not_null())
                    .col(ColumnDef::new(E::Description).text().null())
                    .col(ColumnDef::new(E::EnabledEvents).text().not_null())
                    .col(ColumnDef::new(E::Enabled).boolean().not_null())
                    .col(ColumnDef::new(E::SecretSealed).text().not_null())
                    .col(ColumnDef::new(E::PreviousSecretSealed).text().null())
                    .col(ColumnDef::new(E::PreviousSecretUntil).timestamp_with_time_zone().null())
                    .col(ColumnDef::new(E::FailingSince).timestamp_with_time_zone().null())
                    .col(ColumnDef::new(E::DisabledReason).text().null())
                    .col(timestamp(E::CreatedAt))
                    .col(timestamp(E::UpdatedAt))
                    .to_owned(),
            )
            .await?;
        manager.create_index(index("ix_webhook_endpoints_shop_seq", E::Table, &[E::ShopId, E::Seq])).await?;

        use WebhookDeliveries as D;
        manager
            .create_table(
                Table::create()
                    .table(D::Table)
                    .col(seq_column(D::Seq))
                    .col(ColumnDef::new(D::Id).string().not_null().unique_key())
                    .col(ColumnDef::new(D::ShopId).big_integer().not_null())
                    .col(ColumnDef::new(D::EventId).string().not_null())
                    .col(ColumnDef::new(D::EndpointId).string().null())
                    .col(ColumnDef::new(D::Url).text().not_null())
                    .col(ColumnDef::new(D::Scheme).string().not_null())
                    .col(ColumnDef::new(D::DedupeKey).string().not_null().unique_key())
                    .col(ColumnDef::new(D::Status).string().not_null())
                    .col(ColumnDef::new(D::Attempts).integer().not_null())
                    .col(timestamp(D::NextAttemptAt))
                    .col(ColumnDef::new(D::ClaimToken).string().null())
                    .col(ColumnDef::new(D::ClaimedUntil).timestamp_with_time_zone().null())
                    .col(ColumnDef::new(D::LastStatusCode).integer().null())
                    .col(ColumnDef::new(D::LastError).text().null())
                    .col(ColumnDef::new(D::Test).boolean().not_null())
                    .col(timestamp(D::CreatedAt))
                    .col(timestamp(D::UpdatedAt))
                    .to_owned(),
            )
            .await?;
        for (name, columns) in [
            ("ix_webhook_deliveries_due", vec![D::Status, D::NextAttemptAt]),
            ("ix_webhook_deliveries_shop_seq", vec![D::ShopId, D::Seq]),
            ("ix_webhook_deliveries_event", vec![D::EventId]),
            ("ix_webhook_deliveries_endpoint_seq", vec![D::EndpointId, D::Seq]),
            ("ix_webhook_deliveries_claim", vec![D::ClaimToken]),
        ] {
            manager.create_index(index(name, D::Table, &columns)).await?;
        }

        use WebhookAttempts as A;
        manager
            .create_table(
                Table::create()
                    .table(A::Table)
                    .col(seq_column(A::Seq))
                    .col(ColumnDef::new(A::DeliveryId).string().not_null())
                    .col(ColumnDef::new(A::ShopId).big_integer().not_null())
                    .col(timestamp(A::At))
                    .col(ColumnDef::new(A::StatusCode).integer().null())
                    .col(ColumnDef::new(A::LatencyMs).big_integer().not_null())
                    .col(ColumnDef::new(A::ResponseHead).text().null())
                    .col(ColumnDef::new(A::Error).text().null())
                    .to_owned(),
            )
            .await?;
        manager.create_index(index("ix_webhook_attempts_delivery", A::Table, &[A::DeliveryId, A::Seq])).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            WebhookAttempts::Table.into_iden(),
            WebhookDeliveries::Table.into_iden(),
            WebhookEndpoints::Table.into_iden(),
        ] {
            manager.drop_table(Table::drop().table(table).to_owned()).await?;
        }
        manager
            .alter_table(Table::alter().table(Products::Table).drop_column(Products::NotificationUrl).to_owned())
            .await?;
        for column in [Shops::NotificationUrl, Shops::PublicKey, Shops::SigningKeySealed, Shops::SecretSealed] {
            manager.alter_table(Table::alter().table(Shops::Table).drop_column(column).to_owned()).await?;
        }
        Ok(())
    }
}
