use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::ConnectionTrait;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Indexes for the billing engine's own lookups, partial so that they hold only the few rows
/// in flight: the subscriptions a run has claimed (found by their claim token on every step of
/// a batch) and the hosted pages' payments left `processing` by an instance that stopped (looked for at every
/// run). Without them each step read the whole table, and a run over 1,000 due subscriptions
/// took seconds more with every million rows.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        db.execute_unprepared(
            "CREATE INDEX ix_subscriptions_claim ON subscriptions (claim_token) WHERE claim_token IS NOT NULL",
        )
        .await?;
        db.execute_unprepared(
            "CREATE INDEX ix_payments_processing ON payments (updated_at) \
             WHERE status = 'processing' AND billing_key IS NULL",
        )
        .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        db.execute_unprepared("DROP INDEX ix_subscriptions_claim").await?;
        db.execute_unprepared("DROP INDEX ix_payments_processing").await?;
        Ok(())
    }
}
