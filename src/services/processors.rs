//! A shop's payment processor: its settings (secret keys sealed with the vault and never shown
//! again, only their last characters), and a check that the processor takes them.

use chrono::{DateTime, Utc};
use sea_orm::TransactionTrait;

use crate::db::entities::shop_processors::Model;
use crate::db::processors::{StoredAccount, StoredChange};
use crate::db::{self};
use crate::domain::Errors;
use crate::domain::processor::{self, AccountChange, AccountParts, Mode, ProcessorChange, ProcessorKind};
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

/// The shop's processor settings, if it chose one.
pub async fn find(state: &AppState, shop_id: i64) -> Result<Option<Model>, AppError> {
    Ok(db::processors::find(&state.db, shop_id).await?)
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
        let hint: String = secret.chars().rev().take(HINT).collect::<Vec<_>>().into_iter().rev().collect();
        (state.vault.seal(secret.as_bytes(), &secret_context(shop_id, mode)), hint)
    });
    StoredAccount { shop_id: a.shop_id, secret, public_key: a.public_key }
}

/// Which parts of a mode's account the row has; `None` when it has none.
fn parts(row: &Model, mode: Mode) -> Option<AccountParts> {
    let (id, secret, key) = match mode {
        Mode::Test => (&row.test_shop_id, &row.test_secret_sealed, &row.test_public_key),
        Mode::Live => (&row.live_shop_id, &row.live_secret_sealed, &row.live_public_key),
    };
    let parts = AccountParts { shop_id: id.is_some(), secret_key: secret.is_some(), public_key: key.is_some() };
    (parts.shop_id || parts.secret_key || parts.public_key).then_some(parts)
}

/// The account of `mode`, opened, if the row has a whole one.
pub fn account(state: &AppState, row: &Model, mode: Mode) -> Result<Option<Account>, AppError> {
    let (id, sealed) = match mode {
        Mode::Test => (&row.test_shop_id, &row.test_secret_sealed),
        Mode::Live => (&row.live_shop_id, &row.live_secret_sealed),
    };
    let (Some(shop_id), Some(sealed)) = (id, sealed) else { return Ok(None) };
    let secret_key = state.vault.open_text(sealed, &secret_context(row.shop_id, mode)).map_err(|_| {
        AppError::Internal(format!("the {} secret key of shop {} does not open", mode.field(), row.shop_id))
    })?;
    Ok(Some(Account {
        gateway_url: row.gateway_url.clone(),
        checkout_url: row.checkout_url.clone(),
        shop_id: shop_id.clone(),
        secret_key,
    }))
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
