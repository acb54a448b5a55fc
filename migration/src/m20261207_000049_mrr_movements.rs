use sea_orm_migration::prelude::*;

use crate::{index, seq_column, timestamp};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum MrrMovements {
    Table,
    Seq,
    ShopId,
    Test,
    Currency,
    CustomerId,
    SubscriptionId,
    EventId,
    Kind,
    Mrr,
    Paused,
    Subscribers,
    MrrAfter,
    PausedAfter,
    OccurredAt,
}

/// The ledger of monthly recurring revenue (docs/revenue.md): one movement each time a
/// subscription's MRR or paused MRR changes, written in the transaction of the change, made
/// from the `subscription.*` event that recorded it (unique: a replayed event makes none).
/// `mrr`, `paused` and `subscribers` are the changes of the customer's figures; `mrr_after`
/// and `paused_after` the subscription's standing after it. A database upgraded to it has no
/// movements until `paydesk revenue rebuild` makes them from the events kept.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use MrrMovements as M;
        let amount = |column: M| ColumnDef::new(column).big_integer().not_null().to_owned();
        manager
            .create_table(
                Table::create()
                    .table(M::Table)
                    .col(seq_column(M::Seq))
                    .col(ColumnDef::new(M::ShopId).big_integer().not_null())
                    .col(ColumnDef::new(M::Test).boolean().not_null())
                    .col(ColumnDef::new(M::Currency).string().not_null())
                    .col(ColumnDef::new(M::CustomerId).string().not_null())
                    .col(ColumnDef::new(M::SubscriptionId).string().not_null())
                    .col(ColumnDef::new(M::EventId).string().not_null().unique_key())
                    .col(ColumnDef::new(M::Kind).string().not_null())
                    .col(amount(M::Mrr))
                    .col(amount(M::Paused))
                    .col(amount(M::Subscribers))
                    .col(amount(M::MrrAfter))
                    .col(amount(M::PausedAfter))
                    .col(timestamp(M::OccurredAt))
                    .to_owned(),
            )
            .await?;
        for (name, columns) in [
            ("ix_mrr_movements_subscription", &[M::SubscriptionId, M::Seq][..]),
            ("ix_mrr_movements_customer", &[M::CustomerId, M::Currency, M::Test, M::Mrr, M::Paused]),
            (
                "ix_mrr_movements_time",
                &[M::ShopId, M::Test, M::Currency, M::OccurredAt, M::Kind, M::Mrr, M::Paused, M::Subscribers],
            ),
        ] {
            manager.create_index(index(name, M::Table, columns)).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(Table::drop().table(MrrMovements::Table).to_owned()).await
    }
}
