use sea_orm::entity::prelude::*;

use crate::domain::currency::Currency;
use crate::domain::dispute::DisputeStatus;
use crate::domain::tax::TaxBehavior;
use crate::domain::vocab::{PaymentStatus, TransactionType};

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "payments")]
pub struct Model {
    #[sea_orm(primary_key)]
    pub seq: i64,
    #[sea_orm(unique)]
    pub id: String,
    pub shop_id: i64,
    pub product_id: Option<String>,
    pub plan_id: Option<String>,
    pub subscription_id: Option<String>,
    pub customer_id: Option<String>,
    pub amount: i64,
    pub currency: Currency,
    pub transaction_type: TransactionType,
    pub status: PaymentStatus,
    pub test: bool,
    pub card_token: String,
    pub card_brand: String,
    pub card_last4: String,
    pub card_exp_month: i32,
    pub card_exp_year: i32,
    pub card_holder: String,
    /// What identifies the card across entries (its processor's fingerprint).
    pub card_fingerprint: Option<String>,
    pub acquirer_reference: Option<String>,
    /// The processor's reference of the capture of a held payment, where it has one of its
    /// own (bePaid): refunds are made against it.
    pub capture_reference: Option<String>,
    pub failure_code: Option<String>,
    pub failure_message: Option<String>,
    pub captured_at: Option<DateTimeUtc>,
    pub voided_at: Option<DateTimeUtc>,
    /// What refunds gave back.
    pub refunded_amount: i64,
    /// What refunds under way hold (given back or released once the acquirer answers).
    pub refunding_amount: i64,
    /// `subscription:period:attempt` for charges of the billing engine: unique.
    pub billing_key: Option<String>,
    /// Still `processing` with the processor's answer unknown: when the sweeper next looks.
    pub recheck_at: Option<DateTimeUtc>,
    /// Where the customer authenticates (3-D Secure) while the payment waits for them.
    pub action_url: Option<String>,
    /// The processor's card page session, when the customer types their card there.
    pub checkout_token: Option<String>,
    /// What the customer typed on paydesk's page (JSON pairs), kept until the payment goes
    /// through and they become a customer.
    pub customer_details: Option<String>,
    /// The coupon that took `discount_amount` off this charge (`amount` is what was charged).
    pub coupon_id: Option<String>,
    pub discount_amount: i64,
    /// What disputes took back from the merchant and kept (net of what they gave back).
    pub disputed_amount: i64,
    /// The processors' dispute fees taken, in the payment's currency.
    pub dispute_fees: i64,
    /// Its dispute (the first, should there be more) and that dispute's status.
    pub dispute_id: Option<String>,
    pub dispute_status: Option<DisputeStatus>,
    /// An early fraud warning's type (`made_with_stolen_card`…), and when it came.
    pub fraud_warning: Option<String>,
    pub fraud_warned_at: Option<DateTimeUtc>,
    /// When the simulated processor's card network acts on this payment next (a test
    /// card's dispute or early fraud warning).
    pub network_at: Option<DateTimeUtc>,
    /// A capture or void claimed (`capture`, `void`) and not recorded yet, and since when:
    /// the sweep takes up one an interrupted request left.
    pub settling: Option<String>,
    pub settling_at: Option<DateTimeUtc>,
    /// The shop's rate the charge was taxed at, how its price held the tax, the tax `amount`
    /// holds, and whether the buyer accounts for the tax instead (a reverse charge): as it was
    /// charged, so its invoice says the same.
    pub tax_rate_id: Option<String>,
    pub tax_behavior: Option<TaxBehavior>,
    pub tax_amount: i64,
    pub reverse_charge: bool,
    pub created_at: DateTimeUtc,
    pub updated_at: DateTimeUtc,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
