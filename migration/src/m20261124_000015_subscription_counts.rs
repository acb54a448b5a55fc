use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::ConnectionTrait;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum SubscriptionCounts {
    Table,
    Seq,
    ShopId,
    State,
    Subscriptions,
}

/// How many subscriptions each shop has in each state, kept by triggers on `subscriptions`
/// in the same transaction as every change, for the dashboard's overview (counting a
/// million subscriptions at every visit took half a second).
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use SubscriptionCounts as C;
        manager
            .create_table(
                Table::create()
                    .table(C::Table)
                    .col(crate::seq_column(C::Seq))
                    .col(ColumnDef::new(C::ShopId).big_integer().not_null())
                    .col(ColumnDef::new(C::State).string().not_null())
                    .col(ColumnDef::new(C::Subscriptions).big_integer().not_null())
                    .to_owned(),
            )
            .await?;
        let mut unique = crate::index("ux_subscription_counts_state", C::Table, &[C::ShopId, C::State]);
        manager.create_index(unique.unique().to_owned()).await?;
        let db = manager.get_connection();
        let add = |row: &str, sign: i32| {
            format!(
                "INSERT INTO subscription_counts (shop_id, state, subscriptions) VALUES ({row}.shop_id, {row}.state, {sign}) \
                 ON CONFLICT (shop_id, state) DO UPDATE \
                 SET subscriptions = subscription_counts.subscriptions + excluded.subscriptions"
            )
        };
        let (remove, add) = (add("OLD", -1), add("NEW", 1));
        crate::summary_triggers(manager, "subscriptions", "subscriptions_counts", &["state", "shop_id"], &remove, &add)
            .await?;
        db.execute_unprepared(
            "INSERT INTO subscription_counts (shop_id, state, subscriptions) \
             SELECT shop_id, state, count(*) FROM subscriptions GROUP BY shop_id, state",
        )
        .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::drop_summary_triggers(manager, "subscriptions", "subscriptions_counts").await?;
        manager.drop_table(Table::drop().table(SubscriptionCounts::Table).to_owned()).await
    }
}
