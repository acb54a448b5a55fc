//! Upgrades from every earlier schema: a database at each earlier migration step, holding
//! what that version could hold, migrates to the newest schema with every row still there
//! and meaning the same.
//!
//! What each version holds is taken from a reference: an instance on the newest schema,
//! filled through the API (shops with sealed secrets, products, payments and a refund,
//! customers, subscriptions active and cancelled on a test clock, a webhook endpoint, the
//! events, webhook deliveries and subscriber mails all this made). At each step, the reference's rows
//! are copied into the tables and columns that step has (the totals its triggers keep are
//! left to them), then the database is migrated and compared with the reference.

use std::collections::BTreeSet;

use migration::MigratorTrait;
use paydesk::config::ConfigArgs;
use reqwest::StatusCode;
use sea_orm::{ConnectionTrait, DatabaseConnection, Statement};
use serde_json::{Value, json};

use crate::backup::{answers, fill};
use crate::helpers::*;

/// Tables the triggers of payments and subscriptions keep: compared by their sums.
const KEPT_BY_TRIGGERS: [&str; 2] = ["payment_totals", "subscription_counts"];

/// How far SQLite's word indexes go: the server moves it on as it indexes new rows, so the
/// reference's and a migrated copy's differ (searches find the same either way).
const KEPT_BY_THE_SERVER: &str = "search_marks";

/// The columns of `table`, by name.
async fn columns(db: &DatabaseConnection, table: &str) -> BTreeSet<String> {
    let backend = db.get_database_backend();
    let sql = match backend {
        // The catalog, not information_schema: the tests' database holds many schemas.
        sea_orm::DatabaseBackend::Postgres => format!(
            "SELECT attname::text FROM pg_attribute \
             WHERE attrelid = to_regclass('\"{table}\"') AND attnum > 0 AND NOT attisdropped"
        ),
        _ => format!("SELECT name FROM pragma_table_info('{table}')"),
    };
    let rows = db.query_all(Statement::from_string(backend, sql)).await.unwrap();
    rows.iter().map(|r| r.try_get_by_index::<String>(0).unwrap()).collect()
}

async fn exec(db: &DatabaseConnection, sql: &str) {
    db.execute(Statement::from_string(db.get_database_backend(), sql.to_string()))
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

async fn count(db: &DatabaseConnection, sql: &str) -> i64 {
    let row = db.query_one(Statement::from_string(db.get_database_backend(), sql.to_string())).await.unwrap();
    row.unwrap().try_get_by_index::<i64>(0).unwrap()
}

/// Where the reference's tables are seen from a database being filled: an attached SQLite
/// file, or the reference's PostgreSQL schema.
fn reference_prefix(reference: &TestApp) -> String {
    match reference.backend {
        Backend::Sqlite => "ref".into(),
        Backend::Postgres => reference.database_url.rsplit("search_path%3D").next().unwrap().to_string(),
    }
}

/// A new database of `backend` migrated to `steps` migrations, over one connection that
/// sees the reference's tables.
async fn at_step(
    backend: Backend,
    reference: &TestApp,
    dir: &std::path::Path,
    steps: usize,
) -> (String, DatabaseConnection) {
    let url = match backend {
        Backend::Sqlite => format!("sqlite://{}?mode=rwc", dir.join(format!("step{steps}.db")).display()),
        Backend::Postgres => postgres_schema().await,
    };
    let db = paydesk::db::connect(&url, 1).await.unwrap();
    migration::Migrator::up(&db, Some(steps as u32)).await.unwrap();
    if let Backend::Sqlite = backend {
        let file = paydesk::config::sqlite_file(&reference.database_url).unwrap();
        exec(&db, &format!("ATTACH DATABASE '{}' AS ref", file.display())).await;
    }
    (url, db)
}

/// A table copied from the reference: its name, the columns copied, and whether they are all
/// the reference's.
type Copied = (String, Vec<String>, bool);

/// Copies the reference's rows into the tables and columns `db` has.
async fn copy_reference(db: &DatabaseConnection, reference: &TestApp) -> Vec<Copied> {
    let from = reference_prefix(reference);
    let mut tables = paydesk::db::backup::tables(db).await.unwrap();
    tables.retain(|t| t != "seaql_migrations" && t != KEPT_BY_THE_SERVER && !KEPT_BY_TRIGGERS.contains(&t.as_str()));
    // Shops first: the others name them.
    tables.sort_by_key(|t| (t != "shops", t.clone()));
    let mut copied = Vec::new();
    for table in tables {
        let theirs = columns(&reference.db, &table).await;
        let common: Vec<String> = columns(db, &table).await.intersection(&theirs).cloned().collect();
        if theirs.is_empty() || common.is_empty() {
            continue;
        }
        let list = common.iter().map(|c| format!("\"{c}\"")).collect::<Vec<_>>().join(", ");
        if table == "api_keys" {
            // The triggers of `shops` made each copied shop's first key: the reference's replace them.
            exec(db, "DELETE FROM api_keys").await;
        }
        exec(db, &format!("INSERT INTO \"{table}\" ({list}) SELECT {list} FROM {from}.\"{table}\"")).await;
        let whole = common.len() == theirs.len();
        copied.push((table, common, whole));
    }
    if let sea_orm::DatabaseBackend::Postgres = db.get_database_backend() {
        // Sequences go on after the copied rows, as they would have.
        for (table, common, _) in &copied {
            for key in ["seq", "id"].iter().filter(|k| common.iter().any(|c| c == *k)) {
                let sql = format!("SELECT pg_get_serial_sequence('\"{table}\"', '{key}')");
                let row = db.query_one(Statement::from_string(db.get_database_backend(), sql)).await.unwrap();
                let Some(sequence) = row.and_then(|r| r.try_get_by_index::<Option<String>>(0).unwrap()) else {
                    continue;
                };
                let sql = format!(
                    "SELECT setval('{sequence}', coalesce((SELECT max(\"{key}\") FROM \"{table}\"), 0) + 1, false)"
                );
                exec(db, &sql).await;
            }
        }
    }
    copied
}

/// Rows of `table` that differ, in `common` columns, between `db` and the reference.
async fn missing(db: &DatabaseConnection, reference: &TestApp, table: &str, common: &[String]) -> i64 {
    let list = common.iter().map(|c| format!("\"{c}\"")).collect::<Vec<_>>().join(", ");
    let from = reference_prefix(reference);
    let ours = format!("SELECT {list} FROM \"{table}\"");
    let theirs = format!("SELECT {list} FROM {from}.\"{table}\"");
    count(db, &format!("SELECT COUNT(*) FROM ({ours} EXCEPT {theirs}) d")).await
        + count(db, &format!("SELECT COUNT(*) FROM ({theirs} EXCEPT {ours}) d")).await
}

/// The totals the triggers keep, summed per shop.
async fn totals(db: &DatabaseConnection, prefix: &str) -> Vec<i64> {
    let mut sums = Vec::new();
    for sql in [
        format!("SELECT CAST(coalesce(SUM(net), 0) AS BIGINT) FROM {prefix}payment_totals"),
        format!("SELECT CAST(coalesce(SUM(payments), 0) AS BIGINT) FROM {prefix}payment_totals"),
        format!(
            "SELECT CAST(coalesce(SUM(subscriptions), 0) AS BIGINT) FROM {prefix}subscription_counts \
             WHERE state = 'active'"
        ),
    ] {
        sums.push(count(db, &sql).await);
    }
    sums
}

backend_tests! {
    async fn a_database_of_every_earlier_schema_upgrades_with_its_rows_meaning_the_same(backend) {
        let smtp = crate::doubles::smtp::Smtp::shared().await;
        let args = ConfigArgs { smtp_url: Some(smtp.url()), mail_from: Some("shop@mail.example".into()), ..Default::default() };
        let reference = TestApp::spawn_with(backend, args).await;
        let shop = reference.shop("Upgraded").await;
        fill(&reference, &shop).await;
        let plan = crate::subscriptions::plan(&reference, &shop, json!({})).await;
        let (_, clocks) = reference.get(&shop, "/test_clocks").await;
        let clock = clocks[0]["id"].as_str().unwrap().to_string();
        let paused = crate::subscriptions::subscribe(&reference, &shop, &plan, &clock, cards::SUCCESS).await;
        let path = format!("/subscriptions/{}/pause", paused["id"].as_str().unwrap());
        let (status, body) = reference.post(&shop, &path, &json!({})).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let trial = json!({"trial": {"amount": 0, "interval": 14, "interval_unit": "day"}});
        let trial_plan = crate::subscriptions::plan(&reference, &shop, trial).await;
        crate::subscriptions::subscribe(&reference, &shop, &trial_plan, &clock, cards::SUCCESS).await;
        // A second shop, connected to bePaid: its keys are sealed.
        let (connected, _gateway) = crate::bepaid_pay::shop_taking_cards_on(&reference, "paydesk_page").await;
        // The reference stands still once each delivery was tried and each mail sent: its
        // workers stop.
        let patience = Patience::start();
        while !patience.spent() {
            let tried = count(&reference.db, "SELECT COUNT(DISTINCT delivery_id) FROM webhook_attempts").await;
            let unsent = count(&reference.db, "SELECT COUNT(*) FROM mails WHERE status = 'queued'").await;
            if tried >= count(&reference.db, "SELECT COUNT(*) FROM webhook_deliveries").await && unsent == 0 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        // The shop's key pair is made when first asked for.
        assert_eq!(reference.get(&shop, "/shop").await.0, StatusCode::OK);
        let (_, states) = reference.get(&shop, "/subscriptions").await;
        let states: BTreeSet<&str> = states.as_array().unwrap().iter().map(|s| s["state"].as_str().unwrap()).collect();
        assert!(states.len() >= 4, "subscriptions in many states: {states:?}");
        reference.state.lifecycle.stop();
        reference.state.lifecycle.drained().await;
        let known = paydesk::db::schema::known();
        let dir = tempfile::tempdir().unwrap();
        let reference_totals = totals(&reference.db, "").await;
        assert!(count(&reference.db, "SELECT COUNT(*) FROM mails").await > 0, "the reference has mails");
        // What the newest paydesk answers on a copy of every table whole, first.
        let mut expected = Vec::new();
        for steps in std::iter::once(known.len()).chain(1..known.len()) {
            let step = &known[steps - 1];
            let (url, db) = at_step(backend, &reference, dir.path(), steps).await;
            let copied = copy_reference(&db, &reference).await;
            // Migrated as the newest paydesk migrates at start, and compared before any
            // worker of an instance touches it.
            paydesk::db::schema::apply_pending(&db).await.unwrap_or_else(|e| panic!("from {step}: {e}"));
            for (table, common, _) in &copied {
                assert_eq!(missing(&db, &reference, table, common).await, 0, "from {step}: {table} changed");
            }
            let has = |table: &str| copied.iter().any(|(t, _, _)| t == table);
            if has("payments") && steps >= 13 {
                assert_eq!(totals(&db, "").await, reference_totals, "from {step}: the totals");
            }
            db.close().await.ok();
            let upgraded = TestApp::spawn_at(backend, &url, ConfigArgs::default()).await;
            assert!(paydesk::db::schema::standing(&upgraded.db).await.unwrap().pending.is_empty());
            // The API answers the same objects where the version had their table, and the same
            // answer where it had all their columns.
            let got: std::collections::BTreeMap<String, Value> = answers(&upgraded, &shop).await.into_iter().collect();
            if steps == known.len() {
                expected = got.clone().into_iter().collect();
            }
            for (path, want) in &expected {
                let table = path.trim_start_matches('/').split('/').next().unwrap();
                let table = if table == "shop" { "shops" } else { table };
                let Some((_, _, whole)) = copied.iter().find(|(t, _, _)| t == table) else { continue };
                let body = got.get(path).unwrap_or_else(|| panic!("from {step}: {path} is gone"));
                if *whole {
                    assert_eq!(differences(want, body, ""), Vec::<String>::new(), "from {step}: {path}");
                }
            }
            // Sealed secrets open.
            if has("shops") && columns(&upgraded.db, "shops").await.contains("secret_sealed") && steps >= 10 {
                let row = paydesk::db::shops::find(&upgraded.db, shop.id).await.unwrap().unwrap();
                let secret = paydesk::services::keys::api_secret(&upgraded.state.vault, &row);
                assert_eq!(secret.as_deref(), Some(shop.secret.as_str()), "from {step}: the shop's secret opens");
            }
            // The processor's keys open.
            if has("shop_processors") {
                let row = paydesk::services::processors::find(&upgraded.state, connected.id).await.unwrap();
                let mode = paydesk::domain::processor::Mode::Test;
                let account = paydesk::services::processors::account(&upgraded.state, &row, mode).unwrap();
                assert_eq!(account.map(|a| a.secret_key).as_deref(), Some(crate::doubles::bepaid::SECRET), "from {step}");
            }
            // Billing goes on from where it was: the next month is charged once to the
            // subscriptions that were active, and nothing is charged twice.
            if has("subscriptions") && has("test_clocks") {
                let (_, before) = upgraded.get(&shop, "/subscriptions").await;
                let (status, body) = upgraded
                    .post(&shop, &format!("/test_clocks/{clock}/advance"), &json!({"frozen_time": "2026-02-11T10:00:00Z"}))
                    .await;
                assert_eq!(status, StatusCode::OK, "from {step}: {body}");
                for sub in before.as_array().unwrap() {
                    let id = sub["id"].as_str().unwrap();
                    let (_, now) = upgraded.get(&shop, &format!("/subscriptions/{id}")).await;
                    let was = sub["paid_billing_cycles"].as_i64().unwrap();
                    let paid = now["paid_billing_cycles"].as_i64().unwrap();
                    if sub["state"] == "active" {
                        assert_eq!(paid, was + 1, "from {step}: {id} renewed once");
                    }
                    let (_, payments) = upgraded.get(&shop, &format!("/payments?subscription={id}")).await;
                    let periods = payments.as_array().unwrap().iter();
                    let succeeded = periods.filter(|p| p["status"] == "succeeded" && p["billing"]["trial"] != true).count();
                    assert_eq!(succeeded as i64, paid, "from {step}: {id}: one charge per period paid");
                }
            }
            // Stopped, so that its connections (its listener's too) are not left open while
            // the next version's instance starts.
            upgraded.state.lifecycle.stop();
            upgraded.state.lifecycle.drained().await;
            upgraded.db.clone().close().await.ok();
        }
    }
}

/// The paths where `got` differs from `want`.
fn differences(want: &Value, got: &Value, at: &str) -> Vec<String> {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => {
            let keys: BTreeSet<&String> = w.keys().chain(g.keys()).collect();
            keys.into_iter()
                .flat_map(|k| {
                    differences(
                        w.get(k).unwrap_or(&Value::Null),
                        g.get(k).unwrap_or(&Value::Null),
                        &format!("{at}.{k}"),
                    )
                })
                .collect()
        }
        (Value::Array(w), Value::Array(g)) if w.len() == g.len() => {
            w.iter().zip(g).enumerate().flat_map(|(i, (w, g))| differences(w, g, &format!("{at}[{i}]"))).collect()
        }
        _ if want == got => Vec::new(),
        _ => vec![format!("{at}: {want} became {got}")],
    }
}
