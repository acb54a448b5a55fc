use sea_orm_migration::prelude::*;

use crate::index;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum Sessions {
    Table,
    UserId,
    UserAgent,
    Address,
    SignedInAt,
    SeenAt,
}

#[derive(DeriveIden, Clone, Copy)]
enum Shops {
    Table,
    SessionIdleMinutes,
}

/// A user's own sessions, to list and end: whose each session is, the browser and address it
/// signed in from, when it signed in and was last used (copied out of the session's record
/// when it is saved; a session from before has none and asks to sign in again). How long a
/// shop's sessions live unused (15 minutes unless an owner chooses longer).
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use Sessions as S;
        let columns = [
            ColumnDef::new(S::UserId).string().null().to_owned(),
            ColumnDef::new(S::UserAgent).text().null().to_owned(),
            ColumnDef::new(S::Address).string().null().to_owned(),
            ColumnDef::new(S::SignedInAt).timestamp_with_time_zone().null().to_owned(),
            ColumnDef::new(S::SeenAt).timestamp_with_time_zone().null().to_owned(),
        ];
        for mut column in columns {
            manager.alter_table(Table::alter().table(S::Table).add_column(&mut column).to_owned()).await?;
        }
        manager.create_index(index("ix_sessions_user", S::Table, &[S::UserId])).await?;
        let mut column = ColumnDef::new(Shops::SessionIdleMinutes).integer().not_null().default(15).to_owned();
        manager.alter_table(Table::alter().table(Shops::Table).add_column(&mut column).to_owned()).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use Sessions as S;
        manager
            .alter_table(Table::alter().table(Shops::Table).drop_column(Shops::SessionIdleMinutes).to_owned())
            .await?;
        manager.drop_index(Index::drop().name("ix_sessions_user").table(S::Table).to_owned()).await?;
        for column in [S::SeenAt, S::SignedInAt, S::Address, S::UserAgent, S::UserId] {
            manager.alter_table(Table::alter().table(S::Table).drop_column(column).to_owned()).await?;
        }
        Ok(())
    }
}
