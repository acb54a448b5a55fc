//! Monthly recurring revenue (docs/revenue.md): the movements kept as subscriptions change on
//! a test clock, to the cent, and a rebuild from the events that gives exactly what was kept.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;
use crate::subscriptions::{advance, card_json, clock, plan};

/// The shop's movements, oldest first: (kind, MRR change, paused change, subscribers change,
/// the subscription's time).
async fn movements(app: &TestApp, shop: &Shop) -> Vec<(String, i64, i64, i64, String)> {
    let rows = paydesk::db::mrr::of_shop(&app.db, shop.id).await.unwrap();
    rows.iter()
        .map(|m| {
            let at = m.occurred_at.format("%Y-%m-%dT%H:%M").to_string();
            (m.kind.as_str().to_string(), m.mrr, m.paused, m.subscribers, at)
        })
        .collect()
}

fn moved(kind: &str, mrr: i64, paused: i64, subscribers: i64, at: &str) -> (String, i64, i64, i64, String) {
    (kind.to_string(), mrr, paused, subscribers, at.to_string())
}

/// Every movement as kept, but for its number.
async fn kept(app: &TestApp, shop: &Shop) -> Vec<Value> {
    let rows = paydesk::db::mrr::of_shop(&app.db, shop.id).await.unwrap();
    rows.iter()
        .map(|m| {
            json!([
                m.test,
                m.currency.code,
                m.customer_id,
                m.subscription_id,
                m.event_id,
                m.kind.as_str(),
                m.mrr,
                m.paused,
                m.subscribers,
                m.mrr_after,
                m.paused_after,
                m.occurred_at.to_rfc3339()
            ])
        })
        .collect()
}

/// Rebuilds the shop's movements and asserts they are the ones kept.
pub(crate) async fn rebuilt_as_kept(app: &TestApp, shop: &Shop) {
    let before = kept(app, shop).await;
    let made = paydesk::services::revenue::rebuild(&app.db, shop.id).await.unwrap();
    assert_eq!(made, before.len());
    assert_eq!(kept(app, shop).await, before, "a rebuild gives the movements kept");
}

pub(crate) async fn subscribe_customer(app: &TestApp, shop: &Shop, plan: &str, clock: &str, customer: Value) -> Value {
    let body =
        json!({"plan": {"id": plan}, "customer": customer, "card": card_json(cards::SUCCESS), "test_clock": clock});
    let (status, sub) = app.post(shop, "/subscriptions", &body).await;
    assert_eq!(status, StatusCode::CREATED, "{sub}");
    sub
}

pub(crate) async fn post_ok(app: &TestApp, shop: &Shop, path: &str, body: Value) -> Value {
    let (status, answer) = app.post(shop, path, &body).await;
    assert_eq!(status, StatusCode::OK, "{path}: {answer}");
    answer
}

/// Twelve months of 30 days until `until`, as the figures' periods.
fn twelve_months(
    until: chrono::DateTime<chrono::Utc>,
) -> Vec<(chrono::DateTime<chrono::Utc>, chrono::DateTime<chrono::Utc>)> {
    let month = chrono::Duration::days(30);
    (0..12).map(|i| (until - month * (12 - i), until - month * (11 - i))).collect()
}

db_tests! {
    async fn a_subscription_counts_from_its_first_paid_period_until_it_ends_and_a_pause_is_apart(app) {
        let shop = app.shop("Gym").await;
        let gold = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2026-01-10T10:00:00Z").await;
        let sub = subscribe_customer(&app, &shop, &gold, &clock, customer_body()).await;
        let (id, customer) = (sub["id"].as_str().unwrap().to_string(), sub["customer"]["id"].clone());
        // A renewal leaves MRR as it is.
        advance(&app, &shop, &clock, "2026-02-10T11:00:00Z").await;
        post_ok(&app, &shop, &format!("/subscriptions/{id}/pause"), json!({})).await;
        advance(&app, &shop, &clock, "2026-02-20T11:00:00Z").await;
        post_ok(&app, &shop, &format!("/subscriptions/{id}/resume"), json!({})).await;
        post_ok(&app, &shop, &format!("/subscriptions/{id}/cancel"), json!({})).await;
        // The customer comes back with a new subscription: a reactivation.
        advance(&app, &shop, &clock, "2026-03-01T09:00:00Z").await;
        subscribe_customer(&app, &shop, &gold, &clock, json!({"id": customer})).await;
        assert_eq!(movements(&app, &shop).await, vec![
            moved("new", 990, 0, 1, "2026-01-10T10:00"),
            moved("pause", -990, 990, -1, "2026-02-10T11:00"),
            moved("resume", 990, -990, 1, "2026-02-20T11:00"),
            moved("churn", -990, 0, -1, "2026-02-20T11:00"),
            moved("reactivation", 990, 0, 1, "2026-03-01T09:00"),
        ]);
        rebuilt_as_kept(&app, &shop).await;

        // The figures by month: MRR at each month's end, and what moved it.
        let query = "currency=EUR&test=true&from=2026-01-01&to=2026-03-31";
        let (status, mrr) = app.get(&shop, &format!("/revenue/mrr?{query}")).await;
        assert_eq!(status, StatusCode::OK, "{mrr}");
        assert_eq!((&mrr["object"], &mrr["currency"], &mrr["interval"]), (&json!("revenue.mrr"), &json!("EUR"), &json!("month")));
        let row = |start: &str, end: &str, mrr: i64, subscribers: i64, arpu: Value, churn: Value, revenue_churn: Value| {
            json!({"start": start, "end": end, "mrr": mrr, "paused_mrr": 0, "subscribers": subscribers, "arpu": arpu,
                   "subscriber_churn_rate": churn, "revenue_churn_rate": revenue_churn,
                   "trials_converted": 0, "trials_lost": 0, "trial_conversion_rate": null})
        };
        assert_eq!(mrr["data"], json!([
            row("2026-01-01", "2026-01-31", 990, 1, json!(990), json!(0.0), Value::Null),
            row("2026-02-01", "2026-02-28", 0, 0, Value::Null, json!(1.0), json!(1.0)),
            row("2026-03-01", "2026-03-31", 990, 1, json!(990), json!(0.0), Value::Null),
        ]));
        // MRR per subscriber at each month's end: the columns add up to each month's MRR.
        let csv = app.req(&shop, reqwest::Method::GET, &format!("/revenue/subscribers?{query}")).send().await.unwrap();
        assert_eq!(csv.status(), StatusCode::OK);
        assert_eq!(csv.headers()["content-type"], "text/csv; charset=utf-8");
        let disposition = csv.headers()["content-disposition"].to_str().unwrap().to_string();
        assert_eq!(disposition, "attachment; filename=\"mrr-EUR-202601-202603-test.csv\"");
        let gzip = app.req(&shop, reqwest::Method::GET, &format!("/revenue/subscribers?{query}")).header("accept-encoding", "gzip");
        assert!(gzip.send().await.unwrap().bytes().await.is_ok(), "a compressed download ends as it should");
        let customer = customer.as_str().unwrap();
        assert_eq!(csv.text().await.unwrap(), format!(
            "customer_id,email,2026-01,2026-02,2026-03\r\n{customer},ann@example.com,9.90,0.00,9.90\r\n"));
        let (status, moves) = app.get(&shop, &format!("/revenue/movements?{query}")).await;
        assert_eq!(status, StatusCode::OK, "{moves}");
        let february = &moves["data"][1];
        assert_eq!((&february["starting_mrr"], &february["ending_mrr"]), (&json!(990), &json!(0)));
        assert_eq!(february["pause"], json!({"count": 1, "mrr": -990, "paused_mrr": 990}));
        assert_eq!(february["resume"], json!({"count": 1, "mrr": 990, "paused_mrr": -990}));
        assert_eq!(february["churn"], json!({"count": 1, "mrr": -990, "paused_mrr": 0}));
        assert_eq!(moves["data"][2]["reactivation"], json!({"count": 1, "mrr": 990, "paused_mrr": 0}));
        // Retention and cohorts: Ann's MRR left in February (paused, then cancelled) and came
        // back in March, in her January cohort.
        let (status, cohorts) = app.get(&shop, &format!("/revenue/cohorts?{query}")).await;
        assert_eq!(status, StatusCode::OK, "{cohorts}");
        assert_eq!(cohorts["retention"][1], json!({"start": "2026-02-01", "end": "2026-02-28", "customers": 1, "starting_mrr": 990,
            "ending_mrr": 0, "net_revenue_retention": 0.0, "gross_revenue_retention": 0.0}));
        assert_eq!((&cohorts["retention"][0]["net_revenue_retention"], &cohorts["retention"][2]["customers"]), (&Value::Null, &json!(0)));
        assert_eq!(cohorts["cohorts"][0], json!({"month": "2026-01", "customers": 1, "months": [
            {"month": "2026-01", "subscribers": 1, "mrr": 990}, {"month": "2026-02", "subscribers": 0, "mrr": 0},
            {"month": "2026-03", "subscribers": 1, "mrr": 990}]}));
        assert_eq!(cohorts["cohorts"][2], json!({"month": "2026-03", "customers": 0, "months": [{"month": "2026-03", "subscribers": 0, "mrr": 0}]}));
        // By day: paused MRR while paused.
        let (_, days) = app.get(&shop, "/revenue/mrr?currency=eur&test=true&from=2026-02-09&to=2026-02-21&interval=day").await;
        let at = |i: usize| (days["data"][i]["start"].clone(), days["data"][i]["mrr"].clone(), days["data"][i]["paused_mrr"].clone());
        assert_eq!(days["data"].as_array().unwrap().len(), 13);
        assert_eq!(at(0), (json!("2026-02-09"), json!(990), json!(0)));
        assert_eq!(at(1), (json!("2026-02-10"), json!(0), json!(990)));
        assert_eq!(at(10), (json!("2026-02-19"), json!(0), json!(990)));
        assert_eq!(at(11), (json!("2026-02-20"), json!(0), json!(0)));
        // Live figures, and another shop's, hold none of it.
        let (_, live) = app.get(&shop, "/revenue/mrr?currency=EUR&from=2026-01-01&to=2026-03-31").await;
        assert!(live["data"].as_array().unwrap().iter().all(|p| p["mrr"] == 0 && p["subscribers"] == 0), "{live}");
        let other = app.shop("Other").await;
        let (_, theirs) = app.get(&other, &format!("/revenue/mrr?{query}")).await;
        assert!(theirs["data"].as_array().unwrap().iter().all(|p| p["mrr"] == 0), "{theirs}");
    }

    async fn figures_are_summed_from_the_ledgers_time_index(app) {
        use sea_orm::{ConnectionTrait, QueryTrait};
        let shop = app.shop("Gym").await;
        let gold = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2026-01-10T10:00:00Z").await;
        let sub = subscribe_customer(&app, &shop, &gold, &clock, customer_body()).await;
        post_ok(&app, &shop, &format!("/subscriptions/{}/cancel", sub["id"].as_str().unwrap()), json!({})).await;
        // 20,000 copies, one in ten of them this shop's, over the months before.
        let postgres = app.db.get_database_backend() == sea_orm::DatabaseBackend::Postgres;
        let earlier = match postgres {
            true => "occurred_at - make_interval(hours => n.i)",
            false => "strftime('%Y-%m-%d %H:%M:%f', occurred_at, '-' || n.i || ' hours') || ' +00:00'",
        };
        let columns = "shop_id, test, currency, customer_id, subscription_id, event_id, kind, mrr, paused, subscribers, mrr_after, paused_after, occurred_at";
        let sql = format!(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000) \
             INSERT INTO mrr_movements ({columns}) SELECT shop_id + (n.i % 10), test, currency, customer_id, subscription_id, \
             event_id || '_' || n.i, kind, mrr, paused, subscribers, mrr_after, paused_after, {earlier} \
             FROM mrr_movements, n WHERE shop_id = {}", shop.id);
        app.db.execute_unprepared(&sql).await.unwrap();
        app.db.execute_unprepared(if postgres { "ANALYZE" } else { "PRAGMA optimize = 0x10002" }).await.unwrap();
        if postgres {
            app.db.execute_unprepared("VACUUM mrr_movements").await.unwrap();
        }
        let (status, year) = app.get(&shop, "/revenue/mrr?currency=EUR&test=true&from=2025-01-01&to=2026-12-31").await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(year["data"][23]["mrr"], json!(0), "the copies add up to nothing: {year}");
        let backend = app.db.get_database_backend();
        let until = chrono::Utc::now();
        let ledger = (shop.id, true, paydesk::domain::currency::find("EUR").unwrap());
        let plan = crate::query_plans::plan_of(&app, paydesk::db::mrr::before_query(ledger, until).build(backend)).await;
        assert!(!crate::query_plans::scans(&plan, "mrr_movements"), "what stood before scans: {plan}");
        assert!(plan.contains("ix_mrr_movements_time"), "what stood before: {plan}");
        let plan = crate::query_plans::plan_of(&app, paydesk::db::mrr::sums_statement(backend, ledger, &twelve_months(until))).await;
        assert!(!crate::query_plans::scans(&plan, "mrr_movements") && !crate::query_plans::scans(&plan, "m"), "{plan}");
        assert!(plan.contains("ix_mrr_movements_time"), "the range's months: {plan}");
        // MRR per subscriber reads customer by customer, from the first page and a later one.
        for cursor in [None, Some(("cst_m".to_string(), until - chrono::Duration::days(30), 5))] {
            let statement = paydesk::db::mrr::by_customer_query(ledger, until, cursor, 5000).build(backend);
            let plan = crate::query_plans::plan_of(&app, statement).await;
            assert!(!crate::query_plans::scans(&plan, "mrr_movements"), "MRR per subscriber scans: {plan}");
            assert!(plan.contains("ix_mrr_movements_customers"), "MRR per subscriber: {plan}");
            assert!(!plan.contains("TEMP B-TREE") && !plan.contains("Sort"), "MRR per subscriber sorts: {plan}");
        }
    }

    async fn trials_are_counted_from_the_index_of_trial_ends(app) {
        use sea_orm::ConnectionTrait;
        let shop = app.shop("Gym").await;
        let gold = plan(&app, &shop, json!({"trial": {"amount": 0, "interval": 7, "interval_unit": "day"}})).await;
        let clock = clock(&app, &shop, "2026-01-10T10:00:00Z").await;
        let sub = subscribe_customer(&app, &shop, &gold, &clock, customer_body()).await;
        // 20,000 copies, half of them live, their trials ending a week apart before: a year holds
        // few of them, as a shop's years of trials would.
        let backend = app.db.get_database_backend();
        let earlier = match backend {
            sea_orm::DatabaseBackend::Postgres => "trial_ends_at - make_interval(days => 7 * n.i)",
            _ => "strftime('%Y-%m-%dT%H:%M:%f', trial_ends_at, '-' || (7 * n.i) || ' days') || '+00:00'",
        };
        let changed = [("trial_ends_at", earlier.to_string()), ("test", "(n.i % 2 = 0)".to_string())];
        copy_rows::<paydesk::db::entities::subscriptions::Entity>(&app, sub["id"].as_str().unwrap(), 20_000, &changed)
            .await;
        let (status, year) = app.get(&shop, "/revenue/mrr?currency=EUR&test=true&from=2025-01-01&to=2025-12-31").await;
        assert_eq!(status, StatusCode::OK);
        let decided: i64 = year["data"].as_array().unwrap().iter()
            .map(|p| p["trials_converted"].as_i64().unwrap() + p["trials_lost"].as_i64().unwrap()).sum();
        assert_eq!(decided, 0, "copies of a running trial are in neither count: {year}");
        let until = chrono::Utc::now();
        let ledger = (shop.id, true, paydesk::domain::currency::find("EUR").unwrap());
        let statement = paydesk::db::mrr::trials_statement(backend, ledger, std::slice::from_ref(&gold), &twelve_months(until));
        let plan = crate::query_plans::plan_of(&app, statement).await;
        assert!(!crate::query_plans::scans(&plan, "subscriptions") && !crate::query_plans::scans(&plan, "x"), "{plan}");
        // (PostgreSQL may start from the ledger, empty here, and find each subscription by id.)
        let sqlite = backend == sea_orm::DatabaseBackend::Sqlite;
        assert!(!sqlite || plan.contains("ix_subscriptions_trial_ends"), "{plan}");
    }

    async fn figures_refuse_what_they_cannot_answer_by_name(app) {
        let shop = app.shop("Gym").await;
        for (query, field, message) in [
            ("", "currency", "is required: figures are per currency"),
            ("currency=XYZ", "currency", "is not a known currency"),
            ("currency=EUR&test=yes", "test", "must be true or false"),
            ("currency=EUR&interval=week", "interval", "must be day or month"),
            ("currency=EUR&from=2026-02-30", "from", "must be a date: YYYY-MM-DD"),
            ("currency=EUR&to=tomorrow", "to", "must be a date: YYYY-MM-DD"),
            ("currency=EUR&from=1900-01-01&to=1900-02-01", "to", "must be a date from 1970 to 9999"),
            ("currency=EUR&from=%2B10000-01-01", "from", "must be a date from 1970 to 9999"),
            ("currency=EUR&from=2026-03-01&to=2026-02-01", "from", "must not be after to"),
            ("currency=EUR&from=2020-01-01&to=2026-01-01&interval=day", "from", "at most 1000 periods of the interval at once"),
        ] {
            for path in ["/revenue/mrr", "/revenue/movements"] {
                let (status, refused) = app.get(&shop, &format!("{path}?{query}")).await;
                assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{path}?{query}: {refused}");
                assert_eq!(refused["errors"][field], json!([message]), "{path}?{query}: {refused}");
            }
        }
        for path in ["/revenue/cohorts", "/revenue/subscribers"] {
            let (status, refused) = app.get(&shop, &format!("{path}?currency=EUR&interval=day")).await;
            assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
            assert_eq!(refused["errors"]["interval"], json!(["must be month: these figures are by month"]));
        }
        let (status, _) = send(app.anon(reqwest::Method::GET, "/revenue/mrr?currency=EUR")).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        // Without dates: the last 12 months, ending today.
        let (status, year) = app.get(&shop, "/revenue/mrr?currency=EUR").await;
        assert_eq!(status, StatusCode::OK, "{year}");
        assert_eq!(year["data"].as_array().unwrap().len(), 12);
        assert_eq!(year["to"], json!(chrono::Utc::now().date_naive().to_string()));
    }

    async fn a_trial_counts_once_converted_and_a_yearly_plan_a_twelfth(app) {
        let shop = app.shop("Gym").await;
        let trial = json!({"trial": {"amount": 0, "interval": 7, "interval_unit": "day"}});
        let gold = plan(&app, &shop, trial).await;
        let yearly = plan(&app, &shop, json!({"plan": {"amount": 10_000, "interval": 12, "interval_unit": "month"}})).await;
        let clock = clock(&app, &shop, "2026-01-10T10:00:00Z").await;
        subscribe_customer(&app, &shop, &gold, &clock, customer_body()).await;
        let declined = json!({"plan": {"id": gold}, "customer": {"email": "bob@example.com", "ip": "203.0.113.9"},
                              "card": card_json(cards::SUCCESS), "test_clock": clock});
        let (_, bob) = app.post(&shop, "/subscriptions", &declined).await;
        crate::subscriptions::make_card(&app, &shop, bob["id"].as_str().unwrap(), "declined").await;
        subscribe_customer(&app, &shop, &yearly, &clock, json!({"email": "cy@example.com", "ip": "203.0.113.9"})).await;
        let dee = subscribe_customer(&app, &shop, &gold, &clock, json!({"email": "dee@example.com", "ip": "203.0.113.9"})).await;
        // Ann's trial converts when its first period is paid; Bob's conversion is declined.
        advance(&app, &shop, &clock, "2026-01-13T10:00:00Z").await;
        post_ok(&app, &shop, &format!("/subscriptions/{}/cancel", dee["id"].as_str().unwrap()), json!({})).await;
        subscribe_customer(&app, &shop, &gold, &clock, json!({"email": "eve@example.com", "ip": "203.0.113.9"})).await;
        advance(&app, &shop, &clock, "2026-01-17T11:00:00Z").await;
        assert_eq!(movements(&app, &shop).await, vec![
            moved("new", 833, 0, 1, "2026-01-10T10:00"),
            moved("new", 990, 0, 1, "2026-01-17T10:00"),
        ]);
        // Trial conversion, by the day each trial was due to end: Ann's converted, Dee's
        // (cancelled) and Bob's (declined) were lost, Eve's is still running.
        let january = "/revenue/mrr?currency=EUR&test=true&from=2026-01-01&to=2026-01-31";
        let trials = |figures: &Value| {
            let p = &figures["data"][0];
            (p["trials_converted"].clone(), p["trials_lost"].clone(), p["trial_conversion_rate"].clone())
        };
        let (_, figures) = app.get(&shop, january).await;
        assert_eq!(trials(&figures), (json!(1), json!(2), json!(0.3333)), "{figures}");
        advance(&app, &shop, &clock, "2026-01-20T11:00:00Z").await;
        let (_, figures) = app.get(&shop, january).await;
        assert_eq!(trials(&figures), (json!(2), json!(2), json!(0.5)), "{figures}");
        rebuilt_as_kept(&app, &shop).await;
    }
}
