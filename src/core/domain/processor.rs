//! A shop's payment processor: which one, where customers type their cards, and its account
//! per mode. A change names only what changes; the result must be complete for its kind.

use serde_json::{Map, Value};

use super::Errors;
use super::input::Reader;
use super::vocab::words;

/// bePaid's gateway, where a new connection points unless told otherwise.
pub const BEPAID_GATEWAY: &str = "https://gateway.bepaid.by";
/// bePaid's hosted checkout.
pub const BEPAID_CHECKOUT: &str = "https://checkout.bepaid.by";

/// The longest account id, secret key or public key taken.
const MAX_CREDENTIAL: usize = 255;
const MAX_PUBLIC_KEY: usize = 4096;

words! {
    /// Who moves a shop's money: the built-in simulation, a BeGateway processor (bePaid and
    /// the processors that run its platform under their own names), or Stripe.
    ProcessorKind { Simulated = "simulated", Bepaid = "bepaid", Stripe = "stripe" }
}

words! {
    /// Where customers type their card: on the processor's own page (paydesk never sees the
    /// number), or on paydesk's page (needs the processor's permission and puts the operator
    /// in PCI DSS SAQ D).
    CardEntry { ProcessorPage = "processor_page", PaydeskPage = "paydesk_page" }
}

/// A test or live mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Test,
    Live,
}

impl Mode {
    /// The field a request names the mode's account with.
    pub fn field(self) -> &'static str {
        match self {
            Mode::Test => "test",
            Mode::Live => "live",
        }
    }
}

/// What a request changes of one mode's account.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AccountChange {
    pub shop_id: Option<String>,
    pub secret_key: Option<String>,
    pub public_key: Option<String>,
    /// Stripe's webhook signing secret (`whsec_…`).
    pub webhook_secret: Option<String>,
}

/// A change to a shop's processor (`PUT /shop/processor`): what is not sent stays.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProcessorChange {
    pub kind: Option<ProcessorKind>,
    pub card_entry: Option<CardEntry>,
    pub gateway_url: Option<String>,
    pub checkout_url: Option<String>,
    /// `Some(None)` removes the test account.
    pub test: Option<Option<AccountChange>>,
    /// `Some(None)` removes the live account.
    pub live: Option<Option<AccountChange>>,
}

impl ProcessorChange {
    /// Reads a change; every field is optional.
    pub fn parse(body: &Map<String, Value>) -> Result<ProcessorChange, Errors> {
        let r = Reader::new(body);
        let mut e = Errors::default();
        let change = ProcessorChange {
            kind: r.choice("kind", ProcessorKind::parse, &mut e),
            card_entry: r.choice("card_entry", CardEntry::parse, &mut e),
            gateway_url: base_url(&r, "gateway_url", &mut e),
            checkout_url: base_url(&r, "checkout_url", &mut e),
            test: account(&r, Mode::Test, &mut e),
            live: account(&r, Mode::Live, &mut e),
        };
        e.into_result(|| change)
    }
}

/// A base URL: absolute http(s), no query or fragment; kept without a trailing `/`.
fn base_url(r: &Reader, field: &str, e: &mut Errors) -> Option<String> {
    let raw = r.string(field, super::product::MAX_URL, e)?;
    match url::Url::parse(raw.trim()) {
        Ok(u)
            if matches!(u.scheme(), "http" | "https")
                && u.host_str().is_some()
                && u.query().is_none()
                && u.fragment().is_none() =>
        {
            Some(u.as_str().trim_end_matches('/').to_string())
        }
        _ => {
            e.add(&r.key(field), "is not an absolute http or https URL without a query");
            None
        }
    }
}

/// A mode's account: an object (only what it sends changes), or `null` to remove it.
fn account(r: &Reader, mode: Mode, e: &mut Errors) -> Option<Option<AccountChange>> {
    if !r.sent(mode.field()) {
        return None;
    }
    let prefix = match mode {
        Mode::Test => "test.",
        Mode::Live => "live.",
    };
    let Some(a) = r.object(mode.field(), prefix, e) else {
        return (r.value(mode.field()).is_none()).then_some(None);
    };
    Some(Some(AccountChange {
        shop_id: a.identifier("shop_id", MAX_CREDENTIAL, e).map(|s| s.trim().to_string()),
        secret_key: a.string("secret_key", MAX_CREDENTIAL, e).map(|s| s.trim().to_string()),
        public_key: a.string("public_key", MAX_PUBLIC_KEY, e).map(|s| s.trim().to_string()),
        webhook_secret: a.string("webhook_secret", MAX_CREDENTIAL, e).map(|s| s.trim().to_string()),
    }))
}

/// One mode's account as it stands after a change: which parts it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AccountParts {
    pub shop_id: bool,
    pub secret_key: bool,
    pub public_key: bool,
}

/// Checks a processor's settings after a change: a real processor needs at least one
/// account; a BeGateway account needs its shop id, secret key and public key, a Stripe
/// account its secret key (its webhook signing secret is asked for, not required: payments
/// are settled by asking Stripe, webhooks only make it sooner).
pub fn check(kind: ProcessorKind, test: Option<AccountParts>, live: Option<AccountParts>) -> Result<(), Errors> {
    let mut e = Errors::default();
    // The simulation uses no account: those kept for going back are not its to check.
    if kind == ProcessorKind::Simulated {
        return Ok(());
    }
    if test.is_none() && live.is_none() {
        e.add("test", "can't be blank: give the test account, the live one, or both");
    }
    for (mode, parts) in [(Mode::Test, test), (Mode::Live, live)] {
        let Some(parts) = parts else { continue };
        let field = mode.field();
        e.require(&format!("{field}.secret_key"), !parts.secret_key);
        if kind != ProcessorKind::Stripe {
            e.require(&format!("{field}.shop_id"), !parts.shop_id);
            e.require(&format!("{field}.public_key"), !parts.public_key);
        }
    }
    e.into_result(|| ())
}

/// What is wrong with a Stripe key for `mode`'s account: a test account takes only test keys
/// (`sk_test_…`, or a restricted `rk_test_…`), a live one only live keys, so that a test
/// product can never move real money.
pub fn stripe_key_problem(mode: Mode, key: &str) -> Option<String> {
    let kind = mode.field();
    let fits = ["sk_", "rk_"].iter().any(|p| {
        key.strip_prefix(p)
            .and_then(|rest| rest.strip_prefix(kind))
            .and_then(|rest| rest.strip_prefix('_'))
            .is_some_and(|rest| !rest.is_empty())
    });
    (!fits).then(|| {
        format!("is not a Stripe {kind} secret key: it begins with sk_{kind}_ (or rk_{kind}_ for a restricted key)")
    })
}

/// What is wrong with a Stripe webhook signing secret.
pub fn stripe_webhook_problem(secret: &str) -> Option<&'static str> {
    (!secret.starts_with("whsec_") || secret.len() < 10).then_some(
        "is not a Stripe webhook signing secret: it begins with whsec_ (the webhook endpoint's page shows it)",
    )
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parse(body: Value) -> Result<ProcessorChange, Errors> {
        ProcessorChange::parse(body.as_object().unwrap())
    }

    #[test]
    fn a_change_reads_what_is_sent_and_normalises_urls() {
        let change = parse(json!({
            "kind": "bepaid", "gateway_url": "https://gateway.example.com/", "checkout_url": " https://checkout.example.com ",
            "test": {"shop_id": 361, "secret_key": " b864 ", "public_key": "MIIB"}, "live": null
        }))
        .unwrap();
        assert_eq!(change.kind, Some(ProcessorKind::Bepaid));
        assert_eq!(change.card_entry, None);
        assert_eq!(change.gateway_url.as_deref(), Some("https://gateway.example.com"));
        assert_eq!(change.checkout_url.as_deref(), Some("https://checkout.example.com"));
        let test = change.test.unwrap().unwrap();
        assert_eq!((test.shop_id.as_deref(), test.secret_key.as_deref()), (Some("361"), Some("b864")));
        assert_eq!(change.live, Some(None));
        assert_eq!(parse(json!({})).unwrap(), ProcessorChange::default());
    }

    #[test]
    fn bad_input_names_each_field() {
        let errors = parse(
            json!({"kind": "adyen", "gateway_url": "gateway.bepaid.by", "checkout_url": "https://x.example/?a=1",
                                  "test": "361", "live": {"secret_key": 5}}),
        )
        .unwrap_err();
        for field in ["kind", "gateway_url", "checkout_url", "test", "live.secret_key"] {
            assert!(errors.has(field), "{field}: {}", errors.message());
        }
    }

    #[test]
    fn a_bepaid_processor_needs_a_whole_account() {
        let whole = AccountParts { shop_id: true, secret_key: true, public_key: true };
        assert!(check(ProcessorKind::Simulated, None, None).is_ok());
        assert!(check(ProcessorKind::Bepaid, None, Some(whole)).is_ok());
        assert!(check(ProcessorKind::Bepaid, None, None).unwrap_err().has("test"));
        let keyless = AccountParts { public_key: false, ..whole };
        assert!(check(ProcessorKind::Bepaid, Some(keyless), None).unwrap_err().has("test.public_key"));
        let stripe = AccountParts { shop_id: false, secret_key: true, public_key: false };
        assert!(check(ProcessorKind::Stripe, Some(stripe), None).is_ok());
        assert!(check(ProcessorKind::Stripe, None, None).unwrap_err().has("test"));
        let secretless = AccountParts { secret_key: false, ..stripe };
        assert!(check(ProcessorKind::Stripe, None, Some(secretless)).unwrap_err().has("live.secret_key"));
    }

    #[test]
    fn a_stripe_account_takes_only_its_modes_keys() {
        assert_eq!(stripe_key_problem(Mode::Test, "sk_test_51H8xyz"), None);
        assert_eq!(stripe_key_problem(Mode::Test, "rk_test_51H8xyz"), None);
        assert_eq!(stripe_key_problem(Mode::Live, "sk_live_51H8xyz"), None);
        for (mode, key) in [
            (Mode::Test, "sk_live_51H8xyz"),
            (Mode::Live, "sk_test_51H8xyz"),
            (Mode::Test, "sk_test_"),
            (Mode::Test, "pk_test_51H8"),
        ] {
            assert!(stripe_key_problem(mode, key).is_some(), "{key}");
        }
        assert_eq!(stripe_webhook_problem("whsec_abc123def"), None);
        assert!(stripe_webhook_problem("sk_test_abc123").is_some());
    }
}
