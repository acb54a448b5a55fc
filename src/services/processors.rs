//! A shop's payment processor: its settings (secret keys sealed with the vault and never shown
//! again, only their last characters), and a check that the processor takes them.

use std::sync::Arc;

use chrono::{DateTime, Utc};

use crate::db::entities::shop_processors::Model;
use crate::db::processors::{StoredAccount, StoredChange};
use crate::db::{self};
use crate::domain::Errors;
use crate::domain::audit::{self, Entry};
use crate::domain::processor::{self, AccountChange, AccountParts, CardEntry, Mode, ProcessorChange, ProcessorKind};
use crate::external::acquirer::bepaid::acquirer::Bepaid;
use crate::external::acquirer::bepaid::gateway::{self, Account, Gateway};
use crate::external::acquirer::bepaid::notification::PublicKey;
use crate::external::acquirer::stripe::acquirer::Stripe;
use crate::external::acquirer::stripe::api::{self as stripe_api, Api};
use crate::external::acquirer::{Acquirer, Check};
use crate::web::error::AppError;
use crate::web::state::AppState;

/// How many characters of a secret key are shown.
const HINT: usize = 4;

/// What binds a sealed secret key to its shop and mode.
fn secret_context(shop_id: i64, mode: Mode) -> String {
    format!("processor-secret:{shop_id}:{}", mode.field())
}

/// What binds a sealed webhook signing secret to its shop and mode.
fn webhook_context(shop_id: i64, mode: Mode) -> String {
    format!("processor-webhook:{shop_id}:{}", mode.field())
}

/// The shop's processor settings (the simulation's when it chose none).
pub async fn find(state: &AppState, shop_id: i64) -> Result<Model, AppError> {
    let row = db::processors::find(&state.db, shop_id).await?;
    Ok(row.unwrap_or_else(|| db::processors::unset(shop_id, Utc::now())))
}

/// Applies `change` to the shop's processor; refused as a whole (nothing stored) when the
/// result would be incomplete or a part is wrong.
pub async fn change(
    state: &AppState,
    shop_id: i64,
    change: ProcessorChange,
    audit: &Entry,
    now: DateTime<Utc>,
) -> Result<Model, AppError> {
    let mut errors = Errors::default();
    let current = db::processors::find(&state.db, shop_id).await?;
    let kind = change.kind.or(current.as_ref().map(|row| row.kind)).unwrap_or(ProcessorKind::Simulated);
    // Another processor's accounts mean nothing to this one: they go unless sent anew (they
    // stay while the shop goes back to the simulation).
    let fresh_accounts = match (change.kind, current.as_ref().and_then(accounts_of)) {
        (Some(new), Some(old)) => new != ProcessorKind::Simulated && new != old,
        _ => false,
    };
    for (field, url) in [("gateway_url", &change.gateway_url), ("checkout_url", &change.checkout_url)] {
        if url.as_deref().is_some_and(|u| u.starts_with("http:")) && !state.config.webhooks_allow_private {
            errors.add(field, "must use https: the shop's secret key travels with every request");
        }
    }
    // The simulation uses no account: those sent with it are ignored, unchecked, and the
    // stored ones stay as they are for going back.
    let simulated = kind == ProcessorKind::Simulated;
    let mut account = |mode: Mode, a: Option<Option<AccountChange>>| {
        let a = a.filter(|_| !simulated)?;
        Some(a.map(|a| stored(state, current.as_ref(), shop_id, kind, mode, a, &mut errors)))
    };
    let (test, live) = (account(Mode::Test, change.test), account(Mode::Live, change.live));
    let stored = StoredChange {
        kind: change.kind,
        card_entry: change.card_entry,
        gateway_url: change.gateway_url,
        checkout_url: change.checkout_url,
        test,
        live,
        fresh_accounts,
    };
    errors.into_result(|| ()).map_err(AppError::from)?;
    let txn = crate::db::begin(&state.db).await?;
    let row = db::processors::apply(&txn, shop_id, &stored, now).await?;
    processor::check(row.kind, parts(&row, Mode::Test), parts(&row, Mode::Live)).map_err(AppError::from)?;
    let changes = audit::changes(&audited(current.as_ref()), &audited(Some(&row)), SECRETS);
    db::audit::record(&txn, &audit.clone().on("processor", shop_id.to_string()).changing(changes), now).await?;
    txn.commit().await?;
    Ok(row)
}

/// The processor's secrets, recorded in the audit trail only as changed.
const SECRETS: &[&str] = &["test.secret_key", "live.secret_key", "test.webhook_secret", "live.webhook_secret"];

/// What the audit trail shows of a shop's processor: its settings, and its secrets by their
/// sealed form (compared, never shown).
fn audited(row: Option<&Model>) -> serde_json::Value {
    let Some(r) = row else { return serde_json::json!({}) };
    serde_json::json!({
        "kind": r.kind.as_str(),
        "card_entry": r.card_entry.as_str(),
        "gateway_url": r.gateway_url,
        "checkout_url": r.checkout_url,
        "test.shop_id": r.test_shop_id,
        "test.public_key": r.test_public_key,
        "test.secret_key": r.test_secret_sealed,
        "test.webhook_secret": r.test_webhook_sealed,
        "live.shop_id": r.live_shop_id,
        "live.public_key": r.live_public_key,
        "live.secret_key": r.live_secret_sealed,
        "live.webhook_secret": r.live_webhook_sealed,
    })
}

/// One account's change as stored: its secrets sealed, its keys checked for `kind`. The
/// webhook secret `current` already has is no change (saving it again keeps the one it
/// replaced good for its day).
fn stored(
    state: &AppState,
    current: Option<&Model>,
    shop_id: i64,
    kind: ProcessorKind,
    mode: Mode,
    a: AccountChange,
    errors: &mut Errors,
) -> StoredAccount {
    let field = |name: &str| format!("{}.{name}", mode.field());
    if let Some(key) = &a.public_key
        && let Err(e) = PublicKey::parse(key)
    {
        errors.add(&field("public_key"), e.to_string());
    }
    if kind == ProcessorKind::Stripe {
        if let Some(problem) = a.secret_key.as_deref().and_then(|key| processor::stripe_key_problem(mode, key)) {
            errors.add(&field("secret_key"), problem);
        }
        if let Some(problem) = a.webhook_secret.as_deref().and_then(processor::stripe_webhook_problem) {
            errors.add(&field("webhook_secret"), problem);
        }
    }
    let seal = |secret: String, context: String| {
        let last = secret.char_indices().rev().nth(HINT - 1).map_or(0, |(at, _)| at);
        (state.vault.seal(secret.as_bytes(), &context), secret[last..].to_string())
    };
    StoredAccount {
        shop_id: a.shop_id,
        secret: a.secret_key.map(|secret| seal(secret, secret_context(shop_id, mode))),
        public_key: a.public_key,
        webhook: a
            .webhook_secret
            .filter(|secret| {
                current.is_none_or(|row| webhook_secrets(state, row, mode, Utc::now()).first() != Some(secret))
            })
            .map(|secret| seal(secret, webhook_context(shop_id, mode))),
    }
}

/// The processor the row's accounts are for: bePaid's have a shop id, Stripe's do not.
fn accounts_of(row: &Model) -> Option<ProcessorKind> {
    let accounts = [row.account(Mode::Test), row.account(Mode::Live)];
    match (accounts.iter().any(|a| a.shop_id.is_some()), accounts.iter().any(|a| a.is_set())) {
        (true, _) => Some(ProcessorKind::Bepaid),
        (false, true) => Some(ProcessorKind::Stripe),
        (false, false) => None,
    }
}

/// Which parts of a mode's account the row has; `None` when it has none.
fn parts(row: &Model, mode: Mode) -> Option<AccountParts> {
    let a = row.account(mode);
    a.is_set().then_some(AccountParts {
        shop_id: a.shop_id.is_some(),
        secret_key: a.secret_sealed.is_some(),
        public_key: a.public_key.is_some(),
    })
}

/// The secret key of `mode`'s account, opened.
fn secret_key(state: &AppState, row: &Model, mode: Mode) -> Result<Option<String>, AppError> {
    let Some(sealed) = row.account(mode).secret_sealed else { return Ok(None) };
    let key = state.vault.open_text(sealed, &secret_context(row.shop_id, mode)).map_err(|_| {
        AppError::Internal(format!("the {} secret key of shop {} does not open", mode.field(), row.shop_id))
    })?;
    Ok(Some(key))
}

/// The webhook signing secrets `mode`'s account takes at `now`: its own, and the one it
/// replaced while that still holds.
pub fn webhook_secrets(state: &AppState, row: &Model, mode: Mode, now: DateTime<Utc>) -> Vec<String> {
    let columns = row.account(mode);
    let previous = columns.webhook_previous.filter(|(_, until)| *until > now).map(|(sealed, _)| sealed);
    [columns.webhook_sealed, previous]
        .into_iter()
        .flatten()
        .filter_map(|sealed| state.vault.open_text(sealed, &webhook_context(row.shop_id, mode)).ok())
        .collect()
}

/// The Stripe account of `mode`, opened, if the row has one.
pub fn stripe_account(state: &AppState, row: &Model, mode: Mode) -> Result<Option<stripe_api::Account>, AppError> {
    let api_url = state.config.stripe_api_url.clone();
    Ok(secret_key(state, row, mode)?.map(|secret_key| stripe_api::Account { api_url, secret_key }))
}

/// The BeGateway account of `mode`, opened, if the row has a whole one.
pub fn account(state: &AppState, row: &Model, mode: Mode) -> Result<Option<Account>, AppError> {
    let Some(shop_id) = row.account(mode).shop_id else { return Ok(None) };
    let Some(secret_key) = secret_key(state, row, mode)? else { return Ok(None) };
    Ok(Some(Account {
        gateway_url: row.gateway_url.clone(),
        checkout_url: row.checkout_url.clone(),
        shop_id: shop_id.to_string(),
        secret_key,
    }))
}

/// Who moves the money of the shop's test (`test`) or live payments, if anyone may: `None`
/// when its processor has no account for the mode, or live payments would go to the
/// simulation without the operator's consent.
pub async fn usable(state: &AppState, shop_id: i64, test: bool) -> Result<Option<Arc<dyn Acquirer>>, AppError> {
    let found = acquirer(state, shop_id, test).await?;
    Ok(found.filter(|acquirer| test || !acquirer.is_simulated() || state.config.simulated_live))
}

/// Who moves the money of the shop's test (`test`) or live payments: the simulation, or the
/// shop's processor account of that mode (taking cards on its own page or on paydesk's, as
/// the shop chose); `None` when the processor has no account for the mode.
pub async fn acquirer(state: &AppState, shop_id: i64, test: bool) -> Result<Option<Arc<dyn Acquirer>>, AppError> {
    let Some(row) = db::processors::find(&state.db, shop_id).await? else { return Ok(Some(state.acquirer.clone())) };
    let mode = if test { Mode::Test } else { Mode::Live };
    let hosted = row.card_entry == CardEntry::ProcessorPage;
    let timeout = state.config.processor_timeout;
    match row.kind {
        ProcessorKind::Simulated => Ok(Some(state.acquirer.clone())),
        ProcessorKind::Bepaid => {
            let Some(account) = account(state, &row, mode)? else { return Ok(None) };
            let notify = crate::web::urls::bepaid_notifications(&state.config, shop_id);
            let outbound = state.outbound.clone();
            Ok(Some(Arc::new(Bepaid { outbound, account, test, notification_url: Some(notify), hosted, timeout })))
        }
        ProcessorKind::Stripe => {
            let Some(account) = stripe_account(state, &row, mode)? else { return Ok(None) };
            let outbound = state.operator_outbound.clone();
            Ok(Some(Arc::new(Stripe { outbound, account, hosted, timeout })))
        }
    }
}

/// Checks each account the shop has with one harmless call to the processor.
pub async fn check(state: &AppState, row: &Model) -> Result<Vec<(Mode, Check)>, AppError> {
    let mut found = Vec::new();
    for mode in [Mode::Test, Mode::Live] {
        let check = match row.kind {
            ProcessorKind::Simulated => None,
            ProcessorKind::Bepaid => match account(state, row, mode)? {
                Some(account) => {
                    let timeout = gateway::CHECK_TIMEOUT;
                    Some(Gateway { outbound: &state.outbound, account: &account, timeout }.check().await)
                }
                None => None,
            },
            ProcessorKind::Stripe => match stripe_account(state, row, mode)? {
                Some(account) => {
                    let timeout = gateway::CHECK_TIMEOUT;
                    Some(Api { outbound: &state.operator_outbound, account: &account, timeout }.check().await)
                }
                None => None,
            },
        };
        found.extend(check.map(|check| (mode, check)));
    }
    Ok(found)
}
