//! Snapshots of the database: where they go, where their key goes, how often they are taken
//! on schedule and how many are kept (`PAYDESK_BACKUP_*`).

use std::path::PathBuf;

use super::*;

/// Where and how often snapshots are taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backups {
    /// Where snapshots go; `None` (PostgreSQL without `PAYDESK_BACKUP_DIR`, an in-memory
    /// database): no scheduled snapshot, and `paydesk backup` needs `--to`.
    pub dir: Option<PathBuf>,
    /// Where snapshots' key files go; `None`: inside each snapshot.
    pub key_dir: Option<PathBuf>,
    /// Time between scheduled snapshots; `None`: none on schedule.
    pub every: Option<chrono::TimeDelta>,
    /// Scheduled and pre-migration snapshots kept (the newest).
    pub keep: usize,
    /// How long a snapshot may take: past it, it stops, keeps nothing and says so.
    pub timeout: std::time::Duration,
}

impl Backups {
    /// Reads the settings; an SQLite file's snapshots go to `FILE.backups` beside it unless
    /// `PAYDESK_BACKUP_DIR` says otherwise.
    pub(super) fn from_args(args: &ConfigArgs, database_url: &str) -> Result<Backups, ConfigError> {
        let dir = match args.backup_dir.as_deref().map(str::trim) {
            Some("") | None => {
                sqlite_file(database_url).map(|file| PathBuf::from(format!("{}.backups", file.display())))
            }
            Some(dir) => Some(PathBuf::from(dir)),
        };
        let key_dir = args.backup_key_dir.as_deref().map(str::trim).filter(|d| !d.is_empty()).map(PathBuf::from);
        let every = match args.backup_hours.as_deref().map(str::trim) {
            Some("off") => None,
            raw => Some(chrono::TimeDelta::hours(whole("PAYDESK_BACKUP_HOURS", raw, 24, 1..=8760)? as i64)),
        };
        let keep = whole("PAYDESK_BACKUP_KEEP", args.backup_keep.as_deref(), 7, 1..=1000)?;
        let minutes = whole("PAYDESK_BACKUP_TIMEOUT_MINUTES", args.backup_timeout_minutes.as_deref(), 30, 1..=1440)?;
        let timeout = std::time::Duration::from_secs(60 * minutes as u64);
        Ok(Backups { every: every.filter(|_| dir.is_some()), dir, key_dir, keep, timeout })
    }
}

/// The file of an SQLite URL; `None` for PostgreSQL and in-memory databases.
pub fn sqlite_file(database_url: &str) -> Option<PathBuf> {
    let rest = database_url.strip_prefix("sqlite://").or_else(|| database_url.strip_prefix("sqlite:"))?;
    let file = rest.split('?').next().unwrap_or("");
    if file.is_empty() || file.contains(":memory:") || rest.contains("mode=memory") {
        return None;
    }
    Some(PathBuf::from(file))
}
