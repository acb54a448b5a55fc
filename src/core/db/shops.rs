//! Shops and their API credentials.

use crate::domain::mail::MailSettings;
use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, DbErr, EntityTrait, IntoActiveModel,
    QueryFilter, Set,
};
use serde_json::json;
use sha2::{Digest, Sha256};

use super::entities::shops;
use crate::domain::account::ShopSettings;
use crate::domain::audit::{Change, Entry, Outcome};
use crate::domain::ids::random_hex;

/// A new shop and its secret key, which is shown this once.
pub struct CreatedShop {
    pub shop: shops::Model,
    pub secret_key: String,
}

/// A secret key as stored: its digest (to check it) and the key sealed under the
/// key-encryption key (to send it back in notifications).
pub struct StoredSecret {
    pub digest: String,
    pub sealed: String,
    /// The secret's first characters, shown to tell keys apart.
    pub prefix: String,
}

/// Creates a shop with this secret key, its first API key, made by `created_by`.
pub async fn create(
    db: &impl ConnectionTrait,
    name: &str,
    url: Option<String>,
    secret: StoredSecret,
    created_by: &str,
    now: DateTime<Utc>,
) -> Result<shops::Model, DbErr> {
    let now = super::now_millis(now);
    let shop = shops::ActiveModel {
        name: Set(name.to_string()),
        url: Set(url),
        secret_digest: Set(secret.digest.clone()),
        secret_sealed: Set(Some(secret.sealed.clone())),
        timezone: Set(None),
        signing_key_sealed: Set(None),
        public_key: Set(None),
        notification_url: Set(None),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(db)
    .await?;
    super::api_keys::describe(db, shop.id, &secret.digest, &secret.prefix, created_by).await?;
    Ok(shop)
}

/// Stores the shop's key pair, unless it has one already (another instance made it first);
/// answers the shop as stored.
pub async fn set_key_pair(
    db: &impl ConnectionTrait,
    shop_id: i64,
    private_sealed: String,
    public_pem: String,
) -> Result<Option<shops::Model>, DbErr> {
    shops::Entity::update_many()
        .col_expr(shops::Column::SigningKeySealed, Expr::value(Some(private_sealed)))
        .col_expr(shops::Column::PublicKey, Expr::value(Some(public_pem)))
        .filter(shops::Column::Id.eq(shop_id))
        .filter(shops::Column::PublicKey.is_null())
        .exec(db)
        .await?;
    find(db, shop_id).await
}

/// The default notification URLs of these shops.
pub async fn notification_urls(
    db: &impl ConnectionTrait,
    shop_ids: &[i64],
) -> Result<std::collections::HashMap<i64, Option<String>>, DbErr> {
    use sea_orm::QuerySelect;
    let rows: Vec<(i64, Option<String>)> = shops::Entity::find()
        .select_only()
        .columns([shops::Column::Id, shops::Column::NotificationUrl])
        .filter(shops::Column::Id.is_in(shop_ids.iter().copied()))
        .into_tuple()
        .all(db)
        .await?;
    Ok(rows.into_iter().collect())
}

/// Sets where the shop's notifications go by default, recorded as `audit`.
pub async fn set_notification_url(
    db: &DatabaseConnection,
    shop_id: i64,
    url: Option<String>,
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    let setting = Setting {
        column: shops::Column::NotificationUrl,
        field: "notification_url",
        of: |s| json!(s.notification_url),
    };
    set(db, shop_id, setting, json!(url), audit, now).await
}

/// The shop with this id (for public pages, which show its name).
pub async fn find(db: &impl ConnectionTrait, shop_id: i64) -> Result<Option<shops::Model>, DbErr> {
    shops::Entity::find_by_id(shop_id).one(db).await
}

/// Changes the shop's name, URL and display time zone, recorded as `audit`.
pub async fn update_settings(
    db: &DatabaseConnection,
    shop_id: i64,
    settings: &ShopSettings,
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<Option<shops::Model>, DbErr> {
    let txn = crate::db::begin(db).await?;
    let Some(shop) = taken(&txn, shop_id).await? else { return Ok(None) };
    // Only what the merchant changed is written: another user's edit of another setting stays.
    let mut row = shop.clone().into_active_model();
    let mut changes = Vec::new();
    if shop.name != settings.name {
        row.name = Set(settings.name.clone());
        changes.push(Change::of("name", &shop.name, &settings.name));
    }
    if shop.url != settings.url {
        row.url = Set(settings.url.clone());
        changes.push(Change::of("url", &shop.url, &settings.url));
    }
    if shop.timezone != settings.timezone {
        row.timezone = Set(settings.timezone.clone());
        changes.push(Change::of("timezone", &shop.timezone, &settings.timezone));
    }
    row.updated_at = Set(super::now_millis(now));
    let updated = row.update(&txn).await?;
    if !changes.is_empty() {
        super::audit::record(&txn, &audit.clone().on("shop", shop_id.to_string()).changing(changes), now).await?;
    }
    txn.commit().await?;
    Ok(Some(updated))
}

/// Replaces the shop's secret key, if it is still the one `shop` was read with: the old one
/// stops working at once. Answers false when another rotation won the race (its key is the
/// one that works).
pub async fn rotate_secret(
    db: &DatabaseConnection,
    shop: shops::Model,
    secret: StoredSecret,
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<bool, DbErr> {
    let txn = crate::db::begin(db).await?;
    let rotated = shops::Entity::update_many()
        .col_expr(shops::Column::SecretDigest, Expr::value(secret.digest.clone()))
        .col_expr(shops::Column::SecretSealed, Expr::value(Some(secret.sealed.clone())))
        .col_expr(shops::Column::UpdatedAt, Expr::value(super::now_millis(now)))
        .filter(shops::Column::Id.eq(shop.id))
        .filter(shops::Column::SecretDigest.eq(&shop.secret_digest))
        .exec(&txn)
        .await?;
    let entry = audit.clone().on("shop", shop.id.to_string()).changing(vec![Change::secret("secret_key", true)]);
    if rotated.rows_affected == 1 {
        // The trigger revoked the old key and made its successor, of the same name.
        let by = entry.actor.label.as_deref().or(entry.actor.id.as_deref()).unwrap_or("paydesk");
        super::api_keys::describe(&txn, shop.id, &secret.digest, &secret.prefix, by).await?;
        super::audit::record(&txn, &entry, now).await?;
    } else {
        super::audit::record(&txn, &entry.changing(Vec::new()).ended(Outcome::Failure), now).await?;
    }
    txn.commit().await?;
    Ok(rotated.rows_affected == 1)
}

/// 256 random bits, with a prefix that makes leaked keys easy to recognise.
pub fn new_secret() -> String {
    format!("sk_{}", random_hex(32))
}

/// SHA-256 of a high-entropy secret: fast enough for every API request, and a stolen table
/// of digests does not give the keys back.
pub fn digest(secret: &str) -> String {
    crate::domain::ids::hex(&Sha256::digest(secret.as_bytes()))
}

/// One setting of a shop: its column, its name in the audit trail, and its value as JSON.
struct Setting {
    column: shops::Column,
    field: &'static str,
    of: fn(&shops::Model) -> serde_json::Value,
}

/// Sets `setting` of a shop to `value` and records it as `audit`, in one transaction: the
/// shop's row is taken first, so the value recorded as before is the one replaced.
async fn set(
    db: &DatabaseConnection,
    shop_id: i64,
    setting: Setting,
    value: serde_json::Value,
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    let txn = crate::db::begin(db).await?;
    let Some(before) = taken(&txn, shop_id).await? else { return Ok(()) };
    shops::Entity::update_many()
        .col_expr(setting.column, Expr::value(json_to_sql(&value)))
        .col_expr(shops::Column::UpdatedAt, Expr::value(super::now_millis(now)))
        .filter(shops::Column::Id.eq(shop_id))
        .exec(&txn)
        .await?;
    let was = (setting.of)(&before);
    if was != value {
        let entry = audit.clone().on("shop", shop_id.to_string()).changing(vec![Change {
            field: setting.field.into(),
            before: was,
            after: value,
        }]);
        super::audit::record(&txn, &entry, now).await?;
    }
    txn.commit().await
}

/// Saves the shop's e-mail settings (which e-mails go, the renewal reminders' lead, the
/// sender address) and records what changed as `audit`, in one transaction.
pub async fn set_mails(
    db: &DatabaseConnection,
    shop_id: i64,
    settings: &MailSettings,
    mail_from: Option<String>,
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    let audited = |off: &str, days: Option<i32>, all: bool, from: &Option<String>| json!({"mails_off": off, "reminder_days": days, "reminder_all_periods": all, "mail_from": from});
    let txn = crate::db::begin(db).await?;
    let Some(before) = taken(&txn, shop_id).await? else { return Ok(()) };
    let off = settings.off_to_db();
    shops::Entity::update_many()
        .col_expr(shops::Column::MailOff, Expr::value(off.clone()))
        .col_expr(shops::Column::ReminderDays, Expr::value(Some(settings.reminder_days)))
        .col_expr(shops::Column::ReminderAllPeriods, Expr::value(settings.reminder_all_periods))
        .col_expr(shops::Column::MailFrom, Expr::value(mail_from.clone()))
        .col_expr(shops::Column::UpdatedAt, Expr::value(super::now_millis(now)))
        .filter(shops::Column::Id.eq(shop_id))
        .exec(&txn)
        .await?;
    let was = audited(&before.mail_off, before.reminder_days, before.reminder_all_periods, &before.mail_from);
    let is = audited(&off, Some(settings.reminder_days), settings.reminder_all_periods, &mail_from);
    let changes = crate::domain::audit::changes(&was, &is, &[]);
    if !changes.is_empty() {
        super::audit::record(&txn, &audit.clone().on("shop", shop_id.to_string()).changing(changes), now).await?;
    }
    txn.commit().await
}

/// The shop's row, taken for this transaction (locked on PostgreSQL, the write lock on SQLite)
/// by a write that changes nothing, as it stands now.
async fn taken(txn: &impl ConnectionTrait, shop_id: i64) -> Result<Option<shops::Model>, DbErr> {
    shops::Entity::update_many()
        .col_expr(shops::Column::UpdatedAt, Expr::col(shops::Column::UpdatedAt).into())
        .filter(shops::Column::Id.eq(shop_id))
        .exec(txn)
        .await?;
    find(txn, shop_id).await
}

/// A JSON setting's value as SQL sees it.
fn json_to_sql(value: &serde_json::Value) -> sea_orm::Value {
    match value {
        serde_json::Value::Bool(b) => (*b).into(),
        serde_json::Value::Number(n) => n.as_i64().into(),
        serde_json::Value::String(text) => Some(text.clone()).into(),
        _ => Option::<String>::None.into(),
    }
}

/// A session of its own at `url` listening on PostgreSQL's notification `channel`, reached as
/// the pool's connections are (the same address, the same TLS).
pub async fn listener(url: &str, channel: &str) -> Result<sea_orm::sqlx::postgres::PgListener, DbErr> {
    let own = super::connect(url, 1).await?;
    let mut listener = sea_orm::sqlx::postgres::PgListener::connect_with(own.get_postgres_connection_pool())
        .await
        .map_err(super::driver_error)?;
    // A lost connection surfaces at once rather than after a silent reconnect.
    listener.eager_reconnect(false);
    listener.listen(channel).await.map_err(super::driver_error)?;
    Ok(listener)
}

/// Sends `payload` on PostgreSQL's notification `channel` to every session listening.
pub async fn notify(db: &impl ConnectionTrait, channel: &str, payload: &str) -> Result<(), DbErr> {
    let statement = sea_orm::Statement::from_sql_and_values(
        sea_orm::DatabaseBackend::Postgres,
        "SELECT pg_notify($1, $2)",
        [channel.into(), payload.into()],
    );
    db.execute(statement).await.map(|_| ())
}

/// Whether every user of the shop must sign in with two-step login.
pub async fn set_two_step_required(
    db: &DatabaseConnection,
    shop_id: i64,
    required: bool,
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    let setting = Setting {
        column: shops::Column::TwoStepRequired,
        field: "two_step_required",
        of: |s| json!(s.two_step_required),
    };
    set(db, shop_id, setting, json!(required), audit, now).await
}

/// How many minutes the shop's dashboard sessions live unused.
pub async fn set_session_idle(
    db: &DatabaseConnection,
    shop_id: i64,
    minutes: i32,
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    let setting = Setting {
        column: shops::Column::SessionIdleMinutes,
        field: "session_idle_minutes",
        of: |s| json!(s.session_idle_minutes),
    };
    set(db, shop_id, setting, json!(minutes), audit, now).await
}

/// Whether subscribers may pause and resume on their page.
pub async fn set_subscriber_pause(
    db: &DatabaseConnection,
    shop_id: i64,
    allowed: bool,
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    let setting = Setting {
        column: shops::Column::SubscriberPause,
        field: "subscriber_pause",
        of: |s| json!(s.subscriber_pause),
    };
    set(db, shop_id, setting, json!(allowed), audit, now).await
}

/// What the shop does about disputes and fraud warnings: yes-or-no choices, each named in the
/// API and the dashboard's form as [`DisputeChoice::field`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DisputeChoice {
    /// A dispute of a subscription's payment cancels the subscriptions on its card at once.
    Cancels,
    /// A card a dispute stands against is refused for new payments and subscriptions.
    RefusesCards,
    /// An actionable early fraud warning refunds its payment.
    WarningRefunds,
}

impl DisputeChoice {
    pub const ALL: [DisputeChoice; 3] =
        [DisputeChoice::Cancels, DisputeChoice::RefusesCards, DisputeChoice::WarningRefunds];

    /// Its name in the API and the dashboard.
    pub fn field(self) -> &'static str {
        self.setting().field
    }

    /// The shop's choice.
    pub fn of(self, shop: &shops::Model) -> bool {
        match self {
            DisputeChoice::Cancels => shop.dispute_cancels,
            DisputeChoice::RefusesCards => shop.refuse_disputed_cards,
            DisputeChoice::WarningRefunds => shop.fraud_warning_refunds,
        }
    }

    fn setting(self) -> Setting {
        match self {
            DisputeChoice::Cancels => Setting {
                column: shops::Column::DisputeCancels,
                field: "cancel_disputed_subscriptions",
                of: |s| json!(s.dispute_cancels),
            },
            DisputeChoice::RefusesCards => Setting {
                column: shops::Column::RefuseDisputedCards,
                field: "refuse_disputed_cards",
                of: |s| json!(s.refuse_disputed_cards),
            },
            DisputeChoice::WarningRefunds => Setting {
                column: shops::Column::FraudWarningRefunds,
                field: "refund_fraud_warnings",
                of: |s| json!(s.fraud_warning_refunds),
            },
        }
    }
}

/// Sets one of the shop's dispute choices, recorded as `audit`.
pub async fn set_dispute_choice(
    db: &DatabaseConnection,
    shop_id: i64,
    choice: DisputeChoice,
    value: bool,
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    set(db, shop_id, choice.setting(), json!(value), audit, now).await
}
