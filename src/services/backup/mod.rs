//! Snapshots of the database and restoring one (`paydesk backup`, `paydesk restore`, the
//! schedule, and the snapshot before a migration).
//!
//! A snapshot is taken into a hidden folder `.paydesk-….partial-…`, checked, given its
//! manifest last, and only then renamed to `paydesk-20261128T170000Z`: a snapshot killed
//! midway leaves a hidden partial folder (deleted by a later snapshot once nothing holds it),
//! never one that looks complete. A snapshot stops at its bound, `PAYDESK_BACKUP_TIMEOUT_MINUTES`.

mod files;
mod postgres;
mod restore;
mod sqlite;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use chrono::{DateTime, TimeDelta, Utc};
use sea_orm::{ConnectionTrait, DatabaseBackend, DatabaseConnection};

use crate::config::Config;
use crate::domain::backup::{self as plan, Engine, KeyRecord, MANIFEST, Manifest, Probe, Reason};
use crate::external::vault::Vault;
use crate::web::state::AppState;

pub use restore::restore;

/// Why a snapshot or a restore could not be made, in one line.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct Problem(pub String);

impl From<sea_orm::DbErr> for Problem {
    fn from(e: sea_orm::DbErr) -> Self {
        Problem(format!("the database: {e}"))
    }
}

/// Where a snapshot goes.
#[derive(Debug, Clone)]
pub struct Options {
    /// The folder of snapshots.
    pub dir: PathBuf,
    /// Where its key file goes instead of inside it.
    pub key_dir: Option<PathBuf>,
    pub reason: Reason,
    /// How long it may take (`PAYDESK_BACKUP_TIMEOUT_MINUTES`): past it, it stops and keeps
    /// nothing.
    pub timeout: Duration,
}

impl Options {
    /// A snapshot into `dir` (its key into `key_dir`) for `reason`, bounded as `backups` says.
    pub fn new(dir: PathBuf, key_dir: Option<PathBuf>, reason: Reason, backups: &crate::config::Backups) -> Options {
        Options { dir, key_dir, reason, timeout: backups.timeout }
    }
}

/// How long a snapshot's statements and dump have, past its bound, to stop themselves.
const STOPPING: Duration = Duration::from_secs(10);

/// The problem of a snapshot or restore stopped at its bound.
fn timed_out(timeout: Duration) -> Problem {
    let minutes = timeout.as_secs() / 60;
    let bound = if minutes > 0 { format!("{minutes} minutes") } else { format!("{} seconds", timeout.as_secs()) };
    Problem(format!(
        "it did not finish within {bound} (PAYDESK_BACKUP_TIMEOUT_MINUTES) and was stopped; nothing was kept"
    ))
}

/// A snapshot taken.
#[derive(Debug)]
pub struct Taken {
    /// Its folder.
    pub path: PathBuf,
    /// Its key file.
    pub key: PathBuf,
    pub manifest: Manifest,
}

/// What an engine's copy reports: the copy's file inside the snapshot folder, its check, and
/// what it holds.
struct Copied {
    file: &'static str,
    check: String,
    migrations: Vec<String>,
    tables: std::collections::BTreeMap<String, i64>,
    pg_schema: Option<String>,
    /// A shop's sealed secret: (digest, sealed).
    secret: Option<(String, String)>,
}

/// A partial snapshot older than this is left over, even when it cannot say that nothing
/// holds it (a file system without locks).
const LEFTOVER: TimeDelta = TimeDelta::hours(6);

/// A partial snapshot older than this that no snapshot holds (its lock) is left over.
const UNHELD: Duration = Duration::from_secs(60);

/// Takes a snapshot of `db` (at `database_url`) whose secrets open with `key`, as of `now`.
pub async fn take(
    db: &DatabaseConnection,
    database_url: &str,
    key: &[u8; 32],
    options: &Options,
    now: DateTime<Utc>,
) -> Result<Taken, Problem> {
    let deadline = Instant::now() + options.timeout;
    files::make_dir(&options.dir)?;
    remove_leftovers(&options.dir);
    let partial = options.dir.join(format!(".{}.partial-{}", plan::name(now, 0), crate::domain::ids::random_hex(4)));
    files::make_dir(&partial)?;
    // Held until this snapshot ends, however it ends: a partial folder nothing holds is left over.
    let held = files::hold(&partial)?;
    // SQLite's statements stop themselves at the deadline, and a dump is killed at it: they are
    // waited for, so that nothing writes into the folder once it is removed. The outer bound,
    // a little later, is for a disk that does not answer.
    let bounded = tokio::time::timeout(
        options.timeout + STOPPING,
        finish(db, database_url, key, options, now, &partial, deadline),
    );
    let taken = match bounded.await {
        Ok(taken) if taken.is_ok() || Instant::now() < deadline => taken,
        _ => Err(timed_out(options.timeout)),
    };
    if taken.is_err() {
        std::fs::remove_dir_all(&partial).ok();
    }
    drop(held);
    taken
}

async fn finish(
    db: &DatabaseConnection,
    database_url: &str,
    key: &[u8; 32],
    options: &Options,
    now: DateTime<Utc>,
    partial: &Path,
    deadline: Instant,
) -> Result<Taken, Problem> {
    let copied = match db.get_database_backend() {
        DatabaseBackend::Postgres => postgres::dump(db, database_url, partial, deadline).await?,
        _ => sqlite::copy(db, partial, deadline).await?,
    };
    let probe =
        copied.secret.map(|(digest, sealed)| Probe { context: crate::services::keys::secret_context(&digest), sealed });
    if let Some(probe) = &probe
        && Vault::new(key).open(&probe.sealed, &probe.context).is_err()
    {
        return Err(Problem(
            "the key-encryption key paydesk was given does not open this database's secrets: a snapshot with it \
             could not be restored"
                .into(),
        ));
    }
    let (sha256, bytes) = files::sha256(&partial.join(copied.file))?;
    let name = free_name(&options.dir, now);
    let key_path = match &options.key_dir {
        Some(dir) => {
            files::make_dir(dir)?;
            dir.join(format!("{name}.kek"))
        }
        None => partial.join(KEY_FILE),
    };
    crate::external::vault::write_key_file(&key_path, key).map_err(files::io(&key_path, "write the key file"))?;
    let manifest = Manifest {
        format: plan::FORMAT,
        paydesk: env!("CARGO_PKG_VERSION").into(),
        taken_at: now,
        reason: options.reason,
        engine: if copied.pg_schema.is_some() { Engine::Postgres } else { Engine::Sqlite },
        schema: copied.migrations.last().cloned(),
        migrations: copied.migrations.len(),
        pg_schema: copied.pg_schema,
        file: copied.file.into(),
        bytes,
        sha256,
        check: copied.check,
        tables: copied.tables,
        key: KeyRecord {
            fingerprint: plan::fingerprint(key),
            file: options.key_dir.is_none().then(|| KEY_FILE.to_string()),
            probe,
        },
    };
    let text = serde_json::to_vec_pretty(&manifest).map_err(|e| Problem(e.to_string()))?;
    files::write_new(&partial.join(MANIFEST), &text)?;
    files::sync(partial)?;
    let path = options.dir.join(&name);
    let key = if options.key_dir.is_some() { key_path } else { path.join(KEY_FILE) };
    files::rename(partial, &path)?;
    Ok(Taken { path, key, manifest })
}

/// The key file's name inside a snapshot.
pub const KEY_FILE: &str = "paydesk.kek";

/// The first free snapshot name of `now` in `dir`.
fn free_name(dir: &Path, now: DateTime<Utc>) -> String {
    (1..).map(|nth| plan::name(now, nth)).find(|name| !dir.join(name).exists()).expect("a free name")
}

/// Deletes partial snapshots left by ones that were killed or failed: those no snapshot holds
/// any more (after a minute, the time a new one takes to hold its own), and any older than
/// [`LEFTOVER`].
fn remove_leftovers(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !(name.starts_with(&format!(".{}", plan::PREFIX)) && name.contains(".partial-")) {
            continue;
        }
        let age = entry.metadata().and_then(|m| m.modified()).ok().and_then(|at| at.elapsed().ok()).unwrap_or_default();
        if age > LEFTOVER.to_std().unwrap_or_default() || (age > UNHELD && !files::held(&entry.path())) {
            std::fs::remove_dir_all(entry.path()).ok();
        }
    }
}

/// The complete snapshots in `dir` (folders with a readable manifest), oldest first.
pub fn list(dir: &Path) -> Vec<(String, Manifest)> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut found: Vec<(String, Manifest)> = entries
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let text = std::fs::read(entry.path().join(MANIFEST)).ok()?;
            Some((name, serde_json::from_slice(&text).ok()?)).filter(|(name, _)| name.starts_with(plan::PREFIX))
        })
        .collect();
    found.sort_by(|a, b| a.1.taken_at.cmp(&b.1.taken_at).then_with(|| a.0.cmp(&b.0)));
    found
}

/// Deletes the scheduled and pre-migration snapshots in `dir` beyond the newest `keep` (and
/// the key files they keep apart in `key_dir`); returns how many.
pub fn prune(dir: &Path, key_dir: Option<&Path>, keep: usize) -> usize {
    let gone = plan::to_prune(&list(dir), keep);
    for name in &gone {
        std::fs::remove_dir_all(dir.join(name)).ok();
        if let Some(key_dir) = key_dir {
            std::fs::remove_file(key_dir.join(format!("{name}.kek"))).ok();
        }
    }
    gone.len()
}

/// The job of scheduled snapshots, taken by one instance at a time.
const JOB: &str = "backup";

/// Takes the scheduled snapshot when it is due and no other instance is taking it, then
/// prunes the old ones; `None` when there was nothing to do.
pub async fn scheduled(state: &AppState, now: DateTime<Utc>) -> Result<Option<Taken>, Problem> {
    let backups = &state.config.backups;
    let (Some(dir), Some(every)) = (&backups.dir, backups.every) else { return Ok(None) };
    let holder = crate::domain::ids::random_hex(8);
    // An hour's lease: an instance killed while copying delays the snapshot by that much.
    if !crate::db::jobs::take(&state.db, JOB, &holder, now - every, now + TimeDelta::hours(1), now).await? {
        return Ok(None);
    }
    let options = Options::new(dir.clone(), backups.key_dir.clone(), Reason::Scheduled, backups);
    let key = crate::external::vault::snapshot_key(&state.config.kek).map_err(Problem)?;
    match take(&state.db, &state.config.database_url, &key, &options, now).await {
        Ok(taken) => {
            crate::db::jobs::done(&state.db, JOB, &holder, now).await?;
            prune(dir, backups.key_dir.as_deref(), backups.keep);
            Ok(Some(taken))
        }
        Err(problem) => {
            crate::db::jobs::retry_at(&state.db, JOB, &holder, now + TimeDelta::minutes(10)).await?;
            Err(problem)
        }
    }
}

/// Refuses a database whose sealed secrets would be sealed under a new key: its key file is
/// missing (paydesk would make a new one). A key that is there but does not open them is
/// logged as an error: every use of a sealed secret will fail.
pub async fn check_key(db: &DatabaseConnection, config: &Config) -> Result<(), Problem> {
    let Some((digest, sealed)) = crate::db::backup::sealed_secret(db).await? else { return Ok(()) };
    if let crate::config::KekSource::File(path) = &config.kek
        && !path.exists()
    {
        return Err(Problem(format!(
            "the key file {} is missing, and this database has secrets sealed under it: put the database's key \
             back there (a snapshot's paydesk.kek); only if no copy exists, make a new one there yourself, knowing \
             that the sealed secrets are lost (docs/backups.md)",
            path.display()
        )));
    }
    let vault = Vault::load(&config.kek).map_err(Problem)?;
    if vault.open(&sealed, &crate::services::keys::secret_context(&digest)).is_err() {
        tracing::error!("the key-encryption key does not open this database's sealed secrets: put its key back");
    }
    Ok(())
}

/// The snapshot an SQLite database gets before its migrations are applied (kept like the
/// scheduled ones); nothing for PostgreSQL or an in-memory database.
pub async fn before_migrating(db: &DatabaseConnection, config: &Config, now: DateTime<Utc>) -> Result<(), Problem> {
    let Some(dir) = &config.backups.dir else { return Ok(()) };
    if db.get_database_backend() != DatabaseBackend::Sqlite {
        return Ok(());
    }
    let key = crate::external::vault::snapshot_key(&config.kek).map_err(Problem)?;
    let options = Options::new(dir.clone(), config.backups.key_dir.clone(), Reason::BeforeMigrating, &config.backups);
    let taken = take(db, &config.database_url, &key, &options, now).await?;
    tracing::info!(snapshot = %taken.path.display(), "took a snapshot before migrating");
    prune(dir, config.backups.key_dir.as_deref(), config.backups.keep);
    Ok(())
}
