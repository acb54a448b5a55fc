//! Shops' payment processors: one row a shop that chose one; none means the simulation.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, OnConflict, SimpleExpr};
use sea_orm::{ColumnTrait, ConnectionTrait, DbErr, EntityTrait, IntoActiveModel, QueryFilter};

use super::entities::shop_processors::{Column, Entity, Model};
use crate::domain::processor::{BEPAID_CHECKOUT, BEPAID_GATEWAY, CardEntry, Mode, ProcessorKind};

/// A shop's processor before it chose one: the simulation, with bePaid's URLs and no accounts.
pub fn unset(shop_id: i64, now: DateTime<Utc>) -> Model {
    Model {
        shop_id,
        kind: ProcessorKind::Simulated,
        card_entry: CardEntry::ProcessorPage,
        gateway_url: BEPAID_GATEWAY.into(),
        checkout_url: BEPAID_CHECKOUT.into(),
        test_shop_id: None,
        test_secret_sealed: None,
        test_secret_hint: None,
        test_public_key: None,
        live_shop_id: None,
        live_secret_sealed: None,
        live_secret_hint: None,
        live_public_key: None,
        created_at: now,
        updated_at: now,
    }
}

/// One mode's account columns of a row.
#[derive(Debug, Clone, Copy)]
pub struct AccountColumns<'a> {
    pub shop_id: Option<&'a str>,
    /// The secret key, sealed.
    pub secret_sealed: Option<&'a str>,
    /// The secret key's last characters.
    pub secret_hint: Option<&'a str>,
    pub public_key: Option<&'a str>,
}

impl AccountColumns<'_> {
    /// Whether the mode has any part of an account.
    pub fn is_set(&self) -> bool {
        self.shop_id.is_some() || self.secret_sealed.is_some() || self.public_key.is_some()
    }
}

impl Model {
    /// The account columns of `mode`.
    pub fn account(&self, mode: Mode) -> AccountColumns<'_> {
        let (shop_id, sealed, hint, key) = match mode {
            Mode::Test => (&self.test_shop_id, &self.test_secret_sealed, &self.test_secret_hint, &self.test_public_key),
            Mode::Live => (&self.live_shop_id, &self.live_secret_sealed, &self.live_secret_hint, &self.live_public_key),
        };
        AccountColumns {
            shop_id: shop_id.as_deref(),
            secret_sealed: sealed.as_deref(),
            secret_hint: hint.as_deref(),
            public_key: key.as_deref(),
        }
    }
}

/// One mode's account as a change stores it: the secret already sealed, with its hint.
#[derive(Debug, Clone, Default)]
pub struct StoredAccount {
    pub shop_id: Option<String>,
    pub secret: Option<(String, String)>,
    pub public_key: Option<String>,
}

/// A change to a shop's processor as stored: only what is `Some` changes; an account of
/// `Some(None)` is removed.
#[derive(Debug, Clone, Default)]
pub struct StoredChange {
    pub kind: Option<ProcessorKind>,
    pub card_entry: Option<CardEntry>,
    pub gateway_url: Option<String>,
    pub checkout_url: Option<String>,
    pub test: Option<Option<StoredAccount>>,
    pub live: Option<Option<StoredAccount>>,
}

/// The shop's processor, if it chose one.
pub async fn find(db: &impl ConnectionTrait, shop_id: i64) -> Result<Option<Model>, DbErr> {
    Entity::find_by_id(shop_id).one(db).await
}

/// Applies `change` to the shop's row column by column (made with bePaid's defaults first if
/// there is none), so that two changes at once each keep what they set; answers the row as it
/// then stands. Run it in the transaction that checks the result.
pub async fn apply(
    db: &impl ConnectionTrait,
    shop_id: i64,
    change: &StoredChange,
    now: DateTime<Utc>,
) -> Result<Model, DbErr> {
    let now = super::now_millis(now);
    let row = unset(shop_id, now).into_active_model();
    let first = OnConflict::column(Column::ShopId).do_nothing().to_owned();
    Entity::insert(row).on_conflict(first).exec_without_returning(db).await?;

    let mut sets: Vec<(Column, SimpleExpr)> = vec![(Column::UpdatedAt, Expr::value(now))];
    if let Some(kind) = change.kind {
        sets.push((Column::Kind, Expr::value(kind)));
    }
    if let Some(entry) = change.card_entry {
        sets.push((Column::CardEntry, Expr::value(entry)));
    }
    if let Some(url) = &change.gateway_url {
        sets.push((Column::GatewayUrl, Expr::value(url.clone())));
    }
    if let Some(url) = &change.checkout_url {
        sets.push((Column::CheckoutUrl, Expr::value(url.clone())));
    }
    let modes = [
        (&change.test, [Column::TestShopId, Column::TestSecretSealed, Column::TestSecretHint, Column::TestPublicKey]),
        (&change.live, [Column::LiveShopId, Column::LiveSecretSealed, Column::LiveSecretHint, Column::LivePublicKey]),
    ];
    for (account, [id, sealed, hint, key]) in modes {
        match account {
            None => {}
            Some(None) => {
                for column in [id, sealed, hint, key] {
                    sets.push((column, Expr::value(Option::<String>::None)));
                }
            }
            Some(Some(a)) => {
                if let Some(shop_id) = &a.shop_id {
                    sets.push((id, Expr::value(shop_id.clone())));
                }
                if let Some((secret, last)) = &a.secret {
                    sets.push((sealed, Expr::value(secret.clone())));
                    sets.push((hint, Expr::value(last.clone())));
                }
                if let Some(public_key) = &a.public_key {
                    sets.push((key, Expr::value(public_key.clone())));
                }
            }
        }
    }
    let mut update = Entity::update_many().filter(Column::ShopId.eq(shop_id));
    for (column, value) in sets {
        update = update.col_expr(column, value);
    }
    update.exec(db).await?;
    find(db, shop_id).await?.ok_or_else(|| DbErr::RecordNotFound("shop_processors".into()))
}
