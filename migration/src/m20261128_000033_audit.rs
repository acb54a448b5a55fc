use sea_orm_migration::prelude::*;

use crate::{index, timestamp};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum AuditEvents {
    Table,
    Id,
    ShopId,
    Seq,
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
    PrevHash,
    Hash,
}

#[derive(DeriveIden, Clone, Copy)]
enum AuditHeads {
    Table,
    ShopId,
    Seq,
    Hash,
}

/// The audit trail: one row per action of a shop (who, from where, what, on which object,
/// the fields changed, the outcome), numbered per shop and chained by hash to the row before
/// it; and each shop's head of the chain, the row every new record takes first, so records
/// of one shop are written one at a time and in order.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use AuditEvents as A;
        let text = |c: A| ColumnDef::new(c).text().not_null().to_owned();
        let maybe = |c: A| ColumnDef::new(c).text().null().to_owned();
        manager
            .create_table(
                Table::create()
                    .table(A::Table)
                    .col(ColumnDef::new(A::Id).string().not_null().primary_key())
                    .col(ColumnDef::new(A::ShopId).big_integer().not_null())
                    .col(ColumnDef::new(A::Seq).big_integer().not_null())
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
                    .col(text(A::PrevHash))
                    .col(text(A::Hash))
                    .to_owned(),
            )
            .await?;
        manager
            .create_index(index("ux_audit_events_shop_seq", A::Table, &[A::ShopId, A::Seq]).unique().to_owned())
            .await?;
        manager.create_index(index("ix_audit_events_shop_at", A::Table, &[A::ShopId, A::At])).await?;
        manager
            .create_table(
                Table::create()
                    .table(AuditHeads::Table)
                    .col(ColumnDef::new(AuditHeads::ShopId).big_integer().not_null().primary_key())
                    .col(ColumnDef::new(AuditHeads::Seq).big_integer().not_null())
                    .col(ColumnDef::new(AuditHeads::Hash).text().not_null())
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(Table::drop().table(AuditHeads::Table).to_owned()).await?;
        manager.drop_table(Table::drop().table(AuditEvents::Table).to_owned()).await
    }
}
