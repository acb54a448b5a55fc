//! A shop's payment processor as the API shows it: never a secret key, only its last
//! characters.

use serde::Serialize;
use utoipa::ToSchema;

use crate::db::entities::shop_processors::Model;
use crate::domain::processor::{CardEntry, Mode, ProcessorKind};

/// The shop's payment processor.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = Processor)]
pub struct ProcessorView {
    /// Always `processor`.
    pub object: &'static str,
    pub kind: ProcessorKind,
    pub card_entry: CardEntry,
    /// The BeGateway gateway's base URL (bePaid's unless the processor runs elsewhere); `null`
    /// for another kind (Stripe's API URL is the instance's `PAYDESK_STRIPE_API_URL`).
    pub gateway_url: Option<String>,
    /// Its hosted checkout's base URL (bePaid); `null` for another kind.
    pub checkout_url: Option<String>,
    /// The account test products and plans use; `null` when none is set.
    pub test: Option<AccountView>,
    /// The account live products and plans use; `null` when none is set.
    pub live: Option<AccountView>,
}

/// One mode's account at the processor.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = ProcessorAccount)]
pub struct AccountView {
    pub shop_id: Option<String>,
    /// The last 4 characters of the secret key; the key itself is never shown again.
    pub secret_key_last4: Option<String>,
    /// The processor's public key that verifies its notifications (bePaid).
    pub public_key: Option<String>,
    /// The last 4 characters of the webhook signing secret (Stripe); never shown whole.
    pub webhook_secret_last4: Option<String>,
}

impl ProcessorView {
    /// The view of a shop's processor settings.
    pub fn of(row: &Model) -> ProcessorView {
        let account = |mode: Mode| {
            let a = row.account(mode);
            a.is_set().then(|| AccountView {
                shop_id: a.shop_id.map(str::to_string),
                secret_key_last4: a.secret_hint.map(str::to_string),
                public_key: a.public_key.map(str::to_string),
                webhook_secret_last4: a.webhook_hint.map(str::to_string),
            })
        };
        let bepaid = row.kind == ProcessorKind::Bepaid;
        ProcessorView {
            object: "processor",
            kind: row.kind,
            card_entry: row.card_entry,
            gateway_url: bepaid.then(|| row.gateway_url.clone()),
            checkout_url: bepaid.then(|| row.checkout_url.clone()),
            test: account(Mode::Test),
            live: account(Mode::Live),
        }
    }
}

/// What a connection check found for each account.
#[derive(Debug, Serialize, ToSchema)]
#[schema(as = ProcessorCheck)]
pub struct CheckView {
    /// Always `processor_check`.
    pub object: &'static str,
    /// The test account's result; `null` when there is none to check.
    pub test: Option<CheckResult>,
    /// The live account's result; `null` when there is none to check.
    pub live: Option<CheckResult>,
}

/// Whether the processor took an account, and if not, why.
#[derive(Debug, Serialize, ToSchema)]
pub struct CheckResult {
    pub works: bool,
    /// What is wrong, in words for the merchant; `null` when it works.
    pub message: Option<String>,
}
