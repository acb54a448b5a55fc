//! The schema's version: the dry run, a paydesk older than its database, and migrations that
//! only add.

use super::*;

db_tests! {
    async fn a_paydesk_older_than_its_database_refuses_it_with_one_line(app) {
        let future = "m20991231_000099_from_a_newer_paydesk";
        let sql = format!("INSERT INTO seaql_migrations (version, applied_at) VALUES ('{future}', 0)");
        app.db.execute_unprepared(&sql).await.unwrap();
        for args in [&["migrate"][..], &["serve"], &["migrate", "--dry-run"], &["backup", "--to", "/nonexistent"]] {
            let said = refusal(&crate::cli::output(command(&app.database_url).env("PAYDESK_LISTEN", "127.0.0.1:0").args(args)).await);
            assert!(said.contains("newer than this paydesk") && said.contains(future), "{args:?}: {said}");
        }
    }

}

backend_tests! {
    async fn migrate_dry_run_prints_the_pending_sql_and_changes_nothing_and_migrating_takes_a_snapshot_first(backend) {
        use migration::MigratorTrait;
        let dir = tempfile::tempdir().unwrap();
        let url = match backend {
            Backend::Sqlite => format!("sqlite://{}?mode=rwc", dir.path().join("paydesk.db").display()),
            Backend::Postgres => postgres_schema().await,
        };
        let known = paydesk::db::schema::known();
        let db = paydesk::db::connect(&url, 1).await.unwrap();
        // A shop made by this paydesk, then its migrations taken back to before the one that
        // marks how far SQLite's word indexes go (000044), and those after it.
        migration::Migrator::up(&db, None).await.unwrap();
        let vault = paydesk::external::vault::Vault::load(&paydesk::config::KekSource::Given(
            paydesk::config::parse_kek(TEST_KEK).unwrap())).unwrap();
        paydesk::services::keys::create_shop(&db, &vault, "Old shop", None, Utc::now()).await.unwrap();
        let marks = known.iter().position(|name| name.ends_with("_search_behind")).unwrap();
        let back = known.len() - marks;
        migration::Migrator::down(&db, Some(back as u32)).await.unwrap();
        let at = |db| async move { paydesk::db::schema::standing(db).await.unwrap() };
        assert_eq!(at(&db).await.pending, known[marks..].to_vec());

        let output = pd(&url, &["migrate", "--dry-run"]).await;
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let review = String::from_utf8(output.stdout).unwrap();
        assert!(review.contains(&format!("the database is at {}", known[marks - 1])), "{review}");
        for pending in &known[marks..] {
            assert!(review.contains(&format!("-- {pending} (ran in")), "{review}");
        }
        // On SQLite, 000044 drops the triggers that indexed a row's words at its insert, and
        // marks how far each index goes instead (on PostgreSQL it does nothing).
        if backend == Backend::Sqlite {
            assert!(review.contains("search_marks"), "{review}");
        }
        assert!(!review.lines().any(|l| l.to_lowercase().starts_with("select ")), "reads are left out: {review}");
        assert_eq!(at(&db).await.pending.len(), back, "the dry run changed nothing");
        let trigger = "SELECT name FROM sqlite_master WHERE name = 'products_search_insert'";
        let found = || db.query_all(sea_orm::Statement::from_string(db.get_database_backend(), trigger));
        if backend == Backend::Sqlite {
            assert_eq!(found().await.unwrap().len(), 1, "the dry run dropped nothing");
        }

        let snapshots = dir.path().join("snapshots");
        let output = command(&url).env("PAYDESK_BACKUP_DIR", &snapshots).arg("migrate").output().unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        assert!(at(&db).await.pending.is_empty());
        if backend == Backend::Sqlite {
            assert!(found().await.unwrap().is_empty(), "migrating dropped it");
        }
        let taken = paydesk::services::backup::list(&snapshots);
        match backend {
            Backend::Sqlite => {
                assert_eq!(taken.len(), 1, "a snapshot before migrating");
                let manifest = &taken[0].1;
                assert_eq!(manifest.reason, paydesk::domain::backup::Reason::BeforeMigrating);
                assert_eq!(manifest.schema.as_ref(), Some(&known[marks - 1]));
                assert_eq!(manifest.tables["shops"], 1);
            }
            Backend::Postgres => assert!(taken.is_empty(), "PostgreSQL's snapshots are the operator's"),
        }
        let output = pd(&url, &["migrate", "--dry-run"]).await;
        assert!(String::from_utf8_lossy(&output.stdout).contains("no migration is pending"));
        db.close().await.ok();
    }

}

/// docs/backups.md promises that every release can be upgraded instance by instance: a
/// migration's `up` only adds (tables, columns with a default or none, indexes, triggers,
/// rows), so that the version before keeps working on the migrated schema.
#[test]
fn migrations_only_add_so_that_instances_upgrade_one_at_a_time() {
    const TAKES_AWAY: [&str; 8] = [
        "drop_table(",
        "drop_column(",
        "rename_column(",
        "modify_column(",
        "rename_table(",
        "DROP TABLE",
        "DROP COLUMN",
        "RENAME",
    ];
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let listed = std::fs::read_to_string(root.join("docs/backups.md")).unwrap();
    let dir = root.join("migration/src");
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with('m') {
            continue;
        }
        checked += 1;
        if listed.contains(&format!("| `{}` |", name.trim_end_matches(".rs"))) {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).unwrap();
        let up = text.split("async fn up").nth(1).expect("an up").split("async fn down").next().unwrap();
        for word in TAKES_AWAY {
            assert!(
                !up.contains(word),
                "{name}: its up takes away ({word}); say in docs/backups.md that it needs every instance stopped"
            );
        }
    }
    assert_eq!(checked, paydesk::db::schema::known().len());
}
