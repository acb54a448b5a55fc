use sea_orm_migration::prelude::*;

use crate::{index, seq_column, timestamp};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum DocumentSeries {
    Table,
    ShopId,
    Kind,
    Test,
    Prefix,
    NextNumber,
    LastIssued,
    UpdatedAt,
}

#[derive(DeriveIden, Clone, Copy)]
enum Payments {
    Table,
    Settling,
    SettlingAt,
}

#[derive(DeriveIden, Clone, Copy)]
enum Documents {
    Table,
    Seq,
    Id,
    ShopId,
    Kind,
    Test,
    Number,
    NumberText,
    Source,
    PaymentId,
    InvoiceId,
    CustomerId,
    SubscriptionId,
    Currency,
    NetTotal,
    TaxTotal,
    GrossTotal,
    Language,
    IssuedAt,
    Content,
}

/// The merchant's books: invoices (`inv_…`) and credit notes (`cn_…`) in one table, each
/// numbered from its shop's series of its kind and mode. A series is a row whose next number
/// is taken by an update in the issuing transaction, so numbers are gapless: a transaction
/// that rolls back gives its numbers back. A document is written once and never changed;
/// `source` (the payment, refund or dispute it was issued for) is unique, so each is issued
/// once whatever is retried.
///
/// A held payment's capture or void is claimed on its row (`settling`, since `settling_at`)
/// before the processor is asked, and recorded with its invoice once the processor approves;
/// a claim an interrupted request left is taken up again by the sweep (its partial index).
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use DocumentSeries as S;
        use Documents as D;
        manager
            .create_table(
                Table::create()
                    .table(S::Table)
                    .col(ColumnDef::new(S::ShopId).big_integer().not_null())
                    .col(ColumnDef::new(S::Kind).string().not_null())
                    .col(ColumnDef::new(S::Test).boolean().not_null())
                    .col(ColumnDef::new(S::Prefix).string().not_null())
                    .col(ColumnDef::new(S::NextNumber).big_integer().not_null())
                    .col(ColumnDef::new(S::LastIssued).big_integer().not_null())
                    .col(timestamp(S::UpdatedAt))
                    .primary_key(Index::create().col(S::ShopId).col(S::Kind).col(S::Test))
                    .to_owned(),
            )
            .await?;
        let id = |column: D| ColumnDef::new(column).string().null().to_owned();
        manager
            .create_table(
                Table::create()
                    .table(D::Table)
                    .col(seq_column(D::Seq))
                    .col(ColumnDef::new(D::Id).string().not_null().unique_key())
                    .col(ColumnDef::new(D::ShopId).big_integer().not_null())
                    .col(ColumnDef::new(D::Kind).string().not_null())
                    .col(ColumnDef::new(D::Test).boolean().not_null())
                    .col(ColumnDef::new(D::Number).big_integer().not_null())
                    .col(ColumnDef::new(D::NumberText).string().not_null())
                    .col(ColumnDef::new(D::Source).string().not_null().unique_key())
                    .col(id(D::PaymentId))
                    .col(id(D::InvoiceId))
                    .col(id(D::CustomerId))
                    .col(id(D::SubscriptionId))
                    .col(ColumnDef::new(D::Currency).string().not_null())
                    .col(ColumnDef::new(D::NetTotal).big_integer().not_null())
                    .col(ColumnDef::new(D::TaxTotal).big_integer().not_null())
                    .col(ColumnDef::new(D::GrossTotal).big_integer().not_null())
                    .col(ColumnDef::new(D::Language).string().not_null())
                    .col(timestamp(D::IssuedAt))
                    .col(ColumnDef::new(D::Content).text().not_null())
                    .to_owned(),
            )
            .await?;
        let unique =
            index("ux_documents_number", D::Table, &[D::ShopId, D::Kind, D::Test, D::Number]).unique().to_owned();
        manager.create_index(unique).await?;
        for (name, columns) in [
            ("ix_documents_list", &[D::ShopId, D::Kind, D::Seq][..]),
            ("ix_documents_customer", &[D::ShopId, D::Kind, D::CustomerId, D::Seq]),
            ("ix_documents_subscription", &[D::ShopId, D::Kind, D::SubscriptionId, D::Seq]),
            ("ix_documents_payment", &[D::ShopId, D::Kind, D::PaymentId, D::Seq]),
            ("ix_documents_invoice", &[D::ShopId, D::InvoiceId, D::Kind, D::Seq]),
            ("ix_documents_number_text", &[D::ShopId, D::Kind, D::NumberText, D::Seq]),
            ("ix_documents_issued", &[D::ShopId, D::Kind, D::IssuedAt]),
        ] {
            manager.create_index(index(name, D::Table, columns)).await?;
        }
        for column in [
            ColumnDef::new(Payments::Settling).string().null().to_owned(),
            ColumnDef::new(Payments::SettlingAt).timestamp_with_time_zone().null().to_owned(),
        ] {
            let mut column = column;
            manager.alter_table(Table::alter().table(Payments::Table).add_column(&mut column).to_owned()).await?;
        }
        let db = manager.get_connection();
        db.execute_unprepared("CREATE INDEX ix_payments_settling ON payments (settling_at) WHERE settling IS NOT NULL")
            .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        db.execute_unprepared("DROP INDEX ix_payments_settling").await?;
        for column in [Payments::Settling, Payments::SettlingAt] {
            manager.alter_table(Table::alter().table(Payments::Table).drop_column(column).to_owned()).await?;
        }
        manager.drop_table(Table::drop().table(Documents::Table).to_owned()).await?;
        manager.drop_table(Table::drop().table(DocumentSeries::Table).to_owned()).await
    }
}
