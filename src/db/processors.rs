//! Shops' payment processors: one row a shop that chose one; none means the simulation.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, OnConflict, SimpleExpr};
use sea_orm::{ActiveValue::Set, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter};

use super::entities::shop_processors::{ActiveModel, Column, Entity, Model};
use crate::domain::processor::{BEPAID_CHECKOUT, BEPAID_GATEWAY, CardEntry, ProcessorKind};

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
    let row = ActiveModel {
        shop_id: Set(shop_id),
        kind: Set(ProcessorKind::Simulated),
        card_entry: Set(CardEntry::ProcessorPage),
        gateway_url: Set(BEPAID_GATEWAY.into()),
        checkout_url: Set(BEPAID_CHECKOUT.into()),
        test_shop_id: Set(None),
        test_secret_sealed: Set(None),
        test_secret_hint: Set(None),
        test_public_key: Set(None),
        live_shop_id: Set(None),
        live_secret_sealed: Set(None),
        live_secret_hint: Set(None),
        live_public_key: Set(None),
        created_at: Set(now),
        updated_at: Set(now),
    };
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
