use sea_orm_migration::prelude::*;

use crate::timestamp;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum ShopSellers {
    Table,
    ShopId,
    LegalName,
    AddressLine1,
    AddressLine2,
    City,
    PostalCode,
    Country,
    VatId,
    RegistrationNumber,
    InvoiceFooter,
    UpdatedAt,
}

/// The seller each shop's invoices name, a row per shop once its details are first set (the
/// shop's own row, read on every request, stays as small as it was).
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use ShopSellers as S;
        let text = |column: S| ColumnDef::new(column).text().null().to_owned();
        manager
            .create_table(
                Table::create()
                    .table(S::Table)
                    .col(ColumnDef::new(S::ShopId).big_integer().not_null().primary_key())
                    .col(text(S::LegalName))
                    .col(text(S::AddressLine1))
                    .col(text(S::AddressLine2))
                    .col(text(S::City))
                    .col(text(S::PostalCode))
                    .col(text(S::Country))
                    .col(text(S::VatId))
                    .col(text(S::RegistrationNumber))
                    .col(text(S::InvoiceFooter))
                    .col(timestamp(S::UpdatedAt))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(Table::drop().table(ShopSellers::Table).to_owned()).await
    }
}
