//! The audit trail's upkeep: every instance seals the records waiting to be chained every
//! 50 ms ([`start`]; on SQLite, whose changes chain their own records, only those an older
//! paydesk left waiting); a check reads each shop's chain in batches, oldest first, and
//! compares it with the shop's head, so a record changed, removed, slipped in, or cut off the
//! end shows.

use sea_orm::DbErr;
use serde::Serialize;

use crate::db;
use crate::domain::audit::{self, Broken};
use crate::web::state::AppState;

/// What a check of one shop's chain found.
#[derive(Debug, Clone, Serialize)]
pub struct Checked {
    pub shop_id: i64,
    /// The records checked (those kept after pruning).
    pub records: u64,
    /// The number and hash of the newest record, for an operator to note elsewhere.
    pub head_seq: i64,
    pub head_hash: String,
    /// The first record found wrong, and how; `None` when the chain holds.
    pub broken: Option<String>,
}

/// How often an instance seals the records written since (docs/dashboard.md promises it
/// within a second). Often, so that each seal is short: on PostgreSQL a quarter second's
/// records, sealed at once, held a core in bursts that the writers' p99 showed.
const SEAL_PAUSE: std::time::Duration = std::time::Duration::from_millis(50);

/// Runs the sealer of this instance until it stops.
pub fn start(state: AppState) -> tokio::task::JoinHandle<()> {
    crate::services::worker::every(state, SEAL_PAUSE, "sealing the audit trail", |state| async move {
        Ok(db::audit::seal_all(&state.db).await? as usize)
    })
}

/// How many records are read at a time.
const BATCH: u64 = 1000;

/// Checks the chain of `shop_id` (see the module's text), its waiting records sealed first.
pub async fn verify(db: &sea_orm::DatabaseConnection, shop_id: i64) -> Result<Checked, DbErr> {
    db::audit::seal(db, shop_id).await?;
    let (head_seq, head_hash) = db::audit::head(db, shop_id).await?.unwrap_or((0, String::new()));
    let mut checked = Checked { shop_id, records: 0, head_seq, head_hash, broken: None };
    let mut last: Option<audit::Record> = None;
    loop {
        let after = last.as_ref().map_or(0, |r| r.seq);
        let batch = db::audit::chain_from(db, shop_id, after, BATCH).await?;
        if batch.is_empty() {
            break;
        }
        // Each batch is checked with the record before it, so the link between batches is too.
        let with_last: Vec<audit::Record> = last.iter().cloned().chain(batch.iter().cloned()).collect();
        if let Err(broken) = audit::verify(&with_last) {
            checked.broken = Some(describe(broken));
            return Ok(checked);
        }
        checked.records += batch.len() as u64;
        last = batch.last().cloned();
    }
    let ends_at_head = match &last {
        Some(r) => r.seq == checked.head_seq && r.hash == checked.head_hash,
        // Everything older than the retention may have been pruned.
        None => true,
    };
    if !ends_at_head {
        checked.broken = Some(format!("the newest records up to number {} are missing", checked.head_seq));
    }
    Ok(checked)
}

fn describe(broken: Broken) -> String {
    match broken {
        Broken::Altered { seq } => format!("record number {seq} was changed after it was written"),
        Broken::Unlinked { seq } => format!("record number {seq} does not follow the one before it"),
    }
}

/// Checks every shop's chain (or `only` one).
pub async fn verify_all(db: &sea_orm::DatabaseConnection, only: Option<i64>) -> Result<Vec<Checked>, DbErr> {
    let shops = match only {
        Some(shop) => vec![shop],
        None => {
            db::audit::seal_all(db).await?;
            db::audit::shops(db).await?
        }
    };
    let mut all = Vec::new();
    for shop in shops {
        all.push(verify(db, shop).await?);
    }
    Ok(all)
}
