//! Payments made on a page and looked for later: the processor's card pages open or paid,
//! the payments a processor names, and those the sweep settles (interrupted, orphaned by an
//! ended subscription, paid but never opened).

use super::*;

/// Keeps, with a payment still `processing`, the processor's card page the customer goes
/// to; the page is looked at a minute from now.
pub async fn await_card_page(
    db: &impl ConnectionTrait,
    payment: Model,
    token: &str,
    redirect_url: &str,
    now: DateTime<Utc>,
) -> Result<Model, DbErr> {
    let recheck = crate::db::now_millis(now + crate::domain::pending::FIRST_PAUSE);
    Entity::update_many()
        .col_expr(Column::CheckoutToken, Expr::value(Some(token)))
        .col_expr(Column::ActionUrl, Expr::value(Some(redirect_url)))
        .col_expr(Column::RecheckAt, Expr::value(Some(recheck)))
        .filter(Column::Id.eq(payment.id.as_str()))
        .filter(Column::Status.eq(PaymentStatus::Processing))
        .exec(db)
        .await?;
    Ok(Model {
        checkout_token: Some(token.to_string()),
        action_url: Some(redirect_url.to_string()),
        recheck_at: Some(recheck),
        ..payment
    })
}

/// The shop's payment a processor names by paydesk's reference: its id, or a renewal's
/// billing key.
pub async fn find_by_tracking(db: &impl ConnectionTrait, shop_id: i64, tracking: &str) -> Result<Option<Model>, DbErr> {
    Entity::find()
        .filter(Column::ShopId.eq(shop_id))
        .filter(Condition::any().add(Column::Id.eq(tracking)).add(Column::BillingKey.eq(tracking)))
        .one(db)
        .await
}

/// The shop's payment the processor knows by `reference`.
pub async fn find_by_reference(
    db: &impl ConnectionTrait,
    shop_id: i64,
    reference: &str,
) -> Result<Option<Model>, DbErr> {
    let named =
        Condition::any().add(Column::AcquirerReference.eq(reference)).add(Column::CaptureReference.eq(reference));
    Entity::find().filter(named).filter(Column::ShopId.eq(shop_id)).one(db).await
}

/// Payments of hosted pages still `processing` since before `before` and due for a lookup at
/// `now`: their request was interrupted between asking the acquirer and recording its
/// answer, or the answer is not known yet.
pub async fn interrupted(
    db: &impl ConnectionTrait,
    before: DateTime<Utc>,
    now: DateTime<Utc>,
    limit: u64,
) -> Result<Vec<Model>, DbErr> {
    let query = sweep_query(db.get_database_backend(), Sweep::Interrupted { before, now }, limit);
    Entity::find().from_raw_sql(query).all(db).await
}

/// The processor's card page opened for a subscription's card and not yet ended, if any: one
/// that charges something (`charging`), at whatever amount it opened with, or one of nothing
/// that only saves a card.
pub async fn card_page_of(
    db: &impl ConnectionTrait,
    subscription_id: &str,
    charging: bool,
) -> Result<Option<Model>, DbErr> {
    let amount = match charging {
        true => Column::Amount.gt(0),
        false => Column::Amount.eq(0),
    };
    Entity::find()
        .filter(Column::SubscriptionId.eq(subscription_id))
        .filter(Column::Status.eq(PaymentStatus::Processing))
        .filter(Column::BillingKey.is_null())
        .filter(Column::CheckoutToken.is_not_null())
        .filter(amount)
        .one(db)
        .await
}

/// Payments the subscribers of these subscriptions make on the processor's page that are
/// not yet any charge's (no billing key): being opened (no page yet), still open, or paid a
/// moment ago.
pub async fn open_pages(db: &impl ConnectionTrait, subscription_ids: Vec<String>) -> Result<Vec<Model>, DbErr> {
    Entity::find()
        .filter(Column::SubscriptionId.is_in(subscription_ids))
        .filter(Column::Status.is_in([PaymentStatus::Processing, PaymentStatus::Succeeded]))
        .filter(Column::BillingKey.is_null())
        .filter(Column::Amount.gt(0))
        .all(db)
        .await
}

/// Renewals still `processing` (due for a lookup at `now`, untouched since before `before`)
/// whose subscription has ended: the engine no longer claims them.
pub async fn orphaned_renewals(
    db: &impl ConnectionTrait,
    before: DateTime<Utc>,
    now: DateTime<Utc>,
    limit: u64,
) -> Result<Vec<Model>, DbErr> {
    let query = sweep_query(db.get_database_backend(), Sweep::Orphaned { before, now }, limit);
    Entity::find().from_raw_sql(query).all(db).await
}

/// A plan's first charges that went through on its page (not yet the first charge of a
/// subscription: no billing key) and were last touched before `before`: their subscription
/// was never opened.
pub async fn paid_unopened(db: &impl ConnectionTrait, before: DateTime<Utc>, limit: u64) -> Result<Vec<Model>, DbErr> {
    let query = sweep_query(db.get_database_backend(), Sweep::Unopened { before }, limit);
    Entity::find().from_raw_sql(query).all(db).await
}

/// The payments the sweep of every engine run looks for.
#[derive(Debug, Clone, Copy)]
pub enum Sweep {
    /// [`interrupted`].
    Interrupted { before: DateTime<Utc>, now: DateTime<Utc> },
    /// [`orphaned_renewals`].
    Orphaned { before: DateTime<Utc>, now: DateTime<Utc> },
    /// [`paid_unopened`].
    Unopened { before: DateTime<Utc> },
}

/// The query of a [`Sweep`] (public to see its plan): up to `limit` payments read from the
/// partial index that holds just them (migrations m20261124_000017 and m20261205_000042),
/// whose condition the query repeats so that both databases may use it.
pub fn sweep_query(backend: sea_orm::DatabaseBackend, sweep: Sweep, limit: u64) -> sea_orm::Statement {
    use sea_orm::{DatabaseBackend, Statement, Value};
    let p = match backend {
        DatabaseBackend::Postgres => ["$1", "$2", "$3"],
        _ => ["?", "?", "?"],
    };
    let (index, condition, times) = match sweep {
        Sweep::Interrupted { before, now } => {
            let condition = format!(
                "status = 'processing' AND billing_key IS NULL AND updated_at < {} \
                 AND (recheck_at IS NULL OR recheck_at < {})",
                p[0], p[1]
            );
            ("ix_payments_processing", condition, vec![before, now])
        }
        // Each one's subscription is looked up by its id. In real time: untouched for a
        // while, and due for its lookup. On a test clock its times are the clock's, which real
        // time says nothing about: nothing of it is in flight once its clock stands still.
        Sweep::Orphaned { before, now } => {
            let condition = format!(
                "status = 'processing' AND billing_key IS NOT NULL AND EXISTS (\
                 SELECT 1 FROM subscriptions s WHERE s.id = payments.subscription_id \
                 AND s.state IN ('canceled', 'expired', 'failed', 'error') AND (\
                 (s.test_clock_id IS NULL AND payments.updated_at < {} \
                  AND (payments.recheck_at IS NULL OR payments.recheck_at < {})) \
                 OR (s.test_clock_id IS NOT NULL \
                  AND s.test_clock_id NOT IN (SELECT id FROM test_clocks WHERE status = 'advancing'))))",
                p[0], p[1]
            );
            ("ix_payments_renewing", condition, vec![before, now])
        }
        Sweep::Unopened { before } => {
            let condition = format!(
                "status = 'succeeded' AND plan_id IS NOT NULL AND billing_key IS NULL \
                 AND (customer_id IS NOT NULL OR customer_details IS NOT NULL) AND updated_at < {}",
                p[0]
            );
            ("ix_payments_unopened", condition, vec![before])
        }
    };
    // SQLite, left to itself, can prefer the unique index of billing keys, or a plan's, and
    // walk every hosted payment.
    let from = match backend {
        DatabaseBackend::Postgres => "payments".to_string(),
        _ => format!("payments INDEXED BY {index}"),
    };
    let n = times.len();
    let sql = format!("SELECT * FROM {from} WHERE {condition} LIMIT {}", p[n]);
    let mut values: Vec<Value> = times.iter().map(|t| crate::db::now_millis(*t).into()).collect();
    values.push((limit as i64).into());
    Statement::from_sql_and_values(backend, sql, values)
}
