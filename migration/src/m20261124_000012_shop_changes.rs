use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::{ConnectionTrait, DatabaseBackend};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// On PostgreSQL, every change of a shop's row (a key rotated, settings changed, the row
/// deleted, by paydesk or by hand) notifies channel `paydesk_shops` with the shop's id at
/// commit, so that every instance forgets the shop it keeps in memory. SQLite has one
/// instance: it forgets its own writes.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        if manager.get_database_backend() != DatabaseBackend::Postgres {
            return Ok(());
        }
        let db = manager.get_connection();
        db.execute_unprepared(
            "CREATE FUNCTION paydesk_shop_changed() RETURNS trigger LANGUAGE plpgsql AS $$ \
             BEGIN PERFORM pg_notify('paydesk_shops', OLD.id::text); RETURN NULL; END $$",
        )
        .await?;
        db.execute_unprepared(
            "CREATE TRIGGER shops_changed AFTER UPDATE OR DELETE ON shops \
             FOR EACH ROW EXECUTE FUNCTION paydesk_shop_changed()",
        )
        .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        if manager.get_database_backend() != DatabaseBackend::Postgres {
            return Ok(());
        }
        let db = manager.get_connection();
        db.execute_unprepared("DROP TRIGGER IF EXISTS shops_changed ON shops").await?;
        db.execute_unprepared("DROP FUNCTION IF EXISTS paydesk_shop_changed()").await?;
        Ok(())
    }
}
