use sea_orm_migration::prelude::*;

use crate::{index, timestamp};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum Users {
    Table,
    Role,
    TotpSealed,
    TotpLastStep,
    TotpEnabledAt,
}

#[derive(DeriveIden, Clone, Copy)]
enum Shops {
    Table,
    TwoStepRequired,
}

#[derive(DeriveIden, Clone, Copy)]
enum RecoveryCodes {
    Table,
    Digest,
    UserId,
    CreatedAt,
    UsedAt,
}

/// Who may do what: each dashboard user's role (`users.role`: owner, administrator,
/// developer, support, analyst; every user from before could do everything, so each becomes
/// an owner). Two-step login: the user's authenticator secret, sealed by the vault, the last
/// time step a code was used for (each code works once), when it was turned on; the
/// single-use recovery codes, kept as SHA-256 digests; and whether a shop requires two-step
/// login of every user.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let columns = [
            ColumnDef::new(Users::Role).text().not_null().default("owner").to_owned(),
            ColumnDef::new(Users::TotpSealed).text().null().to_owned(),
            ColumnDef::new(Users::TotpLastStep).big_integer().null().to_owned(),
            ColumnDef::new(Users::TotpEnabledAt).timestamp_with_time_zone().null().to_owned(),
        ];
        for mut column in columns {
            manager.alter_table(Table::alter().table(Users::Table).add_column(&mut column).to_owned()).await?;
        }
        let mut column = ColumnDef::new(Shops::TwoStepRequired).boolean().not_null().default(false).to_owned();
        manager.alter_table(Table::alter().table(Shops::Table).add_column(&mut column).to_owned()).await?;
        use RecoveryCodes as R;
        manager
            .create_table(
                Table::create()
                    .table(R::Table)
                    .col(ColumnDef::new(R::Digest).string().not_null().primary_key())
                    .col(ColumnDef::new(R::UserId).string().not_null())
                    .col(timestamp(R::CreatedAt))
                    .col(ColumnDef::new(R::UsedAt).timestamp_with_time_zone().null())
                    .to_owned(),
            )
            .await?;
        manager.create_index(index("ix_recovery_codes_user", R::Table, &[R::UserId])).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(Table::drop().table(RecoveryCodes::Table).to_owned()).await?;
        manager.alter_table(Table::alter().table(Shops::Table).drop_column(Shops::TwoStepRequired).to_owned()).await?;
        for column in [Users::TotpEnabledAt, Users::TotpLastStep, Users::TotpSealed, Users::Role] {
            manager.alter_table(Table::alter().table(Users::Table).drop_column(column).to_owned()).await?;
        }
        Ok(())
    }
}
