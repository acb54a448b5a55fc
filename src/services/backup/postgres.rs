//! A PostgreSQL snapshot: `pg_dump` of the schema paydesk uses, in custom format, reading
//! the same exported snapshot as the transaction that counts its rows.

use std::path::Path;
use std::time::Instant;

use sea_orm::DatabaseConnection;

use super::files;
use super::{Copied, Problem};
use crate::db::backup as q;

/// The dump's name inside a snapshot.
pub const FILE: &str = "paydesk.dump";

/// Dumps `db`'s schema into `partial/paydesk.dump` and checks that `pg_restore` reads it.
pub(super) async fn dump(
    db: &DatabaseConnection,
    database_url: &str,
    partial: &Path,
    deadline: Instant,
) -> Result<Copied, Problem> {
    let path = partial.join(FILE);
    let (txn, snapshot) = q::export_snapshot(db).await?;
    let schema = q::current_schema(&txn).await?;
    let (migrations, tables, secret) =
        (crate::db::schema::migrations(&txn).await?, q::counts(&txn).await?, q::sealed_secret(&txn).await?);
    let args = vec![
        "--format=custom".into(),
        format!("--snapshot={snapshot}"),
        format!("--schema=\"{}\"", schema.replace('"', "\"\"")),
        "--no-owner".into(),
        "--no-privileges".into(),
        format!("--file={}", path.display()),
        format!("--dbname={database_url}"),
    ];
    let dumped = files::run("pg_dump", args, Some(deadline)).await;
    txn.commit().await?;
    dumped?;
    files::private(&path)?;
    files::run("pg_restore", vec!["--list".into(), path.display().to_string()], Some(deadline)).await?;
    Ok(Copied {
        file: FILE,
        check: "pg_restore --list: ok".into(),
        migrations,
        tables,
        pg_schema: Some(schema),
        secret,
    })
}
