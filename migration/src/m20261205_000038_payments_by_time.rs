use sea_orm_migration::prelude::*;

use crate::index;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum Payments {
    Table,
    ShopId,
    Status,
    CreatedAt,
    Seq,
}

/// The dashboard lists a shop's payments by when they were made, newest first (a test
/// clock's charges stand at the clock's time), on every page of the list, the overview and
/// the export: these indexes hold that order, for all of the shop's payments and for those
/// of one status, so that a page reads its rows and no more.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use Payments as P;
        let indexes = [
            ("ix_payments_shop_time", vec![P::ShopId, P::CreatedAt, P::Seq]),
            ("ix_payments_shop_status_time", vec![P::ShopId, P::Status, P::CreatedAt, P::Seq]),
        ];
        for (name, columns) in indexes {
            manager.create_index(index(name, P::Table, &columns)).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for name in ["ix_payments_shop_time", "ix_payments_shop_status_time"] {
            manager.drop_index(Index::drop().name(name).table(Payments::Table).to_owned()).await?;
        }
        Ok(())
    }
}
