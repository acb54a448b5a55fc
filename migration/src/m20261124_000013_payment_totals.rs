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
        let bucket = |row: &str| match postgres {
            true => format!(
                "(floor(extract(epoch FROM coalesce({row}.captured_at, {row}.created_at)) / 900) * 900)::bigint"
            ),
            false => {
                format!("CAST(strftime('%s', coalesce({row}.captured_at, {row}.created_at)) AS INTEGER) / 900 * 900")
            }
        };
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
        let watched = "status, amount, refunded_amount, captured_at, created_at, currency, test, shop_id";
        // Only an update that changes what a payment contributes touches the totals.
        let changed = watched
            .split(", ")
            .map(|c| format!("OLD.{c} IS DISTINCT FROM NEW.{c}"))
            .collect::<Vec<_>>()
            .join(" OR ")
            .replace("IS DISTINCT FROM", if postgres { "IS DISTINCT FROM" } else { "IS NOT" });
        if postgres {
            db.execute_unprepared(&format!(
                "CREATE FUNCTION paydesk_payment_totals() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
                 IF TG_OP IN ('UPDATE', 'DELETE') THEN {}; END IF; \
                 IF TG_OP IN ('INSERT', 'UPDATE') THEN {}; END IF; \
                 RETURN NULL; END $$",
                add("OLD", -1),
                add("NEW", 1)
            ))
            .await?;
            db.execute_unprepared(
                "CREATE TRIGGER payments_totals AFTER INSERT OR DELETE ON payments \
                 FOR EACH ROW EXECUTE FUNCTION paydesk_payment_totals()",
            )
            .await?;
            db.execute_unprepared(&format!(
                "CREATE TRIGGER payments_totals_update AFTER UPDATE OF {watched} ON payments \
                 FOR EACH ROW WHEN ({changed}) EXECUTE FUNCTION paydesk_payment_totals()"
            ))
            .await?;
        } else {
            let old = add("OLD", -1);
            let new = add("NEW", 1);
            db.execute_unprepared(&format!(
                "CREATE TRIGGER payments_totals_insert AFTER INSERT ON payments BEGIN {new}; END"
            ))
            .await?;
            db.execute_unprepared(&format!(
                "CREATE TRIGGER payments_totals_update AFTER UPDATE OF {watched} ON payments WHEN {changed} \
                 BEGIN {old}; {new}; END"
            ))
            .await?;
            db.execute_unprepared(&format!(
                "CREATE TRIGGER payments_totals_delete AFTER DELETE ON payments BEGIN {old}; END"
            ))
            .await?;
        }
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
        let db = manager.get_connection();
        if manager.get_database_backend() == DatabaseBackend::Postgres {
            db.execute_unprepared("DROP TRIGGER IF EXISTS payments_totals ON payments").await?;
            db.execute_unprepared("DROP TRIGGER IF EXISTS payments_totals_update ON payments").await?;
            db.execute_unprepared("DROP FUNCTION IF EXISTS paydesk_payment_totals()").await?;
        } else {
            for name in ["payments_totals_insert", "payments_totals_update", "payments_totals_delete"] {
                db.execute_unprepared(&format!("DROP TRIGGER IF EXISTS {name}")).await?;
            }
        }
        manager.drop_table(Table::drop().table(PaymentTotals::Table).to_owned()).await
    }
}
