use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Subscriptions {
    Table,
    CancelAtPeriodEnd,
}

/// A subscription the merchant cancelled "at the end of the paid period": it is not charged
/// again, and ends when its paid period does.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let column = ColumnDef::new(Subscriptions::CancelAtPeriodEnd).boolean().not_null().default(false).to_owned();
        manager.alter_table(Table::alter().table(Subscriptions::Table).add_column(column).to_owned()).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .alter_table(
                Table::alter().table(Subscriptions::Table).drop_column(Subscriptions::CancelAtPeriodEnd).to_owned(),
            )
            .await
    }
}
