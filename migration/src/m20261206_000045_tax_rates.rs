use sea_orm_migration::prelude::*;

use crate::{index, seq_column, timestamp};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum TaxRates {
    Table,
    Seq,
    Id,
    ShopId,
    Name,
    Percentage,
    Category,
    Country,
    ExemptionReason,
    ArchivedAt,
    CreatedAt,
    UpdatedAt,
}

/// A shop's tax rates (`txr_…`): a name, a percentage kept in ten-thousandths of a percent,
/// EN 16931's category, an optional country, and for an exempt rate the reason its invoices
/// print. A rate is archived, never changed or deleted: the invoices that used it keep saying
/// what it was.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use TaxRates as T;
        manager
            .create_table(
                Table::create()
                    .table(T::Table)
                    .col(seq_column(T::Seq))
                    .col(ColumnDef::new(T::Id).string().not_null().unique_key())
                    .col(ColumnDef::new(T::ShopId).big_integer().not_null())
                    .col(ColumnDef::new(T::Name).text().not_null())
                    .col(ColumnDef::new(T::Percentage).big_integer().not_null())
                    .col(ColumnDef::new(T::Category).string().not_null())
                    .col(ColumnDef::new(T::Country).string().null())
                    .col(ColumnDef::new(T::ExemptionReason).text().null())
                    .col(ColumnDef::new(T::ArchivedAt).timestamp_with_time_zone().null())
                    .col(timestamp(T::CreatedAt))
                    .col(timestamp(T::UpdatedAt))
                    .to_owned(),
            )
            .await?;
        manager.create_index(index("ix_tax_rates_shop_seq", T::Table, &[T::ShopId, T::Seq])).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(Table::drop().table(TaxRates::Table).to_owned()).await
    }
}
