use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::{ConnectionTrait, DatabaseBackend};

use crate::{index, seq_column, timestamp};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum ApiKeys {
    Table,
    Seq,
    Id,
    ShopId,
    Name,
    Prefix,
    Digest,
    CreatedBy,
    CreatedAt,
    ExpiresAt,
    RevokedAt,
}

/// A shop's API keys (`key_…`): a name, the start of the secret shown to tell keys apart (none
/// for a key made before paydesk kept it), the secret's SHA-256 digest (what a request's key is
/// found by), who made it, and when it stops working (expired or revoked). Each shop's one key
/// so far becomes its first, unchanged; the shop row goes on naming its primary key's digest
/// and keeping that key sealed for the Basic auth of its notifications.
///
/// Triggers on `shops` keep the keys in step with that digest, so that an instance of the
/// version before, still running during an upgrade, creates and rotates keys that every
/// instance honours: a new shop's digest becomes its first key, and a rotated digest revokes
/// the key it replaces and becomes a key of the same name.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use ApiKeys as K;
        manager
            .create_table(
                Table::create()
                    .table(K::Table)
                    .col(seq_column(K::Seq))
                    .col(ColumnDef::new(K::Id).string().not_null().unique_key())
                    .col(ColumnDef::new(K::ShopId).big_integer().not_null())
                    .col(ColumnDef::new(K::Name).text().not_null())
                    .col(ColumnDef::new(K::Prefix).string().null())
                    .col(ColumnDef::new(K::Digest).string().not_null().unique_key())
                    .col(ColumnDef::new(K::CreatedBy).text().not_null())
                    .col(timestamp(K::CreatedAt))
                    .col(ColumnDef::new(K::ExpiresAt).timestamp_with_time_zone().null())
                    .col(ColumnDef::new(K::RevokedAt).timestamp_with_time_zone().null())
                    .to_owned(),
            )
            .await?;
        manager.create_index(index("ix_api_keys_shop_seq", K::Table, &[K::ShopId, K::Seq])).await?;
        let postgres = manager.get_database_backend() == DatabaseBackend::Postgres;
        let random_id = |shop: &str| match postgres {
            true => format!("'key_' || substr(md5(random()::text || {shop}::text), 1, 16)"),
            false => "'key_' || lower(hex(randomblob(8)))".to_string(),
        };
        let db = manager.get_connection();
        let key = |name: &str, at: &str| {
            format!(
                "INSERT INTO api_keys (id, shop_id, name, prefix, digest, created_by, created_at) \
                 VALUES ({}, NEW.id, {name}, NULL, NEW.secret_digest, 'paydesk', NEW.{at}) \
                 ON CONFLICT (digest) DO NOTHING",
                random_id("NEW.id")
            )
        };
        let first = key("'Secret key'", "created_at");
        let renamed = "COALESCE((SELECT k.name FROM api_keys k WHERE k.digest = OLD.secret_digest), 'Secret key')";
        let successor = key(renamed, "updated_at");
        let revoke = "UPDATE api_keys SET revoked_at = NEW.updated_at \
                      WHERE digest = OLD.secret_digest AND revoked_at IS NULL";
        if postgres {
            db.execute_unprepared(&format!(
                "CREATE FUNCTION paydesk_api_keys_of_shops() RETURNS trigger AS $$ BEGIN \
                   IF TG_OP = 'INSERT' THEN {first}; \
                   ELSIF OLD.secret_digest <> NEW.secret_digest THEN {revoke}; {successor}; \
                   END IF; \
                   RETURN NULL; \
                 END $$ LANGUAGE plpgsql"
            ))
            .await?;
            db.execute_unprepared(
                "CREATE TRIGGER api_keys_of_shops AFTER INSERT OR UPDATE OF secret_digest ON shops \
                 FOR EACH ROW EXECUTE FUNCTION paydesk_api_keys_of_shops()",
            )
            .await?;
        } else {
            db.execute_unprepared(&format!(
                "CREATE TRIGGER api_keys_of_new_shops AFTER INSERT ON shops BEGIN {first}; END"
            ))
            .await?;
            db.execute_unprepared(&format!(
                "CREATE TRIGGER api_keys_of_rotations AFTER UPDATE OF secret_digest ON shops \
                 WHEN OLD.secret_digest <> NEW.secret_digest BEGIN {revoke}; {successor}; END"
            ))
            .await?;
        }
        // The keys of the shops there are, after the triggers: on PostgreSQL creating them
        // locks `shops` against writes, so a shop an instance of the version before creates or
        // rotates meanwhile is either copied here or made by a trigger.
        let copy = format!(
            "INSERT INTO api_keys (id, shop_id, name, prefix, digest, created_by, created_at) \
             SELECT {}, id, 'Secret key', NULL, secret_digest, 'paydesk', created_at \
             FROM shops WHERE true ORDER BY id ON CONFLICT (digest) DO NOTHING",
            random_id("id")
        );
        db.execute_unprepared(&copy).await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        if manager.get_database_backend() == DatabaseBackend::Postgres {
            db.execute_unprepared("DROP TRIGGER api_keys_of_shops ON shops").await?;
            db.execute_unprepared("DROP FUNCTION paydesk_api_keys_of_shops()").await?;
        } else {
            db.execute_unprepared("DROP TRIGGER api_keys_of_new_shops").await?;
            db.execute_unprepared("DROP TRIGGER api_keys_of_rotations").await?;
        }
        manager.drop_table(Table::drop().table(ApiKeys::Table).to_owned()).await
    }
}
