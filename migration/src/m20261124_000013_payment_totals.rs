use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::{ConnectionTrait, DatabaseBackend};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum PaymentTotals {
    Table,
    Seq,
    ShopId,
    Bucket,
    Currency,
    Test,
    Net,
    Payments,
}

/// The statuses in which a payment's money was taken (`PaymentStatus::is_taken`).
const TAKEN: &str = "('succeeded', 'partially_refunded', 'refunded')";

/// Money taken per shop, 15 minutes (every time zone's midnight falls on one of their
/// starts), currency and mode, kept by triggers on `payments` in the same transaction as
/// every change: a payment counts its amount net of refunds in the quarter hour it was
/// captured, or made. The dashboard's overview sums a month of these instead of reading
/// every payment.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use PaymentTotals as T;
        manager
            .create_table(
                Table::create()
                    .table(T::Table)
                    .col(crate::seq_column(T::Seq))
                    .col(ColumnDef::new(T::ShopId).big_integer().not_null())
                    .col(ColumnDef::new(T::Bucket).big_integer().not_null())
                    .col(ColumnDef::new(T::Currency).string_len(3).not_null())
                    .col(ColumnDef::new(T::Test).boolean().not_null())
                    .col(ColumnDef::new(T::Net).big_integer().not_null())
                    .col(ColumnDef::new(T::Payments).big_integer().not_null())
                    .to_owned(),
            )
            .await?;
        let mut unique =
            crate::index("ux_payment_totals_bucket", T::Table, &[T::ShopId, T::Bucket, T::Currency, T::Test]);
        manager.create_index(unique.unique().to_owned()).await?;
        let db = manager.get_connection();
        let postgres = manager.get_database_backend() == DatabaseBackend::Postgres;
        let bucket = |row: &str| crate::quarter_hour(postgres, row);
        // Adds a row's contribution (sign 1) or takes it away (sign -1), if it took money.
        let add = |row: &str, sign: i32| {
            format!(
                "INSERT INTO payment_totals (shop_id, bucket, currency, test, net, payments) \
                 SELECT {row}.shop_id, {bucket}, {row}.currency, {row}.test, \
                        {sign} * ({row}.amount - {row}.refunded_amount), {sign} \
                 WHERE {row}.status IN {TAKEN} \
                 ON CONFLICT (shop_id, bucket, currency, test) DO UPDATE \
                 SET net = payment_totals.net + excluded.net, payments = payment_totals.payments + excluded.payments",
                bucket = bucket(row)
            )
        };
        // Only an update that changes what a payment contributes touches the totals.
        let watched =
            ["status", "amount", "refunded_amount", "captured_at", "created_at", "currency", "test", "shop_id"];
        crate::summary_triggers(manager, "payments", "payments_totals", &watched, &add("OLD", -1), &add("NEW", 1))
            .await?;
        // The payments made so far.
        db.execute_unprepared(&format!(
            "INSERT INTO payment_totals (shop_id, bucket, currency, test, net, payments) \
             SELECT p.shop_id, {bucket}, p.currency, p.test, sum(p.amount - p.refunded_amount), count(*) \
             FROM payments p WHERE p.status IN {TAKEN} GROUP BY 1, 2, 3, 4",
            bucket = bucket("p")
        ))
        .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::drop_summary_triggers(manager, "payments", "payments_totals").await?;
        manager.drop_table(Table::drop().table(PaymentTotals::Table).to_owned()).await
    }
}
