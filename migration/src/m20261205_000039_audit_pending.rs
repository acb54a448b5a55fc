use sea_orm_migration::prelude::*;

use crate::{index, seq_column, timestamp};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum AuditPending {
    Table,
    N,
    Id,
    ShopId,
    At,
    ActorKind,
    ActorId,
    ActorLabel,
    ActorRole,
    Address,
    UserAgent,
    RequestId,
    Action,
    ObjectType,
    ObjectId,
    Changes,
    Outcome,
}

/// Audit records not yet in their shop's chain: a change writes its record here, in its own
/// transaction and without waiting for the shop's other writers; the sealer moves them into
/// `audit_events`, numbered and chained one shop at a time, in the order they were written.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use AuditPending as A;
        let text = |c: A| ColumnDef::new(c).text().not_null().to_owned();
        let maybe = |c: A| ColumnDef::new(c).text().null().to_owned();
        manager
            .create_table(
                Table::create()
                    .table(A::Table)
                    .col(seq_column(A::N))
                    .col(ColumnDef::new(A::Id).string().not_null().unique_key())
                    .col(ColumnDef::new(A::ShopId).big_integer().not_null())
                    .col(timestamp(A::At))
                    .col(text(A::ActorKind))
                    .col(maybe(A::ActorId))
                    .col(maybe(A::ActorLabel))
                    .col(maybe(A::ActorRole))
                    .col(maybe(A::Address))
                    .col(maybe(A::UserAgent))
                    .col(maybe(A::RequestId))
                    .col(text(A::Action))
                    .col(maybe(A::ObjectType))
                    .col(maybe(A::ObjectId))
                    .col(text(A::Changes))
                    .col(text(A::Outcome))
                    .to_owned(),
            )
            .await?;
        manager.create_index(index("ix_audit_pending_shop", A::Table, &[A::ShopId, A::N])).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(Table::drop().table(AuditPending::Table).to_owned()).await
    }
}
