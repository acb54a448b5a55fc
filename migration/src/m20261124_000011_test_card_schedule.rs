use sea_orm_migration::prelude::*;

use crate::{index, seq_column, timestamp};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum Subscriptions {
    Table,
    Id,
    TestOutcome,
    TestOutcomeFrom,
    UpdatedAt,
}

#[derive(DeriveIden, Clone, Copy)]
enum TestCardOutcomes {
    Table,
    Seq,
    SubscriptionId,
    EffectiveFrom,
    Outcome,
    CreatedAt,
}

/// A test subscription's card keeps a schedule of behaviours (each from a moment on)
/// instead of one: the single outcome each subscription had becomes its first entry.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager
            .create_table(
                Table::create()
                    .table(TestCardOutcomes::Table)
                    .col(seq_column(TestCardOutcomes::Seq))
                    .col(ColumnDef::new(TestCardOutcomes::SubscriptionId).string().not_null())
                    .col(timestamp(TestCardOutcomes::EffectiveFrom))
                    .col(ColumnDef::new(TestCardOutcomes::Outcome).string().not_null())
                    .col(timestamp(TestCardOutcomes::CreatedAt))
                    .to_owned(),
            )
            .await?;
        let mut unique = index(
            "ux_test_card_outcomes_from",
            TestCardOutcomes::Table,
            &[TestCardOutcomes::SubscriptionId, TestCardOutcomes::EffectiveFrom],
        );
        manager.create_index(unique.unique().to_owned()).await?;
        let copy = Query::insert()
            .into_table(TestCardOutcomes::Table)
            .columns([
                TestCardOutcomes::SubscriptionId,
                TestCardOutcomes::EffectiveFrom,
                TestCardOutcomes::Outcome,
                TestCardOutcomes::CreatedAt,
            ])
            .select_from(
                Query::select()
                    .columns([
                        Subscriptions::Id,
                        Subscriptions::TestOutcomeFrom,
                        Subscriptions::TestOutcome,
                        Subscriptions::UpdatedAt,
                    ])
                    .from(Subscriptions::Table)
                    .and_where(Expr::col(Subscriptions::TestOutcome).is_not_null())
                    .and_where(Expr::col(Subscriptions::TestOutcomeFrom).is_not_null())
                    .to_owned(),
            )
            .map_err(|e| DbErr::Migration(e.to_string()))?
            .to_owned();
        manager.exec_stmt(copy).await?;
        for column in [Subscriptions::TestOutcome, Subscriptions::TestOutcomeFrom] {
            manager.alter_table(Table::alter().table(Subscriptions::Table).drop_column(column).to_owned()).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let columns = [
            ColumnDef::new(Subscriptions::TestOutcome).string().null().to_owned(),
            ColumnDef::new(Subscriptions::TestOutcomeFrom).timestamp_with_time_zone().null().to_owned(),
        ];
        for mut column in columns {
            manager.alter_table(Table::alter().table(Subscriptions::Table).add_column(&mut column).to_owned()).await?;
        }
        manager.drop_table(Table::drop().table(TestCardOutcomes::Table).to_owned()).await?;
        Ok(())
    }
}
