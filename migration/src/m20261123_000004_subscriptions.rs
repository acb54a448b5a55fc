use sea_orm_migration::prelude::*;

use crate::m20261123_000001_shops::Shops;
use crate::{seq_column, timestamp};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum TestClocks {
    Table,
    Seq,
    Id,
    ShopId,
    Name,
    FrozenTime,
    Status,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden, Clone, Copy)]
enum Subscriptions {
    Table,
    Seq,
    Id,
    ShopId,
    PlanId,
    CustomerId,
    State,
    Test,
    TestClockId,
    TrackingId,
    ReturnUrl,
    NotificationUrl,
    AdditionalData,
    CardToken,
    CardBrand,
    CardLast4,
    CardExpMonth,
    CardExpYear,
    CardHolder,
    StartedAt,
    AnchorAt,
    Period,
    PaidCycles,
    FailedAttempts,
    HasSuccess,
    RenewAt,
    ActiveTo,
    LastPaymentId,
    CancelReason,
    CancelledAt,
    TestOutcome,
    TestOutcomeFrom,
    ClaimToken,
    ClaimedUntil,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum Payments {
    Table,
    BillingKey,
}

fn shop_fk(table: impl IntoIden + Clone + 'static, col: impl IntoIden) -> ForeignKeyCreateStatement {
    ForeignKey::create().from(table, col).to(Shops::Table, Shops::Id).on_delete(ForeignKeyAction::Cascade).to_owned()
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use Subscriptions as S;
        manager
            .create_table(
                Table::create()
                    .table(TestClocks::Table)
                    .col(seq_column(TestClocks::Seq))
                    .col(ColumnDef::new(TestClocks::Id).string().not_null().unique_key())
                    .col(ColumnDef::new(TestClocks::ShopId).big_integer().not_null())
                    .col(ColumnDef::new(TestClocks::Name).string().null())
                    .col(timestamp(TestClocks::FrozenTime))
                    .col(ColumnDef::new(TestClocks::Status).string().not_null())
                    .col(timestamp(TestClocks::CreatedAt))
                    .col(timestamp(TestClocks::UpdatedAt))
                    .foreign_key(&mut shop_fk(TestClocks::Table, TestClocks::ShopId))
                    .to_owned(),
            )
            .await?;
        let text = |c: S| ColumnDef::new(c).string().null().to_owned();
        let moment = |c: S| ColumnDef::new(c).timestamp_with_time_zone().null().to_owned();
        manager
            .create_table(
                Table::create()
                    .table(S::Table)
                    .col(seq_column(S::Seq))
                    .col(ColumnDef::new(S::Id).string().not_null().unique_key())
                    .col(ColumnDef::new(S::ShopId).big_integer().not_null())
                    .col(ColumnDef::new(S::PlanId).string().not_null())
                    .col(ColumnDef::new(S::CustomerId).string().not_null())
                    .col(ColumnDef::new(S::State).string().not_null())
                    .col(ColumnDef::new(S::Test).boolean().not_null())
                    .col(text(S::TestClockId))
                    .col(text(S::TrackingId))
                    .col(ColumnDef::new(S::ReturnUrl).text().null())
                    .col(ColumnDef::new(S::NotificationUrl).text().null())
                    .col(ColumnDef::new(S::AdditionalData).text().null())
                    .col(text(S::CardToken))
                    .col(text(S::CardBrand))
                    .col(text(S::CardLast4))
                    .col(ColumnDef::new(S::CardExpMonth).integer().null())
                    .col(ColumnDef::new(S::CardExpYear).integer().null())
                    .col(text(S::CardHolder))
                    .col(moment(S::StartedAt))
                    .col(moment(S::AnchorAt))
                    .col(ColumnDef::new(S::Period).big_integer().not_null())
                    .col(ColumnDef::new(S::PaidCycles).integer().not_null())
                    .col(ColumnDef::new(S::FailedAttempts).integer().not_null())
                    .col(ColumnDef::new(S::HasSuccess).boolean().not_null())
                    .col(moment(S::RenewAt))
                    .col(moment(S::ActiveTo))
                    .col(text(S::LastPaymentId))
                    .col(text(S::CancelReason))
                    .col(moment(S::CancelledAt))
                    .col(text(S::TestOutcome))
                    .col(moment(S::TestOutcomeFrom))
                    .col(text(S::ClaimToken))
                    .col(moment(S::ClaimedUntil))
                    .col(timestamp(S::CreatedAt))
                    .col(timestamp(S::UpdatedAt))
                    .foreign_key(&mut shop_fk(S::Table, S::ShopId))
                    .to_owned(),
            )
            .await?;
        for (name, cols) in [
            ("ix_subscriptions_shop_seq", vec![S::ShopId, S::Seq]),
            ("ix_subscriptions_due", vec![S::TestClockId, S::State, S::RenewAt]),
            ("ix_subscriptions_customer", vec![S::CustomerId]),
            ("ix_subscriptions_plan", vec![S::PlanId]),
        ] {
            let mut index = Index::create().name(name).table(S::Table).to_owned();
            for col in cols {
                index.col(col);
            }
            manager.create_index(index).await?;
        }
        manager
            .create_index(
                Index::create()
                    .name("ix_test_clocks_shop_seq")
                    .table(TestClocks::Table)
                    .col(TestClocks::ShopId)
                    .col(TestClocks::Seq)
                    .to_owned(),
            )
            .await?;
        // One payment per subscription, period and attempt: the engine can never charge twice.
        manager
            .alter_table(
                Table::alter()
                    .table(Payments::Table)
                    .add_column(ColumnDef::new(Payments::BillingKey).string().null())
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(
                Index::create()
                    .name("ux_payments_billing_key")
                    .table(Payments::Table)
                    .col(Payments::BillingKey)
                    .unique()
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_index(Index::drop().name("ux_payments_billing_key").table(Payments::Table).to_owned()).await?;
        manager.alter_table(Table::alter().table(Payments::Table).drop_column(Payments::BillingKey).to_owned()).await?;
        manager.drop_table(Table::drop().table(Subscriptions::Table).to_owned()).await?;
        manager.drop_table(Table::drop().table(TestClocks::Table).to_owned()).await
    }
}
