use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum Products {
    Table,
    TaxRateId,
    TaxBehavior,
}

#[derive(DeriveIden, Clone, Copy)]
enum Plans {
    Table,
    TaxRateId,
    TaxBehavior,
    VisibleFields,
}

#[derive(DeriveIden, Clone, Copy)]
enum Customers {
    Table,
    Company,
    VatId,
}

#[derive(DeriveIden, Clone, Copy)]
enum Documents {
    Table,
    ShopId,
    Kind,
    IssuedAt,
    Seq,
}

#[derive(DeriveIden, Clone, Copy)]
enum Payments {
    Table,
    TaxRateId,
    TaxBehavior,
    TaxAmount,
    ReverseCharge,
}

/// Taxed prices: a product or plan names the shop's rate it is taxed at and whether its price
/// holds the tax; a plan's page asks for the fields its merchant chose, like a product's; a
/// customer keeps a company and a VAT id; a payment keeps the tax it was charged with, as it
/// was charged (its invoice says the same, whatever later happens to the rate or the price).
/// Existing rows are untaxed and their prices hold whatever tax there was, as before.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let rate = |c: DynIden| ColumnDef::new(c).string().null().to_owned();
        let behavior = |c: DynIden| ColumnDef::new(c).string().not_null().default("inclusive").to_owned();
        let adds: Vec<(DynIden, ColumnDef)> = vec![
            (Products::Table.into_iden(), rate(Products::TaxRateId.into_iden())),
            (Products::Table.into_iden(), behavior(Products::TaxBehavior.into_iden())),
            (Plans::Table.into_iden(), rate(Plans::TaxRateId.into_iden())),
            (Plans::Table.into_iden(), behavior(Plans::TaxBehavior.into_iden())),
            (
                Plans::Table.into_iden(),
                ColumnDef::new(Plans::VisibleFields).string().not_null().default("email").to_owned(),
            ),
            (Customers::Table.into_iden(), ColumnDef::new(Customers::Company).text().null().to_owned()),
            (Customers::Table.into_iden(), ColumnDef::new(Customers::VatId).string().null().to_owned()),
            (Payments::Table.into_iden(), rate(Payments::TaxRateId.into_iden())),
            (Payments::Table.into_iden(), ColumnDef::new(Payments::TaxBehavior).string().null().to_owned()),
            (
                Payments::Table.into_iden(),
                ColumnDef::new(Payments::TaxAmount).big_integer().not_null().default(0).to_owned(),
            ),
            (
                Payments::Table.into_iden(),
                ColumnDef::new(Payments::ReverseCharge).boolean().not_null().default(false).to_owned(),
            ),
        ];
        for (table, mut column) in adds {
            manager.alter_table(Table::alter().table(table).add_column(&mut column).to_owned()).await?;
        }
        // A period's books are read in the order issued, a page at a time: the index gives
        // that order whole (PostgreSQL sorted the period for each page).
        manager.drop_index(Index::drop().name("ix_documents_issued").table(Documents::Table).to_owned()).await?;
        let by_issue = [Documents::ShopId, Documents::Kind, Documents::IssuedAt, Documents::Seq];
        manager.create_index(crate::index("ix_documents_issued", Documents::Table, &by_issue)).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let drops: Vec<(DynIden, DynIden)> = vec![
            (Products::Table.into_iden(), Products::TaxRateId.into_iden()),
            (Products::Table.into_iden(), Products::TaxBehavior.into_iden()),
            (Plans::Table.into_iden(), Plans::TaxRateId.into_iden()),
            (Plans::Table.into_iden(), Plans::TaxBehavior.into_iden()),
            (Plans::Table.into_iden(), Plans::VisibleFields.into_iden()),
            (Customers::Table.into_iden(), Customers::Company.into_iden()),
            (Customers::Table.into_iden(), Customers::VatId.into_iden()),
            (Payments::Table.into_iden(), Payments::TaxRateId.into_iden()),
            (Payments::Table.into_iden(), Payments::TaxBehavior.into_iden()),
            (Payments::Table.into_iden(), Payments::TaxAmount.into_iden()),
            (Payments::Table.into_iden(), Payments::ReverseCharge.into_iden()),
        ];
        for (table, column) in drops {
            manager.alter_table(Table::alter().table(table).drop_column(column).to_owned()).await?;
        }
        manager.drop_index(Index::drop().name("ix_documents_issued").table(Documents::Table).to_owned()).await?;
        let by_issue = [Documents::ShopId, Documents::Kind, Documents::IssuedAt];
        manager.create_index(crate::index("ix_documents_issued", Documents::Table, &by_issue)).await
    }
}
