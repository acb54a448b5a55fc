use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "shops")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub id: i64,
    pub name: String,
    pub url: Option<String>,
    pub secret_digest: String,
    pub timezone: Option<String>,
    /// The API secret sealed under the key-encryption key (for the Basic auth of
    /// notifications); none for a secret made before paydesk kept it.
    pub secret_sealed: Option<String>,
    /// The RSA private key (PKCS#8 DER) that signs notifications, sealed.
    pub signing_key_sealed: Option<String>,
    /// Its public key (PEM, SPKI), shown to the merchant.
    pub public_key: Option<String>,
    /// Where notifications go when the object names no `notification_url`.
    pub notification_url: Option<String>,
    /// The address the shop's mails come from; none for the instance's default.
    pub mail_from: Option<String>,
    /// The kinds of mail the merchant turned off (comma-separated).
    pub mail_off: String,
    /// Days before a renewal its reminder goes; none for the default.
    pub reminder_days: Option<i32>,
    /// Whether renewals of every plan are announced, not only of long ones.
    pub reminder_all_periods: bool,
    /// Subscribers may pause (from the end of the paid period) and resume on their page.
    pub subscriber_pause: bool,
    /// Whether every user of the shop must sign in with two-step login.
    pub two_step_required: bool,
    /// Minutes a dashboard session lives unused (15, up to 480).
    pub session_idle_minutes: i32,
    /// Whether a dispute of a subscription's payment cancels the subscription at once.
    pub dispute_cancels: bool,
    /// Whether an actionable early fraud warning refunds its payment (and cancels its
    /// subscription).
    pub fraud_warning_refunds: bool,
    /// A card with a dispute that stands (open, or lost) is refused for new payments.
    pub refuse_disputed_cards: bool,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
