use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum Users {
    Table,
    Role,
}

/// What each dashboard user may do (`users.role`: owner, administrator, developer, support,
/// analyst). Every user from before could do everything, so each becomes an owner.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let mut column = ColumnDef::new(Users::Role).text().not_null().default("owner").to_owned();
        manager.alter_table(Table::alter().table(Users::Table).add_column(&mut column).to_owned()).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.alter_table(Table::alter().table(Users::Table).drop_column(Users::Role).to_owned()).await
    }
}
