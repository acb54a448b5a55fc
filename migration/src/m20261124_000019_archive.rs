use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Products {
    Table,
    ArchivedAt,
}

#[derive(DeriveIden)]
enum Plans {
    Table,
    ArchivedAt,
}

/// Products and plans a merchant archived: their links stop taking payments and say so, and
/// the dashboard's lists leave them out unless asked; running subscriptions go on.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let column = |name: DynIden| ColumnDef::new(name).timestamp_with_time_zone().null().to_owned();
        manager
            .alter_table(
                Table::alter().table(Products::Table).add_column(column(Products::ArchivedAt.into_iden())).to_owned(),
            )
            .await?;
        manager
            .alter_table(
                Table::alter().table(Plans::Table).add_column(column(Plans::ArchivedAt.into_iden())).to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.alter_table(Table::alter().table(Products::Table).drop_column(Products::ArchivedAt).to_owned()).await?;
        manager.alter_table(Table::alter().table(Plans::Table).drop_column(Plans::ArchivedAt).to_owned()).await
    }
}
