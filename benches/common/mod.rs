//! What the benchmarks share: a fresh instance on a new SQLite file or PostgreSQL schema,
//! and a shop with many subscriptions.

use chrono::{DateTime, Duration, Utc};
use paydesk::app;
use paydesk::config::{Config, ConfigArgs};
use paydesk::db::entities::subscriptions;
use paydesk::domain::billing::State;
use paydesk::web::state::AppState;
use sea_orm::{ActiveValue::NotSet, ConnectionTrait, Database, EntityTrait, Set};

/// An instance (no scheduler) on a new database of `backend` (`sqlite`, `postgres`: the
/// server of `PAYDESK_TEST_POSTGRES_URL`, default the local one), configured further by `args`.
pub async fn fresh(backend: &str, args: ConfigArgs) -> (AppState, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let url = match backend {
        "sqlite" => format!("sqlite://{}?mode=rwc", dir.path().join("bench.db").display()),
        _ => {
            let admin_url = std::env::var("PAYDESK_TEST_POSTGRES_URL")
                .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into());
            let admin = Database::connect(&admin_url).await.expect("PostgreSQL");
            let schema = format!("paydesk_t_bench_{}", paydesk::domain::ids::random_hex(4));
            admin.execute_unprepared(&format!("CREATE SCHEMA {schema}")).await.unwrap();
            format!("{admin_url}?options=-c%20search_path%3D{schema}")
        }
    };
    let args = ConfigArgs {
        database_url: Some(url),
        scheduler: Some("off".into()),
        key_encryption_key: Some("YmVuY2htYXJrLWtleS1lbmNyeXB0aW9uLWtleS0zMiE=".into()),
        ..args
    };
    let config = Config::from_args(&args).unwrap();
    let db = app::open_database(&config).await.unwrap();
    (AppState::new(db, config).unwrap(), dir)
}

/// `n` active subscriptions of a new shop's plan (`plan_body`, as the API takes it) with a
/// test card, all renewing at `renew_at` a period after they started; answers the shop.
pub async fn seed(state: &AppState, n: usize, plan_body: serde_json::Value, renew_at: DateTime<Utc>) -> i64 {
    let shop =
        paydesk::services::keys::create_shop(&state.db, &state.vault, "Bench", None, Utc::now()).await.unwrap().shop;
    seed_on(state, shop.id, n, plan_body, renew_at, None).await;
    shop.id
}

/// Like [`seed`], into the shop `shop_id` and on the test clock `clock` if one is given.
pub async fn seed_on(
    state: &AppState,
    shop_id: i64,
    n: usize,
    plan_body: serde_json::Value,
    renew_at: DateTime<Utc>,
    clock: Option<&str>,
) {
    let fields = paydesk::domain::plan::PlanFields::parse(plan_body.as_object().unwrap()).unwrap();
    let plan = paydesk::db::plans::insert(&state.db, shop_id, &fields, Utc::now()).await.unwrap();
    let renew_at = paydesk::db::now_millis(renew_at);
    let anchor = renew_at - Duration::days(31);
    let rows = (0..n).map(|i| subscriptions::ActiveModel {
        seq: NotSet,
        id: Set(format!("sbs_bench{i:011}")),
        shop_id: Set(shop_id),
        plan_id: Set(plan.id.clone()),
        customer_id: Set(format!("cst_bench{i:011}")),
        state: Set(State::Active),
        test: Set(true),
        test_clock_id: Set(clock.map(str::to_string)),
        tracking_id: Set(None),
        return_url: Set(None),
        notification_url: Set(None),
        additional_data: Set(None),
        card_token: Set(Some(format!("tok_sim_ok_{i:024}"))),
        card_brand: Set(Some("visa".into())),
        card_last4: Set(Some("0000".into())),
        card_exp_month: Set(Some(12)),
        card_exp_year: Set(Some(2040)),
        card_holder: Set(Some("Bench".into())),
        card_fingerprint: Set(None),
        started_at: Set(Some(anchor)),
        trial_ends_at: Set(None),
        anchor_at: Set(Some(anchor)),
        period: Set(1),
        paid_cycles: Set(1),
        failed_attempts: Set(0),
        has_success: Set(true),
        renew_at: Set(Some(renew_at)),
        active_to: Set(Some(renew_at)),
        last_payment_id: Set(None),
        cancel_reason: Set(None),
        cancelled_at: Set(None),
        cancel_at_period_end: Set(false),
        anchor_period: Set(0),
        pause_at_period_end: Set(false),
        paused_at: Set(None),
        resume_at: Set(None),
        resume_billing: Set(None),
        change_plan_id: Set(None),
        change_id: Set(None),
        change_amount: Set(None),
        change_at: Set(None),
        coupon_id: Set(None),
        discount_from: Set(None),
        discount_periods: Set(None),
        remind_at: Set(None),
        claim_token: Set(None),
        claimed_until: Set(None),
        created_at: Set(anchor),
        updated_at: Set(anchor),
    });
    let rows: Vec<_> = rows.collect();
    for chunk in rows.chunks(500) {
        subscriptions::Entity::insert_many(chunk.to_vec()).exec(&state.db).await.unwrap();
    }
}
