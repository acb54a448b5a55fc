//! The audit trail: each security action of the dashboard, the API and the command line leaves
//! exactly one record with its actor and fields (secrets only as changed), the chain holds and
//! a tampered, removed or reordered record is found, records of one shop written at once stay
//! in one unbroken chain, and the API and the dashboard page list, filter and export them.

use reqwest::StatusCode;
use sea_orm::{ConnectionTrait, Statement};
use serde_json::{Value, json};

use super::accounts::invite_as;
use super::*;

/// Every record of the shop, oldest first, through the API.
async fn records(app: &TestApp, shop: &Shop) -> Vec<Value> {
    let (status, page) = app.get(shop, "/audit_events?limit=1000").await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let mut all = page.as_array().unwrap().clone();
    all.reverse();
    all
}

/// The records of `action`.
fn of<'a>(all: &'a [Value], action: &str) -> Vec<&'a Value> {
    all.iter().filter(|r| r["action"] == action).collect()
}

/// The one record of `action`, which must be alone.
fn one<'a>(all: &'a [Value], action: &str) -> &'a Value {
    let found = of(all, action);
    assert_eq!(found.len(), 1, "one {action}: {all:#?}");
    found[0]
}

/// The record's change of `field` as (before, after).
fn change(record: &Value, field: &str) -> (Value, Value) {
    let c = record["changes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["field"] == field)
        .unwrap_or_else(|| panic!("{field} in {record}"));
    (c["before"].clone(), c["after"].clone())
}

async fn verify(app: &TestApp) -> Vec<paydesk::services::audit::Checked> {
    paydesk::services::audit::verify_all(&app.db, None).await.unwrap()
}

async fn sql(app: &TestApp, statement: &str) {
    app.db.execute(Statement::from_string(app.db.get_database_backend(), statement.to_string())).await.unwrap();
}

db_tests! {
    async fn each_security_action_leaves_one_record_with_its_actor_and_no_secret(app) {
        let ann = sign_up(&app, "Books", "ann@example.com").await;
        let shop = api_shop(&ann).await;
        let all = records(&app, &shop).await;
        let created = one(&all, "shop.created");
        assert_eq!((created["actor"]["type"].clone(), created["actor"]["name"].clone(), created["actor"]["role"].clone()),
                   (json!("user"), json!("ann@example.com"), json!("owner")));
        assert_eq!(change(created, "name"), (Value::Null, json!("Books")));
        assert_eq!(created["ip_address"], "127.0.0.1");
        assert!(created["request_id"].as_str().unwrap().starts_with("req_"));
        let rotated = one(&all, "api_key.rotated");
        assert_eq!(change(rotated, "secret_key"), (json!("(secret)"), json!("(secret)")));
        assert_eq!(rotated["target_type"], "shop");

        // A wrong password, then a login; a user invited, joined, given a role, removed.
        assert_eq!(log_in(&app, "ann@example.com", "wrong password!").await.1.status, StatusCode::UNPROCESSABLE_ENTITY);
        let (ann, _) = log_in(&app, "ann@example.com", PASSWORD).await;
        let bob = invite_as(&app, &ann, "bob@example.com", "support").await;
        let bob_page = ann.get("/dashboard/settings/users").await;
        let bob_row = bob_page.html.split("data-testid=\"member\"").find(|row| row.contains("bob@example.com")).unwrap();
        let bob_id = bob_row.split("/dashboard/settings/users/").nth(1).unwrap().split('/').next().unwrap().to_string();
        // Bob, support, may not rotate the key: refused, recorded, nothing changed.
        let refused = bob.post("/dashboard/settings/rotate", &[("confirm", "yes")]).await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN);
        assert_eq!(ann.post(&format!("/dashboard/settings/users/{bob_id}/role"), &[("role", "analyst")]).await.status, StatusCode::SEE_OTHER);
        assert_eq!(ann.post(&format!("/dashboard/settings/users/{bob_id}/remove"), &[("confirm", "yes")]).await.status, StatusCode::SEE_OTHER);

        // The integration's changes, by the API key: a processor with secrets, a webhook
        // endpoint, the notification URL.
        let secret = "sk_test_NeverShownInTheTrail0123456789";
        let body = json!({"kind": "stripe", "test": {"secret_key": secret}});
        let (status, answer) = app.put(&shop, "/shop/processor", &body).await;
        assert_eq!(status, StatusCode::OK, "{answer}");
        let (status, endpoint) = app.post(&shop, "/webhook_endpoints", &json!({"url": "https://hooks.example/a"})).await;
        assert_eq!(status, StatusCode::CREATED, "{endpoint}");
        let whsec = endpoint["secret"].as_str().unwrap().to_string();
        let id = endpoint["id"].as_str().unwrap().to_string();
        assert_eq!(app.post(&shop, &format!("/webhook_endpoints/{id}"), &json!({"url": "https://hooks.example/b"})).await.0, StatusCode::OK);
        assert_eq!(app.put(&shop, "/shop", &json!({"notification_url": "https://erp.example/n"})).await.0, StatusCode::OK);
        assert_eq!(ann.post("/dashboard/logout", &[]).await.status, StatusCode::SEE_OTHER);

        let all = records(&app, &shop).await;
        let text = serde_json::to_string(&all).unwrap();
        for leaked in [secret, whsec.as_str(), &shop.secret, PASSWORD] {
            assert!(!text.contains(leaked), "a secret in the trail: {leaked}");
        }
        let failed = of(&all, "user.login_failed");
        assert_eq!(failed.len(), 2, "ann's wrong password and bob's before his invitation was used");
        assert_eq!(failed[0]["outcome"], "refused");
        assert_eq!(failed[0]["actor"]["name"], "ann@example.com");
        assert_eq!(of(&all, "user.logged_in").len(), 1, "ann's login (sign-up and an invitation sign in without one)");
        let invited = one(&all, "user.invited");
        assert_eq!((invited["target_id"].clone(), change(invited, "role")), (json!(bob_id), (Value::Null, json!("support"))));
        let joined = one(&all, "user.joined");
        assert_eq!(joined["actor"]["name"], "bob@example.com");
        let denied = one(&all, "access.refused");
        assert_eq!((denied["actor"]["name"].clone(), denied["actor"]["role"].clone(), denied["outcome"].clone()),
                   (json!("bob@example.com"), json!("support"), json!("refused")));
        assert_eq!(change(denied, "request").1, "POST /dashboard/settings/rotate");
        assert_eq!(change(one(&all, "user.role_changed"), "role"), (json!("support"), json!("analyst")));
        assert_eq!(change(one(&all, "user.removed"), "email"), (json!("bob@example.com"), Value::Null));
        let processor = one(&all, "processor.updated");
        assert_eq!(processor["actor"]["type"], "api_key");
        assert_eq!(change(processor, "test.secret_key"), (Value::Null, json!("(secret)")));
        assert_eq!(change(processor, "kind"), (Value::Null, json!("stripe")));
        assert_eq!(change(one(&all, "webhook_endpoint.created"), "secret"), (Value::Null, json!("(secret)")));
        assert_eq!(change(one(&all, "webhook_endpoint.updated"), "url"), (json!("https://hooks.example/a"), json!("https://hooks.example/b")));
        assert_eq!(change(one(&all, "shop.updated"), "notification_url"), (Value::Null, json!("https://erp.example/n")));
        assert_eq!(change(one(&all, "session.ended"), "reason").1, "logout");

        // Numbered 1, 2, 3… and chained; the command's check agrees.
        for (i, r) in all.iter().enumerate() {
            assert_eq!(r["sequence"], i as i64 + 1);
            if i > 0 {
                assert_eq!(r["previous_hash"], all[i - 1]["hash"]);
            }
        }
        let checked = verify(&app).await;
        assert_eq!(checked.len(), 1);
        assert_eq!((checked[0].records, checked[0].broken.clone()), (all.len() as u64, None));
    }

    async fn a_changed_removed_or_cut_record_breaks_the_chain(app) {
        let shop = app.shop("Books").await;
        for n in 0..5 {
            let url = format!("https://erp.example/{n}");
            assert_eq!(app.put(&shop, "/shop", &json!({"notification_url": url})).await.0, StatusCode::OK);
        }
        assert_eq!(verify(&app).await[0].broken, None);
        sql(&app, "UPDATE audit_events SET changes = replace(changes, 'erp.example/2', 'evil.example/2') WHERE seq = 4").await;
        let broken = verify(&app).await;
        assert_eq!(broken[0].broken.as_deref(), Some("record number 4 was changed after it was written"));
        sql(&app, "UPDATE audit_events SET changes = replace(changes, 'evil.example/2', 'erp.example/2') WHERE seq = 4").await;
        assert_eq!(verify(&app).await[0].broken, None, "put back as it was");
        sql(&app, "DELETE FROM audit_events WHERE seq = 3").await;
        assert_eq!(verify(&app).await[0].broken.as_deref(), Some("record number 4 does not follow the one before it"));

        let other = app.shop("Toys").await;
        app.put(&other, "/shop", &json!({"notification_url": "https://toys.example/n"})).await;
        app.put(&other, "/shop", &json!({"notification_url": "https://toys.example/m"})).await;
        // Chained (within a quarter second) before it is cut.
        paydesk::db::audit::seal_all(&app.db).await.unwrap();
        sql(&app, &format!("DELETE FROM audit_events WHERE shop_id = {} AND seq = 3", other.id)).await;
        let checked = verify(&app).await;
        let toys = checked.iter().find(|c| c.shop_id == other.id).unwrap();
        assert_eq!(toys.broken.as_deref(), Some("the newest records up to number 3 are missing"));
        // The command says so and fails.
        let out = crate::cli::output(crate::cli::paydesk(&app.database_url).args(["audit", "verify"])).await;
        assert!(!out.status.success());
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(stdout.lines().count(), 2, "{stdout}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("the audit trail of 2 shop(s) is broken"));
    }

    async fn records_written_at_once_form_one_unbroken_chain(app) {
        let shop = app.shop("Books").await;
        let changes = (0..24).map(|n| {
            let (app, shop) = (&app, &shop);
            async move { app.put(shop, "/shop", &json!({"notification_url": format!("https://erp.example/{n}")})).await.0 }
        });
        for status in futures::future::join_all(changes).await {
            assert_eq!(status, StatusCode::OK);
        }
        let all = records(&app, &shop).await;
        let updates = of(&all, "shop.updated");
        assert!(updates.len() >= 20, "each change that changed the URL is recorded: {}", updates.len());
        let sequences: Vec<i64> = all.iter().map(|r| r["sequence"].as_i64().unwrap()).collect();
        assert_eq!(sequences, (1..=all.len() as i64).collect::<Vec<_>>());
        assert_eq!(verify(&app).await[0].broken, None);
        // Each record's "before" is the value the one before it left.
        for pair in updates.windows(2) {
            assert_eq!(change(pair[1], "notification_url").0, change(pair[0], "notification_url").1);
        }
    }

    async fn waiting_records_are_chained_once_in_the_order_written_whoever_seals_them(app) {
        use paydesk::db::entities::audit_pending;
        use paydesk::domain::audit::{ActorKind, Outcome};
        use sea_orm::{ActiveValue::NotSet, ActiveValue::Set, EntityTrait};
        let shop = app.shop("Books").await;
        paydesk::db::audit::seal_all(&app.db).await.unwrap();
        // 450 records waiting to be chained, more than two seals' batches: as PostgreSQL's
        // changes write them, and as an older paydesk left them on SQLite, whose changes now
        // chain their own records (one comes in between). Then sealed by four instances at
        // once beside this one's own sealer.
        let mut written = Vec::new();
        for n in 0..450 {
            let id = format!("aud_waiting{n:03}");
            let row = audit_pending::ActiveModel {
                n: NotSet,
                id: Set(id.clone()),
                shop_id: Set(shop.id),
                at: Set(paydesk::db::now_millis(chrono::Utc::now())),
                actor_kind: Set(ActorKind::Operator),
                actor_id: Set(None),
                actor_label: Set(None),
                actor_role: Set(None),
                address: Set(None),
                user_agent: Set(None),
                request_id: Set(None),
                action: Set("shop.updated".into()),
                object_type: Set(Some("shop".into())),
                object_id: Set(Some(format!("{n}"))),
                changes: Set("[]".into()),
                outcome: Set(Outcome::Success),
            };
            // Not read back: a sealer may take it at once.
            audit_pending::Entity::insert(row).exec_without_returning(&app.db).await.unwrap();
            written.push(id);
            if n == 200 {
                let (status, _) = app.put(&shop, "/shop", &json!({"notification_url": "https://erp.example/n"})).await;
                assert_eq!(status, StatusCode::OK);
            }
        }
        let sealers = (0..4).map(|_| paydesk::db::audit::seal_all(&app.db));
        let sealed: u64 = futures::future::try_join_all(sealers).await.unwrap().into_iter().sum();
        assert!(sealed <= 450, "each record sealed once: {sealed}");
        let waiting = app.db.query_one(Statement::from_string(app.db.get_database_backend(),
            "SELECT count(*) AS n FROM audit_pending")).await.unwrap().unwrap();
        assert_eq!(waiting.try_get::<i64>("", "n").unwrap(), 0);
        let all = records(&app, &shop).await;
        let ids: Vec<&str> = all.iter().map(|r| r["id"].as_str().unwrap()).filter(|id| written.iter().any(|w| w == id)).collect();
        assert_eq!(ids, written.iter().map(String::as_str).collect::<Vec<_>>(), "chained in the order written");
        let sequences: Vec<i64> = all.iter().map(|r| r["sequence"].as_i64().unwrap()).collect();
        assert_eq!(sequences, (1..=all.len() as i64).collect::<Vec<_>>());
        let checked = verify(&app).await;
        assert_eq!((checked[0].records, checked[0].broken.clone()), (all.len() as u64, None));
    }

    async fn a_record_whose_numbers_read_back_otherwise_still_verifies(app) {
        use paydesk::domain::audit::{Actor, Change, Entry, Origin};
        let shop = app.shop("Books").await;
        // Numbers whose text does not always parse back to the number they came from.
        let entry = Entry::new(shop.id, Actor::operator(), Origin::default(), "shop.updated")
            .on("shop", "rates")
            .changing(vec![Change::of("rate", 449.49106478873813_f64, 0.1_f64 + 0.2_f64)]);
        let txn = paydesk::db::begin(&app.db).await.unwrap();
        paydesk::db::audit::record(&txn, &entry, chrono::Utc::now()).await.unwrap();
        txn.commit().await.unwrap();
        let checked = verify(&app).await;
        assert_eq!((checked[0].broken.clone(), checked[0].records > 0), (None, true));
    }

    async fn a_change_is_in_the_trail_as_soon_as_it_is_answered(app) {
        let shop = app.shop("Books").await;
        let (status, product) = app.post(&shop, "/products", &test_product_body()).await;
        assert_eq!(status, StatusCode::CREATED, "{product}");
        // Read at once: the list seals what waits before it reads.
        let all = records(&app, &shop).await;
        let created = one(&all, "product.created");
        assert_eq!(created["target_id"], product["id"]);
        let (status, same) = app.get(&shop, &format!("/audit_events/{}", created["id"].as_str().unwrap())).await;
        assert_eq!((status, same["sequence"].clone()), (StatusCode::OK, created["sequence"].clone()));
    }

    async fn the_api_and_the_dashboard_list_filter_and_export_the_trail(app) {
        let ann = sign_up(&app, "Books", "ann@example.com").await;
        let shop = api_shop(&ann).await;
        let other = app.shop("Toys").await;
        for n in 0..3 {
            app.put(&shop, "/shop", &json!({"notification_url": format!("https://erp.example/{n}")})).await;
        }
        let (_, page) = app.get(&shop, "/audit_events?limit=2&action=shop.").await;
        let page = page.as_array().unwrap();
        assert_eq!(page.len(), 2);
        assert!(page.iter().all(|r| r["action"].as_str().unwrap().starts_with("shop.")));
        assert_eq!(page[0]["object"], "audit_event");
        let by_key = app.get(&shop, "/audit_events?actor=api_key").await.1;
        assert_eq!(by_key.as_array().unwrap().len(), 3);
        let id = page[0]["id"].as_str().unwrap();
        assert_eq!(app.get(&shop, &format!("/audit_events/{id}")).await.1["id"], id);
        assert_eq!(app.get(&other, &format!("/audit_events/{id}")).await.0, StatusCode::NOT_FOUND, "another shop's");
        assert_eq!(app.get(&shop, "/audit_events?created[gte]=yesterday").await.0, StatusCode::UNPROCESSABLE_ENTITY);
        let (_, none) = app.get(&shop, "/audit_events?created[lt]=2000-01-01T00:00:00Z").await;
        assert_eq!(none, json!([]));

        let html = ann.get("/dashboard/settings/audit").await;
        assert_eq!(html.status, StatusCode::OK);
        assert!(html.html.matches("data-testid=\"audit-record\"").count() >= 5, "{}", html.html);
        assert!(html.html.contains("api_key.rotated") && html.html.contains("https://erp.example/2"));
        let filtered = ann.get("/dashboard/settings/audit?actor=api_key&action=shop.").await;
        assert_eq!(filtered.html.matches("data-testid=\"audit-record\"").count(), 3);
        assert!(ann.get("/dashboard/settings/audit?from=2026-13-01").await.html.contains("A date is not a day like 2026-11-28."));
        let csv = ann.client.get(format!("{}/dashboard/settings/audit/export.csv?actor=api_key", app.base)).send().await.unwrap();
        assert_eq!(csv.headers()["content-type"], "text/csv; charset=utf-8");
        let csv = csv.text().await.unwrap();
        assert!(csv.starts_with("id,sequence,created_at,actor_type,"));
        assert_eq!(csv.lines().count(), 4, "{csv}");

        let support = invite_as(&app, &ann, "sue@example.com", "support").await;
        assert_eq!(support.get("/dashboard/settings/audit").await.status, StatusCode::FORBIDDEN);
        let admin = invite_as(&app, &ann, "al@example.com", "administrator").await;
        assert_eq!(admin.get("/dashboard/settings/audit").await.status, StatusCode::OK);
    }

    async fn records_older_than_the_retention_are_pruned_and_the_rest_still_verifies(app) {
        use paydesk::db::entities::audit_events::{Column, Entity};
        use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, sea_query::Expr};
        let shop = app.shop("Books").await;
        for n in 0..4 {
            app.put(&shop, "/shop", &json!({"notification_url": format!("https://erp.example/{n}")})).await;
        }
        assert_eq!(records(&app, &shop).await.len(), 5);
        let long_ago = paydesk::db::now_millis(chrono::Utc::now() - chrono::TimeDelta::days(366));
        Entity::update_many().col_expr(Column::At, Expr::value(long_ago)).filter(Column::Seq.lte(3)).exec(&app.db).await.unwrap();
        paydesk::services::scheduler::prune(&app.state).await;
        let kept = records(&app, &shop).await;
        assert_eq!(kept.iter().map(|r| r["sequence"].as_i64().unwrap()).collect::<Vec<_>>(), vec![4, 5], "a year and a day old: gone");
        let checked = verify(&app).await;
        assert_eq!((checked[0].records, checked[0].broken.clone()), (2, None), "the oldest kept starts the chain");
        app.put(&shop, "/shop", &json!({"notification_url": "https://erp.example/later"})).await;
        assert_eq!(records(&app, &shop).await.last().unwrap()["sequence"], 6, "numbering goes on");
        assert_eq!(verify(&app).await[0].broken, None);
    }

    async fn the_trails_table_is_a_region_the_keyboard_reaches_and_its_long_values_wrap(app) {
        let ann = sign_up(&app, "Books", "ann@example.com").await;
        let sue = invite_as(&app, &ann, "sue@example.com", "support").await;
        assert_eq!(sue.get("/dashboard/settings/audit").await.status, StatusCode::FORBIDDEN, "a refusal to list");
        let region = "<div class=\"table-wrap\" role=\"region\" tabindex=\"0\" aria-labelledby=\"audit-h\" data-testid=\"audit-records\">";
        let mut seen = Vec::new();
        for path in ["/dashboard/settings/audit", "/dashboard/settings/audit?action=access."] {
            seen.push(ann.get(path).await);
        }
        ann.post("/dashboard/settings/language", &[("language", "ru")]).await;
        seen.push(ann.get("/dashboard/settings/audit").await);
        for page in &seen {
            assert!(page.html.contains(region), "{}", page.html);
            assert!(page.html.contains("<h1 id=\"audit-h\">"), "the region's name");
            assert!(page.html.contains("<table class=\"cards audit\">") && page.html.contains("<td class=\"changes\""));
        }
        assert!(seen[1].html.contains("access.refused"), "the refusals filter lists one");
        let css = reqwest::get(format!("{}/static/dashboard.css", app.base)).await.unwrap().text().await.unwrap();
        assert!(css.contains("table.audit td.changes { overflow-wrap: anywhere; }"), "long changes wrap within their column");
    }
}
