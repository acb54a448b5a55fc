//! Shops' payment processors: one row a shop that chose one; none means the simulation.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, OnConflict, SimpleExpr};
use sea_orm::{ColumnTrait, Condition, ConnectionTrait, DbErr, EntityTrait, IdenStatic, IntoActiveModel, QueryFilter};

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
        test_webhook_sealed: None,
        test_webhook_hint: None,
        test_webhook_previous_sealed: None,
        test_webhook_previous_until: None,
        live_webhook_sealed: None,
        live_webhook_hint: None,
        live_webhook_previous_sealed: None,
        live_webhook_previous_until: None,
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
    /// The webhook signing secret (Stripe), sealed, and its last characters.
    pub webhook_sealed: Option<&'a str>,
    pub webhook_hint: Option<&'a str>,
    /// The signing secret it replaced, and until when that is still taken.
    pub webhook_previous: Option<(&'a str, DateTime<Utc>)>,
}

impl AccountColumns<'_> {
    /// Whether the mode has any part of an account.
    pub fn is_set(&self) -> bool {
        self.shop_id.is_some()
            || self.secret_sealed.is_some()
            || self.public_key.is_some()
            || self.webhook_sealed.is_some()
    }
}

impl Model {
    /// The account columns of `mode`.
    pub fn account(&self, mode: Mode) -> AccountColumns<'_> {
        let (shop_id, sealed, hint, key) = match mode {
            Mode::Test => (&self.test_shop_id, &self.test_secret_sealed, &self.test_secret_hint, &self.test_public_key),
            Mode::Live => (&self.live_shop_id, &self.live_secret_sealed, &self.live_secret_hint, &self.live_public_key),
        };
        let (webhook, webhook_hint, previous, until) = match mode {
            Mode::Test => (
                &self.test_webhook_sealed,
                &self.test_webhook_hint,
                &self.test_webhook_previous_sealed,
                self.test_webhook_previous_until,
            ),
            Mode::Live => (
                &self.live_webhook_sealed,
                &self.live_webhook_hint,
                &self.live_webhook_previous_sealed,
                self.live_webhook_previous_until,
            ),
        };
        AccountColumns {
            shop_id: shop_id.as_deref(),
            secret_sealed: sealed.as_deref(),
            secret_hint: hint.as_deref(),
            public_key: key.as_deref(),
            webhook_sealed: webhook.as_deref(),
            webhook_hint: webhook_hint.as_deref(),
            webhook_previous: previous.as_deref().zip(until),
        }
    }
}

/// One mode's account as a change stores it: the secret already sealed, with its hint.
#[derive(Debug, Clone, Default)]
pub struct StoredAccount {
    pub shop_id: Option<String>,
    pub secret: Option<(String, String)>,
    pub public_key: Option<String>,
    /// The webhook signing secret, sealed, with its hint.
    pub webhook: Option<(String, String)>,
}

/// How long a replaced webhook signing secret is still taken: Stripe signs with both the old
/// and the new secret for up to a day after it is rolled.
pub const PREVIOUS_SECRET_HOLDS: chrono::Duration = chrono::Duration::hours(24);

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
    /// The accounts are of another processor now: what the change does not set is cleared.
    pub fresh_accounts: bool,
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
    use Column as C;
    let modes = [
        (
            &change.test,
            [
                C::TestShopId,
                C::TestSecretSealed,
                C::TestSecretHint,
                C::TestPublicKey,
                C::TestWebhookSealed,
                C::TestWebhookHint,
            ],
            [C::TestWebhookPreviousSealed, C::TestWebhookPreviousUntil],
        ),
        (
            &change.live,
            [
                C::LiveShopId,
                C::LiveSecretSealed,
                C::LiveSecretHint,
                C::LivePublicKey,
                C::LiveWebhookSealed,
                C::LiveWebhookHint,
            ],
            [C::LiveWebhookPreviousSealed, C::LiveWebhookPreviousUntil],
        ),
    ];
    for (account, [id, sealed, hint, key, webhook, webhook_hint], [previous, until]) in modes {
        let mut set: Vec<(Column, SimpleExpr)> = Vec::new();
        if let Some(Some(a)) = account {
            if let Some(shop_id) = &a.shop_id {
                set.push((id, Expr::value(shop_id.clone())));
            }
            if let Some((secret, last)) = &a.secret {
                set.push((sealed, Expr::value(secret.clone())));
                set.push((hint, Expr::value(last.clone())));
            }
            if let Some(public_key) = &a.public_key {
                set.push((key, Expr::value(public_key.clone())));
            }
            if let Some((secret, last)) = &a.webhook {
                // The replaced secret stays good for a while (the new one may not be in use yet).
                set.push((previous, Expr::col(webhook).into()));
                set.push((until, Expr::value(Some(now + PREVIOUS_SECRET_HOLDS))));
                set.push((webhook, Expr::value(secret.clone())));
                set.push((webhook_hint, Expr::value(last.clone())));
            }
        }
        // Removed, or of another processor: every column the change does not set is cleared.
        if matches!(account, Some(None)) || change.fresh_accounts {
            for column in [id, sealed, hint, key, webhook, webhook_hint, previous, until] {
                if !set.iter().any(|(c, _)| c.as_str() == column.as_str()) {
                    let null = match column.as_str() == until.as_str() {
                        true => Expr::value(Option::<DateTime<Utc>>::None),
                        false => Expr::value(Option::<String>::None),
                    };
                    set.push((column, null));
                }
            }
        }
        sets.extend(set);
    }
    let mut update = Entity::update_many().filter(Column::ShopId.eq(shop_id));
    for (column, value) in sets {
        update = update.col_expr(column, value);
    }
    update.exec(db).await?;
    find(db, shop_id).await?.ok_or_else(|| DbErr::RecordNotFound("shop_processors".into()))
}

/// How a processor's event was claimed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// This delivery acts on it now, until `claimed_until`.
    Taken,
    /// It was acted on before: a repeat.
    Done,
    /// Another delivery is acting on it now.
    Busy,
}

/// Claims the shop's event `event_id` until `until` (whole milliseconds, as stored): the first
/// delivery of it takes it, and so does a later one once the claim lapsed without the event
/// being done (the delivery that held it stopped midway).
pub async fn claim_event(
    db: &impl ConnectionTrait,
    shop_id: i64,
    event_id: &str,
    now: DateTime<Utc>,
    until: DateTime<Utc>,
) -> Result<Claim, DbErr> {
    use super::entities::processor_events::{ActiveModel, Column as E, Entity as Events};
    let row = ActiveModel {
        shop_id: sea_orm::Set(shop_id),
        event_id: sea_orm::Set(event_id.to_string()),
        claimed_until: sea_orm::Set(until),
        done_at: sea_orm::Set(None),
    };
    let first = OnConflict::columns([E::ShopId, E::EventId]).do_nothing().to_owned();
    let inserted = Events::insert(row).on_conflict(first).exec_without_returning(db).await?;
    if inserted > 0 {
        return Ok(Claim::Taken);
    }
    let lapsed = Events::update_many()
        .col_expr(E::ClaimedUntil, Expr::value(until))
        .filter(E::ShopId.eq(shop_id))
        .filter(E::EventId.eq(event_id))
        .filter(E::DoneAt.is_null())
        .filter(E::ClaimedUntil.lt(now))
        .exec(db)
        .await?;
    if lapsed.rows_affected > 0 {
        return Ok(Claim::Taken);
    }
    let done = Events::find_by_id((shop_id, event_id.to_string())).one(db).await?.is_some_and(|e| e.done_at.is_some());
    Ok(if done { Claim::Done } else { Claim::Busy })
}

/// Marks the event claimed until `claimed_until` acted on, or gives the claim up (`done`
/// false) so that the processor's next delivery of it is taken at once; a claim that lapsed
/// and was taken by another delivery is left to that one.
pub async fn finish_event(
    db: &impl ConnectionTrait,
    shop_id: i64,
    event_id: &str,
    claimed_until: DateTime<Utc>,
    done: bool,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    use super::entities::processor_events::{Column as E, Entity as Events};
    let ours = Condition::all()
        .add(E::ShopId.eq(shop_id))
        .add(E::EventId.eq(event_id))
        .add(E::ClaimedUntil.eq(claimed_until))
        .add(E::DoneAt.is_null());
    if done {
        let done_at = Expr::value(Some(super::now_millis(now)));
        Events::update_many().col_expr(E::DoneAt, done_at).filter(ours).exec(db).await?;
    } else {
        Events::delete_many().filter(ours).exec(db).await?;
    }
    Ok(())
}

/// The processors of this kind, every shop's.
pub async fn of_kind(db: &impl ConnectionTrait, kind: ProcessorKind) -> Result<Vec<Model>, DbErr> {
    Entity::find().filter(Column::Kind.eq(kind)).all(db).await
}
