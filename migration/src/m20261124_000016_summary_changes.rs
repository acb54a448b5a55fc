use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::{ConnectionTrait, DatabaseBackend};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The statuses in which a payment's money was taken (`PaymentStatus::is_taken`).
const TAKEN: &str = "('succeeded', 'partially_refunded', 'refunded')";

/// The summaries of m13 and m15 become append-only: a trigger adds a row of change
/// (`fresh`) instead of updating the one row of its quarter hour or state, so that writers
/// never wait on each other's summary row (a billing batch held it to its end, and two
/// batches could deadlock on two of them). Readers sum the rows of each key;
/// `db::summaries::compact` folds the changes into one row per key every minute.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        let postgres = manager.get_database_backend() == DatabaseBackend::Postgres;
        crate::drop_summary_triggers(manager, "payments", "payments_totals").await?;
        crate::drop_summary_triggers(manager, "subscriptions", "subscriptions_counts").await?;
        for (table, unique, keys) in [
            ("payment_totals", "ux_payment_totals_bucket", "shop_id, bucket, currency, test"),
            ("subscription_counts", "ux_subscription_counts_state", "shop_id, state"),
        ] {
            let statements = [
                format!("ALTER TABLE {table} ADD COLUMN fresh boolean NOT NULL DEFAULT false"),
                format!("DROP INDEX {unique}"),
                format!("CREATE INDEX ix_{table}_key ON {table} ({keys})"),
                format!("CREATE INDEX ix_{table}_fresh ON {table} ({keys}) WHERE fresh"),
            ];
            for statement in statements {
                db.execute_unprepared(&statement).await?;
            }
        }
        let bucket = |row: &str| crate::quarter_hour(postgres, row);
        // A row's contribution (sign 1) or its removal (sign -1), if it took money.
        let add = |row: &str, sign: i32| {
            format!(
                "INSERT INTO payment_totals (shop_id, bucket, currency, test, net, payments, fresh) \
                 SELECT {row}.shop_id, {bucket}, {row}.currency, {row}.test, \
                        {sign} * ({row}.amount - {row}.refunded_amount), {sign}, true \
                 WHERE {row}.status IN {TAKEN}",
                bucket = bucket(row)
            )
        };
        let watched =
            ["status", "amount", "refunded_amount", "captured_at", "created_at", "currency", "test", "shop_id"];
        crate::summary_triggers(manager, "payments", "payments_totals", &watched, &add("OLD", -1), &add("NEW", 1))
            .await?;
        let count = |row: &str, sign: i32| {
            format!(
                "INSERT INTO subscription_counts (shop_id, state, subscriptions, fresh) \
                 VALUES ({row}.shop_id, {row}.state, {sign}, true)"
            )
        };
        let (remove, add) = (count("OLD", -1), count("NEW", 1));
        crate::summary_triggers(manager, "subscriptions", "subscriptions_counts", &["state", "shop_id"], &remove, &add)
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        // Both summaries rebuilt as m13 and m15 made them, from the payments and subscriptions.
        use crate::{m20261124_000013_payment_totals as totals, m20261124_000015_subscription_counts as counts};
        counts::Migration.down(manager).await?;
        totals::Migration.down(manager).await?;
        totals::Migration.up(manager).await?;
        counts::Migration.up(manager).await
    }
}
