use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The states whose `renew_at` the engine acts on (`State::SCHEDULED`), written as the
/// engine's claim writes them: SQLite uses a partial index only for a query that repeats its
/// condition.
pub const SCHEDULED: &str = "state IN ('trial', 'active', 'failed_attempt', 'paused')";

/// The engine takes what is due in the order it fell due, a batch at a time. The index of
/// due subscriptions (clock, state, renewal) holds them in that order only per state, so each
/// batch sorted everything due: 100,000 due meant 100,000 sorted for each of hundreds of
/// batches. These hold the order itself, of the subscriptions the engine may act on:
/// - in real time, by renewal;
/// - on test clocks, by clock, renewal and insertion (a clock's step takes those due at one
///   moment in the order they were made).
///
/// (One index by clock, renewal and insertion would serve both on SQLite, but PostgreSQL does
/// not read a range under `test_clock_id IS NULL` as being in renewal order.)
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        db.execute_unprepared(&format!(
            "CREATE INDEX ix_subscriptions_due_order ON subscriptions (renew_at) \
             WHERE test_clock_id IS NULL AND {SCHEDULED}"
        ))
        .await?;
        db.execute_unprepared(&format!(
            "CREATE INDEX ix_subscriptions_clock_order ON subscriptions (test_clock_id, renew_at, seq) \
             WHERE test_clock_id IS NOT NULL AND {SCHEDULED}"
        ))
        .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        db.execute_unprepared("DROP INDEX ix_subscriptions_due_order").await?;
        db.execute_unprepared("DROP INDEX ix_subscriptions_clock_order").await?;
        Ok(())
    }
}
