//! An SQLite snapshot: `VACUUM INTO` a consistent copy while the database serves, then check
//! the copy on its own.

use std::path::Path;
use std::time::Instant;

use sea_orm::DatabaseConnection;

use super::files;
use super::{Copied, Problem};
use crate::db::backup as q;

/// The copy's name inside a snapshot.
pub const FILE: &str = "paydesk.db";

/// Copies `db` into `partial/paydesk.db` and checks the copy.
pub(super) async fn copy(db: &DatabaseConnection, partial: &Path, deadline: Instant) -> Result<Copied, Problem> {
    let path = partial.join(FILE);
    q::vacuum_into(db, &path, deadline).await?;
    files::private(&path)?;
    let (check, migrations, tables, secret) = inspect(&path, deadline).await?;
    if check != "ok" {
        return Err(Problem(format!("the copy failed SQLite's integrity check: {}", check.replace('\n', "; "))));
    }
    Ok(Copied { file: FILE, check, migrations, tables, pg_schema: None, secret })
}

/// What the SQLite file at `path` holds: its integrity check, migrations, rows per table and
/// a sealed secret.
pub(super) async fn inspect(
    path: &Path,
    deadline: Instant,
) -> Result<(String, Vec<String>, std::collections::BTreeMap<String, i64>, Option<(String, String)>), Problem> {
    let copy = q::open_copy(path, deadline).await?;
    let read = async {
        let check = q::integrity_check(&copy).await?;
        Ok::<_, sea_orm::DbErr>((
            check,
            crate::db::schema::migrations(&copy).await?,
            q::counts(&copy).await?,
            q::sealed_secret(&copy).await?,
        ))
    }
    .await;
    copy.close().await.ok();
    Ok(read?)
}
