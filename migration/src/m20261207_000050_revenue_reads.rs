use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Two reads of the revenue figures (docs/revenue.md), each from an index of its own:
/// - trial conversion counts a shop's trials by when they were due to end, in one mode: the
///   subscriptions that have a trial, in that order;
/// - MRR per subscriber per month reads a ledger's movements customer by customer, in the
///   order they happened, with each one's change of MRR.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        db.execute_unprepared(
            "CREATE INDEX ix_subscriptions_trial_ends ON subscriptions (shop_id, test, trial_ends_at) \
             WHERE trial_ends_at IS NOT NULL",
        )
        .await?;
        db.execute_unprepared(
            "CREATE INDEX ix_mrr_movements_customers \
             ON mrr_movements (shop_id, test, currency, customer_id, occurred_at, seq, mrr)",
        )
        .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        db.execute_unprepared("DROP INDEX ix_subscriptions_trial_ends").await?;
        db.execute_unprepared("DROP INDEX ix_mrr_movements_customers").await?;
        Ok(())
    }
}
