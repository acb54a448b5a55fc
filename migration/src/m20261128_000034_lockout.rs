use sea_orm_migration::prelude::*;

use crate::index;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum Users {
    Table,
    LockedUntil,
    UnlockHash,
}

/// An account locked after too many wrong passwords: until when, and the SHA-256 of the
/// one-time link mailed to its address that opens it sooner.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use Users as U;
        let columns = [
            ColumnDef::new(U::LockedUntil).timestamp_with_time_zone().null().to_owned(),
            ColumnDef::new(U::UnlockHash).string().null().to_owned(),
        ];
        for mut column in columns {
            manager.alter_table(Table::alter().table(U::Table).add_column(&mut column).to_owned()).await?;
        }
        manager.create_index(index("ix_users_unlock", U::Table, &[U::UnlockHash])).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use Users as U;
        manager.drop_index(Index::drop().name("ix_users_unlock").table(U::Table).to_owned()).await?;
        for column in [U::UnlockHash, U::LockedUntil] {
            manager.alter_table(Table::alter().table(U::Table).drop_column(column).to_owned()).await?;
        }
        Ok(())
    }
}
