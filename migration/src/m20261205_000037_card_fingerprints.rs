use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum Payments {
    Table,
    CardFingerprint,
}

#[derive(DeriveIden, Clone, Copy)]
enum Subscriptions {
    Table,
    CardFingerprint,
}

#[derive(DeriveIden, Clone, Copy)]
enum Disputes {
    Table,
    CardFingerprint,
}

#[derive(DeriveIden, Clone, Copy)]
enum Shops {
    Table,
    RefuseDisputedCards,
}

/// What identifies a card across entries (its processor's fingerprint, which a new token of
/// the same card keeps), on payments, subscriptions and disputes: a dispute cancels every
/// subscription of the shop on the card and, unless the shop says otherwise
/// (`refuse_disputed_cards`), the card is refused while the dispute stands. Rows from before
/// have none (they are matched by their token, as then).
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let fingerprint = |name: DynIden| ColumnDef::new(name).string().null().to_owned();
        for (table, mut column) in [
            (Payments::Table.into_iden(), fingerprint(Payments::CardFingerprint.into_iden())),
            (Subscriptions::Table.into_iden(), fingerprint(Subscriptions::CardFingerprint.into_iden())),
            (Disputes::Table.into_iden(), fingerprint(Disputes::CardFingerprint.into_iden())),
            (
                Shops::Table.into_iden(),
                ColumnDef::new(Shops::RefuseDisputedCards).boolean().not_null().default(true).to_owned(),
            ),
        ] {
            manager.alter_table(Table::alter().table(table).add_column(&mut column).to_owned()).await?;
        }
        let db = manager.get_connection();
        for (name, table) in [("ix_subscriptions_card", "subscriptions"), ("ix_disputes_card", "disputes")] {
            db.execute_unprepared(&format!(
                "CREATE INDEX {name} ON {table} (shop_id, card_fingerprint) WHERE card_fingerprint IS NOT NULL"
            ))
            .await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        for name in ["ix_subscriptions_card", "ix_disputes_card"] {
            db.execute_unprepared(&format!("DROP INDEX {name}")).await?;
        }
        for (table, column) in [
            (Payments::Table.into_iden(), Payments::CardFingerprint.into_iden()),
            (Subscriptions::Table.into_iden(), Subscriptions::CardFingerprint.into_iden()),
            (Disputes::Table.into_iden(), Disputes::CardFingerprint.into_iden()),
            (Shops::Table.into_iden(), Shops::RefuseDisputedCards.into_iden()),
        ] {
            manager.alter_table(Table::alter().table(table).drop_column(column).to_owned()).await?;
        }
        Ok(())
    }
}
