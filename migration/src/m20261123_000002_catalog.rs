use sea_orm_migration::prelude::*;

use crate::m20261123_000001_shops::Shops;
use crate::{seq_column, timestamp};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum Products {
    Table,
    Seq,
    Id,
    ShopId,
    Name,
    Description,
    Currency,
    Amount,
    Quantity,
    Infinite,
    VisibleFields,
    Test,
    Immortal,
    ExpiredAt,
    ReturnUrl,
    Language,
    TransactionType,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden, Clone, Copy)]
enum Plans {
    Table,
    Seq,
    Id,
    ShopId,
    Title,
    Currency,
    Language,
    Amount,
    Interval,
    IntervalUnit,
    TrialAmount,
    TrialInterval,
    TrialIntervalUnit,
    TrialAsFirstPayment,
    Infinite,
    BillingCycles,
    NumberPaymentAttempts,
    PreventPaymentsAtNight,
    Test,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden, Clone, Copy)]
enum Customers {
    Table,
    Seq,
    Id,
    ShopId,
    FirstName,
    LastName,
    Address,
    City,
    Country,
    Zip,
    State,
    Phone,
    Email,
    Ip,
    ExternalId,
    CreatedAt,
    UpdatedAt,
}

fn shop_fk(table: impl IntoIden + Clone + 'static, col: impl IntoIden) -> ForeignKeyCreateStatement {
    ForeignKey::create().from(table, col).to(Shops::Table, Shops::Id).on_delete(ForeignKeyAction::Cascade).to_owned()
}

/// Unique public id and the per-shop index that lists walk newest first.
async fn id_indexes(
    manager: &SchemaManager<'_>,
    table: impl IntoIden + Clone + 'static,
    name: &str,
    id: impl IntoIden,
    shop: impl IntoIden,
    seq: impl IntoIden,
) -> Result<(), DbErr> {
    manager
        .create_index(Index::create().name(format!("ux_{name}_id")).table(table.clone()).col(id).unique().to_owned())
        .await?;
    manager
        .create_index(Index::create().name(format!("ix_{name}_shop_seq")).table(table).col(shop).col(seq).to_owned())
        .await
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Products::Table)
                    .col(seq_column(Products::Seq))
                    .col(ColumnDef::new(Products::Id).string().not_null())
                    .col(ColumnDef::new(Products::ShopId).big_integer().not_null())
                    .col(ColumnDef::new(Products::Name).string().not_null())
                    .col(ColumnDef::new(Products::Description).text().not_null())
                    .col(ColumnDef::new(Products::Currency).string_len(3).not_null())
                    .col(ColumnDef::new(Products::Amount).big_integer().not_null())
                    .col(ColumnDef::new(Products::Quantity).big_integer().null())
                    .col(ColumnDef::new(Products::Infinite).boolean().not_null())
                    .col(ColumnDef::new(Products::VisibleFields).string().not_null())
                    .col(ColumnDef::new(Products::Test).boolean().not_null())
                    .col(ColumnDef::new(Products::Immortal).boolean().not_null())
                    .col(ColumnDef::new(Products::ExpiredAt).timestamp_with_time_zone().null())
                    .col(ColumnDef::new(Products::ReturnUrl).text().null())
                    .col(ColumnDef::new(Products::Language).string_len(2).not_null())
                    .col(ColumnDef::new(Products::TransactionType).string().not_null())
                    .col(timestamp(Products::CreatedAt))
                    .col(timestamp(Products::UpdatedAt))
                    .foreign_key(&mut shop_fk(Products::Table, Products::ShopId))
                    .to_owned(),
            )
            .await?;
        id_indexes(manager, Products::Table, "products", Products::Id, Products::ShopId, Products::Seq).await?;

        manager
            .create_table(
                Table::create()
                    .table(Plans::Table)
                    .col(seq_column(Plans::Seq))
                    .col(ColumnDef::new(Plans::Id).string().not_null())
                    .col(ColumnDef::new(Plans::ShopId).big_integer().not_null())
                    .col(ColumnDef::new(Plans::Title).string().not_null())
                    .col(ColumnDef::new(Plans::Currency).string_len(3).not_null())
                    .col(ColumnDef::new(Plans::Language).string_len(2).not_null())
                    .col(ColumnDef::new(Plans::Amount).big_integer().not_null())
                    .col(ColumnDef::new(Plans::Interval).integer().not_null())
                    .col(ColumnDef::new(Plans::IntervalUnit).string().not_null())
                    .col(ColumnDef::new(Plans::TrialAmount).big_integer().null())
                    .col(ColumnDef::new(Plans::TrialInterval).integer().null())
                    .col(ColumnDef::new(Plans::TrialIntervalUnit).string().null())
                    .col(ColumnDef::new(Plans::TrialAsFirstPayment).boolean().not_null())
                    .col(ColumnDef::new(Plans::Infinite).boolean().not_null())
                    .col(ColumnDef::new(Plans::BillingCycles).integer().null())
                    .col(ColumnDef::new(Plans::NumberPaymentAttempts).integer().not_null())
                    .col(ColumnDef::new(Plans::PreventPaymentsAtNight).boolean().not_null())
                    .col(ColumnDef::new(Plans::Test).boolean().not_null())
                    .col(timestamp(Plans::CreatedAt))
                    .col(timestamp(Plans::UpdatedAt))
                    .foreign_key(&mut shop_fk(Plans::Table, Plans::ShopId))
                    .to_owned(),
            )
            .await?;
        id_indexes(manager, Plans::Table, "plans", Plans::Id, Plans::ShopId, Plans::Seq).await?;

        manager
            .create_table(
                Table::create()
                    .table(Customers::Table)
                    .col(seq_column(Customers::Seq))
                    .col(ColumnDef::new(Customers::Id).string().not_null())
                    .col(ColumnDef::new(Customers::ShopId).big_integer().not_null())
                    .col(ColumnDef::new(Customers::FirstName).string().null())
                    .col(ColumnDef::new(Customers::LastName).string().null())
                    .col(ColumnDef::new(Customers::Address).string().null())
                    .col(ColumnDef::new(Customers::City).string().null())
                    .col(ColumnDef::new(Customers::Country).string_len(2).null())
                    .col(ColumnDef::new(Customers::Zip).string().null())
                    .col(ColumnDef::new(Customers::State).string_len(2).null())
                    .col(ColumnDef::new(Customers::Phone).string().null())
                    .col(ColumnDef::new(Customers::Email).string().not_null())
                    .col(ColumnDef::new(Customers::Ip).string().not_null())
                    .col(ColumnDef::new(Customers::ExternalId).string().null())
                    .col(timestamp(Customers::CreatedAt))
                    .col(timestamp(Customers::UpdatedAt))
                    .foreign_key(&mut shop_fk(Customers::Table, Customers::ShopId))
                    .to_owned(),
            )
            .await?;
        id_indexes(manager, Customers::Table, "customers", Customers::Id, Customers::ShopId, Customers::Seq).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [Customers::Table.into_iden(), Plans::Table.into_iden(), Products::Table.into_iden()] {
            manager.drop_table(Table::drop().table(table).to_owned()).await?;
        }
        Ok(())
    }
}
