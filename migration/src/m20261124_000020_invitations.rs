use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum Users {
    Table,
    InviteHash,
    InviteExpiresAt,
}

/// Users invited to a shop: the SHA-256 of their one-time link's token (unique; the token
/// itself is never stored) and when the link stops working. Both are cleared once the user
/// sets a password through it.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let hash = ColumnDef::new(Users::InviteHash).string().null().to_owned();
        let expires = ColumnDef::new(Users::InviteExpiresAt).timestamp_with_time_zone().null().to_owned();
        manager.alter_table(Table::alter().table(Users::Table).add_column(hash).to_owned()).await?;
        manager.alter_table(Table::alter().table(Users::Table).add_column(expires).to_owned()).await?;
        let index =
            Index::create().name("ux_users_invite_hash").table(Users::Table).col(Users::InviteHash).unique().to_owned();
        manager.create_index(index).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_index(Index::drop().name("ux_users_invite_hash").table(Users::Table).to_owned()).await?;
        manager.alter_table(Table::alter().table(Users::Table).drop_column(Users::InviteExpiresAt).to_owned()).await?;
        manager.alter_table(Table::alter().table(Users::Table).drop_column(Users::InviteHash).to_owned()).await
    }
}
