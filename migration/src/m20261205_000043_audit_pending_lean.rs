use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::{ConnectionTrait, DatabaseBackend};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// The records waiting to be chained (`audit_pending`) lose the indexes no query needs: the
/// unique index of their id (each record's id is checked unique where it is chained, in
/// `audit_events`) and, on PostgreSQL, the primary key of `n` (the sealer finds and deletes a
/// shop's records by the index of shop and `n`). Each was a page written by every recorded
/// change. SQLite cannot drop a column's unique index, so the table, which holds only the
/// records of the last moments, is copied into one without it; an instance of the version
/// before works on either.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let statements: &[&str] = match manager.get_database_backend() {
            DatabaseBackend::Postgres => &[
                "ALTER TABLE audit_pending DROP CONSTRAINT audit_pending_id_key",
                "ALTER TABLE audit_pending DROP CONSTRAINT audit_pending_pkey",
            ],
            _ => &[
                LEAN_SQLITE_TABLE,
                "INSERT INTO audit_pending_lean SELECT * FROM audit_pending",
                "DROP TABLE audit_pending",
                "ALTER TABLE audit_pending_lean RENAME TO audit_pending",
                "CREATE INDEX ix_audit_pending_shop ON audit_pending (shop_id, n)",
            ],
        };
        run(manager, statements).await
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let statements: &[&str] = match manager.get_database_backend() {
            DatabaseBackend::Postgres => &[
                "ALTER TABLE audit_pending ADD CONSTRAINT audit_pending_pkey PRIMARY KEY (n)",
                "ALTER TABLE audit_pending ADD CONSTRAINT audit_pending_id_key UNIQUE (id)",
            ],
            _ => &["CREATE UNIQUE INDEX ux_audit_pending_id ON audit_pending (id)"],
        };
        run(manager, statements).await
    }
}

async fn run(manager: &SchemaManager<'_>, statements: &[&str]) -> Result<(), DbErr> {
    for statement in statements {
        manager.get_connection().execute_unprepared(statement).await?;
    }
    Ok(())
}

/// `audit_pending` as migration `m20261205_000039_audit_pending` made it on SQLite, with the
/// same columns in the same order, but no unique index of `id`.
const LEAN_SQLITE_TABLE: &str = r#"CREATE TABLE "audit_pending_lean" ( "n" integer NOT NULL PRIMARY KEY AUTOINCREMENT, "id" varchar NOT NULL, "shop_id" bigint NOT NULL, "at" timestamp_with_timezone_text NOT NULL, "actor_kind" text NOT NULL, "actor_id" text NULL, "actor_label" text NULL, "actor_role" text NULL, "address" text NULL, "user_agent" text NULL, "request_id" text NULL, "action" text NOT NULL, "object_type" text NULL, "object_id" text NULL, "changes" text NOT NULL, "outcome" text NOT NULL )"#;
