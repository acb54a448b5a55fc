//! Faults: backups and migrations killed midway, a snapshot taken during a burst of payments
//! and renewals, and scheduled snapshots taken by one of several at once.

use super::*;

db_tests! {
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
                assert_eq!(paydesk::domain::ids::hex(&sum), manifest.sha256, "{name} is whole");
            } else {
                assert!(name.starts_with(".paydesk-") && name.contains(".partial-"), "{name} is hidden as partial");
            }
        }
        // The next snapshot deletes the partial folders nothing holds any more (once a minute
        // old: the time a new one takes to hold its own), and keeps one a snapshot holds.
        let partials: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.path())
            .filter(|p| p.file_name().unwrap().to_string_lossy().contains(".partial-")).collect();
        let held = dir.path().join(".paydesk-20261205T000000Z.partial-held");
        std::fs::create_dir(&held).unwrap();
        let holding = std::fs::File::open(&held).unwrap();
        holding.try_lock().unwrap();
        for partial in partials.iter().chain([&held]) {
            let backdated = std::process::Command::new("touch").args(["-d", "2 minutes ago"]).arg(partial).status().unwrap();
            assert!(backdated.success());
        }
        let taken = printed(&pd(&app.database_url, &["backup", "--to", to]).await);
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned()).filter(|n| n.contains(".partial-")).collect();
        assert_eq!(left, [".paydesk-20261205T000000Z.partial-held"], "of {} left over", partials.len());
        drop(holding);
        let target = fresh_target(&app, dir.path()).await;
        printed(&pd(&target, &["restore", taken["snapshot"].as_str().unwrap()]).await);
    }

    async fn a_backup_past_its_bound_stops_says_so_and_keeps_nothing(app) {
        let shop = app.shop("Backups").await;
        fill(&app, &shop).await;
        let dir = tempfile::tempdir().unwrap();
        let key = paydesk::external::vault::snapshot_key(&app.state.config.kek).unwrap();
        let options = paydesk::services::backup::Options {
            dir: dir.path().into(),
            key_dir: None,
            reason: paydesk::domain::backup::Reason::Manual,
            timeout: Duration::ZERO,
        };
        let stopped = paydesk::services::backup::take(&app.db, &app.database_url, &key, &options, Utc::now()).await;
        assert_eq!(stopped.unwrap_err().to_string(),
                   "it did not finish within 0 seconds (PAYDESK_BACKUP_TIMEOUT_MINUTES) and was stopped; nothing was kept");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.file_name()).collect();
        assert!(left.is_empty(), "no snapshot, no partial folder: {left:?}");

        if app.backend == Backend::Sqlite {
            // SQLite itself stops the copy and the check at the deadline (no thread is left
            // working after the bound), and checks the copy with a cache of its size.
            let rows = "CREATE TABLE bulk AS WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 20000) \
                        SELECT x, hex(randomblob(16)) AS y FROM n";
            app.db.execute_unprepared(rows).await.unwrap();
            let copy = dir.path().join("copy.db");
            let past = std::time::Instant::now();
            let copied = paydesk::db::backup::vacuum_into(&app.db, &copy, past).await;
            let copied = copied.unwrap_err().to_string();
            assert!(copied.contains("interrupted"), "{copied}");
            let later = std::time::Instant::now() + Duration::from_secs(3600);
            std::fs::remove_file(&copy).ok();
            paydesk::db::backup::vacuum_into(&app.db, &copy, later).await.unwrap();
            let opened = paydesk::db::backup::open_copy(&copy, later).await.unwrap();
            let size_kib = (std::fs::metadata(&copy).unwrap().len() / 1024) as i64;
            assert!(paydesk::db::backup::cache_kib(&opened).await.unwrap() >= size_kib.max(2048));
            assert_eq!(paydesk::db::backup::integrity_check(&opened).await.unwrap(), "ok");
            let stopped = paydesk::db::backup::open_copy(&copy, past).await.unwrap();
            let checked = paydesk::db::backup::integrity_check(&stopped).await.unwrap_err().to_string();
            assert!(checked.contains("interrupted"), "{checked}");
        }
    }
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
        let patience = Patience::start();
        while paid.load(std::sync::atomic::Ordering::SeqCst) < 6 {
            assert!(!patience.spent(), "the payers are paying");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let began = std::time::Instant::now();
        let url = app.database_url.clone();
        let to = dir.path().join("snapshots");
        let taken = pd(&url, &["backup", "--to", to.to_str().unwrap()]).await;
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
        printed(&pd(&target, &["restore", taken["snapshot"].as_str().unwrap()]).await);
        let again = TestApp::spawn_at(backend, &target, short()).await;
        for id in &before {
            let (status, payment) = again.get(&shop, &format!("/payments/{id}")).await;
            assert_eq!(status, StatusCode::OK, "{id}, answered before the snapshot, is in it");
            assert_eq!(payment["status"], "succeeded");
        }
        // The restored engine finishes the advance the snapshot caught (or makes it anew).
        let mut ready = false;
        let patience = Patience::start();
        while !patience.spent() {
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
            let output = pd(&url, &["migrate"]).await;
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
        printed(&pd(&app.database_url, &["backup", "--to", dir.path().to_str().unwrap()]).await);
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
