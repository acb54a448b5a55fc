//! The shop's processor: what `PUT /shop/processor` accepts.

use super::*;

/// A change to the shop's payment processor: only what is sent changes (the body may be
/// empty); `null` or blank text reads as not sent, but for an account, which `null` removes.
#[derive(ToSchema)]
#[schema(example = json!({"kind": "simulated", "card_entry": "processor_page"}))]
pub struct ProcessorUpdate {
    /// `simulated` (no money moves), `bepaid` (a BeGateway processor) or `stripe`. Changing
    /// it to another real processor forgets the accounts of the one before unless this change
    /// sends them; `simulated` keeps them for later.
    kind: Option<crate::domain::processor::ProcessorKind>,
    /// `processor_page` (customers type their card on the processor's page) or
    /// `paydesk_page` (on paydesk's page: needs the processor's permission and puts the
    /// operator in PCI DSS SAQ D).
    card_entry: Option<crate::domain::processor::CardEntry>,
    /// The gateway's base URL; `https` (default `https://gateway.bepaid.by`).
    #[schema(
        max_length = 2048,
        pattern = r"^$|^https?://([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z]([A-Za-z0-9-]*[A-Za-z0-9])?(:[0-9]{1,4})?(/[^\x00?#]*)?$"
    )]
    gateway_url: Option<String>,
    /// The hosted checkout's base URL; `https` (default `https://checkout.bepaid.by`).
    #[schema(
        max_length = 2048,
        pattern = r"^$|^https?://([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z]([A-Za-z0-9-]*[A-Za-z0-9])?(:[0-9]{1,4})?(/[^\x00?#]*)?$"
    )]
    checkout_url: Option<String>,
    /// The account of test products and plans; `null` removes it.
    test: Option<ProcessorAccountUpdate>,
    /// The account of live products and plans; `null` removes it.
    live: Option<ProcessorAccountUpdate>,
}

/// One mode's account: only what is sent changes.
#[derive(ToSchema)]
pub struct ProcessorAccountUpdate {
    /// The shop id at the processor: text or a whole number.
    #[schema(schema_with = merchant_reference)]
    shop_id: Option<String>,
    /// The secret key; sealed at rest and never shown again. Stripe: `sk_test_…` (or a
    /// restricted `rk_test_…`) for the test account, `sk_live_…` for the live one.
    #[schema(max_length = 255)]
    secret_key: Option<String>,
    /// Stripe's webhook signing secret (`whsec_…`) of the endpoint that sends to
    /// `/notifications/stripe/{shop_id}`; sealed and never shown again. The one it replaces
    /// is still taken for 24 hours (while Stripe rolls it).
    #[schema(max_length = 255)]
    webhook_secret: Option<String>,
    /// The processor's RSA public key for notifications, as its back office shows it
    /// (base64, with or without the PEM lines).
    #[schema(max_length = 4096)]
    public_key: Option<String>,
}
