use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Users {
    Table,
    Language,
}

/// The language each user reads the dashboard in (`en` or `ru`); users made before it read
/// English until they choose.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let language = ColumnDef::new(Users::Language).string_len(8).not_null().default("en").to_owned();
        manager.alter_table(Table::alter().table(Users::Table).add_column(language).to_owned()).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.alter_table(Table::alter().table(Users::Table).drop_column(Users::Language).to_owned()).await
    }
}
