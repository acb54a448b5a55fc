use sea_orm_migration::prelude::*;

use crate::{index, seq_column, timestamp};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum Payments {
    Table,
    RefundedAmount,
    RefundingAmount,
}

#[derive(DeriveIden, Clone, Copy)]
enum Refunds {
    Table,
    Seq,
    Id,
    ShopId,
    PaymentId,
    Amount,
    Currency,
    Reason,
    Status,
    Test,
    AcquirerReference,
    FailureCode,
    FailureMessage,
    CreatedAt,
    UpdatedAt,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // Refunded: what the acquirer gave back; refunding: what refunds under way hold, so
        // that refunds started at once never add up to more than the payment.
        for column in [Payments::RefundedAmount, Payments::RefundingAmount] {
            let mut column = ColumnDef::new(column).big_integer().not_null().default(0).to_owned();
            manager.alter_table(Table::alter().table(Payments::Table).add_column(&mut column).to_owned()).await?;
        }
        manager
            .create_table(
                Table::create()
                    .table(Refunds::Table)
                    .col(seq_column(Refunds::Seq))
                    .col(ColumnDef::new(Refunds::Id).string().not_null().unique_key())
                    .col(ColumnDef::new(Refunds::ShopId).big_integer().not_null())
                    .col(ColumnDef::new(Refunds::PaymentId).string().not_null())
                    .col(ColumnDef::new(Refunds::Amount).big_integer().not_null())
                    .col(ColumnDef::new(Refunds::Currency).string_len(3).not_null())
                    .col(ColumnDef::new(Refunds::Reason).string().null())
                    .col(ColumnDef::new(Refunds::Status).string().not_null())
                    .col(ColumnDef::new(Refunds::Test).boolean().not_null())
                    .col(ColumnDef::new(Refunds::AcquirerReference).string().null())
                    .col(ColumnDef::new(Refunds::FailureCode).string().null())
                    .col(ColumnDef::new(Refunds::FailureMessage).string().null())
                    .col(timestamp(Refunds::CreatedAt))
                    .col(timestamp(Refunds::UpdatedAt))
                    .to_owned(),
            )
            .await?;
        for (name, columns) in [
            ("ix_refunds_shop_seq", vec![Refunds::ShopId, Refunds::Seq]),
            ("ix_refunds_payment", vec![Refunds::PaymentId, Refunds::Seq]),
            ("ix_refunds_status_updated", vec![Refunds::Status, Refunds::UpdatedAt]),
        ] {
            manager.create_index(index(name, Refunds::Table, &columns)).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(Table::drop().table(Refunds::Table).to_owned()).await?;
        for column in [Payments::RefundingAmount, Payments::RefundedAmount] {
            manager.alter_table(Table::alter().table(Payments::Table).drop_column(column).to_owned()).await?;
        }
        Ok(())
    }
}
