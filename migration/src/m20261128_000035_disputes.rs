use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::{ConnectionTrait, DatabaseBackend};

use crate::{index, seq_column, timestamp};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum Payments {
    Table,
    DisputedAmount,
    DisputeFees,
    DisputeId,
    DisputeStatus,
    FraudWarning,
    FraudWarnedAt,
    NetworkAt,
}

#[derive(DeriveIden, Clone, Copy)]
enum Shops {
    Table,
    DisputeCancels,
    FraudWarningRefunds,
}

#[derive(DeriveIden, Clone, Copy)]
enum Disputes {
    Table,
    Seq,
    Id,
    ShopId,
    PaymentId,
    SubscriptionId,
    CustomerId,
    Test,
    Reference,
    Stage,
    Status,
    Reason,
    Amount,
    Currency,
    Fee,
    EvidenceDueBy,
    Evidence,
    EvidenceSubmittedAt,
    SubmissionCount,
    Accepted,
    FundsWithdrawnAt,
    FundsReinstatedAt,
    WithdrawnAmount,
    WithdrawnFee,
    NetworkAt,
    ClosedAt,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden, Clone, Copy)]
enum DisputeHistory {
    Table,
    Seq,
    DisputeId,
    At,
    Stage,
    Status,
    Step,
    Amount,
}

/// The statuses in which a payment's money was taken (`PaymentStatus::is_taken`).
const TAKEN: &str = "('succeeded', 'partially_refunded', 'refunded')";

/// Disputes and chargebacks: one row per processor dispute (`disputes`), each change of it
/// (`dispute_history`), and on the payment what disputes took back from the merchant now
/// (amount and fees, counted out of the revenue totals like refunds), its dispute and an
/// early fraud warning. The simulated processor's card network acts on payments and
/// disputes at `network_at`. A payment paydesk ended at the hour is looked up once more at
/// its `recheck_at` (indexed for failed payments). Per shop: whether a dispute cancels its subscription (on by
/// default) and whether an early fraud warning refunds the payment (off by default).
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use Disputes as D;
        use Payments as P;
        let payment_columns = [
            ColumnDef::new(P::DisputedAmount).big_integer().not_null().default(0).to_owned(),
            ColumnDef::new(P::DisputeFees).big_integer().not_null().default(0).to_owned(),
            ColumnDef::new(P::DisputeId).string().null().to_owned(),
            ColumnDef::new(P::DisputeStatus).string().null().to_owned(),
            ColumnDef::new(P::FraudWarning).string().null().to_owned(),
            ColumnDef::new(P::FraudWarnedAt).timestamp_with_time_zone().null().to_owned(),
            ColumnDef::new(P::NetworkAt).timestamp_with_time_zone().null().to_owned(),
        ];
        for mut column in payment_columns {
            manager.alter_table(Table::alter().table(P::Table).add_column(&mut column).to_owned()).await?;
        }
        manager.create_index(index("ix_payments_network", P::Table, &[P::NetworkAt])).await?;
        // Payments paydesk ended at the hour are looked up once more later (a late bank check).
        let db = manager.get_connection();
        db.execute_unprepared(
            "CREATE INDEX ix_payments_ended_recheck ON payments (recheck_at) WHERE status = 'failed'",
        )
        .await?;
        let shop_columns = [
            ColumnDef::new(Shops::DisputeCancels).boolean().not_null().default(true).to_owned(),
            ColumnDef::new(Shops::FraudWarningRefunds).boolean().not_null().default(false).to_owned(),
        ];
        for mut column in shop_columns {
            manager.alter_table(Table::alter().table(Shops::Table).add_column(&mut column).to_owned()).await?;
        }
        manager
            .create_table(
                Table::create()
                    .table(D::Table)
                    .col(seq_column(D::Seq))
                    .col(ColumnDef::new(D::Id).string().not_null().unique_key())
                    .col(ColumnDef::new(D::ShopId).big_integer().not_null())
                    .col(ColumnDef::new(D::PaymentId).string().not_null())
                    .col(ColumnDef::new(D::SubscriptionId).string().null())
                    .col(ColumnDef::new(D::CustomerId).string().null())
                    .col(ColumnDef::new(D::Test).boolean().not_null())
                    .col(ColumnDef::new(D::Reference).string().not_null())
                    .col(ColumnDef::new(D::Stage).string().not_null())
                    .col(ColumnDef::new(D::Status).string().not_null())
                    .col(ColumnDef::new(D::Reason).string().not_null())
                    .col(ColumnDef::new(D::Amount).big_integer().not_null())
                    .col(ColumnDef::new(D::Currency).string_len(3).not_null())
                    .col(ColumnDef::new(D::Fee).big_integer().null())
                    .col(ColumnDef::new(D::EvidenceDueBy).timestamp_with_time_zone().null())
                    .col(ColumnDef::new(D::Evidence).text().null())
                    .col(ColumnDef::new(D::EvidenceSubmittedAt).timestamp_with_time_zone().null())
                    .col(ColumnDef::new(D::SubmissionCount).integer().not_null().default(0))
                    .col(ColumnDef::new(D::Accepted).boolean().not_null().default(false))
                    .col(ColumnDef::new(D::FundsWithdrawnAt).timestamp_with_time_zone().null())
                    .col(ColumnDef::new(D::FundsReinstatedAt).timestamp_with_time_zone().null())
                    .col(ColumnDef::new(D::WithdrawnAmount).big_integer().not_null().default(0))
                    .col(ColumnDef::new(D::WithdrawnFee).big_integer().not_null().default(0))
                    .col(ColumnDef::new(D::NetworkAt).timestamp_with_time_zone().null())
                    .col(ColumnDef::new(D::ClosedAt).timestamp_with_time_zone().null())
                    .col(timestamp(D::CreatedAt))
                    .col(timestamp(D::UpdatedAt))
                    .to_owned(),
            )
            .await?;
        let mut by_reference = index("ux_disputes_reference", D::Table, &[D::ShopId, D::Reference]);
        manager.create_index(by_reference.unique().to_owned()).await?;
        for (name, columns) in [
            ("ix_disputes_shop_seq", vec![D::ShopId, D::Seq]),
            ("ix_disputes_shop_status", vec![D::ShopId, D::Status, D::Seq]),
            ("ix_disputes_payment", vec![D::PaymentId, D::Seq]),
            ("ix_disputes_network", vec![D::NetworkAt]),
        ] {
            manager.create_index(index(name, D::Table, &columns)).await?;
        }
        use DisputeHistory as H;
        manager
            .create_table(
                Table::create()
                    .table(H::Table)
                    .col(seq_column(H::Seq))
                    .col(ColumnDef::new(H::DisputeId).string().not_null())
                    .col(timestamp(H::At))
                    .col(ColumnDef::new(H::Stage).string().not_null())
                    .col(ColumnDef::new(H::Status).string().not_null())
                    .col(ColumnDef::new(H::Step).string().not_null())
                    .col(ColumnDef::new(H::Amount).big_integer().null())
                    .to_owned(),
            )
            .await?;
        manager.create_index(index("ix_dispute_history_dispute", H::Table, &[H::DisputeId, H::Seq])).await?;
        totals_triggers(manager, true).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        totals_triggers(manager, false).await?;
        manager.drop_table(Table::drop().table(DisputeHistory::Table).to_owned()).await?;
        manager.drop_table(Table::drop().table(Disputes::Table).to_owned()).await?;
        for column in [Shops::FraudWarningRefunds, Shops::DisputeCancels] {
            manager.alter_table(Table::alter().table(Shops::Table).drop_column(column).to_owned()).await?;
        }
        manager.drop_index(Index::drop().name("ix_payments_network").table(Payments::Table).to_owned()).await?;
        manager.drop_index(Index::drop().name("ix_payments_ended_recheck").table(Payments::Table).to_owned()).await?;
        use Payments as P;
        for column in [
            P::NetworkAt,
            P::FraudWarnedAt,
            P::FraudWarning,
            P::DisputeStatus,
            P::DisputeId,
            P::DisputeFees,
            P::DisputedAmount,
        ] {
            manager.alter_table(Table::alter().table(P::Table).drop_column(column).to_owned()).await?;
        }
        Ok(())
    }
}

/// The revenue totals' triggers of m16, with what disputes took (`with_disputes`) counted
/// as money gone, or without it again. The totals so far are right either way: no payment
/// had a dispute before this migration, and `down` runs before the columns go.
async fn totals_triggers(manager: &SchemaManager<'_>, with_disputes: bool) -> Result<(), DbErr> {
    let postgres = manager.get_database_backend() == DatabaseBackend::Postgres;
    crate::drop_summary_triggers(manager, "payments", "payments_totals").await?;
    if !with_disputes {
        // Disputes' money back in each payment's net, so the old triggers take away what
        // they add.
        let db = manager.get_connection();
        let bucket = crate::quarter_hour(postgres, "p");
        db.execute_unprepared(&format!(
            "INSERT INTO payment_totals (shop_id, bucket, currency, test, net, payments, fresh) \
             SELECT p.shop_id, {bucket}, p.currency, p.test, sum(p.disputed_amount + p.dispute_fees), 0, true \
             FROM payments p WHERE p.status IN {TAKEN} AND p.disputed_amount + p.dispute_fees <> 0 \
             GROUP BY 1, 2, 3, 4"
        ))
        .await?;
    }
    let gone = if with_disputes { " - {row}.disputed_amount - {row}.dispute_fees" } else { "" };
    let add = |row: &str, sign: i32| {
        format!(
            "INSERT INTO payment_totals (shop_id, bucket, currency, test, net, payments, fresh) \
             SELECT {row}.shop_id, {bucket}, {row}.currency, {row}.test, \
                    {sign} * ({row}.amount - {row}.refunded_amount{gone}), {sign}, true \
             WHERE {row}.status IN {TAKEN}",
            bucket = crate::quarter_hour(postgres, row),
            gone = gone.replace("{row}", row),
        )
    };
    let mut watched =
        vec!["status", "amount", "refunded_amount", "captured_at", "created_at", "currency", "test", "shop_id"];
    if with_disputes {
        watched.extend(["disputed_amount", "dispute_fees"]);
    }
    crate::summary_triggers(manager, "payments", "payments_totals", &watched, &add("OLD", -1), &add("NEW", 1)).await
}
