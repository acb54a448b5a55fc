//! Snapshots and restores (`paydesk backup`, `paydesk restore`, the schedule), the schema's
//! version (`paydesk migrate --dry-run`, a paydesk older than its database), and what a kill
//! in the middle of a snapshot or a migration leaves.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use chrono::{TimeDelta, Utc};
use paydesk::config::ConfigArgs;
use reqwest::StatusCode;
use sea_orm::ConnectionTrait;
use serde_json::{Value, json};
use sha2::Digest;

use crate::cli::paydesk;
use crate::helpers::*;
use crate::subscriptions::{clock, plan, subscribe};

/// `paydesk` over `database_url`, able to find `pg_dump` and `pg_restore`.
fn command(database_url: &str) -> Command {
    let mut command = paydesk(database_url);
    command.env("PATH", std::env::var("PATH").unwrap_or_default());
    command
}

/// Runs `paydesk ARGS` over `database_url`.
fn pd(database_url: &str, args: &[&str]) -> Output {
    command(database_url).args(args).output().unwrap()
}

/// The JSON line a command that succeeded printed.
fn printed(output: &Output) -> Value {
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The one line a command that failed said.
fn refusal(output: &Output) -> String {
    assert!(!output.status.success(), "refused: {}", String::from_utf8_lossy(&output.stdout));
    let said = String::from_utf8_lossy(&output.stderr).trim().to_string();
    assert_eq!(said.lines().count(), 1, "one line: {said}");
    said
}

/// A database nothing uses yet, of the same kind as `app`'s: a new SQLite file, or a new
/// PostgreSQL database whose search path names the same schema as `app`'s (so that a dump of
/// `app`'s schema restores there).
async fn fresh_target(app: &TestApp, dir: &Path) -> String {
    match app.backend {
        Backend::Sqlite => format!("sqlite://{}?mode=rwc", dir.join("restored/paydesk.db").display()),
        Backend::Postgres => spare_postgres(app).await,
    }
}

/// A new PostgreSQL database whose search path names `app`'s schema.
pub async fn spare_postgres(app: &TestApp) -> String {
    let mut url = new_postgres_database().await;
    url.set_query(url::Url::parse(&app.database_url).unwrap().query());
    url.to_string()
}

/// A new PostgreSQL database of the tests' server (those left by earlier runs are dropped
/// first, before any of this run is made).
pub async fn new_postgres_database() -> url::Url {
    static OLD_DROPPED: tokio::sync::OnceCell<()> = tokio::sync::OnceCell::const_new();
    let admin = paydesk::db::connect(&postgres_url(), 1).await.unwrap();
    OLD_DROPPED
        .get_or_init(|| async {
            let sql = "SELECT datname FROM pg_database WHERE datname LIKE 'paydesk_r_%'";
            let old = admin.query_all(sea_orm::Statement::from_string(admin.get_database_backend(), sql)).await;
            for row in old.unwrap_or_default() {
                let name: String = row.try_get("", "datname").unwrap();
                admin.execute_unprepared(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")).await.ok();
            }
        })
        .await;
    let name = format!("paydesk_r_{}", paydesk::domain::ids::random_hex(6));
    admin.execute_unprepared(&format!("CREATE DATABASE {name}")).await.unwrap();
    admin.close().await.ok();
    let mut url = url::Url::parse(&postgres_url()).unwrap();
    url.set_path(&format!("/{name}"));
    url
}

/// A shop with a little of everything: products, a paid and a refunded payment, customers,
/// subscriptions on a test clock (active and cancelled), a webhook endpoint (a sealed
/// secret) and the events all this made.
pub async fn fill(app: &TestApp, shop: &Shop) {
    let product = app.product(shop, &test_product_body()).await;
    let id = product["id"].as_str().unwrap();
    for _ in 0..2 {
        let page = app.pay(id, cards::SUCCESS, &[]).await;
        assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.html);
    }
    let (_, payments) = app.get(shop, "/payments").await;
    let paid = payments[0]["id"].as_str().unwrap();
    let (status, refund) = app.post(shop, &format!("/payments/{paid}/refund"), &json!({"amount": 300})).await;
    assert!(status.is_success(), "{refund}");
    let (status, _) = app.post(shop, "/customers", &customer_body()).await;
    assert_eq!(status, StatusCode::CREATED);
    let plan = plan(app, shop, json!({})).await;
    let clock = clock(app, shop, "2026-01-10T10:00:00Z").await;
    subscribe(app, shop, &plan, &clock, cards::SUCCESS).await;
    let ended = subscribe(app, shop, &plan, &clock, cards::SUCCESS).await;
    let (status, _) =
        app.post(shop, &format!("/subscriptions/{}/cancel", ended["id"].as_str().unwrap()), &json!({})).await;
    assert_eq!(status, StatusCode::OK);
    let body = json!({"url": "https://merchant.example/hooks", "enabled_events": ["payment.*"]});
    let (status, _) = app.post(shop, "/webhook_endpoints", &body).await;
    assert_eq!(status, StatusCode::CREATED);
}

/// What the API answers `shop` about everything it holds.
pub async fn answers(app: &TestApp, shop: &Shop) -> Vec<(String, Value)> {
    let mut all = Vec::new();
    for list in [
        "products",
        "plans",
        "customers",
        "payments",
        "refunds",
        "subscriptions",
        "test_clocks",
        "events",
        "webhook_endpoints",
        "coupons",
        "disputes",
    ] {
        let (status, body) = app.get(shop, &format!("/{list}?limit=100")).await;
        assert_eq!(status, StatusCode::OK, "{list}: {body}");
        for item in body.as_array().unwrap() {
            let path = format!("/{list}/{}", item["id"].as_str().unwrap());
            let (status, one) = app.get(shop, &path).await;
            assert_eq!(status, StatusCode::OK, "{path}: {one}");
            all.push((path, one));
        }
        all.push((format!("/{list}"), body));
    }
    let (_, me) = app.get(shop, "/shop").await;
    all.push(("/shop".into(), me));
    // Links name the instance that answered (events keep the one of their time).
    all.into_iter().map(|(path, body)| (path, serde_json::from_str(&unported(&body.to_string())).unwrap())).collect()
}

/// `text` with every `http://127.0.0.1:PORT` written `{base}`.
fn unported(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("http://127.0.0.1:") {
        out.push_str(&rest[..at]);
        out.push_str("{base}");
        rest = rest[at + "http://127.0.0.1:".len()..].trim_start_matches(|c: char| c.is_ascii_digit());
    }
    out.push_str(rest);
    out
}

/// Asserts that two instances answered the same, naming the first answer that differs.
pub fn assert_same_answers(got: &[(String, Value)], expected: &[(String, Value)]) {
    for ((path, body), (expected_path, expected_body)) in got.iter().zip(expected) {
        assert_eq!(path, expected_path);
        assert_eq!(body, expected_body, "{path}");
    }
    assert_eq!(got.len(), expected.len());
}

/// The snapshot folder a backup printed.
fn snapshot_of(backup: &Value) -> PathBuf {
    PathBuf::from(backup["snapshot"].as_str().unwrap())
}

/// Whether the database at `url` has any table (a restore that was refused left none).
async fn has_tables(backend: Backend, url: &str) -> bool {
    if matches!(backend, Backend::Sqlite) {
        let file = paydesk::config::sqlite_file(url).unwrap();
        return file.exists();
    }
    let db = paydesk::db::connect(url, 1).await.unwrap();
    let tables = paydesk::db::backup::tables(&db).await.unwrap();
    db.close().await.ok();
    !tables.is_empty()
}

db_tests! {
    async fn a_snapshot_taken_while_serving_restores_to_an_instance_that_answers_the_same(app) {
        let shop = app.shop("Backups").await;
        fill(&app, &shop).await;
        let before = answers(&app, &shop).await;
        let dir = tempfile::tempdir().unwrap();
        let taken = printed(&pd(&app.database_url, &["backup", "--to", dir.path().to_str().unwrap()]));
        let snapshot = snapshot_of(&taken);
        assert!(snapshot.file_name().unwrap().to_str().unwrap().starts_with("paydesk-"));
        let manifest: Value = serde_json::from_slice(&std::fs::read(snapshot.join("manifest.json")).unwrap()).unwrap();
        assert_eq!(manifest["reason"], "manual");
        assert_eq!(manifest["schema"].as_str(), paydesk::db::schema::known().last().map(String::as_str));
        assert_eq!(manifest["tables"]["payments"], 4, "two paid on the page, two by subscriptions");
        assert_eq!(manifest["tables"]["subscriptions"], 2);
        assert_eq!(manifest["tables"], taken["tables"]);
        assert!(Path::new(taken["key"].as_str().unwrap()).starts_with(&snapshot), "the key beside it by default");
        // After the snapshot: not in it.
        app.product(&shop, &product_body()).await;

        let said = refusal(&pd(&app.database_url, &["restore", snapshot.to_str().unwrap()]));
        assert!(said.contains("in use") || said.contains("served"), "{said}");
        assert!(said.contains("nothing was changed"), "{said}");
        let (_, products) = app.get(&shop, "/products").await;
        assert_eq!(products.as_array().unwrap().len(), 2, "the served database is untouched");

        let target = fresh_target(&app, dir.path()).await;
        let restored = printed(&pd(&target, &["restore", snapshot.to_str().unwrap()]));
        assert_eq!(restored["tables"], taken["tables"]);
        assert_eq!(restored["schema"], manifest["schema"]);
        let again = TestApp::spawn_at(app.backend, &target, ConfigArgs::default()).await;
        assert_same_answers(&answers(&again, &shop).await, &before);
        let row = paydesk::db::shops::find(&again.db, shop.id).await.unwrap().unwrap();
        let secret = paydesk::services::keys::api_secret(&again.state.vault, &row);
        assert_eq!(secret.as_deref(), Some(shop.secret.as_str()), "sealed secrets open");
    }

    async fn a_restore_refuses_a_wrong_key_a_damaged_or_partial_snapshot_and_changes_nothing(app) {
        let shop = app.shop("Backups").await;
        fill(&app, &shop).await;
        let dir = tempfile::tempdir().unwrap();
        let keys = dir.path().join("keys");
        let to = dir.path().join("snapshots");
        let taken = printed(&pd(&app.database_url, &["backup", "--to", to.to_str().unwrap(),
                                                      "--key-to", keys.to_str().unwrap()]));
        let snapshot = snapshot_of(&taken);
        let key = PathBuf::from(taken["key"].as_str().unwrap());
        assert!(key.starts_with(&keys) && !snapshot.join("paydesk.kek").exists(), "the key kept apart");
        let target = fresh_target(&app, dir.path()).await;
        let restore = |extra: &[&str]| {
            let mut args = vec!["restore", snapshot.to_str().unwrap()];
            args.extend_from_slice(extra);
            pd(&target, &args)
        };

        assert!(refusal(&restore(&[])).contains("--key"));
        let wrong = dir.path().join("wrong.kek");
        std::fs::write(&wrong, "d3JvbmctdGVzdC1rZXktZW5jcnlwdGlvbi1rZXkhISE=\n").unwrap();
        assert!(refusal(&restore(&["--key", wrong.to_str().unwrap()])).contains("is not the key"));
        let other_kek = command(&target)
            .env("PAYDESK_KEY_ENCRYPTION_KEY", "d3JvbmctdGVzdC1rZXktZW5jcnlwdGlvbi1rZXkhISE=")
            .args(["restore", snapshot.to_str().unwrap(), "--key", key.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(refusal(&other_kek).contains("PAYDESK_KEY_ENCRYPTION_KEY is not this snapshot's key"));

        let damaged = dir.path().join("damaged");
        copy_dir(&snapshot, &damaged);
        let file = damaged.join(if matches!(app.backend, Backend::Sqlite) { "paydesk.db" } else { "paydesk.dump" });
        let mut bytes = std::fs::read(&file).unwrap();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0xff;
        std::fs::write(&file, bytes).unwrap();
        let said = refusal(&pd(&target, &["restore", damaged.to_str().unwrap(), "--key", key.to_str().unwrap()]));
        assert!(said.contains("damaged"), "{said}");
        let partial = dir.path().join("partial");
        copy_dir(&snapshot, &partial);
        std::fs::remove_file(partial.join("manifest.json")).unwrap();
        let said = refusal(&pd(&target, &["restore", partial.to_str().unwrap(), "--key", key.to_str().unwrap()]));
        assert!(said.contains("not a complete snapshot"), "{said}");
        assert!(!has_tables(app.backend, &target).await, "nothing was changed");

        let restored = printed(&restore(&["--key", key.to_str().unwrap()]));
        assert_eq!(restored["tables"], taken["tables"]);
        assert!(has_tables(app.backend, &target).await);
    }

    async fn a_paydesk_older_than_its_database_refuses_it_with_one_line(app) {
        let future = "m20991231_000099_from_a_newer_paydesk";
        let sql = format!("INSERT INTO seaql_migrations (version, applied_at) VALUES ('{future}', 0)");
        app.db.execute_unprepared(&sql).await.unwrap();
        for args in [&["migrate"][..], &["serve"], &["migrate", "--dry-run"], &["backup", "--to", "/nonexistent"]] {
            let said = refusal(&command(&app.database_url).env("PAYDESK_LISTEN", "127.0.0.1:0").args(args).output().unwrap());
            assert!(said.contains("newer than this paydesk") && said.contains(future), "{args:?}: {said}");
        }
    }

    async fn a_backup_killed_midway_leaves_nothing_that_looks_complete(app) {
        let shop = app.shop("Backups").await;
        fill(&app, &shop).await;
        let dir = tempfile::tempdir().unwrap();
        let to = dir.path().to_str().unwrap();
        let mut finished = 0;
        for delay in [0u64, 1, 3, 6, 10, 20, 40, 80, 160] {
            let mut child = command(&app.database_url).args(["backup", "--to", to])
                .stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null()).spawn().unwrap();
            tokio::time::sleep(Duration::from_millis(delay)).await;
            child.kill().ok();
            if child.wait().unwrap().success() {
                finished += 1;
            }
        }
        // A backup killed after its rename is complete though it did not say so.
        let complete = paydesk::services::backup::list(dir.path());
        assert!(complete.len() >= finished, "the backups that finished are complete");
        for entry in std::fs::read_dir(dir.path()).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with("paydesk-") {
                let manifest = &complete.iter().find(|(n, _)| *n == name).expect("a complete snapshot").1;
                let copy = std::fs::read(entry.path().join(&manifest.file)).unwrap();
                assert_eq!(copy.len() as u64, manifest.bytes, "{name} is whole");
                let sum = sha2::Sha256::digest(&copy);
                assert_eq!(paydesk::domain::backup::hex(&sum), manifest.sha256, "{name} is whole");
            } else {
                assert!(name.starts_with(".paydesk-") && name.contains(".partial-"), "{name} is hidden as partial");
            }
        }
        let taken = printed(&pd(&app.database_url, &["backup", "--to", to]));
        let target = fresh_target(&app, dir.path()).await;
        printed(&pd(&target, &["restore", taken["snapshot"].as_str().unwrap()]));
    }
}

/// The payment a pay page's answer names (its receipt, or the return URL's `payment_id`).
fn paid_id(page: &Page) -> Option<String> {
    let at = page.location().find("pay_")?;
    Some(page.location()[at..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect())
}

backend_tests! {
    async fn a_snapshot_taken_during_a_burst_of_payments_and_renewals_keeps_every_answered_payment_and_billing_resumes_once(backend) {
        let short = || ConfigArgs { lease_seconds: Some("2".into()), ..Default::default() };
        let app = TestApp::spawn_with(backend, short()).await;
        let shop = app.shop("Busy").await;
        let mut body = test_product_body();
        body["quantity"] = json!("1000");
        let product = app.product(&shop, &body).await;
        let product = product["id"].as_str().unwrap().to_string();
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2026-01-10T10:00:00Z").await;
        let mut subscriptions = Vec::new();
        for _ in 0..8 {
            subscriptions.push(subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await["id"].as_str().unwrap().to_string());
        }
        let dir = tempfile::tempdir().unwrap();
        let paid = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let payers: Vec<_> = (0..4)
            .map(|_| {
                let (app, product, paid) = (app.pointed_at(app.base.clone()), product.clone(), paid.clone());
                tokio::spawn(async move {
                    let mut answered = Vec::new();
                    for _ in 0..8 {
                        let page = app.pay(&product, cards::SUCCESS, &[]).await;
                        answered.push((std::time::Instant::now(), paid_id(&page).expect("a payment")));
                        paid.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    }
                    answered
                })
            })
            .collect();
        let renewals = {
            let (app, shop, clock) = (app.pointed_at(app.base.clone()), shop.clone(), clock.clone());
            tokio::spawn(async move {
                let path = format!("/test_clocks/{clock}/advance");
                app.post(&shop, &path, &json!({"frozen_time": "2026-03-11T10:00:00Z"})).await
            })
        };
        // In the middle of the burst.
        while paid.load(std::sync::atomic::Ordering::SeqCst) < 6 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let began = std::time::Instant::now();
        let url = app.database_url.clone();
        let to = dir.path().join("snapshots");
        let taken = tokio::task::spawn_blocking(move || pd(&url, &["backup", "--to", to.to_str().unwrap()])).await.unwrap();
        let taken = printed(&taken);
        let mut answered = Vec::new();
        for payer in payers {
            answered.extend(payer.await.unwrap());
        }
        let (status, advanced) = renewals.await.unwrap();
        assert_eq!(status, StatusCode::OK, "{advanced}");
        let before: Vec<&String> = answered.iter().filter(|(at, _)| *at < began).map(|(_, id)| id).collect();
        assert!(!before.is_empty(), "payments were answered before the snapshot began");

        let target = fresh_target(&app, dir.path()).await;
        printed(&pd(&target, &["restore", taken["snapshot"].as_str().unwrap()]));
        let again = TestApp::spawn_at(backend, &target, short()).await;
        for id in &before {
            let (status, payment) = again.get(&shop, &format!("/payments/{id}")).await;
            assert_eq!(status, StatusCode::OK, "{id}, answered before the snapshot, is in it");
            assert_eq!(payment["status"], "succeeded");
        }
        // The restored engine finishes the advance the snapshot caught (or makes it anew).
        let mut ready = false;
        for _ in 0..100 {
            let (status, body) = again.post(&shop, &format!("/test_clocks/{clock}/advance"),
                                            &json!({"frozen_time": "2026-03-11T10:00:00Z"})).await;
            if status == StatusCode::OK && body["status"] == "ready" {
                ready = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        assert!(ready, "the clock advance went on on the restored instance");
        crate::crash::charged_once_each(&again, &shop, &subscriptions, 0).await;
        for id in &subscriptions {
            let (_, sub) = again.get(&shop, &format!("/subscriptions/{id}")).await;
            assert_eq!(sub["paid_billing_cycles"], 3, "{id}: January, February and March, each once");
        }
    }

    async fn migrate_dry_run_prints_the_pending_sql_and_changes_nothing_and_migrating_takes_a_snapshot_first(backend) {
        use migration::MigratorTrait;
        let dir = tempfile::tempdir().unwrap();
        let url = match backend {
            Backend::Sqlite => format!("sqlite://{}?mode=rwc", dir.path().join("paydesk.db").display()),
            Backend::Postgres => postgres_schema().await,
        };
        let known = paydesk::db::schema::known();
        let db = paydesk::db::connect(&url, 1).await.unwrap();
        migration::Migrator::up(&db, Some(known.len() as u32 - 1)).await.unwrap();
        let vault = paydesk::external::vault::Vault::load(&paydesk::config::KekSource::Given(
            paydesk::config::parse_kek(TEST_KEK).unwrap())).unwrap();
        paydesk::services::keys::create_shop(&db, &vault, "Old shop", None, Utc::now()).await.unwrap();
        let at = |db| async move { paydesk::db::schema::standing(db).await.unwrap() };
        assert_eq!(at(&db).await.pending, known[known.len() - 1..].to_vec());

        let output = pd(&url, &["migrate", "--dry-run"]);
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let review = String::from_utf8(output.stdout).unwrap();
        let newest = known.last().unwrap();
        assert!(review.contains(&format!("the database is at {}", known[known.len() - 2])), "{review}");
        assert!(review.contains(&format!("-- {newest} (ran in")), "{review}");
        assert!(review.contains("CREATE TABLE \"jobs\""), "{review}");
        assert!(!review.to_lowercase().contains("select "), "reads are left out: {review}");
        assert_eq!(at(&db).await.pending.len(), 1, "the dry run changed nothing");
        assert!(!paydesk::db::backup::tables(&db).await.unwrap().contains(&"jobs".to_string()));

        let snapshots = dir.path().join("snapshots");
        let output = command(&url).env("PAYDESK_BACKUP_DIR", &snapshots).arg("migrate").output().unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        assert!(at(&db).await.pending.is_empty());
        let taken = paydesk::services::backup::list(&snapshots);
        match backend {
            Backend::Sqlite => {
                assert_eq!(taken.len(), 1, "a snapshot before migrating");
                let manifest = &taken[0].1;
                assert_eq!(manifest.reason, paydesk::domain::backup::Reason::BeforeMigrating);
                assert_eq!(manifest.schema.as_ref(), Some(&known[known.len() - 2]));
                assert_eq!(manifest.tables["shops"], 1);
            }
            Backend::Postgres => assert!(taken.is_empty(), "PostgreSQL's snapshots are the operator's"),
        }
        let output = pd(&url, &["migrate", "--dry-run"]);
        assert!(String::from_utf8_lossy(&output.stdout).contains("no migration is pending"));
        db.close().await.ok();
    }

    async fn a_migration_killed_midway_leaves_a_database_the_next_start_migrates(backend) {
        for delay in [2u64, 5, 10, 20, 40] {
            let dir = tempfile::tempdir().unwrap();
            let url = match backend {
                Backend::Sqlite => format!("sqlite://{}?mode=rwc", dir.path().join("paydesk.db").display()),
                Backend::Postgres => postgres_schema().await,
            };
            let mut child = command(&url).arg("migrate").stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null()).spawn().unwrap();
            tokio::time::sleep(Duration::from_millis(delay)).await;
            child.kill().ok();
            child.wait().unwrap();
            let output = pd(&url, &["migrate"]);
            assert!(output.status.success(), "after a kill at {delay} ms: {}", String::from_utf8_lossy(&output.stderr));
            let app = TestApp::spawn_at(backend, &url, ConfigArgs::default()).await;
            let shop = app.shop("After").await;
            app.product(&shop, &product_body()).await;
        }
    }

    async fn scheduled_snapshots_are_taken_by_one_instance_at_a_time_and_the_oldest_pruned(backend) {
        let dir = tempfile::tempdir().unwrap();
        let args = ConfigArgs {
            backup_dir: Some(dir.path().display().to_string()),
            backup_hours: Some("24".into()),
            backup_keep: Some("2".into()),
            ..Default::default()
        };
        let app = TestApp::spawn_with(backend, args).await;
        let shop = app.shop("Backups").await;
        app.product(&shop, &product_body()).await;
        printed(&pd(&app.database_url, &["backup", "--to", dir.path().to_str().unwrap()]));
        let now = Utc::now();
        let runs = futures::future::join_all(
            (0..4).map(|_| paydesk::services::backup::scheduled(&app.state, now))).await;
        let taken: Vec<_> = runs.into_iter().filter_map(Result::unwrap).collect();
        assert_eq!(taken.len(), 1, "one instance takes it");
        let later = paydesk::services::backup::scheduled(&app.state, now + TimeDelta::hours(23)).await.unwrap();
        assert!(later.is_none(), "not due again yet");
        for day in 1..=3 {
            let at = now + TimeDelta::hours(24 * day) + TimeDelta::minutes(1);
            assert!(paydesk::services::backup::scheduled(&app.state, at).await.unwrap().is_some(), "day {day}");
        }
        let kept = paydesk::services::backup::list(dir.path());
        let reasons: Vec<_> = kept.iter().map(|(_, m)| format!("{:?}", m.reason)).collect();
        assert_eq!(reasons, ["Manual", "Scheduled", "Scheduled"], "the newest two scheduled and the manual one");
        assert!(kept[2].1.taken_at > kept[1].1.taken_at);
        assert_eq!(kept[2].1.tables["products"], 1);
    }
}

/// Copies the folder `from` to `to`.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
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

/// The usual PostgreSQL set-up: paydesk in the `public` schema of its own database. A
/// snapshot restores to a new database (whose empty `public` it replaces) and over the
/// database it was taken of once nothing serves it (whose `public` it sets aside).
#[tokio::test]
async fn a_postgres_snapshot_of_the_public_schema_restores_to_a_new_database_and_over_its_own() {
    let mut urls = Vec::new();
    for _ in 0..2 {
        urls.push(new_postgres_database().await.to_string());
    }
    let (own, new) = (&urls[0], &urls[1]);
    let shop = printed(&pd(own, &["shop", "create", "--name", "Public"]));
    let dir = tempfile::tempdir().unwrap();
    let taken = printed(&pd(own, &["backup", "--to", dir.path().to_str().unwrap()]));
    let snapshot = taken["snapshot"].as_str().unwrap();
    printed(&pd(own, &["shop", "create", "--name", "After the snapshot"]));

    let restored = printed(&pd(new, &["restore", snapshot]));
    assert_eq!(restored["set_aside"], json!([]), "a new database's empty public is replaced");
    let again = printed(&pd(own, &["restore", snapshot]));
    let aside = again["set_aside"][0].as_str().unwrap();
    assert!(aside.starts_with("schema public_before_restore_"), "{again}");
    for url in [own, new] {
        let app = TestApp::spawn_at(Backend::Postgres, url, ConfigArgs::default()).await;
        let shop = Shop { id: shop["shop_id"].as_i64().unwrap(), secret: shop["secret_key"].as_str().unwrap().into() };
        let (status, me) = app.get(&shop, "/shop").await;
        assert_eq!((status, me["name"].as_str()), (StatusCode::OK, Some("Public")), "{url}");
        let shops = paydesk::db::backup::counts(&app.db).await.unwrap()["shops"];
        assert_eq!(shops, 1, "{url}: the shop made after the snapshot is not in it");
        app.state.lifecycle.stop();
    }
}

/// A lost key file is never silently replaced: paydesk refuses to start until the database's
/// key is back (README's recovery copies it from a snapshot).
#[tokio::test]
async fn a_database_whose_key_file_is_missing_is_refused_until_the_key_is_back() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("paydesk.db").display());
    let keyed = |args: &[&str]| command(&url).env_remove("PAYDESK_KEY_ENCRYPTION_KEY").args(args).output().unwrap();
    printed(&keyed(&["shop", "create", "--name", "Kept"]));
    let taken = printed(&keyed(&["backup", "--to", dir.path().join("snapshots").to_str().unwrap()]));
    let key = dir.path().join("paydesk.db.kek");
    std::fs::remove_file(&key).unwrap();
    let said = refusal(&keyed(&["shop", "create", "--name", "Sealed under a new key"]));
    assert!(said.contains("is missing") && said.contains("paydesk.db.kek"), "{said}");
    assert!(!key.exists(), "no new key was made");
    let snapshot = PathBuf::from(taken["snapshot"].as_str().unwrap());
    std::fs::copy(snapshot.join("paydesk.kek"), &key).unwrap();
    printed(&keyed(&["shop", "create", "--name", "Back"]));
}
