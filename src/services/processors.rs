//! A shop's payment processor: its settings (secret keys sealed with the vault and never shown
//! again, only their last characters), and a check that the processor takes them.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use sea_orm::TransactionTrait;

use crate::db::entities::shop_processors::Model;
use crate::db::processors::{StoredAccount, StoredChange};
use crate::db::{self};
use crate::domain::Errors;
use crate::domain::processor::{self, AccountChange, AccountParts, CardEntry, Mode, ProcessorChange, ProcessorKind};
use crate::external::acquirer::Acquirer;
use crate::external::acquirer::bepaid::acquirer::Bepaid;
use crate::external::acquirer::bepaid::gateway::{self, Account, Check, Gateway};
use crate::external::acquirer::bepaid::notification::PublicKey;
use crate::web::error::AppError;
use crate::web::state::AppState;

/// How many characters of a secret key are shown.
const HINT: usize = 4;

/// What binds a sealed secret key to its shop and mode.
fn secret_context(shop_id: i64, mode: Mode) -> String {
    format!("processor-secret:{shop_id}:{}", mode.field())
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
    now: DateTime<Utc>,
) -> Result<Model, AppError> {
    let mut errors = Errors::default();
    for (field, url) in [("gateway_url", &change.gateway_url), ("checkout_url", &change.checkout_url)] {
        if url.as_deref().is_some_and(|u| u.starts_with("http:")) && !state.config.webhooks_allow_private {
            errors.add(field, "must use https: the shop's secret key travels with every request");
        }
    }
    let stored = StoredChange {
        kind: change.kind,
        card_entry: change.card_entry,
        gateway_url: change.gateway_url,
        checkout_url: change.checkout_url,
        test: change.test.map(|a| a.map(|a| stored(state, shop_id, Mode::Test, a, &mut errors))),
        live: change.live.map(|a| a.map(|a| stored(state, shop_id, Mode::Live, a, &mut errors))),
    };
    errors.into_result(|| ()).map_err(AppError::from)?;
    let txn = state.db.begin().await?;
    let row = db::processors::apply(&txn, shop_id, &stored, now).await?;
    processor::check(row.kind, parts(&row, Mode::Test), parts(&row, Mode::Live)).map_err(AppError::from)?;
    txn.commit().await?;
    Ok(row)
}

/// One account's change as stored: its secret sealed, its public key checked.
fn stored(state: &AppState, shop_id: i64, mode: Mode, a: AccountChange, errors: &mut Errors) -> StoredAccount {
    if let Some(key) = &a.public_key
        && let Err(e) = PublicKey::parse(key)
    {
        errors.add(&format!("{}.public_key", mode.field()), e.to_string());
    }
    let secret = a.secret_key.map(|secret| {
        let last = secret.char_indices().rev().nth(HINT - 1).map_or(0, |(at, _)| at);
        (state.vault.seal(secret.as_bytes(), &secret_context(shop_id, mode)), secret[last..].to_string())
    });
    StoredAccount { shop_id: a.shop_id, secret, public_key: a.public_key }
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

/// The account of `mode`, opened, if the row has a whole one.
pub fn account(state: &AppState, row: &Model, mode: Mode) -> Result<Option<Account>, AppError> {
    let columns = row.account(mode);
    let (Some(shop_id), Some(sealed)) = (columns.shop_id, columns.secret_sealed) else { return Ok(None) };
    let secret_key = state.vault.open_text(sealed, &secret_context(row.shop_id, mode)).map_err(|_| {
        AppError::Internal(format!("the {} secret key of shop {} does not open", mode.field(), row.shop_id))
    })?;
    Ok(Some(Account {
        gateway_url: row.gateway_url.clone(),
        checkout_url: row.checkout_url.clone(),
        shop_id: shop_id.to_string(),
        secret_key,
    }))
}

/// Who moves the money of the shop's test (`test`) or live payments: the simulation, or the
/// shop's processor account of that mode (taking cards on its own page or on paydesk's, as
/// the shop chose); `None` when the processor has no account for the mode.
pub async fn acquirer(state: &AppState, shop_id: i64, test: bool) -> Result<Option<Arc<dyn Acquirer>>, AppError> {
    let Some(row) = db::processors::find(&state.db, shop_id).await? else { return Ok(Some(state.acquirer.clone())) };
    if row.kind != ProcessorKind::Bepaid {
        return Ok(Some(state.acquirer.clone()));
    }
    let mode = if test { Mode::Test } else { Mode::Live };
    let Some(account) = account(state, &row, mode)? else { return Ok(None) };
    let hosted = row.card_entry == CardEntry::ProcessorPage;
    let notify = crate::web::urls::bepaid_notifications(&state.config, shop_id);
    let outbound = state.outbound.clone();
    let timeout = state.config.processor_timeout;
    Ok(Some(Arc::new(Bepaid { outbound, account, test, notification_url: Some(notify), hosted, timeout })))
}

/// Checks each account the shop has with one harmless call to the processor.
pub async fn check(state: &AppState, row: &Model) -> Result<Vec<(Mode, Check)>, AppError> {
    let mut found = Vec::new();
    if row.kind != ProcessorKind::Bepaid {
        return Ok(found);
    }
    for mode in [Mode::Test, Mode::Live] {
        if let Some(account) = account(state, row, mode)? {
            let gateway = Gateway { outbound: &state.outbound, account: &account, timeout: gateway::CHECK_TIMEOUT };
            found.push((mode, gateway.check().await));
        }
    }
    Ok(found)
}
