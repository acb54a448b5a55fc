use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum Jobs {
    Table,
    Name,
    Holder,
    LeaseUntil,
    LastDoneAt,
}

/// Work that one instance at a time does now and then (a scheduled snapshot): who holds it
/// and until when, and when it was last done.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use Jobs as J;
        let table = Table::create()
            .table(J::Table)
            .col(ColumnDef::new(J::Name).string().not_null().primary_key())
            .col(ColumnDef::new(J::Holder).string().null())
            .col(ColumnDef::new(J::LeaseUntil).timestamp_with_time_zone().null())
            .col(ColumnDef::new(J::LastDoneAt).timestamp_with_time_zone().null())
            .to_owned();
        manager.create_table(table).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(Table::drop().table(Jobs::Table).to_owned()).await
    }
}
