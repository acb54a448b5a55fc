//! The plans the databases choose for the dashboard's hot queries, with enough rows that they
//! choose as they would in production: no whole scan of a shop's payments and no sort of
//! them, on the first page, a later one, and a status's list.

use paydesk::db::entities::{customers, products};
use paydesk::domain::payment::{PaymentFilter, PaymentSearch, SearchTerms};
use paydesk::domain::vocab::PaymentStatus;
use sea_orm::{ConnectionTrait, DatabaseBackend, QueryTrait, Statement};

use crate::helpers::*;

/// The plan of `statement`, one line a step.
async fn plan(app: &TestApp, statement: Statement) -> String {
    let explain = match statement.db_backend {
        DatabaseBackend::Postgres => "EXPLAIN ",
        _ => "EXPLAIN QUERY PLAN ",
    };
    let statement = Statement { sql: format!("{explain}{}", statement.sql), ..statement };
    let rows = app.db.query_all(statement).await.unwrap();
    let column = if app.db.get_database_backend() == DatabaseBackend::Postgres { "QUERY PLAN" } else { "detail" };
    rows.iter().map(|r| r.try_get::<String>("", column).unwrap()).collect::<Vec<_>>().join("\n")
}

/// Whether `plan` reads the whole of `table` (SQLite's `SCAN table`, PostgreSQL's `Seq Scan`).
fn scans(plan: &str, table: &str) -> bool {
    plan.lines().any(|l| {
        let l = l.trim_start_matches(|c: char| !c.is_alphabetic());
        l.strip_prefix("SCAN ").is_some_and(|rest| rest.split(' ').next() == Some(table))
            || l.starts_with(&format!("Seq Scan on {table} "))
            || l == format!("Seq Scan on {table}")
    })
}

db_tests! {
    async fn the_payments_list_reads_its_page_in_the_order_of_an_index(app) {
        let shop = app.shop("Books").await;
        let product = app.product(&shop, &test_product_body()).await;
        let id = product["id"].as_str().unwrap();
        app.pay(id, cards::SUCCESS, &[]).await;
        let (_, payments) = app.get(&shop, "/payments").await;
        let payment = payments[0]["id"].as_str().unwrap().to_string();
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
            let plan = plan(&app, statement).await;
            assert!(!plan.contains("TEMP B-TREE") && !plan.contains("Sort"), "{what} sorts: {plan}");
            assert!(!plan.contains("SCAN payments") && !plan.contains("Seq Scan"), "{what} scans: {plan}");
            assert!(plan.contains("ix_payments_shop_time") || plan.contains("ix_payments_shop_status_time"), "{what}: {plan}");
        }
    }

    async fn searches_read_the_rows_they_find_from_an_index(app) {
        let shop = app.shop("Books").await;
        let product = app.product(&shop, &test_product_body()).await;
        let id = product["id"].as_str().unwrap();
        app.pay(id, cards::SUCCESS, &[]).await;
        let (_, payments) = app.get(&shop, "/payments").await;
        let payment = payments[0]["id"].as_str().unwrap().to_string();
        copy_payment(&app, &payment, 20_000).await;
        app.post(&shop, "/customers", &customer_body()).await;
        copy_customer(&app, &shop, "ann@example.com", 20_000).await;
        copy_rows::<products::Entity>(&app, id, 20_000, &[("name", "name || ' ' || n.i".to_string())]).await;

        let backend = app.db.get_database_backend();
        for (what, statement) in [
            ("customers", paydesk::db::search_query::<customers::Entity>(backend, shop.id, "ann@example.com.1777", 21).build(backend)),
            ("customers, two words", paydesk::db::search_query::<customers::Entity>(backend, shop.id, "Ann ann@example.com.1777", 21).build(backend)),
            ("products", paydesk::db::search_query::<products::Entity>(backend, shop.id, "1777", 21).build(backend)),
        ] {
            let plan = plan(&app, statement).await;
            for table in ["customers", "products"] {
                assert!(!scans(&plan, table), "{what}: {plan}");
            }
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
            let plan = plan(&app, statement).await;
            assert!(!scans(&plan, "payments") && !scans(&plan, "customers"), "{what}: {plan}");
            assert!(!plan.contains("ix_payments_shop_time"), "{what} walks every payment of the shop: {plan}");
        }
    }
}
