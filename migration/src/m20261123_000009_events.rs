use sea_orm_migration::prelude::*;

use crate::{index, seq_column, timestamp};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum Events {
    Table,
    Seq,
    Id,
    ShopId,
    Type,
    ObjectId,
    Test,
    Data,
    FannedOut,
    CreatedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Events::Table)
                    .col(seq_column(Events::Seq))
                    .col(ColumnDef::new(Events::Id).string().not_null().unique_key())
                    .col(ColumnDef::new(Events::ShopId).big_integer().not_null())
                    .col(ColumnDef::new(Events::Type).string().not_null())
                    .col(ColumnDef::new(Events::ObjectId).string().not_null())
                    .col(ColumnDef::new(Events::Test).boolean().not_null())
                    .col(ColumnDef::new(Events::Data).text().not_null())
                    .col(ColumnDef::new(Events::FannedOut).boolean().not_null().default(false))
                    .col(timestamp(Events::CreatedAt))
                    .to_owned(),
            )
            .await?;
        // Lists walk `seq` newest first, narrowed by type, object or time.
        for (name, columns) in [
            ("ix_events_shop_seq", vec![Events::ShopId, Events::Seq]),
            ("ix_events_shop_type_seq", vec![Events::ShopId, Events::Type, Events::Seq]),
            ("ix_events_shop_object_seq", vec![Events::ShopId, Events::ObjectId, Events::Seq]),
            ("ix_events_shop_created", vec![Events::ShopId, Events::CreatedAt]),
            ("ix_events_fanned_out", vec![Events::FannedOut, Events::Seq]),
        ] {
            manager.create_index(index(name, Events::Table, &columns)).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(Table::drop().table(Events::Table).to_owned()).await
    }
}
