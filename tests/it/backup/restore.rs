//! A snapshot of a serving instance restores to one that answers the same; a restore refuses
//! what it must, changing nothing; PostgreSQL's public schema; a missing key file.

use super::*;

db_tests! {
    async fn a_snapshot_taken_while_serving_restores_to_an_instance_that_answers_the_same(app) {
        let shop = app.shop("Backups").await;
        fill(&app, &shop).await;
        let before = answers(&app, &shop).await;
        let dir = tempfile::tempdir().unwrap();
        let taken = printed(&pd(&app.database_url, &["backup", "--to", dir.path().to_str().unwrap()]).await);
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

        let said = refusal(&pd(&app.database_url, &["restore", snapshot.to_str().unwrap()]).await);
        assert!(said.contains("in use") || said.contains("served"), "{said}");
        assert!(said.contains("nothing was changed"), "{said}");
        let (_, products) = app.get(&shop, "/products").await;
        assert_eq!(products.as_array().unwrap().len(), 2, "the served database is untouched");

        let target = fresh_target(&app, dir.path()).await;
        let restored = printed(&pd(&target, &["restore", snapshot.to_str().unwrap()]).await);
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
                                                      "--key-to", keys.to_str().unwrap()]).await);
        let snapshot = snapshot_of(&taken);
        let key = PathBuf::from(taken["key"].as_str().unwrap());
        assert!(key.starts_with(&keys) && !snapshot.join("paydesk.kek").exists(), "the key kept apart");
        let target = fresh_target(&app, dir.path()).await;
        let restore = async |extra: &[&str]| {
            let mut args = vec!["restore", snapshot.to_str().unwrap()];
            args.extend_from_slice(extra);
            pd(&target, &args).await
        };

        assert!(refusal(&restore(&[]).await).contains("--key"));
        let wrong = dir.path().join("wrong.kek");
        std::fs::write(&wrong, "d3JvbmctdGVzdC1rZXktZW5jcnlwdGlvbi1rZXkhISE=\n").unwrap();
        assert!(refusal(&restore(&["--key", wrong.to_str().unwrap()]).await).contains("is not the key"));
        let other_kek = crate::cli::output(
            command(&target)
                .env("PAYDESK_KEY_ENCRYPTION_KEY", "d3JvbmctdGVzdC1rZXktZW5jcnlwdGlvbi1rZXkhISE=")
                .args(["restore", snapshot.to_str().unwrap(), "--key", key.to_str().unwrap()]),
        )
        .await;
        assert!(refusal(&other_kek).contains("PAYDESK_KEY_ENCRYPTION_KEY is not this snapshot's key"));

        let damaged = dir.path().join("damaged");
        copy_dir(&snapshot, &damaged);
        let file = damaged.join(if matches!(app.backend, Backend::Sqlite) { "paydesk.db" } else { "paydesk.dump" });
        let mut bytes = std::fs::read(&file).unwrap();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0xff;
        std::fs::write(&file, bytes).unwrap();
        let said = refusal(&pd(&target, &["restore", damaged.to_str().unwrap(), "--key", key.to_str().unwrap()]).await);
        assert!(said.contains("damaged"), "{said}");
        let partial = dir.path().join("partial");
        copy_dir(&snapshot, &partial);
        std::fs::remove_file(partial.join("manifest.json")).unwrap();
        let said = refusal(&pd(&target, &["restore", partial.to_str().unwrap(), "--key", key.to_str().unwrap()]).await);
        assert!(said.contains("not a complete snapshot"), "{said}");
        assert!(!has_tables(app.backend, &target).await, "nothing was changed");

        let restored = printed(&restore(&["--key", key.to_str().unwrap()]).await);
        assert_eq!(restored["tables"], taken["tables"]);
        assert!(has_tables(app.backend, &target).await);
    }

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
    let shop = printed(&pd(own, &["shop", "create", "--name", "Public"]).await);
    let dir = tempfile::tempdir().unwrap();
    let taken = printed(&pd(own, &["backup", "--to", dir.path().to_str().unwrap()]).await);
    let snapshot = taken["snapshot"].as_str().unwrap();
    printed(&pd(own, &["shop", "create", "--name", "After the snapshot"]).await);

    let restored = printed(&pd(new, &["restore", snapshot]).await);
    assert_eq!(restored["set_aside"], json!([]), "a new database's empty public is replaced");
    let again = printed(&pd(own, &["restore", snapshot]).await);
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
