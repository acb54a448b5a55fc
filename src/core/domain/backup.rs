//! Snapshots of the database: what a snapshot's manifest records, how snapshots are named,
//! which are pruned, and a key's fingerprint.
//!
//! A snapshot is a folder `paydesk-20261128T170000Z/` holding the database's copy, its
//! `manifest.json` and, unless the operator keeps it apart, the key file. It is written under
//! a temporary name and renamed whole: a folder with that name is complete.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The version of the manifest's format.
pub const FORMAT: u32 = 1;
/// The manifest's file name inside a snapshot.
pub const MANIFEST: &str = "manifest.json";
/// The start of every snapshot's folder name.
pub const PREFIX: &str = "paydesk-";

/// Why a snapshot was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// `paydesk backup`: kept until the operator deletes it.
    Manual,
    /// The schedule (`PAYDESK_BACKUP_HOURS`): the newest `PAYDESK_BACKUP_KEEP` are kept.
    Scheduled,
    /// Before migrating the database: kept like scheduled ones.
    BeforeMigrating,
}

/// Which database a snapshot is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Engine {
    /// An SQLite file, copied by `VACUUM INTO`.
    Sqlite,
    /// A PostgreSQL schema, dumped by `pg_dump` (custom format).
    Postgres,
}

/// What a snapshot holds, written last: a snapshot is checked against it before a restore.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`FORMAT`].
    pub format: u32,
    /// The paydesk version that took it.
    pub paydesk: String,
    /// When the copy's consistent view of the database was taken.
    pub taken_at: DateTime<Utc>,
    pub reason: Reason,
    pub engine: Engine,
    /// The newest migration the database had; `None` for an empty one.
    pub schema: Option<String>,
    /// How many migrations it had.
    pub migrations: usize,
    /// The PostgreSQL schema dumped (`public` unless the URL chose another).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pg_schema: Option<String>,
    /// The database's copy inside the snapshot: `paydesk.db` or `paydesk.dump`.
    pub file: String,
    pub bytes: u64,
    /// SHA-256 of the copy, hex.
    pub sha256: String,
    /// What checked the copy: SQLite's `PRAGMA integrity_check` answer, or `pg_restore --list`.
    pub check: String,
    /// Rows per table in the copy.
    pub tables: BTreeMap<String, i64>,
    pub key: KeyRecord,
}

/// The key-encryption key a snapshot's sealed secrets open with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeyRecord {
    /// [`fingerprint`] of the key.
    pub fingerprint: String,
    /// The key file's name inside the snapshot; `None` when it was written apart.
    pub file: Option<String>,
    /// A sealed secret of the database and what it is sealed for, to try a key on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<Probe>,
}

/// A sealed secret copied from the database, to show that a key opens the snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Probe {
    /// What the secret is sealed for (its record).
    pub context: String,
    pub sealed: String,
}

/// A key's fingerprint: 16 bytes of SHA-256 over a label and the key, hex. It names a key
/// without giving it away.
pub fn fingerprint(key: &[u8; 32]) -> String {
    let digest = Sha256::new().chain_update(b"paydesk key-encryption key\0").chain_update(key).finalize();
    super::ids::hex(&digest[..16])
}

/// The folder name of a snapshot taken at `at`: `paydesk-20261128T170000Z`, with `-2`, `-3`
/// … after it for the `nth` taken in the same second.
pub fn name(at: DateTime<Utc>, nth: u32) -> String {
    let stamp = at.format("%Y%m%dT%H%M%SZ");
    match nth {
        0 | 1 => format!("{PREFIX}{stamp}"),
        n => format!("{PREFIX}{stamp}-{n}"),
    }
}

/// Of the snapshots found (name, manifest), the names to delete so that only the newest
/// `keep` of those taken on schedule or before migrating stay. Manual ones always stay.
pub fn to_prune(found: &[(String, Manifest)], keep: usize) -> Vec<String> {
    let mut kept: Vec<&(String, Manifest)> = found.iter().filter(|(_, m)| m.reason != Reason::Manual).collect();
    kept.sort_by(|a, b| b.1.taken_at.cmp(&a.1.taken_at).then_with(|| b.0.cmp(&a.0)));
    kept.into_iter().skip(keep).map(|(name, _)| name.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(reason: Reason, minute: u32) -> Manifest {
        Manifest {
            format: FORMAT,
            paydesk: "0.1.0".into(),
            taken_at: DateTime::parse_from_rfc3339(&format!("2026-11-28T17:{minute:02}:00Z")).unwrap().to_utc(),
            reason,
            engine: Engine::Sqlite,
            schema: Some("m1".into()),
            migrations: 1,
            pg_schema: None,
            file: "paydesk.db".into(),
            bytes: 1,
            sha256: String::new(),
            check: "ok".into(),
            tables: BTreeMap::new(),
            key: KeyRecord { fingerprint: String::new(), file: None, probe: None },
        }
    }

    #[test]
    fn only_the_newest_scheduled_and_premigration_snapshots_are_kept() {
        let found: Vec<(String, Manifest)> = [
            (Reason::Scheduled, 1),
            (Reason::Manual, 2),
            (Reason::BeforeMigrating, 3),
            (Reason::Scheduled, 4),
            (Reason::Manual, 0),
        ]
        .into_iter()
        .map(|(reason, minute)| (format!("s{minute}"), manifest(reason, minute)))
        .collect();
        assert_eq!(to_prune(&found, 2), vec!["s1".to_string()]);
        assert_eq!(to_prune(&found, 0), vec!["s4".to_string(), "s3".into(), "s1".into()]);
        assert!(to_prune(&found, 5).is_empty());
    }

    #[test]
    fn names_sort_by_time_and_a_key_is_named_not_given_away() {
        let at = DateTime::parse_from_rfc3339("2026-11-28T17:05:09Z").unwrap().to_utc();
        assert_eq!(name(at, 0), "paydesk-20261128T170509Z");
        assert_eq!(name(at, 2), "paydesk-20261128T170509Z-2");
        let key = [7u8; 32];
        assert_eq!(fingerprint(&key).len(), 32);
        assert_ne!(fingerprint(&key), fingerprint(&[8u8; 32]));
        assert!(!fingerprint(&key).contains(&crate::domain::ids::hex(&key[..4])));
    }
}
