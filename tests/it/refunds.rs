//! Refunds: partial and full, never beyond what was taken even when sent at once, through
//! the acquirer (one test card refuses refunds), listed and shown on the payment, resumed
//! after an interruption, from the API and from the dashboard with a confirmation step.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::dashboard::{api_shop, sign_up};
use crate::helpers::*;

const REFUND_FAILS: &str = "4000000000005126";

/// A paid test product (€9.90, 5 in stock): the product's and the payment's ids.
async fn paid(app: &TestApp, shop: &Shop, number: &str, change: Value) -> (String, String) {
    let mut body = test_product_body();
    for (k, v) in change.as_object().unwrap() {
        body[k] = v.clone();
    }
    let product = app.product(shop, &body).await;
    let id = product["id"].as_str().unwrap().to_string();
    app.pay(&id, number, &[]).await;
    let (_, list) = app.get(shop, &format!("/payments?product={id}")).await;
    (id, list[0]["id"].as_str().unwrap().to_string())
}

db_tests! {
    async fn partial_refunds_add_up_to_the_payment_and_never_beyond(app) {
        let shop = app.shop("Books").await;
        let (product, payment) = paid(&app, &shop, cards::SUCCESS, json!({})).await;
        let path = format!("/payments/{payment}/refund");

        let (status, first) = app.post(&shop, &path, &json!({"amount": "300", "reason": "damaged cover"})).await;
        assert_eq!(status, StatusCode::CREATED, "{first}");
        let rid = first["id"].as_str().unwrap();
        assert!(rid.starts_with("rfd_") && rid.len() == 20, "{rid}");
        assert_eq!(first["payment_id"], payment.as_str());
        assert_eq!((first["status"].clone(), first["amount"].clone()), (json!("succeeded"), json!(300)));
        assert_eq!((first["currency"].clone(), first["reason"].clone()), (json!("EUR"), json!("damaged cover")));
        assert_eq!((first["test"].clone(), first["failure_code"].clone()), (json!(true), Value::Null));
        assert!(is_api_time(&first["created_at"]) && is_api_time(&first["updated_at"]));
        let (_, p) = app.get(&shop, &format!("/payments/{payment}")).await;
        assert_eq!((p["status"].clone(), p["refunded_amount"].clone()), (json!("partially_refunded"), json!(300)));

        let (status, body) = app.post(&shop, &path, &json!({"amount": 691})).await;
        assert_invalid(status, &body, "amount", &["must be less than or equal to 690, the amount left to refund"]);
        for bad in [json!({"amount": 0}), json!({"amount": "ten"}), json!({"amount": -5}), json!({"amount": 1.5})] {
            let (status, body) = app.post(&shop, &path, &bad).await;
            assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{bad}: {body}");
            assert!(body["errors"]["amount"].is_array(), "{body}");
        }
        let (status, _) = app.post(&shop, &path, &json!({"reason": "x".repeat(501)})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);

        let (status, rest) = app.post(&shop, &path, &json!({})).await;
        assert_eq!((status, rest["amount"].clone(), rest["reason"].clone()), (StatusCode::CREATED, json!(690), Value::Null));
        let (_, p) = app.get(&shop, &format!("/payments/{payment}")).await;
        assert_eq!((p["status"].clone(), p["refunded_amount"].clone()), (json!("refunded"), json!(990)));
        let (status, body) = app.post(&shop, &path, &json!({"amount": 1})).await;
        assert_eq!(status, StatusCode::CONFLICT);
        assert_eq!(body["message"], "Nothing is left to refund on this payment");

        let (_, stock) = app.get(&shop, &format!("/products/{product}")).await;
        assert_eq!(stock["quantity"], 4, "a refund does not restock the product");
        let (_, refunded) = app.get(&shop, "/payments?status=refunded").await;
        assert_eq!(refunded.as_array().unwrap().len(), 1);

        let (status, listed) = app.get(&shop, "/refunds").await;
        assert_eq!(status, StatusCode::OK);
        let ids: Vec<&str> = listed.as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
        assert_eq!(ids, [rest["id"].as_str().unwrap(), rid], "newest first");
        let (_, other_payment) = paid(&app, &shop, cards::SUCCESS, json!({})).await;
        app.post(&shop, &format!("/payments/{other_payment}/refund"), &json!({"amount": 5})).await;
        let (_, of_one) = app.get(&shop, &format!("/refunds?payment_id={payment}")).await;
        assert_eq!(of_one.as_array().unwrap().len(), 2);
        let (_, paged) = app.get(&shop, "/refunds?limit=1").await;
        assert_eq!(paged.as_array().unwrap().len(), 1);
        let (status, shown) = app.get(&shop, &format!("/refunds/{rid}")).await;
        assert_eq!((status, shown["amount"].clone()), (StatusCode::OK, json!(300)));

        let other = app.shop("Other").await;
        assert_eq!(app.get(&other, &format!("/refunds/{rid}")).await.0, StatusCode::NOT_FOUND);
        assert_eq!(app.post(&other, &path, &json!({})).await.0, StatusCode::NOT_FOUND);
        let (_, none) = app.get(&other, "/refunds").await;
        assert_eq!(none, json!([]));
        assert_eq!(app.get(&shop, "/refunds/rfd_0000000000000000").await.0, StatusCode::NOT_FOUND);
        assert_eq!(app.post(&shop, "/payments/pay_0000000000000000/refund", &json!({})).await.0, StatusCode::NOT_FOUND);
    }

    async fn only_taken_money_is_refunded_and_a_refused_refund_gives_nothing_back(app) {
        let shop = app.shop("Books").await;
        let (_, held) = paid(&app, &shop, cards::SUCCESS, json!({"transaction_type": "authorization"})).await;
        let (status, body) = app.post(&shop, &format!("/payments/{held}/refund"), &json!({})).await;
        assert_eq!(status, StatusCode::CONFLICT);
        assert!(body["message"].as_str().unwrap().starts_with("An authorization is voided, not refunded"), "{body}");
        let (_, declined) = paid(&app, &shop, cards::DECLINED, json!({})).await;
        let (status, body) = app.post(&shop, &format!("/payments/{declined}/refund"), &json!({})).await;
        assert_eq!(status, StatusCode::CONFLICT);
        assert_eq!(body["message"], "Only a succeeded payment can be refunded; this payment is failed");

        // A captured authorization is refundable like any payment.
        app.post(&shop, &format!("/payments/{held}/capture"), &json!({})).await;
        assert_eq!(app.post(&shop, &format!("/payments/{held}/refund"), &json!({})).await.0, StatusCode::CREATED);

        let (_, payment) = paid(&app, &shop, REFUND_FAILS, json!({})).await;
        for _ in 0..2 {
            let (status, refund) = app.post(&shop, &format!("/payments/{payment}/refund"), &json!({"amount": 100})).await;
            assert_eq!(status, StatusCode::CREATED, "{refund}");
            assert_eq!((refund["status"].clone(), refund["failure_code"].clone()), (json!("failed"), json!("refund_failed")));
            assert!(refund["failure_message"].as_str().unwrap().contains("refused the refund"));
            let (_, p) = app.get(&shop, &format!("/payments/{payment}")).await;
            assert_eq!((p["status"].clone(), p["refunded_amount"].clone()), (json!("succeeded"), json!(0)));
        }
    }

    async fn a_repeated_idempotency_key_refunds_once(app) {
        let shop = app.shop("Books").await;
        let (_, payment) = paid(&app, &shop, cards::SUCCESS, json!({})).await;
        let path = format!("/payments/{payment}/refund");
        let mut answers = Vec::new();
        for _ in 0..2 {
            let request = app.req(&shop, reqwest::Method::POST, &path).header("idempotency-key", "refund-7").json(&json!({"amount": 100}));
            answers.push(send(request).await);
        }
        assert_eq!(answers[0].0, StatusCode::CREATED);
        assert_eq!(answers[0], answers[1], "the same answer again");
        let (_, p) = app.get(&shop, &format!("/payments/{payment}")).await;
        assert_eq!(p["refunded_amount"], 100);
    }

    async fn concurrent_refunds_never_give_back_more_than_was_taken(app) {
        let shop = app.shop("Books").await;
        let (_, payment) = paid(&app, &shop, cards::SUCCESS, json!({})).await;
        let path = format!("/payments/{payment}/refund");
        let one = json!({"amount": 100});
        let tries = (0..20).map(|_| app.post(&shop, &path, &one));
        let answers = futures::future::join_all(tries).await;
        let made = answers.iter().filter(|(s, _)| *s == StatusCode::CREATED).count();
        assert_eq!(made, 9, "9 refunds of 1.00 fit in 9.90");
        assert!(answers.iter().all(|(s, _)| [StatusCode::CREATED, StatusCode::UNPROCESSABLE_ENTITY, StatusCode::CONFLICT].contains(s)));
        let rest = json!({});
        let whole = (0..10).map(|_| app.post(&shop, &path, &rest));
        let answers = futures::future::join_all(whole).await;
        assert_eq!(answers.iter().filter(|(s, _)| *s == StatusCode::CREATED).count(), 1, "one refund takes the rest");
        let (_, p) = app.get(&shop, &format!("/payments/{payment}")).await;
        assert_eq!((p["status"].clone(), p["refunded_amount"].clone()), (json!("refunded"), json!(990)));
        let (_, refunds) = app.get(&shop, &format!("/refunds?payment_id={payment}")).await;
        let total: i64 = refunds.as_array().unwrap().iter().map(|r| r["amount"].as_i64().unwrap()).sum();
        assert_eq!(total, 990);
    }

    async fn an_interrupted_refund_is_finished_by_the_sweeper(app) {
        let shop = app.shop("Books").await;
        let (_, payment) = paid(&app, &shop, cards::SUCCESS, json!({})).await;
        let state = &app.state;
        let model = paydesk::db::find::<paydesk::db::entities::payments::Entity>(&state.db, shop.id, &payment)
            .await.unwrap().unwrap();
        // The amount is held and the refund recorded, then the request stops.
        let now = chrono::Utc::now();
        let pending = paydesk::db::refunds::begin(&state.db, &model, &Default::default(), 400, now).await.unwrap().unwrap();
        let (_, p) = app.get(&shop, &format!("/payments/{payment}")).await;
        assert_eq!(p["refunded_amount"], 0, "held, not yet given back");
        let (status, body) = app.post(&shop, &format!("/payments/{payment}/refund"), &json!({"amount": 591})).await;
        assert_invalid(status, &body, "amount", &["must be less than or equal to 590, the amount left to refund"]);
        assert_eq!(paydesk::services::refunds::resume_interrupted(state, now).await.unwrap(), 0, "not yet overdue");
        let later = now + chrono::TimeDelta::minutes(2);
        assert_eq!(paydesk::services::refunds::resume_interrupted(state, later).await.unwrap(), 1);
        let (_, refund) = app.get(&shop, &format!("/refunds/{}", pending.id)).await;
        assert_eq!(refund["status"], "succeeded");
        let (_, p) = app.get(&shop, &format!("/payments/{payment}")).await;
        assert_eq!((p["status"].clone(), p["refunded_amount"].clone()), (json!("partially_refunded"), json!(400)));
        assert_eq!(paydesk::services::refunds::resume_interrupted(state, later).await.unwrap(), 0, "finished once");
    }

    async fn the_dashboard_refunds_after_a_confirmation_and_counts_revenue_net_of_refunds(app) {
        let m = sign_up(&app, "Books", "ann@example.com").await;
        let shop = api_shop(&m).await;
        let (_, payment) = paid(&app, &shop, cards::SUCCESS, json!({})).await;
        let page = m.get(&format!("/dashboard/payments/{payment}")).await;
        assert!(page.html.contains("Up to €9.90 can go back") && page.html.contains("value=\"9.90\""), "{}", page.html);

        let path = format!("/dashboard/payments/{payment}/refund");
        let refused = m.post(&path, &[("amount", "12.00")]).await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(refused.html.contains("id=\"e-amount\">must be at most €9.90, the amount left to refund</p>"), "{}", refused.html);
        let nothing = m.post(&path, &[("amount", "0")]).await;
        assert!(nothing.html.contains("id=\"e-amount\">must be at least €0.01</p>"), "{}", nothing.html);
        let confirm = m.post(&path, &[("amount", "2.50"), ("reason", "late delivery")]).await;
        assert_eq!(confirm.status, StatusCode::OK);
        assert!(confirm.html.contains("Refund €2.50?") && confirm.html.contains("cannot be undone"), "{}", confirm.html);
        let (_, p) = app.get(&shop, &format!("/payments/{payment}")).await;
        assert_eq!(p["refunded_amount"], 0, "nothing is refunded before the confirmation");

        let once = hidden(&confirm.html, "once");
        let confirmed = [("amount", "2.50"), ("reason", "late delivery"), ("once", once.as_str()), ("confirm", "yes")];
        let done = m.post(&path, &confirmed).await;
        assert_eq!((done.status, done.location.as_str()), (StatusCode::SEE_OTHER, format!("/dashboard/payments/{payment}").as_str()));
        let page = m.get(&format!("/dashboard/payments/{payment}")).await;
        assert!(page.html.contains("Refunded €2.50.") && page.html.contains("late delivery"), "{}", page.html);
        assert!(page.html.contains("data-testid=\"refunded\">€2.50") && page.html.contains("value=\"7.40\""));
        let again = m.post(&path, &confirmed).await;
        assert_eq!(again.status, StatusCode::SEE_OTHER);
        let (_, p) = app.get(&shop, &format!("/payments/{payment}")).await;
        assert_eq!((p["status"].clone(), p["refunded_amount"].clone()), (json!("partially_refunded"), json!(250)), "one confirmation, one refund");
        let home = m.get("/dashboard").await;
        assert!(home.html.contains("data-testid=\"today-test\">Test mode: €7.40"), "{}", home.html);

        // A confirmation sent many times at once (a double click, a retrying proxy) still refunds once.
        let twice = m.post(&path, &[("amount", "2.00")]).await;
        let once = hidden(&twice.html, "once");
        let confirmed = [("amount", "2.00"), ("once", once.as_str()), ("confirm", "yes")];
        let sent = futures::future::join_all((0..6).map(|_| m.post(&path, &confirmed))).await;
        assert!(sent.iter().all(|r| r.status == StatusCode::SEE_OTHER), "{:?}", sent.iter().map(|r| r.status).collect::<Vec<_>>());
        let (_, p) = app.get(&shop, &format!("/payments/{payment}")).await;
        assert_eq!(p["refunded_amount"], 450);
        let (_, listed) = app.get(&shop, &format!("/refunds?payment_id={payment}")).await;
        assert_eq!(listed.as_array().map(Vec::len), Some(2), "{listed}");

        let rest_once = hidden(&m.post(&path, &[("amount", "5.40")]).await.html, "once");
        let rest = [("amount", "5.40"), ("once", rest_once.as_str()), ("confirm", "yes")];
        assert_eq!(m.post(&path, &rest).await.status, StatusCode::SEE_OTHER);
        let stale = m.post(&path, &rest).await;
        assert_eq!((stale.status, stale.location.as_str()), (StatusCode::SEE_OTHER, format!("/dashboard/payments/{payment}").as_str()));
        let page = m.get(&format!("/dashboard/payments/{payment}")).await;
        assert!(page.html.contains("Nothing is left to refund on this payment"), "a form sent after a full refund says why: {}", page.html);
        let (_, p) = app.get(&shop, &format!("/payments/{payment}")).await;
        assert_eq!((p["status"].clone(), p["refunded_amount"].clone()), (json!("refunded"), json!(990)));

        let forged = m.post_raw(&path, &[("amount", "1.00"), ("confirm", "yes")]).await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN, "no CSRF token, no refund");
    }

    async fn the_overviews_totals_follow_every_payment_refund_capture_and_void(app) {
        let shop = app.shop("Books").await;
        let (_, kept) = paid(&app, &shop, cards::SUCCESS, json!({})).await;
        let (_, refunded) = paid(&app, &shop, cards::SUCCESS, json!({"currency": "USD"})).await;
        let (_, part) = paid(&app, &shop, cards::SUCCESS, json!({})).await;
        let (_, held) = paid(&app, &shop, cards::SUCCESS, json!({"transaction_type": "authorization"})).await;
        let (_, voided) = paid(&app, &shop, cards::SUCCESS, json!({"transaction_type": "authorization"})).await;
        paid(&app, &shop, cards::DECLINED, json!({})).await;
        let other = app.shop("Other").await;
        paid(&app, &other, cards::SUCCESS, json!({})).await;
        assert_eq!(totals_agree(&app).await, 4, "kept, refunded, part and the other shop's; authorizations not yet");
        app.post(&shop, &format!("/payments/{refunded}/refund"), &json!({})).await;
        app.post(&shop, &format!("/payments/{part}/refund"), &json!({"amount": 250})).await;
        app.post(&shop, &format!("/payments/{held}/capture"), &json!({})).await;
        app.post(&shop, &format!("/payments/{voided}/void"), &json!({})).await;
        app.post(&shop, &format!("/payments/{kept}/refund"), &json!({"amount": 1})).await;
        assert_eq!(totals_agree(&app).await, 5, "the capture took money");
    }

    async fn the_overviews_totals_stay_exact_while_payments_and_foldings_race(app) {
        let shop = app.shop("Books").await;
        let mut body = test_product_body();
        body["quantity"] = json!("12");
        let product = app.product(&shop, &body).await;
        let id = product["id"].as_str().unwrap();
        let pays = futures::future::join_all((0..12).map(|_| app.pay(id, cards::SUCCESS, &[])));
        let folds = futures::future::join_all((0..4).map(|_| paydesk::db::summaries::compact(&app.db)));
        let (_, folded) = tokio::join!(pays, folds);
        assert!(folded.iter().all(Result::is_ok), "{folded:?}");
        assert_eq!(totals_agree(&app).await, 12);
        assert_eq!(totals_agree(&app).await, 12, "folding again changes nothing");
    }

    async fn the_summaries_survive_undoing_and_redoing_their_last_migration(app) {
        use migration::MigratorTrait;
        let shop = app.shop("Books").await;
        let (_, refunded) = paid(&app, &shop, cards::SUCCESS, json!({})).await;
        paid(&app, &shop, cards::SUCCESS, json!({"currency": "USD"})).await;
        app.post(&shop, &format!("/payments/{refunded}/refund"), &json!({"amount": 100})).await;
        // Over one connection, as `db::migrate` does, and with the workers stopped, as they
        // are while an instance migrates at start: a worker's catch-up of the word indexes
        // meeting the migration halfway is not what this checks.
        app.state.lifecycle.stop();
        app.state.lifecycle.drained().await;
        let db = paydesk::db::connect(&app.database_url, 1).await.unwrap();
        migration::Migrator::down(&db, Some(1)).await.unwrap();
        migration::Migrator::up(&db, None).await.unwrap();
        assert_eq!(totals_agree(&app).await, 2);
    }
}

/// Checks that the overview's summaries equal what they sum: money taken per shop, quarter
/// hour, currency and mode, and subscriptions per shop and state; then folds them
/// (`db::summaries::compact`), checks again and that one row per key is left. Answers how
/// many payments took money.
/// The value of the hidden field `name` of a page's form.
fn hidden(html: &str, name: &str) -> String {
    let marker = format!("name=\"{name}\" value=\"");
    let start = html.find(&marker).unwrap_or_else(|| panic!("no {name} in {html}")) + marker.len();
    html[start..].split('"').next().unwrap().to_string()
}

async fn totals_agree(app: &TestApp) -> i64 {
    use paydesk::db::entities::{payment_totals, payments, subscription_counts, subscriptions};
    use sea_orm::EntityTrait;
    use std::collections::BTreeMap;
    type Totals = BTreeMap<(i64, i64, String, bool), (i64, i64)>;
    type Counts = BTreeMap<(i64, String), i64>;
    let kept = || async {
        let (mut totals, mut counts, mut rows) = (Totals::new(), Counts::new(), 0);
        for t in payment_totals::Entity::find().all(&app.db).await.unwrap() {
            let sum = totals.entry((t.shop_id, t.bucket, t.currency.to_string(), t.test)).or_default();
            (sum.0, sum.1, rows) = (sum.0 + t.net, sum.1 + t.payments, rows + 1);
        }
        for c in subscription_counts::Entity::find().all(&app.db).await.unwrap() {
            *counts.entry((c.shop_id, c.state.to_string())).or_default() += c.subscriptions;
            rows += 1;
        }
        totals.retain(|_, sum| *sum != (0, 0));
        counts.retain(|_, n| *n != 0);
        (totals, counts, rows)
    };
    let (mut totals, mut counts) = (Totals::new(), Counts::new());
    for p in payments::Entity::find().all(&app.db).await.unwrap().into_iter().filter(|p| p.status.is_taken()) {
        let bucket = p.captured_at.unwrap_or(p.created_at).timestamp().div_euclid(900) * 900;
        let sum = totals.entry((p.shop_id, bucket, p.currency.to_string(), p.test)).or_default();
        *sum = (sum.0 + p.amount - p.refunded_amount, sum.1 + 1);
    }
    for s in subscriptions::Entity::find().all(&app.db).await.unwrap() {
        *counts.entry((s.shop_id, s.state.to_string())).or_default() += 1;
    }
    let (kept_totals, kept_counts, _) = kept().await;
    assert_eq!((&kept_totals, &kept_counts), (&totals, &counts), "summed from the rows of change");
    paydesk::db::summaries::compact(&app.db).await.unwrap();
    let (kept_totals, kept_counts, rows) = kept().await;
    assert_eq!((&kept_totals, &kept_counts), (&totals, &counts), "folded");
    assert!(rows <= totals.len() + counts.len() + 8, "one row per key, and a few that sum to nothing: {rows}");
    totals.values().map(|sum| sum.1).sum()
}
