use sea_orm_migration::prelude::*;

use crate::{index, seq_column, timestamp};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum Shops {
    Table,
    MailFrom,
    MailOff,
    ReminderDays,
    ReminderAllPeriods,
}

#[derive(DeriveIden, Clone, Copy)]
enum Subscriptions {
    Table,
    RemindAt,
}

#[derive(DeriveIden, Clone, Copy)]
enum Mails {
    Table,
    Seq,
    Id,
    ShopId,
    CustomerId,
    Kind,
    ObjectId,
    EventId,
    DedupeKey,
    Test,
    Status,
    ToAddress,
    Language,
    Subject,
    TextBody,
    HtmlBody,
    MessageId,
    Attempts,
    NextAttemptAt,
    ClaimToken,
    ClaimedUntil,
    LastCode,
    LastError,
    SentAt,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden, Clone, Copy)]
enum MailAttempts {
    Table,
    Seq,
    MailId,
    ShopId,
    At,
    Code,
    LatencyMs,
    Error,
}

/// Subscriber e-mails: the shop's sender and which kinds it sends; the outbox of mails
/// (written in the transaction of what causes them, rendered and sent by workers that claim
/// rows under leases) and the log of every attempt; `subscriptions.remind_at`, when the
/// reminders of a subscription (trial ending, renewal, card expiring) are looked at next.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for column in [
            ColumnDef::new(Shops::MailFrom).text().null().to_owned(),
            ColumnDef::new(Shops::MailOff).text().not_null().default("").to_owned(),
            ColumnDef::new(Shops::ReminderDays).integer().null().to_owned(),
            ColumnDef::new(Shops::ReminderAllPeriods).boolean().not_null().default(false).to_owned(),
        ] {
            let mut column = column;
            manager.alter_table(Table::alter().table(Shops::Table).add_column(&mut column).to_owned()).await?;
        }
        let mut remind = ColumnDef::new(Subscriptions::RemindAt).timestamp_with_time_zone().null().to_owned();
        manager.alter_table(Table::alter().table(Subscriptions::Table).add_column(&mut remind).to_owned()).await?;
        manager
            .create_index(index("ix_subscriptions_remind", Subscriptions::Table, &[Subscriptions::RemindAt]))
            .await?;

        use Mails as M;
        manager
            .create_table(
                Table::create()
                    .table(M::Table)
                    .col(seq_column(M::Seq))
                    .col(ColumnDef::new(M::Id).string().not_null().unique_key())
                    .col(ColumnDef::new(M::ShopId).big_integer().not_null())
                    .col(ColumnDef::new(M::CustomerId).string().null())
                    .col(ColumnDef::new(M::Kind).string().not_null())
                    .col(ColumnDef::new(M::ObjectId).string().not_null())
                    .col(ColumnDef::new(M::EventId).string().null())
                    .col(ColumnDef::new(M::DedupeKey).string().not_null().unique_key())
                    .col(ColumnDef::new(M::Test).boolean().not_null())
                    .col(ColumnDef::new(M::Status).string().not_null())
                    .col(ColumnDef::new(M::ToAddress).text().null())
                    .col(ColumnDef::new(M::Language).string().null())
                    .col(ColumnDef::new(M::Subject).text().null())
                    .col(ColumnDef::new(M::TextBody).text().null())
                    .col(ColumnDef::new(M::HtmlBody).text().null())
                    .col(ColumnDef::new(M::MessageId).text().not_null())
                    .col(ColumnDef::new(M::Attempts).integer().not_null())
                    .col(timestamp(M::NextAttemptAt))
                    .col(ColumnDef::new(M::ClaimToken).string().null())
                    .col(ColumnDef::new(M::ClaimedUntil).timestamp_with_time_zone().null())
                    .col(ColumnDef::new(M::LastCode).integer().null())
                    .col(ColumnDef::new(M::LastError).text().null())
                    .col(ColumnDef::new(M::SentAt).timestamp_with_time_zone().null())
                    .col(timestamp(M::CreatedAt))
                    .col(timestamp(M::UpdatedAt))
                    .to_owned(),
            )
            .await?;
        for (name, columns) in [
            ("ix_mails_due", vec![M::Status, M::NextAttemptAt]),
            ("ix_mails_shop_seq", vec![M::ShopId, M::Seq]),
            ("ix_mails_customer_seq", vec![M::CustomerId, M::Seq]),
            ("ix_mails_claim", vec![M::ClaimToken]),
        ] {
            manager.create_index(index(name, M::Table, &columns)).await?;
        }

        use MailAttempts as A;
        manager
            .create_table(
                Table::create()
                    .table(A::Table)
                    .col(seq_column(A::Seq))
                    .col(ColumnDef::new(A::MailId).string().not_null())
                    .col(ColumnDef::new(A::ShopId).big_integer().not_null())
                    .col(timestamp(A::At))
                    .col(ColumnDef::new(A::Code).integer().null())
                    .col(ColumnDef::new(A::LatencyMs).big_integer().not_null())
                    .col(ColumnDef::new(A::Error).text().null())
                    .to_owned(),
            )
            .await?;
        manager.create_index(index("ix_mail_attempts_mail", A::Table, &[A::MailId, A::Seq])).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(Table::drop().table(MailAttempts::Table).to_owned()).await?;
        manager.drop_table(Table::drop().table(Mails::Table).to_owned()).await?;
        manager
            .drop_index(Index::drop().name("ix_subscriptions_remind").table(Subscriptions::Table).to_owned())
            .await?;
        manager
            .alter_table(Table::alter().table(Subscriptions::Table).drop_column(Subscriptions::RemindAt).to_owned())
            .await?;
        for column in [Shops::MailFrom, Shops::MailOff, Shops::ReminderDays, Shops::ReminderAllPeriods] {
            manager.alter_table(Table::alter().table(Shops::Table).drop_column(column).to_owned()).await?;
        }
        Ok(())
    }
}
