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
/// - `last_used_at`, `last_used_from`: its last use, written at most once a minute (the keys
///   used last, for the dashboard, under an index of their own);
/// - `warned_at`: when its owners were told it expires.
///
/// The triggers of migration 51 on a rotated digest change with them (see [`rotation`]).
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
        db.execute_unprepared("CREATE INDEX ix_api_keys_last_used ON api_keys (shop_id, last_used_at)").await?;
        let rotation = rotation();
        if manager.get_database_backend() == DatabaseBackend::Postgres {
            db.execute_unprepared(&function(&rotation)).await?;
        } else {
            db.execute_unprepared("DROP TRIGGER api_keys_of_rotations").await?;
            db.execute_unprepared(&rotations(&rotation)).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        let earlier = format!("{REVOKE}; {}", successor(ID, false));
        if manager.get_database_backend() == DatabaseBackend::Postgres {
            db.execute_unprepared(&function(&earlier.replace(ID, PG_ID))).await?;
        } else {
            db.execute_unprepared("DROP TRIGGER api_keys_of_rotations").await?;
            db.execute_unprepared(&rotations(&earlier.replace(ID, SQLITE_ID))).await?;
        }
        db.execute_unprepared("DROP INDEX ix_api_keys_sealed").await?;
        db.execute_unprepared("DROP INDEX ix_api_keys_last_used").await?;
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

/// Where a new key's id is written in the statements below, made on each database by its own
/// expression.
const ID: &str = "{id}";
const PG_ID: &str = "'key_' || substr(md5(random()::text || NEW.id::text), 1, 16)";
const SQLITE_ID: &str = "'key_' || lower(hex(randomblob(8)))";

/// The successor of a rotated digest, named like the key it replaces (and from this migration
/// on, used from the same networks).
fn successor(id: &str, networks: bool) -> String {
    let (column, value) = match networks {
        true => (", networks", ", (SELECT k.networks FROM api_keys k WHERE k.digest = OLD.secret_digest)"),
        false => ("", ""),
    };
    format!(
        "INSERT INTO api_keys (id, shop_id, name, prefix, digest, created_by, created_at{column}) \
         VALUES ({id}, NEW.id, \
         COALESCE((SELECT k.name FROM api_keys k WHERE k.digest = OLD.secret_digest), 'Secret key'), \
         NULL, NEW.secret_digest, 'paydesk', NEW.updated_at{value}) ON CONFLICT (digest) DO NOTHING"
    )
}

/// What a rotated digest does from this migration on: the key it replaced stops now, unless
/// the new digest is the successor that key was rolled to (its overlap ended: it stays
/// expired, not revoked); unless the new digest is such a waiting successor (a promotion),
/// the successors still waiting to become the standard key no longer will; and the new
/// digest becomes a key, if it is not one yet.
fn rotation() -> String {
    let unless_its_successor = "AND NOT EXISTS (SELECT 1 FROM api_keys s \
                                WHERE s.id = api_keys.rolled_to AND s.digest = NEW.secret_digest)";
    let unsealed = "UPDATE api_keys SET sealed = NULL WHERE shop_id = NEW.id AND sealed IS NOT NULL \
                    AND NOT EXISTS (SELECT 1 FROM api_keys n WHERE n.digest = NEW.secret_digest AND n.sealed IS NOT NULL)";
    format!("{REVOKE} {unless_its_successor}; {unsealed}; {}", successor(ID, true))
}

/// PostgreSQL's trigger function of migration 51, doing `rotation` when a digest changes.
fn function(rotation: &str) -> String {
    let first = "INSERT INTO api_keys (id, shop_id, name, prefix, digest, created_by, created_at) \
                 VALUES ('key_' || substr(md5(random()::text || NEW.id::text), 1, 16), NEW.id, 'Secret key', \
                 NULL, NEW.secret_digest, 'paydesk', NEW.created_at) ON CONFLICT (digest) DO NOTHING";
    let rotation = rotation.replace(ID, PG_ID);
    format!(
        "CREATE OR REPLACE FUNCTION paydesk_api_keys_of_shops() RETURNS trigger AS $$ BEGIN \
           IF TG_OP = 'INSERT' THEN {first}; \
           ELSIF OLD.secret_digest <> NEW.secret_digest THEN {rotation}; \
           END IF; \
           RETURN NULL; \
         END $$ LANGUAGE plpgsql"
    )
}

/// SQLite's rotation trigger of migration 51, doing `rotation`.
fn rotations(rotation: &str) -> String {
    let rotation = rotation.replace(ID, SQLITE_ID);
    format!(
        "CREATE TRIGGER api_keys_of_rotations AFTER UPDATE OF secret_digest ON shops \
         WHEN OLD.secret_digest <> NEW.secret_digest BEGIN {rotation}; END"
    )
}
