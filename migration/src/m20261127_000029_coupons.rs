use sea_orm_migration::prelude::*;

use crate::{index, seq_column, timestamp};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum Coupons {
    Table,
    Seq,
    Id,
    ShopId,
    Code,
    Name,
    PercentOff,
    AmountOff,
    Currency,
    Duration,
    DurationInPeriods,
    RedeemBy,
    MaxRedemptions,
    TimesRedeemed,
    Plans,
    Test,
    ArchivedAt,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden, Clone, Copy)]
enum Subscriptions {
    Table,
    CouponId,
    DiscountFrom,
    DiscountPeriods,
}

#[derive(DeriveIden, Clone, Copy)]
enum Payments {
    Table,
    CouponId,
    DiscountAmount,
}

/// Coupons, unique by code per shop and mode, with their redemptions counted in the row (one
/// conditional update takes one, so the last cannot be taken twice). A subscription's discount
/// is its coupon, the paid periods when it was applied (`discount_from`) and how many periods
/// it lasts (`discount_periods`, null for ever); each payment keeps the coupon and what it took
/// off.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use Coupons as C;
        manager
            .create_table(
                Table::create()
                    .table(C::Table)
                    .col(seq_column(C::Seq))
                    .col(ColumnDef::new(C::Id).string().not_null().unique_key())
                    .col(ColumnDef::new(C::ShopId).big_integer().not_null())
                    .col(ColumnDef::new(C::Code).string().not_null())
                    .col(ColumnDef::new(C::Name).text().null())
                    .col(ColumnDef::new(C::PercentOff).integer().null())
                    .col(ColumnDef::new(C::AmountOff).big_integer().null())
                    .col(ColumnDef::new(C::Currency).string().null())
                    .col(ColumnDef::new(C::Duration).string().not_null())
                    .col(ColumnDef::new(C::DurationInPeriods).integer().null())
                    .col(ColumnDef::new(C::RedeemBy).timestamp_with_time_zone().null())
                    .col(ColumnDef::new(C::MaxRedemptions).integer().null())
                    .col(ColumnDef::new(C::TimesRedeemed).integer().not_null().default(0))
                    .col(ColumnDef::new(C::Plans).text().null())
                    .col(ColumnDef::new(C::Test).boolean().not_null())
                    .col(ColumnDef::new(C::ArchivedAt).timestamp_with_time_zone().null())
                    .col(timestamp(C::CreatedAt))
                    .col(timestamp(C::UpdatedAt))
                    .to_owned(),
            )
            .await?;
        let mut unique = index("ux_coupons_code", C::Table, &[C::ShopId, C::Test, C::Code]);
        manager.create_index(unique.unique().to_owned()).await?;
        manager.create_index(index("ix_coupons_shop_seq", C::Table, &[C::ShopId, C::Seq])).await?;
        for column in [
            ColumnDef::new(Subscriptions::CouponId).string().null().to_owned(),
            ColumnDef::new(Subscriptions::DiscountFrom).integer().null().to_owned(),
            ColumnDef::new(Subscriptions::DiscountPeriods).integer().null().to_owned(),
        ] {
            let mut column = column;
            manager.alter_table(Table::alter().table(Subscriptions::Table).add_column(&mut column).to_owned()).await?;
        }
        for column in [
            ColumnDef::new(Payments::CouponId).string().null().to_owned(),
            ColumnDef::new(Payments::DiscountAmount).big_integer().not_null().default(0).to_owned(),
        ] {
            let mut column = column;
            manager.alter_table(Table::alter().table(Payments::Table).add_column(&mut column).to_owned()).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [Payments::CouponId, Payments::DiscountAmount] {
            manager.alter_table(Table::alter().table(Payments::Table).drop_column(column).to_owned()).await?;
        }
        for column in [Subscriptions::CouponId, Subscriptions::DiscountFrom, Subscriptions::DiscountPeriods] {
            manager.alter_table(Table::alter().table(Subscriptions::Table).drop_column(column).to_owned()).await?;
        }
        manager.drop_table(Table::drop().table(Coupons::Table).to_owned()).await
    }
}
