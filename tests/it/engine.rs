//! The real-time billing engine: several engines (instances) at once never charge a
//! subscription twice, and a run after downtime charges what was missed once.

use chrono::{Duration, Utc};
use paydesk::config::ConfigArgs;
use paydesk::db::subscriptions::NewSubscription;
use paydesk::domain::billing::{Progress, State};
use paydesk::services::billing::run_due;
use paydesk::web::state::AppState;
use sea_orm::ActiveModelTrait;
use serde_json::json;

use crate::helpers::*;

/// `count` subscriptions of one plan, each with a card, all due an hour ago.
pub async fn due_subscriptions(app: &TestApp, shop: &Shop, count: usize) -> Vec<String> {
    let mut body = plan_body();
    body["test"] = json!(true);
    let (_, plan) = app.post(shop, "/plans", &body).await;
    let (_, customer) = app.post(shop, "/customers", &customer_body()).await;
    let card = paydesk::external::acquirer::CardRef {
        token: "tok_sim_ok_000000000000000000000000".into(),
        brand: "visa".into(),
        last4: "0000".into(),
        exp_month: 12,
        exp_year: 2040,
        holder: "Ann Lee".into(),
        fingerprint: None,
    };
    let now = Utc::now();
    let anchor = now - Duration::days(31) - Duration::hours(1);
    let mut ids = Vec::with_capacity(count);
    for _ in 0..count {
        let progress = Progress {
            state: State::Active,
            period: 1,
            paid_cycles: 1,
            failed_attempts: 0,
            has_success: true,
            renew_at: Some(now - Duration::hours(1)),
            active_to: Some(now - Duration::hours(1)),
            cancel_at_period_end: false,
            pause_at_period_end: false,
            change_now: None,
            change_at_period_end: false,
        };
        let new = NewSubscription {
            id: None,
            shop_id: shop.id,
            plan_id: plan["id"].as_str().unwrap().into(),
            customer_id: customer["id"].as_str().unwrap().into(),
            test: true,
            test_clock_id: None,
            tracking_id: None,
            return_url: None,
            notification_url: None,
            additional_data: None,
            progress,
        };
        let sub = paydesk::db::subscriptions::insert(&app.db, new, anchor).await.unwrap();
        let mut row: paydesk::db::entities::subscriptions::ActiveModel = sub.into();
        paydesk::db::subscriptions::set_card(&mut row, &card, anchor, anchor);
        let sub = row.update(&app.db).await.unwrap();
        ids.push(sub.id);
    }
    ids
}

/// A second instance: its own connection pool on the same database.
async fn second_instance(app: &TestApp) -> AppState {
    let config = app.state.config.as_ref().clone();
    AppState::new(paydesk::db::connect(&config.database_url, config.db_connections).await.unwrap(), config).unwrap()
}

db_tests! {
    async fn two_engines_at_once_charge_every_due_subscription_exactly_once(app) {
        let shop = app.shop("Gym").await;
        let count = if app.database_url.starts_with("postgres") { 1000 } else { 300 };
        let ids = due_subscriptions(&app, &shop, count).await;
        let other = second_instance(&app).await;
        let now = Utc::now();
        let (a, b) = tokio::join!(run_due(&app.state, now), run_due(&other, now));
        let (a, b) = (a.unwrap(), b.unwrap());
        assert_eq!(a.charged + b.charged, count, "{a:?} {b:?}");
        let (_, payments) = app.get(&shop, "/payments?limit=1000").await;
        let payments = payments.as_array().unwrap();
        let mut per_sub = std::collections::HashMap::new();
        for p in payments.iter() {
            *per_sub.entry(p["subscription_id"].as_str().unwrap().to_string()).or_insert(0) += 1;
        }
        assert_eq!(per_sub.len(), count);
        assert!(ids.iter().all(|id| per_sub.get(id) == Some(&1)), "each subscription charged once");

        // Nothing is due any more: a further run charges nothing.
        let again = run_due(&app.state, now).await.unwrap();
        assert_eq!(again.charged, 0);
    }

    async fn a_run_after_downtime_charges_the_missed_period_once(app) {
        let shop = app.shop("Gym").await;
        let ids = due_subscriptions(&app, &shop, 1).await;
        let report = run_due(&app.state, Utc::now() + Duration::days(70)).await.unwrap();
        assert_eq!(report.charged, 1, "three periods were missed; one charge");
        let (_, sub) = app.get(&shop, &format!("/subscriptions/{}", ids[0])).await;
        assert_eq!(sub["paid_billing_cycles"], 2);
        assert_eq!(sub["state"], "active");
        let renew: chrono::DateTime<Utc> = sub["renew_at"].as_str().unwrap().parse().unwrap();
        assert!(renew > Utc::now() + Duration::days(70), "the next charge is the next period on schedule");
    }
}

/// Counts the acquirer's charge calls per idempotency key; a gated one holds its first charge
/// (telling `entered`) until `release`.
struct Counting {
    inner: paydesk::external::acquirer::simulated::SimulatedAcquirer,
    calls: std::sync::Mutex<std::collections::HashMap<String, usize>>,
    gated: std::sync::atomic::AtomicBool,
    entered: tokio::sync::Notify,
    release: tokio::sync::Notify,
}

#[async_trait::async_trait]
impl paydesk::external::acquirer::Acquirer for Counting {
    fn is_simulated(&self) -> bool {
        true
    }
    async fn tokenize(
        &self,
        card: &paydesk::domain::card::CardInput,
        test: bool,
    ) -> Result<paydesk::external::acquirer::CardRef, paydesk::external::acquirer::CardRefused> {
        self.inner.tokenize(card, test).await
    }
    async fn charge(
        &self,
        card: &paydesk::external::acquirer::CardRef,
        request: paydesk::external::acquirer::ChargeRequest<'_>,
    ) -> paydesk::external::acquirer::Outcome {
        *self.calls.lock().unwrap().entry(request.idempotency_key.to_string()).or_default() += 1;
        if self.gated.swap(false, std::sync::atomic::Ordering::SeqCst) {
            self.entered.notify_one();
            self.release.notified().await;
        }
        self.inner.charge(card, request).await
    }
    async fn capture(
        &self,
        request: paydesk::external::acquirer::SettleRequest<'_>,
    ) -> paydesk::external::acquirer::Outcome {
        self.inner.capture(request).await
    }
    async fn void(
        &self,
        request: paydesk::external::acquirer::SettleRequest<'_>,
    ) -> paydesk::external::acquirer::Outcome {
        self.inner.void(request).await
    }
    async fn refund(
        &self,
        card: &paydesk::external::acquirer::CardRef,
        request: paydesk::external::acquirer::RefundRequest<'_>,
    ) -> paydesk::external::acquirer::Outcome {
        self.inner.refund(card, request).await
    }
}

fn counting(app: &TestApp) -> (AppState, std::sync::Arc<Counting>) {
    let acquirer = std::sync::Arc::new(Counting {
        inner: paydesk::external::acquirer::simulated::SimulatedAcquirer::new(false),
        calls: Default::default(),
        gated: Default::default(),
        entered: Default::default(),
        release: Default::default(),
    });
    (app.state.with_acquirer(acquirer.clone()), acquirer)
}

/// Leaves the payment row of the subscription's due charge as an engine that died after
/// writing it would: `answered` says whether the acquirer had answered and it was recorded.
async fn interrupted_charge(app: &TestApp, state: &AppState, id: &str, answered: bool) {
    use paydesk::db::entities::subscriptions;
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
    let sub =
        subscriptions::Entity::find().filter(subscriptions::Column::Id.eq(id)).one(&app.db).await.unwrap().unwrap();
    let card = sub.card().unwrap();
    let key = format!("{id}:1:1");
    let new = paydesk::db::payments::NewPayment {
        shop_id: sub.shop_id,
        product_id: None,
        plan_id: Some(&sub.plan_id),
        subscription_id: Some(&sub.id),
        customer_id: Some(&sub.customer_id),
        amount: 990,
        currency: paydesk::domain::currency::find("EUR").unwrap(),
        transaction_type: paydesk::domain::vocab::TransactionType::Payment,
        test: true,
        card: &card,
        billing_key: Some(key.clone()),
        discount: None,
        customer_details: None,
        tax: None,
    };
    let now = Utc::now();
    let payment = paydesk::db::payments::insert_processing(&app.db, new, now).await.unwrap();
    let request = paydesk::external::acquirer::ChargeRequest {
        first_sent: None,
        amount: 990,
        currency: paydesk::domain::currency::find("EUR").unwrap(),
        capture: true,
        idempotency_key: &key,
        customer_present: false,
        again: false,
        if_unsent: paydesk::external::acquirer::IfUnsent::Wait,
        description: "Gym",
        return_url: None,
        now,
        simulate: None,
    };
    let outcome = state.acquirer.charge(&card, request).await;
    if answered {
        paydesk::db::payments::record_outcome(&app.db, payment, &outcome, now).await.unwrap();
    }
}

/// When the subscription's claim ends, as stored.
async fn claimed_until(app: &TestApp, id: &str) -> Option<chrono::DateTime<Utc>> {
    use paydesk::db::entities::subscriptions;
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
    let sub =
        subscriptions::Entity::find().filter(subscriptions::Column::Id.eq(id)).one(&app.db).await.unwrap().unwrap();
    sub.claimed_until
}

fn short_leases() -> ConfigArgs {
    ConfigArgs { lease_seconds: Some("2".into()), scheduler: Some("off".into()), ..Default::default() }
}

backend_tests! {
    /// A run dated after downtime renews its claims in real time while it charges; a second
    /// run of the same date then finds the subscription taken, however long the charge takes.
    async fn a_claim_renewed_while_charging_is_not_taken_by_another_run(backend) {
        let app = TestApp::spawn_with(backend, short_leases()).await;
        let shop = app.shop("Gym").await;
        let ids = due_subscriptions(&app, &shop, 1).await;
        let (state, acquirer) = counting(&app);
        acquirer.gated.store(true, std::sync::atomic::Ordering::SeqCst);
        let at = Utc::now() + Duration::days(70);
        let first = tokio::spawn({
            let state = state.clone();
            async move { run_due(&state, at).await }
        });
        acquirer.entered.notified().await;
        let taken = claimed_until(&app, &ids[0]).await;
        let patience = Patience::start();
        while claimed_until(&app, &ids[0]).await == taken {
            assert!(!patience.spent(), "the claim is renewed while the charge waits");
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        let other = second_instance(&app).await.with_acquirer(acquirer.clone());
        let second = run_due(&other, at).await.unwrap();
        acquirer.release.notify_one();
        let first = first.await.unwrap().unwrap();
        assert_eq!((first.charged, second.charged), (1, 0));
        let calls = acquirer.calls.lock().unwrap().clone();
        assert_eq!(calls, [(format!("{}:1:1", ids[0]), 1)].into(), "one call for the missed periods");
        let (_, sub) = app.get(&shop, &format!("/subscriptions/{}", ids[0])).await;
        assert_eq!((sub["paid_billing_cycles"].clone(), sub["state"].clone()), (json!(2), json!("active")));
    }

    /// Runs after downtime on a machine busy with other work (every core spinning), several
    /// at once with short leases: one charge per subscription and period.
    async fn runs_beside_a_busy_machine_charge_each_period_once(backend) {
        let app = TestApp::spawn_with(backend, short_leases()).await;
        let shop = app.shop("Gym").await;
        let count = 120;
        let ids = due_subscriptions(&app, &shop, count).await;
        let (state, acquirer) = counting(&app);
        let mut others = Vec::new();
        for _ in 0..2 {
            let other = second_instance(&app).await.with_acquirer(acquirer.clone());
            others.push(other);
        }
        let busy = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        let spinners: Vec<_> = (0..std::thread::available_parallelism().map_or(2, |n| n.get()) * 2)
            .map(|_| {
                let busy = busy.clone();
                std::thread::spawn(move || {
                    let mut x = 0u64;
                    while busy.load(std::sync::atomic::Ordering::Relaxed) {
                        x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
                    }
                })
            })
            .collect();
        let at = Utc::now() + Duration::days(70);
        let (a, b, c) = tokio::join!(run_due(&state, at), run_due(&others[0], at), run_due(&others[1], at));
        busy.store(false, std::sync::atomic::Ordering::Relaxed);
        spinners.into_iter().for_each(|s| s.join().unwrap());
        let charged = a.unwrap().charged + b.unwrap().charged + c.unwrap().charged;
        assert_eq!(charged, count, "one charge per subscription");
        let calls = acquirer.calls.lock().unwrap().clone();
        assert_eq!(calls.len(), count);
        assert!(calls.values().all(|&n| n == 1), "{calls:?}");
        for id in &ids {
            let (_, sub) = app.get(&shop, &format!("/subscriptions/{id}")).await;
            assert_eq!(sub["paid_billing_cycles"], 2, "{sub}");
        }
    }
}

db_tests! {
    async fn a_crash_after_charging_is_answered_again_under_the_same_key(app) {
        let shop = app.shop("Gym").await;
        let ids = due_subscriptions(&app, &shop, 1).await;
        let (state, acquirer) = counting(&app);
        interrupted_charge(&app, &state, &ids[0], false).await;
        let report = run_due(&state, Utc::now()).await.unwrap();
        assert_eq!(report.charged, 1, "the acquirer is asked again");
        let calls = acquirer.calls.lock().unwrap().clone();
        assert_eq!(calls.len(), 1, "under the one key of that period and attempt: {calls:?}");
        let (_, payments) = app.get(&shop, &format!("/payments?subscription={}", ids[0])).await;
        assert_eq!(payments.as_array().unwrap().len(), 1);
        assert_eq!(payments[0]["status"], "succeeded");
        let (_, sub) = app.get(&shop, &format!("/subscriptions/{}", ids[0])).await;
        assert_eq!(sub["paid_billing_cycles"], 2);
    }

    async fn a_crash_after_recording_is_not_charged_again(app) {
        let shop = app.shop("Gym").await;
        let ids = due_subscriptions(&app, &shop, 1).await;
        let (state, acquirer) = counting(&app);
        interrupted_charge(&app, &state, &ids[0], true).await;
        let report = run_due(&state, Utc::now()).await.unwrap();
        assert_eq!(report.charged, 0);
        assert_eq!(acquirer.calls.lock().unwrap().values().sum::<usize>(), 1, "only the charge before the crash");
        let (_, sub) = app.get(&shop, &format!("/subscriptions/{}", ids[0])).await;
        assert_eq!((sub["paid_billing_cycles"].clone(), sub["state"].clone()), (json!(2), json!("active")));
    }
}
