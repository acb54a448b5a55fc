use sea_orm_migration::prelude::*;

use crate::m20261123_000001_shops::Shops;
use crate::{seq_column, timestamp};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum Payments {
    Table,
    Seq,
    Id,
    ShopId,
    ProductId,
    PlanId,
    SubscriptionId,
    CustomerId,
    Amount,
    Currency,
    TransactionType,
    Status,
    Test,
    CardToken,
    CardBrand,
    CardLast4,
    CardExpMonth,
    CardExpYear,
    CardHolder,
    AcquirerReference,
    FailureCode,
    FailureMessage,
    CapturedAt,
    VoidedAt,
    CreatedAt,
    UpdatedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(Payments::Table)
                    .col(seq_column(Payments::Seq))
                    .col(ColumnDef::new(Payments::Id).string().not_null())
                    .col(ColumnDef::new(Payments::ShopId).big_integer().not_null())
                    .col(ColumnDef::new(Payments::ProductId).string().null())
                    .col(ColumnDef::new(Payments::PlanId).string().null())
                    .col(ColumnDef::new(Payments::SubscriptionId).string().null())
                    .col(ColumnDef::new(Payments::CustomerId).string().null())
                    .col(ColumnDef::new(Payments::Amount).big_integer().not_null())
                    .col(ColumnDef::new(Payments::Currency).string_len(3).not_null())
                    .col(ColumnDef::new(Payments::TransactionType).string().not_null())
                    .col(ColumnDef::new(Payments::Status).string().not_null())
                    .col(ColumnDef::new(Payments::Test).boolean().not_null())
                    .col(ColumnDef::new(Payments::CardToken).string().not_null())
                    .col(ColumnDef::new(Payments::CardBrand).string().not_null())
                    .col(ColumnDef::new(Payments::CardLast4).string_len(4).not_null())
                    .col(ColumnDef::new(Payments::CardExpMonth).integer().not_null())
                    .col(ColumnDef::new(Payments::CardExpYear).integer().not_null())
                    .col(ColumnDef::new(Payments::CardHolder).string().not_null())
                    .col(ColumnDef::new(Payments::AcquirerReference).string().null())
                    .col(ColumnDef::new(Payments::FailureCode).string().null())
                    .col(ColumnDef::new(Payments::FailureMessage).string().null())
                    .col(ColumnDef::new(Payments::CapturedAt).timestamp_with_time_zone().null())
                    .col(ColumnDef::new(Payments::VoidedAt).timestamp_with_time_zone().null())
                    .col(timestamp(Payments::CreatedAt))
                    .col(timestamp(Payments::UpdatedAt))
                    .foreign_key(
                        ForeignKey::create()
                            .from(Payments::Table, Payments::ShopId)
                            .to(Shops::Table, Shops::Id)
                            .on_delete(ForeignKeyAction::Cascade),
                    )
                    .to_owned(),
            )
            .await?;
        let indexes = [
            ("ux_payments_id", vec![Payments::Id], true),
            ("ix_payments_shop_seq", vec![Payments::ShopId, Payments::Seq], false),
            ("ix_payments_product", vec![Payments::ProductId], false),
            ("ix_payments_plan", vec![Payments::PlanId], false),
            ("ix_payments_subscription", vec![Payments::SubscriptionId], false),
            ("ix_payments_customer", vec![Payments::CustomerId], false),
        ];
        for (name, cols, unique) in indexes {
            let mut index = Index::create().name(name).table(Payments::Table).to_owned();
            for col in cols {
                index.col(col);
            }
            if unique {
                index.unique();
            }
            manager.create_index(index).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(Table::drop().table(Payments::Table).to_owned()).await
    }
}
