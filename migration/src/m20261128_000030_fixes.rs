use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum Payments {
    Table,
    CaptureReference,
}

#[derive(DeriveIden, Clone, Copy)]
enum Subscriptions {
    Table,
    TrialEndsAt,
}

/// The processor's reference of a held payment's capture (`payments.capture_reference`),
/// where it differs from the authorization's: bePaid refunds a capture's uid, never the
/// authorization's. When a subscription's trial ends, as its plan said when it started
/// (`subscriptions.trial_ends_at`): a plan change does not move it. Rows from before keep
/// `null` and are read from their plan as before.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let mut column = ColumnDef::new(Payments::CaptureReference).text().null().to_owned();
        manager.alter_table(Table::alter().table(Payments::Table).add_column(&mut column).to_owned()).await?;
        let mut column = ColumnDef::new(Subscriptions::TrialEndsAt).timestamp_with_time_zone().null().to_owned();
        manager.alter_table(Table::alter().table(Subscriptions::Table).add_column(&mut column).to_owned()).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(Table::alter().table(Subscriptions::Table).drop_column(Subscriptions::TrialEndsAt).to_owned())
            .await?;
        manager
            .alter_table(Table::alter().table(Payments::Table).drop_column(Payments::CaptureReference).to_owned())
            .await
    }
}
