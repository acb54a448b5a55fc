//! The plans the databases choose for the dashboard's hot queries, with enough rows that they
//! choose as they would in production: no whole scan of a shop's payments and no sort of
//! them, on the first page, a later one, and a status's list.

use paydesk::domain::payment::{PaymentFilter, PaymentSearch};
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
            let statement = paydesk::db::payments::search_query(shop.id, &search, after, 51).build(backend);
            let plan = plan(&app, statement).await;
            assert!(!plan.contains("TEMP B-TREE") && !plan.contains("Sort"), "{what} sorts: {plan}");
            assert!(!plan.contains("SCAN payments") && !plan.contains("Seq Scan"), "{what} scans: {plan}");
            assert!(plan.contains("ix_payments_shop_time") || plan.contains("ix_payments_shop_status_time"), "{what}: {plan}");
        }
    }
}
