use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum Shops {
    Table,
    SubscriberPause,
}

#[derive(DeriveIden, Clone, Copy)]
enum Subscriptions {
    Table,
    AnchorPeriod,
    PauseAtPeriodEnd,
    PausedAt,
    ResumeAt,
    ResumeBilling,
    ChangePlanId,
    ChangeId,
    ChangeAmount,
    ChangeAt,
}

/// The lifecycle merchants expect. Whether a shop lets subscribers pause and resume on their
/// page (`shops.subscriber_pause`). Pausing a subscription: now, or from the end of its paid period (`pause_at_period_end`),
/// until it is resumed (by the merchant, or at `resume_at`) with a new period or on its old
/// schedule (`resume_billing`). A resume with a new period counts the periods afresh from
/// then: `anchor_at` moves there and `anchor_period` is the period that starts at it.
///
/// A change to another plan (`change_plan_id`, named `change_id`): asked now, it waits for
/// its prorated charge of `change_amount` (prorated at `change_at`) under its own key; with
/// no amount, it takes effect when the trial or paid period ends.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use Subscriptions as S;
        for column in [
            ColumnDef::new(S::AnchorPeriod).big_integer().not_null().default(0).to_owned(),
            ColumnDef::new(S::PauseAtPeriodEnd).boolean().not_null().default(false).to_owned(),
            ColumnDef::new(S::PausedAt).timestamp_with_time_zone().null().to_owned(),
            ColumnDef::new(S::ResumeAt).timestamp_with_time_zone().null().to_owned(),
            ColumnDef::new(S::ResumeBilling).text().null().to_owned(),
            ColumnDef::new(S::ChangePlanId).text().null().to_owned(),
            ColumnDef::new(S::ChangeId).text().null().to_owned(),
            ColumnDef::new(S::ChangeAmount).big_integer().null().to_owned(),
            ColumnDef::new(S::ChangeAt).timestamp_with_time_zone().null().to_owned(),
        ] {
            let mut column = column;
            manager.alter_table(Table::alter().table(S::Table).add_column(&mut column).to_owned()).await?;
        }
        let mut allowed = ColumnDef::new(Shops::SubscriberPause).boolean().not_null().default(false).to_owned();
        manager.alter_table(Table::alter().table(Shops::Table).add_column(&mut allowed).to_owned()).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use Subscriptions as S;
        manager.alter_table(Table::alter().table(Shops::Table).drop_column(Shops::SubscriberPause).to_owned()).await?;
        for column in [
            S::AnchorPeriod,
            S::PauseAtPeriodEnd,
            S::PausedAt,
            S::ResumeAt,
            S::ResumeBilling,
            S::ChangePlanId,
            S::ChangeId,
            S::ChangeAmount,
            S::ChangeAt,
        ] {
            manager.alter_table(Table::alter().table(S::Table).drop_column(column).to_owned()).await?;
        }
        Ok(())
    }
}
