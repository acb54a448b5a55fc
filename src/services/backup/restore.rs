//! Restoring a snapshot: check it whole (manifest, checksum, integrity, schema, and that its
//! key opens a sealed secret), refuse a database in use, set the database it replaces aside,
//! then put the copy in place.

use std::path::Path;

use chrono::{DateTime, Utc};
use sea_orm::DatabaseConnection;
use serde_json::{Value, json};

use super::{Problem, files, sqlite};
use crate::config::{Config, KekSource, sqlite_file};
use crate::db::backup as q;
use crate::domain::backup::{self as plan, Engine, MANIFEST, Manifest};
use crate::domain::schema::Standing;
use crate::external::vault::{self, Vault};

/// Restores the snapshot in the folder `snapshot` to the configured database, its key read
/// from `key_file` (default: the snapshot's own); says what it restored.
pub async fn restore(
    config: &Config,
    snapshot: &Path,
    key_file: Option<&Path>,
    now: DateTime<Utc>,
) -> Result<Value, Problem> {
    let manifest = read_manifest(snapshot)?;
    let wanted = if config.database_url.starts_with("sqlite:") { Engine::Sqlite } else { Engine::Postgres };
    if manifest.engine != wanted {
        return Err(Problem(format!(
            "{} is a snapshot of {:?}, and DATABASE_URL is {:?}: restore it to the same kind of database",
            snapshot.display(),
            manifest.engine,
            wanted
        )));
    }
    let file = snapshot.join(&manifest.file);
    let (sha256, bytes) = files::sha256(&file)?;
    if (sha256.as_str(), bytes) != (manifest.sha256.as_str(), manifest.bytes) {
        return Err(Problem(format!("{} is damaged: its checksum is not the manifest's", file.display())));
    }
    known_schema(&manifest.schema.iter().cloned().collect::<Vec<_>>())?;
    let key_path = match (key_file, &manifest.key.file) {
        (Some(path), _) => path.to_path_buf(),
        (None, Some(name)) => snapshot.join(name),
        (None, None) => {
            let name =
                snapshot.file_name().map_or_else(|| snapshot.display().to_string(), |n| n.to_string_lossy().into());
            return Err(Problem(format!(
                "this snapshot's key file was kept apart: give it with --key FILE (the file {name}.kek, where --key-to \
                 or PAYDESK_BACKUP_KEY_DIR put it)"
            )));
        }
    };
    let key = vault::read_key_file(&key_path).map_err(Problem)?;
    let not_its_key = || {
        Problem(format!(
            "{} is not the key this snapshot was taken with: its sealed secrets do not open with it; nothing was changed",
            key_path.display()
        ))
    };
    if plan::fingerprint(&key) != manifest.key.fingerprint {
        return Err(not_its_key());
    }
    let vault = Vault::new(&key);
    if let Some(probe) = &manifest.key.probe
        && vault.open(&probe.sealed, &probe.context).is_err()
    {
        return Err(not_its_key());
    }
    if let KekSource::Given(given) = &config.kek
        && given != &key
    {
        return Err(Problem(format!(
            "PAYDESK_KEY_ENCRYPTION_KEY is not this snapshot's key: set it to the key in {} (on every instance); \
             nothing was changed",
            key_path.display()
        )));
    }
    let done = match manifest.engine {
        Engine::Sqlite => to_sqlite(config, &manifest, &file, &key, &vault, now).await?,
        Engine::Postgres => to_postgres(config, &manifest, &file, now).await?,
    };
    Ok(json!({
        "restored": done.target,
        "snapshot": snapshot.display().to_string(),
        "taken_at": manifest.taken_at,
        "schema": manifest.schema,
        "rows": manifest.tables.values().sum::<i64>(),
        "tables": manifest.tables,
        "set_aside": done.set_aside,
        "key": done.key,
    }))
}

/// Where a restore went and what it set aside.
struct Done {
    target: String,
    set_aside: Vec<String>,
    key: String,
}

fn read_manifest(snapshot: &Path) -> Result<Manifest, Problem> {
    let path = snapshot.join(MANIFEST);
    let text = std::fs::read(&path).map_err(|_| {
        Problem(format!(
            "{} is not a complete snapshot: it has no {MANIFEST} (a snapshot killed midway never gets one)",
            snapshot.display()
        ))
    })?;
    let manifest: Manifest =
        serde_json::from_slice(&text).map_err(|e| Problem(format!("{} cannot be read: {e}", path.display())))?;
    if manifest.format > plan::FORMAT {
        return Err(Problem(format!(
            "{} is of a newer paydesk ({}): restore it with that one",
            path.display(),
            manifest.paydesk
        )));
    }
    Ok(manifest)
}

/// Refuses a snapshot whose schema a newer paydesk made.
fn known_schema(migrations: &[String]) -> Result<(), Problem> {
    match Standing::of(&crate::db::schema::known(), migrations).newer() {
        Some(line) => Err(Problem(format!("the snapshot: {line}"))),
        None => Ok(()),
    }
}

async fn to_sqlite(
    config: &Config,
    manifest: &Manifest,
    file: &Path,
    key: &[u8; 32],
    vault: &Vault,
    now: DateTime<Utc>,
) -> Result<Done, Problem> {
    let Some(target) = sqlite_file(&config.database_url) else {
        return Err(Problem("DATABASE_URL names no database file to restore to".into()));
    };
    let timeout = config.backups.timeout;
    let deadline = std::time::Instant::now() + timeout;
    let inspected = sqlite::inspect(file, deadline).await;
    let (check, migrations, tables, secret) =
        inspected.map_err(|e| if std::time::Instant::now() >= deadline { super::timed_out(timeout) } else { e })?;
    if check != "ok" {
        return Err(Problem(format!(
            "{} fails SQLite's integrity check: {}",
            file.display(),
            check.replace('\n', "; ")
        )));
    }
    if tables != manifest.tables {
        return Err(Problem(format!("{} does not hold the rows its manifest counts", file.display())));
    }
    known_schema(&migrations)?;
    if let Some((digest, sealed)) = secret
        && vault.open(&sealed, &crate::services::keys::secret_context(&digest)).is_err()
    {
        return Err(Problem("the key does not open the snapshot's sealed secrets; nothing was changed".into()));
    }
    if files::sqlite_in_use(&target)? {
        return Err(Problem(format!(
            "{} is in use (a paydesk or another program has it open): stop it, then restore; nothing was changed",
            target.display()
        )));
    }
    if let Some(parent) = target.parent().filter(|p| !p.as_os_str().is_empty()) {
        files::make_dir(parent)?;
    }
    // The copy first, beside the target: a disk too full for it fails with the target untouched.
    let restoring = files::with_suffix(&target, &format!(".restoring-{}", crate::domain::ids::random_hex(4)));
    let copied =
        std::fs::copy(file, &restoring).map_err(files::io(&restoring, "write")).and_then(|_| files::sync(&restoring));
    if let Err(problem) = copied {
        std::fs::remove_file(&restoring).ok();
        return Err(Problem(format!("{problem}; nothing was changed")));
    }
    let stamp = now.format("%Y%m%dT%H%M%SZ");
    let mut set_aside = Vec::new();
    for suffix in ["", "-wal", "-shm"] {
        let path = files::with_suffix(&target, suffix);
        if path.exists() {
            let aside = files::with_suffix(&target, &format!(".before-restore-{stamp}{suffix}"));
            files::rename(&path, &aside)?;
            set_aside.push(aside.display().to_string());
        }
    }
    let key_shown = match &config.kek {
        KekSource::File(path) => {
            if path.exists() && vault::read_key_file(path).ok().as_ref() != Some(key) {
                let aside = files::with_suffix(path, &format!(".before-restore-{stamp}"));
                files::rename(path, &aside)?;
                set_aside.push(aside.display().to_string());
            }
            if !path.exists() {
                vault::write_key_file(path, key).map_err(files::io(path, "write the key file"))?;
            }
            path.display().to_string()
        }
        _ => "PAYDESK_KEY_ENCRYPTION_KEY".into(),
    };
    files::rename(&restoring, &target)?;
    Ok(Done { target: target.display().to_string(), set_aside, key: key_shown })
}

async fn to_postgres(config: &Config, manifest: &Manifest, file: &Path, now: DateTime<Utc>) -> Result<Done, Problem> {
    files::run("pg_restore", vec!["--list".into(), file.display().to_string()], None).await?;
    let db = crate::db::connect(&config.database_url, 2).await?;
    let done = pg_restore(&db, config, manifest, file, now).await;
    db.close().await.ok();
    done
}

async fn pg_restore(
    db: &DatabaseConnection,
    config: &Config,
    manifest: &Manifest,
    file: &Path,
    now: DateTime<Utc>,
) -> Result<Done, Problem> {
    let schema = manifest.pg_schema.clone().ok_or_else(|| Problem("the manifest names no schema".into()))?;
    let current = q::search_schema(db).await?;
    if current.as_deref().is_some_and(|c| c != schema) {
        return Err(Problem(format!(
            "the snapshot is of the schema {schema}, and DATABASE_URL's is {}: restore to a URL whose search_path is {schema}",
            current.unwrap_or_default()
        )));
    }
    if q::served(db, &schema).await? {
        return Err(Problem(format!(
            "the schema {schema} is served by a running paydesk: stop every instance, then restore; nothing was changed"
        )));
    }
    let listed = files::run("pg_restore", vec!["--list".into(), file.display().to_string()], None).await?;
    let creates_schema = listed.lines().any(|line| line.contains(&format!(" SCHEMA - {schema} ")));
    let mut aside = None;
    let mut emptied = false;
    if current.is_some() {
        // An empty schema the dump makes again (a new database's `public`) goes; one that
        // holds anything is set aside.
        if q::tables(db).await?.is_empty() && creates_schema && q::drop_empty_schema(db, &schema).await.is_ok() {
            emptied = true;
        } else {
            let name = format!("{schema}_before_restore_{}", now.format("%Y%m%d%H%M%S"));
            q::rename_schema(db, &schema, &name).await?;
            aside = Some(name);
        }
    }
    let created = !creates_schema && q::search_schema(db).await?.is_none();
    if created {
        q::create_schema(db, &schema).await?;
    }
    let args = vec![
        "--single-transaction".into(),
        "--exit-on-error".into(),
        "--no-owner".into(),
        "--no-privileges".into(),
        format!("--dbname={}", config.database_url),
        file.display().to_string(),
    ];
    if let Err(problem) = files::run("pg_restore", args, None).await {
        if created {
            q::drop_empty_schema(db, &schema).await.ok();
        }
        if emptied {
            q::create_schema(db, &schema).await.ok();
        }
        if let Some(aside) = &aside {
            q::rename_schema(db, aside, &schema).await.ok();
        }
        return Err(Problem(format!("{problem}; nothing was changed")));
    }
    let restored = crate::db::connect(&config.database_url, 1).await?;
    let counts = q::counts(&restored).await;
    restored.close().await.ok();
    if counts? != manifest.tables {
        return Err(Problem("the restored schema does not hold the rows the manifest counts".into()));
    }
    let set_aside = aside.into_iter().map(|name| format!("schema {name}")).collect();
    Ok(Done { target: format!("schema {schema}"), set_aside, key: "PAYDESK_KEY_ENCRYPTION_KEY".into() })
}
