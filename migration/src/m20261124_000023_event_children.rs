use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Events {
    Table,
    ChildTransaction,
}

/// For a capture, void or refund of a payment: the child transaction its event reports (its
/// own uid and amount, as JSON), which bePaid-style notifications give as bePaid gives a
/// child transaction. Older events have none.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let column = ColumnDef::new(Events::ChildTransaction).text().null().to_owned();
        manager.alter_table(Table::alter().table(Events::Table).add_column(column).to_owned()).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.alter_table(Table::alter().table(Events::Table).drop_column(Events::ChildTransaction).to_owned()).await
    }
}
