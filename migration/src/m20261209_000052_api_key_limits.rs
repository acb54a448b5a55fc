use sea_orm_migration::prelude::*;
use sea_orm_migration::sea_orm::{ConnectionTrait, DatabaseBackend};

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden, Clone, Copy)]
enum ApiKeys {
    Table,
    Permissions,
    Networks,
    RolledTo,
    Sealed,
    LastUsedAt,
    LastUsedFrom,
    WarnedAt,
    ExpiresAt,
}

/// What an API key may do and from where, and how it ends:
/// - `permissions`: a restricted key's access per resource (JSON, `{"payments": "read"}`);
///   none for a key without restrictions;
/// - `networks`: the networks it may be used from (CIDR, space-separated); none for anywhere;
/// - `rolled_to`: the key that succeeded it when it was rolled (one successor at most);
/// - `sealed`: the secret of the successor of the shop's standard key, sealed, until it
///   becomes the key the shop's notifications carry (when its predecessor stops), found by a
///   partial index;
/// - `last_used_at`, `last_used_from`: its last use, written at most once a minute;
/// - `warned_at`: when its owners were told it expires.
///
/// A rotation of the shop's digest by an instance of the version before revokes the key it
/// replaced; a key rolled with an overlap is left to expire at its own time instead.
#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use ApiKeys as K;
        let text = |column: K| ColumnDef::new(column).text().null().to_owned();
        let moment = |column: K| ColumnDef::new(column).timestamp_with_time_zone().null().to_owned();
        for column in [text(K::Permissions), text(K::Networks), text(K::RolledTo), text(K::Sealed)].into_iter().chain([
            moment(K::LastUsedAt),
            text(K::LastUsedFrom),
            moment(K::WarnedAt),
        ]) {
            manager.alter_table(Table::alter().table(K::Table).add_column(column).to_owned()).await?;
        }
        manager
            .create_index(Index::create().name("ix_api_keys_expires_at").table(K::Table).col(K::ExpiresAt).to_owned())
            .await?;
        let db = manager.get_connection();
        db.execute_unprepared("CREATE INDEX ix_api_keys_sealed ON api_keys (shop_id) WHERE sealed IS NOT NULL").await?;
        let unrolled = format!("{REVOKE} AND rolled_to IS NULL");
        if manager.get_database_backend() == DatabaseBackend::Postgres {
            db.execute_unprepared(&function(&unrolled)).await?;
        } else {
            db.execute_unprepared("DROP TRIGGER api_keys_of_rotations").await?;
            db.execute_unprepared(&rotations(&unrolled)).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        if manager.get_database_backend() == DatabaseBackend::Postgres {
            db.execute_unprepared(&function(REVOKE)).await?;
        } else {
            db.execute_unprepared("DROP TRIGGER api_keys_of_rotations").await?;
            db.execute_unprepared(&rotations(REVOKE)).await?;
        }
        db.execute_unprepared("DROP INDEX ix_api_keys_sealed").await?;
        manager.drop_index(Index::drop().name("ix_api_keys_expires_at").table(ApiKeys::Table).to_owned()).await?;
        for column in [
            ApiKeys::Permissions,
            ApiKeys::Networks,
            ApiKeys::RolledTo,
            ApiKeys::Sealed,
            ApiKeys::LastUsedAt,
            ApiKeys::LastUsedFrom,
            ApiKeys::WarnedAt,
        ] {
            manager.alter_table(Table::alter().table(ApiKeys::Table).drop_column(column).to_owned()).await?;
        }
        Ok(())
    }
}

/// Migration 51's revocation of the key a rotated digest replaced.
const REVOKE: &str =
    "UPDATE api_keys SET revoked_at = NEW.updated_at WHERE digest = OLD.secret_digest AND revoked_at IS NULL";

/// Migration 51's successor of a rotated digest, named like the key it replaces.
fn successor(random_id: &str) -> String {
    format!(
        "INSERT INTO api_keys (id, shop_id, name, prefix, digest, created_by, created_at) \
         VALUES ({random_id}, NEW.id, \
         COALESCE((SELECT k.name FROM api_keys k WHERE k.digest = OLD.secret_digest), 'Secret key'), \
         NULL, NEW.secret_digest, 'paydesk', NEW.updated_at) ON CONFLICT (digest) DO NOTHING"
    )
}

/// PostgreSQL's trigger function of migration 51, revoking with `revoke`.
fn function(revoke: &str) -> String {
    let first = "INSERT INTO api_keys (id, shop_id, name, prefix, digest, created_by, created_at) \
                 VALUES ('key_' || substr(md5(random()::text || NEW.id::text), 1, 16), NEW.id, 'Secret key', \
                 NULL, NEW.secret_digest, 'paydesk', NEW.created_at) ON CONFLICT (digest) DO NOTHING";
    let successor = successor("'key_' || substr(md5(random()::text || NEW.id::text), 1, 16)");
    format!(
        "CREATE OR REPLACE FUNCTION paydesk_api_keys_of_shops() RETURNS trigger AS $$ BEGIN \
           IF TG_OP = 'INSERT' THEN {first}; \
           ELSIF OLD.secret_digest <> NEW.secret_digest THEN {revoke}; {successor}; \
           END IF; \
           RETURN NULL; \
         END $$ LANGUAGE plpgsql"
    )
}

/// SQLite's rotation trigger of migration 51, revoking with `revoke`.
fn rotations(revoke: &str) -> String {
    let successor = successor("'key_' || lower(hex(randomblob(8)))");
    format!(
        "CREATE TRIGGER api_keys_of_rotations AFTER UPDATE OF secret_digest ON shops \
         WHEN OLD.secret_digest <> NEW.secret_digest BEGIN {revoke}; {successor}; END"
    )
}
