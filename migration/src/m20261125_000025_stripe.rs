use sea_orm_migration::prelude::*;

use crate::timestamp;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum ShopProcessors {
    Table,
    TestWebhookSealed,
    TestWebhookHint,
    TestWebhookPreviousSealed,
    TestWebhookPreviousUntil,
    LiveWebhookSealed,
    LiveWebhookHint,
    LiveWebhookPreviousSealed,
    LiveWebhookPreviousUntil,
}

#[derive(DeriveIden)]
enum ProcessorEvents {
    Table,
    ShopId,
    EventId,
    ClaimedUntil,
    DoneAt,
}

/// Stripe: per mode the webhook signing secret (sealed, with its last characters), and the
/// one it replaced, still taken until `…_previous_until` (Stripe signs with both while a
/// secret is rolled). `processor_events` takes each webhook event once: a delivery claims its
/// id for a while (a lease, so that one cut off mid-way is taken again), and `done_at` marks
/// it acted on.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use ShopProcessors as P;
        for column in [
            ColumnDef::new(P::TestWebhookSealed).text().null().to_owned(),
            ColumnDef::new(P::TestWebhookHint).text().null().to_owned(),
            ColumnDef::new(P::TestWebhookPreviousSealed).text().null().to_owned(),
            ColumnDef::new(P::TestWebhookPreviousUntil).timestamp_with_time_zone().null().to_owned(),
            ColumnDef::new(P::LiveWebhookSealed).text().null().to_owned(),
            ColumnDef::new(P::LiveWebhookHint).text().null().to_owned(),
            ColumnDef::new(P::LiveWebhookPreviousSealed).text().null().to_owned(),
            ColumnDef::new(P::LiveWebhookPreviousUntil).timestamp_with_time_zone().null().to_owned(),
        ] {
            let mut column = column;
            manager.alter_table(Table::alter().table(P::Table).add_column(&mut column).to_owned()).await?;
        }
        manager
            .create_table(
                Table::create()
                    .table(ProcessorEvents::Table)
                    .col(ColumnDef::new(ProcessorEvents::ShopId).big_integer().not_null())
                    .col(ColumnDef::new(ProcessorEvents::EventId).text().not_null())
                    .col(timestamp(ProcessorEvents::ClaimedUntil))
                    .col(ColumnDef::new(ProcessorEvents::DoneAt).timestamp_with_time_zone().null())
                    .primary_key(Index::create().col(ProcessorEvents::ShopId).col(ProcessorEvents::EventId))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use ShopProcessors as P;
        manager.drop_table(Table::drop().table(ProcessorEvents::Table).to_owned()).await?;
        for column in [
            P::TestWebhookSealed,
            P::TestWebhookHint,
            P::TestWebhookPreviousSealed,
            P::TestWebhookPreviousUntil,
            P::LiveWebhookSealed,
            P::LiveWebhookHint,
            P::LiveWebhookPreviousSealed,
            P::LiveWebhookPreviousUntil,
        ] {
            manager.alter_table(Table::alter().table(P::Table).drop_column(column).to_owned()).await?;
        }
        Ok(())
    }
}
