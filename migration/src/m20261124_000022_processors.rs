use sea_orm_migration::prelude::*;

use crate::timestamp;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum ShopProcessors {
    Table,
    ShopId,
    Kind,
    CardEntry,
    GatewayUrl,
    CheckoutUrl,
    TestShopId,
    TestSecretSealed,
    TestSecretHint,
    TestPublicKey,
    LiveShopId,
    LiveSecretSealed,
    LiveSecretHint,
    LivePublicKey,
    CreatedAt,
    UpdatedAt,
}

/// The payment processor of each shop that chose one (no row: the simulated acquirer): its
/// kind, where cards are typed, the gateway's and the checkout's base URLs, and per mode
/// (test, live) the account's id, its secret key sealed with the vault and its last
/// characters (all that is shown of it), and the processor's public key for notifications.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use ShopProcessors as P;
        let text = |name: P| ColumnDef::new(name).text().null().to_owned();
        manager
            .create_table(
                Table::create()
                    .table(P::Table)
                    .col(ColumnDef::new(P::ShopId).big_integer().not_null().primary_key())
                    .col(ColumnDef::new(P::Kind).string().not_null())
                    .col(ColumnDef::new(P::CardEntry).string().not_null())
                    .col(ColumnDef::new(P::GatewayUrl).text().not_null())
                    .col(ColumnDef::new(P::CheckoutUrl).text().not_null())
                    .col(text(P::TestShopId))
                    .col(text(P::TestSecretSealed))
                    .col(text(P::TestSecretHint))
                    .col(text(P::TestPublicKey))
                    .col(text(P::LiveShopId))
                    .col(text(P::LiveSecretSealed))
                    .col(text(P::LiveSecretHint))
                    .col(text(P::LivePublicKey))
                    .col(timestamp(P::CreatedAt))
                    .col(timestamp(P::UpdatedAt))
                    .to_owned(),
            )
            .await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        manager.drop_table(Table::drop().table(ShopProcessors::Table).to_owned()).await
    }
}
