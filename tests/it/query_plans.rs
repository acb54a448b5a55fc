//! The plans the databases choose for the dashboard's hot queries, with enough rows that they
//! choose as they would in production: no whole scan of a shop's payments and no sort of
//! them, on the first page, a later one, and a status's list.

use paydesk::db::entities::{customers, payments, products, subscriptions};
use paydesk::db::subscriptions::{Claim, Due};
use paydesk::domain::payment::{PaymentFilter, PaymentSearch, SearchTerms};
use paydesk::domain::vocab::PaymentStatus;
use sea_orm::{ConnectionTrait, DatabaseBackend, QueryTrait, Statement};
use serde_json::json;

use crate::helpers::*;

/// The plan of `statement`, one line a step.
pub async fn plan_of(app: &TestApp, statement: Statement) -> String {
    let explain = match statement.db_backend {
        DatabaseBackend::Postgres => "EXPLAIN ",
        _ => "EXPLAIN QUERY PLAN ",
    };
    let statement = Statement { sql: format!("{explain}{}", statement.sql), ..statement };
    let rows = app.db.query_all(statement.clone()).await.unwrap();
    let column = if app.db.get_database_backend() == DatabaseBackend::Postgres { "QUERY PLAN" } else { "detail" };
    let plan = rows.iter().map(|r| r.try_get::<String>("", column).unwrap()).collect::<Vec<_>>().join("\n");
    // Shown with `--nocapture`: docs/performance.md quotes them.
    println!("{}\n{plan}\n", statement.sql);
    plan
}

/// Whether `plan` reads the whole of `table` (SQLite's `SCAN table`, PostgreSQL's `Seq Scan`).
pub fn scans(plan: &str, table: &str) -> bool {
    plan.lines().any(|l| {
        let l = l.trim_start_matches(|c: char| !c.is_alphabetic());
        l.strip_prefix("SCAN ").is_some_and(|rest| rest.split(' ').next() == Some(table))
            || l.starts_with(&format!("Seq Scan on {table} "))
            || l == format!("Seq Scan on {table}")
    })
}

/// A shop with a product and one payment for it: (the shop, the product's id, the payment's id).
async fn paid(app: &TestApp) -> (Shop, String, String) {
    let shop = app.shop("Books").await;
    let product = app.product(&shop, &test_product_body()).await;
    let id = product["id"].as_str().unwrap().to_string();
    app.pay(&id, cards::SUCCESS, &[]).await;
    let (_, payments) = app.get(&shop, "/payments").await;
    let payment = payments[0]["id"].as_str().unwrap().to_string();
    (shop, id, payment)
}

db_tests! {
    async fn the_payments_list_reads_its_page_in_the_order_of_an_index(app) {
        let (shop, _, payment) = paid(&app).await;
        copy_payment(&app, &payment, 20_000).await;
        let (_, listed) = app.get(&shop, "/payments?limit=100").await;
        assert_eq!(listed.as_array().unwrap().len(), 100);

        let backend = app.db.get_database_backend();
        let failed = PaymentSearch {
            filter: PaymentFilter { status: Some(PaymentStatus::Failed), ..Default::default() },
            ..Default::default()
        };
        let test_only = PaymentSearch { test: Some(true), ..Default::default() };
        let after = Some((chrono::Utc::now() - chrono::Duration::hours(3), 1));
        for (what, search, after) in [
            ("the first page", PaymentSearch::default(), None),
            ("a later page", PaymentSearch::default(), after),
            ("the failed ones", failed, None),
            ("test mode's", test_only, after),
        ] {
            let statement = paydesk::db::payments::search_query(backend, shop.id, &search, after, 51).build(backend);
            let plan = plan_of(&app, statement).await;
            assert!(!plan.contains("TEMP B-TREE") && !plan.contains("Sort"), "{what} sorts: {plan}");
            assert!(!plan.contains("SCAN payments") && !plan.contains("Seq Scan"), "{what} scans: {plan}");
            assert!(plan.contains("ix_payments_shop_time") || plan.contains("ix_payments_shop_status_time"), "{what}: {plan}");
        }
    }

    async fn searches_read_the_rows_they_find_from_an_index(app) {
        let (shop, product, payment) = paid(&app).await;
        let id = product.as_str();
        let (_, customer) = app.post(&shop, "/customers", &customer_body()).await;
        copy_customer(&app, &shop, "ann@example.com", 20_000).await;
        // Each copy paid by a copy of the customer.
        let paid_by = format!("'{}_' || n.i", customer["id"].as_str().unwrap());
        let amount = "amount + n.i % 1000".to_string();
        copy_rows::<payments::Entity>(&app, &payment, 20_000, &[("customer_id", paid_by), ("billing_key", "NULL".into()), ("amount", amount)]).await;
        copy_rows::<products::Entity>(&app, id, 20_000, &[("name", "name || ' ' || n.i".to_string())]).await;

        let backend = app.db.get_database_backend();
        for (what, statement) in [
            ("customers", paydesk::db::search_query::<customers::Entity>(backend, shop.id, "ann@example.com.1777", 21).build(backend)),
            ("customers, two words", paydesk::db::search_query::<customers::Entity>(backend, shop.id, "Ann ann@example.com.1777", 21).build(backend)),
            ("products", paydesk::db::search_query::<products::Entity>(backend, shop.id, "1777", 21).build(backend)),
        ] {
            let plan = plan_of(&app, statement).await;
            for table in ["customers", "products"] {
                assert!(!scans(&plan, table), "{what}: {plan}");
            }
            // Read from the word index, not by walking every object until a page turns up.
            assert!(plan.contains("_search VIRTUAL TABLE") || plan.contains("Bitmap Index Scan on ix_"), "{what}: {plan}");
            assert!(!plan.contains("Index Scan Backward"), "{what}: {plan}");
        }
        let terms = |text: &str, id: Option<&str>, last4: Option<&str>| PaymentSearch {
            terms: Some(SearchTerms { text: text.into(), id: id.map(Into::into), last4: last4.map(Into::into), amounts: vec![(2, 1_777)] }),
            ..Default::default()
        };
        let copy = format!("{payment}_1777");
        for (what, search) in [
            ("an e-mail", terms("ann@example.com.1777", None, None)),
            ("a card holder", terms("nobody like this", None, None)),
            ("an id", terms(&copy, Some(&copy), None)),
            ("a last four", terms("4444", None, Some("4444"))),
        ] {
            let statement = paydesk::db::payments::search_query(backend, shop.id, &search, None, 51).build(backend);
            let plan = plan_of(&app, statement).await;
            assert!(!scans(&plan, "payments") && !scans(&plan, "customers"), "{what}: {plan}");
            assert!(!plan.contains("ix_payments_shop_time"), "{what} walks every payment of the shop: {plan}");
            // Every payment lookup narrows by more than the shop.
            assert!(!plan.lines().any(|l| l.trim_end().ends_with("(shop_id=?)")), "{what} walks every payment of the shop: {plan}");
        }
    }

    async fn the_billing_engine_reads_what_is_due_in_the_order_of_an_index(app) {
        use crate::subscriptions::{card_json, clock, plan, subscribe};
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2030-01-01T00:00:00Z").await;
        let on_clock = subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await;
        let body = json!({"plan": {"id": plan}, "customer": customer_body(), "card": card_json(cards::SUCCESS)});
        let (_, real) = app.post(&shop, "/subscriptions", &body).await;
        // Twenty thousand due in real time, and as many on the clock with their charges.
        copy_rows::<subscriptions::Entity>(&app, real["id"].as_str().unwrap(), 20_000, &[("renew_at", "created_at".into())]).await;
        copy_rows::<subscriptions::Entity>(&app, on_clock["id"].as_str().unwrap(), 20_000, &[]).await;
        let (_, charges) = app.get(&shop, &format!("/payments?subscription={}", on_clock["id"].as_str().unwrap())).await;
        let charge = charges[0]["id"].as_str().unwrap();
        let copies = format!("'{}_' || n.i", on_clock["id"].as_str().unwrap());
        let changed = [("subscription_id", copies), ("billing_key", "NULL".into()), ("network_at", "created_at".into())];
        copy_rows::<payments::Entity>(&app, charge, 20_000, &changed).await;

        let backend = app.db.get_database_backend();
        let now = chrono::Utc::now();
        let claim = Claim { token: "t", lease_until: now, now, due_by: now };
        let plan = plan_of(&app, claim.statement(backend, Due::Scheduled, 100)).await;
        assert!(!plan.contains("TEMP B-TREE") && !plan.contains("Sort"), "the claim sorts what is due: {plan}");
        assert!(plan.contains("ix_subscriptions_due_order"), "{plan}");
        for clock in [Some(clock.as_str()), None] {
            let statement = paydesk::db::disputes::network_due_payments(clock, now, 200).build(backend);
            let plan = plan_of(&app, statement).await;
            assert!(!scans(&plan, "subscriptions") && !scans(&plan, "payments"), "{clock:?}: {plan}");
            assert!(!plan.contains("LIST SUBQUERY") && !plan.contains("Hash"), "{clock:?} reads the clock's every subscription: {plan}");
        }
    }
}

db_tests! {
    async fn the_sweep_of_every_engine_run_reads_only_the_payments_it_looks_for(app) {
        use crate::subscriptions::{card_json, plan};
        use paydesk::db::payments::{Sweep, sweep_query};
        let (shop, _, payment) = paid(&app).await;
        copy_payment(&app, &payment, 20_000).await;
        let plan = plan(&app, &shop, json!({})).await;
        let body = json!({"plan": {"id": plan}, "customer": customer_body(), "card": card_json(cards::SUCCESS)});
        let (_, subscribed) = app.post(&shop, "/subscriptions", &body).await;
        copy_rows::<subscriptions::Entity>(&app, subscribed["id"].as_str().unwrap(), 20_000, &[]).await;
        let backend = app.db.get_database_backend();
        let now = chrono::Utc::now();
        for (sweep, index) in [
            (Sweep::Orphaned { before: now, now }, "ix_payments_renewing"),
            (Sweep::Unopened { before: now }, "ix_payments_unopened"),
        ] {
            let plan = plan_of(&app, sweep_query(backend, sweep, 500)).await;
            // SQLite's `SCAN payments USING INDEX` of a partial index reads just what it holds;
            // it names the subscriptions by their alias `s`.
            let whole = plan.replace(&format!("SCAN payments USING INDEX {index}"), "");
            let subscriptions = scans(&whole, "subscriptions") || scans(&whole, "s");
            assert!(!scans(&whole, "payments") && !subscriptions, "{sweep:?}: {plan}");
            assert!(plan.contains(index), "{sweep:?}: {plan}");
        }
    }
}

/// SQLite reads a table's statistics once per connection, with the schema. After they are
/// gathered again, every pooled connection plans with the new ones, not only the one that
/// gathered them.
#[tokio::test]
async fn every_pooled_sqlite_connection_plans_with_the_statistics_last_gathered() {
    use sea_orm::sqlx;
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}?mode=rwc", dir.path().join("statistics.db").display());
    let db = paydesk::db::connect(&url, 3).await.unwrap();
    let rows = |n: u32, a: &str, b: &str| {
        format!(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {n}) \
             INSERT INTO t (a, b) SELECT {a}, {b} FROM n"
        )
    };
    db.execute_unprepared(
        "CREATE TABLE t (a INTEGER, b INTEGER); CREATE INDEX ix_a ON t (a); CREATE INDEX ix_b ON t (b)",
    )
    .await
    .unwrap();
    // Few rows, `a` telling them apart and `b` not.
    db.execute_unprepared(&rows(10, "i", "0")).await.unwrap();
    paydesk::db::optimize(&db).await.unwrap();
    let pool = db.get_sqlite_connection_pool();
    let plans = async || {
        let mut held = Vec::new();
        let mut plans = Vec::new();
        for _ in 0..3 {
            let mut conn = pool.acquire().await.unwrap();
            let plan: Vec<(i64, i64, i64, String)> =
                sqlx::query_as("EXPLAIN QUERY PLAN SELECT * FROM t WHERE a = 0 AND b = 5")
                    .fetch_all(&mut *conn)
                    .await
                    .unwrap();
            plans.push(plan.into_iter().map(|row| row.3).collect::<Vec<_>>().join("; "));
            held.push(conn);
        }
        plans
    };
    for plan in plans().await {
        assert!(plan.contains("INDEX ix_a"), "{plan}");
    }
    // A hundred times as many, `b` telling them apart and `a` not.
    db.execute_unprepared(&rows(1000, "0", "i")).await.unwrap();
    paydesk::db::optimize(&db).await.unwrap();
    for plan in plans().await {
        assert!(plan.contains("INDEX ix_b"), "every connection plans with the new statistics: {plan}");
    }
}

db_tests! {
    async fn the_books_are_listed_and_filtered_from_their_indexes(app) {
        use paydesk::db::entities::documents;
        use paydesk::domain::invoice::{DocumentFilter, DocumentKind};
        let (shop, _, _) = paid(&app).await;
        crate::invoices::set_seller(&app, &shop).await;
        let product = app.product(&shop, &test_product_body()).await;
        app.pay(product["id"].as_str().unwrap(), cards::SUCCESS, &[]).await;
        let invoice = crate::invoices::invoices(&app, &shop, "").await.remove(0);
        let changed = [
            ("number", "number + n.i".to_string()),
            ("number_text", "number_text || '-' || n.i".to_string()),
            ("source", "source || '_' || n.i".to_string()),
            ("payment_id", "payment_id || '_' || n.i".to_string()),
            ("customer_id", "'cst_' || (n.i % 1000)".to_string()),
        ];
        copy_rows::<documents::Entity>(&app, invoice["id"].as_str().unwrap(), 20_000, &changed).await;
        let (_, listed) = app.get(&shop, "/invoices?limit=100").await;
        assert_eq!(listed.as_array().unwrap().len(), 100);

        let backend = app.db.get_database_backend();
        let filter = |f: DocumentFilter| f;
        let one = |s: &str| Some(s.to_string());
        for (what, f, index) in [
            ("the first page", DocumentFilter::default(), "ix_documents_list"),
            ("a customer's", filter(DocumentFilter { customer: one("cst_101"), ..Default::default() }), "ix_documents_customer"),
            ("a payment's", filter(DocumentFilter { payment: one(invoice["payment_id"].as_str().unwrap()), ..Default::default() }), "ix_documents_payment"),
            ("a number", filter(DocumentFilter { number: one("TEST-INV-000001-77"), ..Default::default() }), "ix_documents_number_text"),
            ("an invoice's corrections", filter(DocumentFilter { invoice: one(invoice["id"].as_str().unwrap()), ..Default::default() }), "ix_documents_invoice"),
        ] {
            let statement = paydesk::db::documents::list_query(shop.id, DocumentKind::Invoice, &f, 101).build(backend);
            let plan = plan_of(&app, statement).await;
            assert!(!scans(&plan, "documents"), "{what} scans: {plan}");
            assert!(!plan.contains("TEMP B-TREE") && !plan.contains("Sort"), "{what} sorts: {plan}");
            // With one shop, PostgreSQL walks the whole table's newest first for the first page.
            assert!(plan.contains(index) || plan.contains("documents_pkey"), "{what}: {plan}");
        }
        // The accountant's CSV reads a period a page at a time from the issue dates' index.
        let now = chrono::Utc::now();
        let period = (now - chrono::Duration::days(31), now);
        for after in [None, Some((now - chrono::Duration::days(1), 5_000))] {
            let statement = paydesk::db::documents::period_query((shop.id, DocumentKind::Invoice, true), period, after, 500).build(backend);
            let plan = plan_of(&app, statement).await;
            assert!(!scans(&plan, "documents") && plan.contains("ix_documents_issued"), "a period's page: {plan}");
        }
    }

    async fn api_keys_are_found_and_listed_from_their_indexes(app) {
        use paydesk::db::api_keys as keys;
        use paydesk::db::entities::api_keys;
        let shop = app.shop("Shop").await;
        let (_, listed) = app.get(&shop, "/api_keys").await;
        let id = listed[0]["id"].as_str().unwrap().to_string();
        let changed = [("digest", "digest || '_' || n.i".to_string()), ("last_used_at", "created_at".to_string())];
        copy_rows::<api_keys::Entity>(&app, &id, 20_000, &changed).await;
        paydesk::db::optimize(&app.db).await.unwrap();
        let backend = app.db.get_database_backend();
        let now = chrono::Utc::now();
        let (_, page) = app.get(&shop, "/api_keys?limit=100").await;
        assert_eq!(page.as_array().unwrap().len(), 100);
        for (what, statement, index) in [
            ("the last used", keys::lately_used_query(shop.id, 5).build(backend), "ix_api_keys_last_used"),
            ("the expiring", keys::expiring_query(now, chrono::Duration::days(7)).build(backend), "ix_api_keys_expires_at"),
            ("the waiting successors", keys::waiting_query().build(backend), "ix_api_keys_sealed"),
        ] {
            let plan = plan_of(&app, statement).await;
            // The partial index holds only the waiting few: reading all of it is the point.
            let whole_partial = plan.contains("SCAN api_keys USING INDEX ix_api_keys_sealed");
            assert!(!scans(&plan, "api_keys") || whole_partial, "{what} scans: {plan}");
            assert!(!plan.contains("TEMP B-TREE") && !plan.contains("Sort"), "{what} sorts: {plan}");
            assert!(plan.contains(index), "{what}: {plan}");
        }
    }

    async fn a_subscriptions_books_are_read_from_their_indexes(app) {
        use crate::subscriptions::{clock, plan, subscribe};
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2026-01-01T10:00:00Z").await;
        let sub = subscribe(&app, &shop, &plan, &clock, cards::SUCCESS).await;
        let (sub, customer) = (sub["id"].as_str().unwrap(), sub["customer"]["id"].as_str().unwrap());
        let row = app.db.query_one(Statement::from_string(
            app.db.get_database_backend(),
            format!("SELECT event_id FROM mrr_movements WHERE subscription_id = '{sub}'"),
        ));
        let event: String = row.await.unwrap().expect("the subscription's first movement").try_get("", "event_id").unwrap();
        // 20,000 movements of as many other subscriptions and customers.
        let columns = "shop_id, test, currency, customer_id, subscription_id, event_id, kind, mrr, paused, subscribers, \
                       mrr_after, paused_after, occurred_at";
        let copied = "shop_id, test, currency, customer_id || '_' || n.i, subscription_id || '_' || n.i, \
                      event_id || '_' || n.i, kind, mrr, paused, subscribers, mrr_after, paused_after, occurred_at";
        app.db
            .execute_unprepared(&format!(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000) \
                 INSERT INTO mrr_movements ({columns}) SELECT {copied} FROM mrr_movements, n \
                 WHERE mrr_movements.event_id = '{event}'"
            ))
            .await
            .unwrap();
        paydesk::db::optimize(&app.db).await.unwrap();
        let backend = app.db.get_database_backend();
        let plan = plan_of(&app, backend.build(&paydesk::db::mrr::books_query(&[sub], &[customer]).unwrap())).await;
        assert!(!scans(&plan, "mrr_movements"), "{plan}");
        assert!(plan.contains("ix_mrr_movements_subscription") && plan.contains("ix_mrr_movements_customer"), "{plan}");
        let (left, held) = paydesk::db::mrr::books(&app.db, &[sub], &[customer]).await.unwrap();
        assert_eq!(left[sub].mrr, 990, "the subscription's last standing");
        assert_eq!(held[&(customer.to_string(), "EUR", true)].mrr, 990, "its customer's sum");
    }
}
