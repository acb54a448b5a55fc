use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::{ConnectionTrait, DatabaseBackend};

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
        let postgres = manager.get_database_backend() == DatabaseBackend::Postgres;
        let add = |row: &str, sign: i32| {
            format!(
                "INSERT INTO subscription_counts (shop_id, state, subscriptions) VALUES ({row}.shop_id, {row}.state, {sign}) \
                 ON CONFLICT (shop_id, state) DO UPDATE \
                 SET subscriptions = subscription_counts.subscriptions + excluded.subscriptions"
            )
        };
        let changed = match postgres {
            true => "OLD.state IS DISTINCT FROM NEW.state OR OLD.shop_id IS DISTINCT FROM NEW.shop_id",
            false => "OLD.state IS NOT NEW.state OR OLD.shop_id IS NOT NEW.shop_id",
        };
        if postgres {
            db.execute_unprepared(&format!(
                "CREATE FUNCTION paydesk_subscription_counts() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
                 IF TG_OP IN ('UPDATE', 'DELETE') THEN {}; END IF; \
                 IF TG_OP IN ('INSERT', 'UPDATE') THEN {}; END IF; \
                 RETURN NULL; END $$",
                add("OLD", -1),
                add("NEW", 1)
            ))
            .await?;
            db.execute_unprepared(
                "CREATE TRIGGER subscriptions_counts AFTER INSERT OR DELETE ON subscriptions \
                 FOR EACH ROW EXECUTE FUNCTION paydesk_subscription_counts()",
            )
            .await?;
            db.execute_unprepared(&format!(
                "CREATE TRIGGER subscriptions_counts_update AFTER UPDATE OF state, shop_id ON subscriptions \
                 FOR EACH ROW WHEN ({changed}) EXECUTE FUNCTION paydesk_subscription_counts()"
            ))
            .await?;
        } else {
            let (old, new) = (add("OLD", -1), add("NEW", 1));
            db.execute_unprepared(&format!(
                "CREATE TRIGGER subscriptions_counts_insert AFTER INSERT ON subscriptions BEGIN {new}; END"
            ))
            .await?;
            db.execute_unprepared(&format!(
                "CREATE TRIGGER subscriptions_counts_update AFTER UPDATE OF state, shop_id ON subscriptions \
                 WHEN {changed} BEGIN {old}; {new}; END"
            ))
            .await?;
            db.execute_unprepared(&format!(
                "CREATE TRIGGER subscriptions_counts_delete AFTER DELETE ON subscriptions BEGIN {old}; END"
            ))
            .await?;
        }
        db.execute_unprepared(
            "INSERT INTO subscription_counts (shop_id, state, subscriptions) \
             SELECT shop_id, state, count(*) FROM subscriptions GROUP BY shop_id, state",
        )
        .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        if manager.get_database_backend() == DatabaseBackend::Postgres {
            db.execute_unprepared("DROP TRIGGER IF EXISTS subscriptions_counts ON subscriptions").await?;
            db.execute_unprepared("DROP TRIGGER IF EXISTS subscriptions_counts_update ON subscriptions").await?;
            db.execute_unprepared("DROP FUNCTION IF EXISTS paydesk_subscription_counts()").await?;
        } else {
            for name in ["subscriptions_counts_insert", "subscriptions_counts_update", "subscriptions_counts_delete"] {
                db.execute_unprepared(&format!("DROP TRIGGER IF EXISTS {name}")).await?;
            }
        }
        manager.drop_table(Table::drop().table(SubscriptionCounts::Table).to_owned()).await
    }
}
