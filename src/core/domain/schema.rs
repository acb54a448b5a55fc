//! Where a database's schema stands against the migrations a paydesk knows.

/// A database's migrations compared with this paydesk's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Standing {
    /// The newest migration both know; `None` for an empty database.
    pub version: Option<String>,
    /// Known migrations the database has not had, oldest first.
    pub pending: Vec<String>,
    /// Migrations the database has that this paydesk does not know: a newer paydesk's.
    pub unknown: Vec<String>,
    /// The newest migration this paydesk knows.
    pub newest_known: Option<String>,
}

impl Standing {
    /// Compares the database's `applied` migrations with the `known` ones (both by name).
    pub fn of(known: &[String], applied: &[String]) -> Standing {
        let pending = known.iter().filter(|k| !applied.contains(k)).cloned().collect();
        let unknown = applied.iter().filter(|a| !known.contains(a)).cloned().collect();
        let version = known.iter().rev().find(|k| applied.contains(k)).cloned();
        Standing { version, pending, unknown, newest_known: known.last().cloned() }
    }

    /// The one line that stops this paydesk when a newer one migrated the database.
    pub fn newer(&self) -> Option<String> {
        let newest = self.unknown.iter().max()?;
        let knows = self.newest_known.as_deref().unwrap_or("none");
        Some(format!(
            "the database's schema is newer than this paydesk {} (the database has {newest}; this paydesk knows \
             up to {knows}): run the paydesk that migrated it, or restore the snapshot taken before that upgrade",
            env!("CARGO_PKG_VERSION")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_database_is_behind_current_or_newer() {
        let known = names(&["m1", "m2", "m3"]);
        let behind = Standing::of(&known, &names(&["m1"]));
        assert_eq!((behind.version.as_deref(), behind.pending.clone()), (Some("m1"), names(&["m2", "m3"])));
        assert_eq!(behind.newer(), None);
        let empty = Standing::of(&known, &[]);
        assert_eq!((empty.version, empty.pending.len()), (None, 3));
        let current = Standing::of(&known, &known);
        assert!(current.pending.is_empty() && current.newer().is_none());
        let newer = Standing::of(&known, &names(&["m1", "m2", "m3", "m4", "m5"]));
        assert_eq!(newer.unknown, names(&["m4", "m5"]));
        let line = newer.newer().unwrap();
        assert!(line.contains("has m5") && line.contains("up to m3") && !line.contains('\n'), "{line}");
    }
}
