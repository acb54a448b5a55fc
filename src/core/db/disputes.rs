//! Stored disputes and their history. A dispute is opened once per processor id (unique per
//! shop); each change is a guarded update of the state it was read in, and its money moves
//! onto its payment (`disputed_amount`, `dispute_fees`) once each way, in the same
//! transaction.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{
    ActiveValue::NotSet, ColumnTrait, Condition, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect, Set,
};

use super::entities::dispute_history as history;
use super::entities::disputes::{ActiveModel, Column, Entity, Model};
use super::entities::payments;
use super::{ListError, Listed, Page, ShopOwned};
use crate::domain::dispute::{Change, Current, DisputeStatus, DisputeStep, Evidence, Funds, Seen};
use crate::domain::ids::{DISPUTE, new_id};

impl ShopOwned for Entity {
    const SEQ: Column = Column::Seq;
    const ID: Column = Column::Id;
    const SHOP: Column = Column::ShopId;
    fn public_id(row: &Model) -> &str {
        &row.id
    }
}

/// Which disputes a list shows.
#[derive(Debug, Clone, Default)]
pub struct DisputeFilter {
    pub status: Option<DisputeStatus>,
    pub payment_id: Option<String>,
    /// Only open ones (needing a response or under review).
    pub open: bool,
}

/// A page of the shop's disputes that pass `filter`, newest first.
pub async fn list(
    db: &impl ConnectionTrait,
    shop_id: i64,
    page: &Page,
    filter: &DisputeFilter,
) -> Result<Listed<Model>, ListError> {
    let mut condition = Condition::all();
    if let Some(status) = filter.status {
        condition = condition.add(Column::Status.eq(status));
    }
    if let Some(payment) = &filter.payment_id {
        condition = condition.add(Column::PaymentId.eq(payment.as_str()));
    }
    if filter.open {
        condition = condition.add(Column::Status.is_in([DisputeStatus::NeedsResponse, DisputeStatus::UnderReview]));
    }
    super::list_where::<Entity>(db, shop_id, page, condition).await
}

/// The shop's open disputes, those due soonest first (at most `limit`).
pub async fn open_by_due(db: &impl ConnectionTrait, shop_id: i64, limit: u64) -> Result<Vec<Model>, DbErr> {
    Entity::find()
        .filter(Column::ShopId.eq(shop_id))
        .filter(Column::Status.is_in([DisputeStatus::NeedsResponse, DisputeStatus::UnderReview]))
        .order_by_asc(Column::EvidenceDueBy)
        .order_by_asc(Column::Seq)
        .limit(limit)
        .all(db)
        .await
}

/// Whether a dispute of the shop's test or live payments stands against the card known by
/// `fingerprint` (see [`DisputeStatus::STANDING`]).
pub async fn card_disputed(
    db: &impl ConnectionTrait,
    shop_id: i64,
    test: bool,
    fingerprint: &str,
) -> Result<bool, DbErr> {
    let found = Entity::find()
        .select_only()
        .column(Column::Seq)
        .filter(Column::ShopId.eq(shop_id))
        .filter(Column::CardFingerprint.eq(fingerprint))
        .filter(Column::Test.eq(test))
        .filter(Column::Status.is_in(DisputeStatus::STANDING))
        .into_tuple::<i64>()
        .one(db)
        .await?;
    Ok(found.is_some())
}

/// The shop's dispute its processor knows by `reference`.
pub async fn find_by_reference(
    db: &impl ConnectionTrait,
    shop_id: i64,
    reference: &str,
) -> Result<Option<Model>, DbErr> {
    Entity::find().filter(Column::ShopId.eq(shop_id)).filter(Column::Reference.eq(reference)).one(db).await
}

/// A dispute's history, oldest first.
pub async fn history(db: &impl ConnectionTrait, dispute_id: &str) -> Result<Vec<history::Model>, DbErr> {
    history::Entity::find()
        .filter(history::Column::DisputeId.eq(dispute_id))
        .order_by_asc(history::Column::Seq)
        .all(db)
        .await
}

impl Model {
    /// Where the dispute stands, as [`crate::domain::dispute::advance`] reads it.
    pub fn current(&self) -> Current {
        Current {
            stage: self.stage,
            status: self.status,
            accepted: self.accepted,
            answered: self.submission_count > 0,
            withdrawn: self.funds_withdrawn_at.is_some(),
            reinstated: self.funds_reinstated_at.is_some(),
        }
    }

    /// The evidence given so far (staged or submitted).
    pub fn evidence(&self) -> Evidence {
        self.evidence.as_deref().and_then(|e| serde_json::from_str(e).ok()).unwrap_or_default()
    }

    /// The dispute as its processor last reported it (what the simulated network decides from).
    pub fn seen(&self) -> Seen {
        let funds = |amount, fee| Funds { amount, fee };
        Seen {
            reference: self.reference.clone(),
            stage: self.stage,
            status: self.status,
            reason: self.reason.clone(),
            amount: self.amount,
            fee: self.fee,
            evidence_due_by: self.evidence_due_by,
            withdrawn: self.funds_withdrawn_at.map(|_| funds(self.amount, self.fee.unwrap_or(0))),
            reinstated: None,
        }
    }
}

/// Opens the dispute `seen` of `payment`, unless the shop has it already: answers it opened,
/// or `None` when another report opened it first. Its money and history follow in
/// [`apply`].
pub async fn open(
    db: &impl ConnectionTrait,
    payment: &payments::Model,
    seen: &Seen,
    network_at: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> Result<Option<Model>, DbErr> {
    let at = super::now_millis(now);
    let row = ActiveModel {
        seq: NotSet,
        id: Set(new_id(DISPUTE)),
        shop_id: Set(payment.shop_id),
        payment_id: Set(payment.id.clone()),
        subscription_id: Set(payment.subscription_id.clone()),
        customer_id: Set(payment.customer_id.clone()),
        card_fingerprint: Set(payment.card_fingerprint.clone()),
        test: Set(payment.test),
        reference: Set(seen.reference.clone()),
        stage: Set(seen.stage),
        status: Set(seen.status),
        reason: Set(seen.reason.clone()),
        amount: Set(seen.amount),
        currency: Set(payment.currency),
        fee: Set(seen.fee),
        evidence_due_by: Set(seen.evidence_due_by),
        evidence: Set(None),
        evidence_submitted_at: Set(None),
        submission_count: Set(0),
        accepted: Set(false),
        funds_withdrawn_at: Set(None),
        funds_reinstated_at: Set(None),
        withdrawn_amount: Set(0),
        withdrawn_fee: Set(0),
        network_at: Set(network_at),
        closed_at: Set(seen.status.is_closed().then_some(at)),
        created_at: Set(at),
        updated_at: Set(at),
    };
    let first_wins = OnConflict::columns([Column::ShopId, Column::Reference]).do_nothing().to_owned();
    match Entity::insert(row).on_conflict(first_wins).exec_without_returning(db).await {
        Ok(0) | Err(DbErr::RecordNotInserted) => return Ok(None),
        Ok(_) => {}
        Err(e) => return Err(e),
    }
    let opened = find_by_reference(db, payment.shop_id, &seen.reference).await?;
    if let Some(dispute) = &opened {
        add_history(db, dispute, DisputeStep::Opened, None, now).await?;
        // The payment shows its first dispute.
        payments::Entity::update_many()
            .col_expr(payments::Column::DisputeId, Expr::value(Some(dispute.id.clone())))
            .col_expr(payments::Column::DisputeStatus, Expr::value(Some(dispute.status)))
            .filter(payments::Column::Id.eq(payment.id.as_str()))
            .filter(payments::Column::DisputeId.is_null())
            .exec(db)
            .await?;
    }
    Ok(opened)
}

/// Applies `change` to `dispute` as it was read: its stage and status move only if nobody
/// moved them meanwhile, and its money moves once each way. Answers whether anything
/// changed; `Err` of a lost race is not possible, a lost move is answered as `false` for
/// the caller to read the dispute again.
pub async fn apply(
    db: &impl ConnectionTrait,
    dispute: &Model,
    seen: &Seen,
    change: &Change,
    now: DateTime<Utc>,
) -> Result<bool, DbErr> {
    let at = super::now_millis(now);
    let mut changed = false;
    if let Some((stage, status)) = change.moved {
        let mut update = Entity::update_many()
            .col_expr(Column::Stage, Expr::value(stage))
            .col_expr(Column::Status, Expr::value(status))
            .col_expr(Column::UpdatedAt, Expr::value(at));
        if status.is_closed() {
            update = update.col_expr(Column::ClosedAt, Expr::value(Some(at)));
        }
        if stage != dispute.stage {
            update = update.col_expr(Column::EvidenceDueBy, Expr::value(seen.evidence_due_by));
        }
        let moved = update
            .filter(Column::Id.eq(dispute.id.as_str()))
            .filter(Column::Stage.eq(dispute.stage))
            .filter(Column::Status.eq(dispute.status))
            .exec(db)
            .await?
            .rows_affected
            == 1;
        if !moved {
            return Ok(false);
        }
        let step = match () {
            _ if stage != dispute.stage => DisputeStep::Escalated,
            _ if status.is_closed() => DisputeStep::Closed,
            _ => DisputeStep::Updated,
        };
        add_history(db, dispute, step, None, now).await?;
        payments::Entity::update_many()
            .col_expr(payments::Column::DisputeStatus, Expr::value(Some(status)))
            .filter(payments::Column::Id.eq(dispute.payment_id.as_str()))
            .filter(payments::Column::DisputeId.eq(dispute.id.as_str()))
            .exec(db)
            .await?;
        changed = true;
    }
    if let Some(funds) = change.withdraw {
        let mut update = Entity::update_many();
        if let Some(fee) = seen.fee {
            update = update.col_expr(Column::Fee, Expr::value(Some(fee)));
        }
        let took = update
            .col_expr(Column::FundsWithdrawnAt, Expr::value(Some(at)))
            .col_expr(Column::WithdrawnAmount, Expr::col(Column::WithdrawnAmount).add(funds.amount))
            .col_expr(Column::WithdrawnFee, Expr::col(Column::WithdrawnFee).add(funds.fee))
            .col_expr(Column::UpdatedAt, Expr::value(at))
            .filter(Column::Id.eq(dispute.id.as_str()))
            .filter(Column::FundsWithdrawnAt.is_null())
            .exec(db)
            .await?
            .rows_affected
            == 1;
        if took {
            move_funds(db, dispute, funds, 1, at).await?;
            add_history(db, dispute, DisputeStep::FundsWithdrawn, Some(funds.amount + funds.fee), now).await?;
            changed = true;
        }
    }
    if let Some(funds) = change.reinstate {
        let gave = Entity::update_many()
            .col_expr(Column::FundsReinstatedAt, Expr::value(Some(at)))
            .col_expr(Column::WithdrawnAmount, Expr::col(Column::WithdrawnAmount).sub(funds.amount))
            .col_expr(Column::WithdrawnFee, Expr::col(Column::WithdrawnFee).sub(funds.fee))
            .col_expr(Column::UpdatedAt, Expr::value(at))
            .filter(Column::Id.eq(dispute.id.as_str()))
            .filter(Column::FundsReinstatedAt.is_null())
            .filter(Column::FundsWithdrawnAt.is_not_null())
            .exec(db)
            .await?
            .rows_affected
            == 1;
        if gave {
            move_funds(db, dispute, funds, -1, at).await?;
            add_history(db, dispute, DisputeStep::FundsReinstated, Some(funds.amount + funds.fee), now).await?;
            changed = true;
        }
    }
    Ok(changed)
}

/// Takes (`sign` 1) or gives back (-1) a dispute's money on its payment.
async fn move_funds(
    db: &impl ConnectionTrait,
    dispute: &Model,
    funds: Funds,
    sign: i64,
    at: DateTime<Utc>,
) -> Result<(), DbErr> {
    use payments::Column as P;
    payments::Entity::update_many()
        .col_expr(P::DisputedAmount, Expr::col(P::DisputedAmount).add(sign * funds.amount))
        .col_expr(P::DisputeFees, Expr::col(P::DisputeFees).add(sign * funds.fee))
        .col_expr(P::UpdatedAt, Expr::value(at))
        .filter(P::Id.eq(dispute.payment_id.as_str()))
        .exec(db)
        .await?;
    Ok(())
}

/// Adds a line to a dispute's history, with the stage and status it has now.
pub async fn add_history(
    db: &impl ConnectionTrait,
    dispute: &Model,
    step: DisputeStep,
    amount: Option<i64>,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    let stored = Entity::find().filter(Column::Id.eq(dispute.id.as_str())).one(db).await?;
    let (stage, status) = stored.map_or((dispute.stage, dispute.status), |d| (d.stage, d.status));
    let line = history::ActiveModel {
        seq: NotSet,
        dispute_id: Set(dispute.id.clone()),
        at: Set(super::now_millis(now)),
        stage: Set(stage),
        status: Set(status),
        step: Set(step),
        amount: Set(amount),
    };
    history::Entity::insert(line).exec_without_returning(db).await?;
    Ok(())
}

/// Stores the merchant's evidence of a dispute that still needs a response and was not
/// changed since it was read (`dispute.updated_at`); with `submit`, the dispute goes under
/// review. Whether it was stored (`false`: it changed meanwhile, or it no longer takes
/// evidence).
pub async fn answer(
    db: &impl ConnectionTrait,
    dispute: &Model,
    evidence: &Evidence,
    submit: bool,
    now: DateTime<Utc>,
) -> Result<bool, DbErr> {
    let at = super::now_millis(now);
    let text = serde_json::to_string(evidence).unwrap_or_default();
    let mut update = Entity::update_many()
        .col_expr(Column::Evidence, Expr::value(Some(text)))
        .col_expr(Column::UpdatedAt, Expr::value(at));
    if submit {
        update = update
            .col_expr(Column::Status, Expr::value(DisputeStatus::UnderReview))
            .col_expr(Column::EvidenceSubmittedAt, Expr::value(Some(at)))
            .col_expr(Column::SubmissionCount, Expr::col(Column::SubmissionCount).add(1));
    }
    let stored = update
        .filter(Column::Id.eq(dispute.id.as_str()))
        .filter(Column::Status.eq(DisputeStatus::NeedsResponse))
        .filter(Column::UpdatedAt.eq(dispute.updated_at))
        .exec(db)
        .await?
        .rows_affected
        == 1;
    if stored {
        let step = if submit { DisputeStep::EvidenceSubmitted } else { DisputeStep::EvidenceStaged };
        add_history(db, dispute, step, None, now).await?;
        if submit {
            set_payment_status(db, dispute, DisputeStatus::UnderReview).await?;
        }
    }
    Ok(stored)
}

/// Accepts a dispute that still needs a response: it is closed as `accepted` (lost, by the
/// merchant's choice). Whether it was.
pub async fn accept(db: &impl ConnectionTrait, dispute: &Model, now: DateTime<Utc>) -> Result<bool, DbErr> {
    let at = super::now_millis(now);
    let accepted = Entity::update_many()
        .col_expr(Column::Status, Expr::value(DisputeStatus::Accepted))
        .col_expr(Column::Accepted, Expr::value(true))
        .col_expr(Column::ClosedAt, Expr::value(Some(at)))
        .col_expr(Column::NetworkAt, Expr::value(Option::<DateTime<Utc>>::None))
        .col_expr(Column::UpdatedAt, Expr::value(at))
        .filter(Column::Id.eq(dispute.id.as_str()))
        .filter(Column::Status.eq(DisputeStatus::NeedsResponse))
        .exec(db)
        .await?
        .rows_affected
        == 1;
    if accepted {
        add_history(db, dispute, DisputeStep::Closed, None, now).await?;
        set_payment_status(db, dispute, DisputeStatus::Accepted).await?;
    }
    Ok(accepted)
}

async fn set_payment_status(db: &impl ConnectionTrait, dispute: &Model, status: DisputeStatus) -> Result<(), DbErr> {
    payments::Entity::update_many()
        .col_expr(payments::Column::DisputeStatus, Expr::value(Some(status)))
        .filter(payments::Column::Id.eq(dispute.payment_id.as_str()))
        .filter(payments::Column::DisputeId.eq(dispute.id.as_str()))
        .exec(db)
        .await?;
    Ok(())
}

/// Sets when the simulated card network next acts on a dispute (`None`: never).
pub async fn set_network_at(db: &impl ConnectionTrait, id: &str, at: Option<DateTime<Utc>>) -> Result<(), DbErr> {
    Entity::update_many()
        .col_expr(Column::NetworkAt, Expr::value(at.map(super::now_millis)))
        .filter(Column::Id.eq(id))
        .exec(db)
        .await?;
    Ok(())
}

/// Whether the subscription of a row of `table` (its `subscription_id`) is on the test clock
/// `clock` (`None`: real time, where a row of no subscription or of one on no clock is). Read
/// row by row from the subscription's unique id, so that what is due costs what it holds,
/// however many subscriptions the clock has.
fn on_clock(table: impl sea_orm::Iden + Copy + 'static, clock: Option<&str>) -> sea_orm::sea_query::SimpleExpr {
    use super::entities::subscriptions as subs;
    use sea_orm::sea_query::{Alias, Query};
    let s = Alias::new("s");
    let mut theirs = Query::select();
    theirs
        .expr(Expr::val(1))
        .from_as(subs::Entity, s.clone())
        .and_where(Expr::col((s.clone(), subs::Column::Id)).equals((table, Alias::new("subscription_id"))));
    match clock {
        Some(clock) => Expr::exists(theirs.and_where(Expr::col((s, subs::Column::TestClockId)).eq(clock)).to_owned()),
        None => {
            Expr::exists(theirs.and_where(Expr::col((s, subs::Column::TestClockId)).is_not_null()).to_owned()).not()
        }
    }
}

/// Payments and disputes whose simulated network step is due by `now`, in real time
/// (`clock` none) or on one test clock, the earliest first, at most `limit` of each.
pub async fn network_due(
    db: &impl ConnectionTrait,
    clock: Option<&str>,
    now: DateTime<Utc>,
    limit: u64,
) -> Result<(Vec<payments::Model>, Vec<Model>), DbErr> {
    let now = super::now_millis(now);
    let payments = network_due_payments(clock, now, limit).all(db).await?;
    let disputes = Entity::find()
        .filter(Column::NetworkAt.lte(now))
        .filter(on_clock(Entity, clock))
        .order_by_asc(Column::NetworkAt)
        .limit(limit)
        .all(db)
        .await?;
    Ok((payments, disputes))
}

/// The payments of [`network_due`]: the query, to see its plan.
pub fn network_due_payments(clock: Option<&str>, now: DateTime<Utc>, limit: u64) -> sea_orm::Select<payments::Entity> {
    payments::Entity::find()
        .filter(payments::Column::NetworkAt.lte(super::now_millis(now)))
        .filter(on_clock(payments::Entity, clock))
        .order_by_asc(payments::Column::NetworkAt)
        .limit(limit)
}

/// The earliest moment after `after` (up to `until`) the simulated network acts on a test
/// clock's payments or disputes.
pub async fn next_network_on_clock(
    db: &impl ConnectionTrait,
    clock: &str,
    after: DateTime<Utc>,
    until: DateTime<Utc>,
) -> Result<Option<DateTime<Utc>>, DbErr> {
    let (after, until) = (super::now_millis(after), super::now_millis(until));
    let payment: Option<Option<DateTime<Utc>>> = payments::Entity::find()
        .select_only()
        .column(payments::Column::NetworkAt)
        .filter(on_clock(payments::Entity, Some(clock)))
        .filter(payments::Column::NetworkAt.gt(after))
        .filter(payments::Column::NetworkAt.lte(until))
        .order_by_asc(payments::Column::NetworkAt)
        .into_tuple()
        .one(db)
        .await?;
    let dispute: Option<Option<DateTime<Utc>>> = Entity::find()
        .select_only()
        .column(Column::NetworkAt)
        .filter(on_clock(Entity, Some(clock)))
        .filter(Column::NetworkAt.gt(after))
        .filter(Column::NetworkAt.lte(until))
        .order_by_asc(Column::NetworkAt)
        .into_tuple()
        .one(db)
        .await?;
    Ok([payment.flatten(), dispute.flatten()].into_iter().flatten().min())
}

/// Sets when the simulated card network next acts on a payment (`None`: never again), if it
/// still was to act at `was`.
pub async fn set_payment_network_at(
    db: &impl ConnectionTrait,
    id: &str,
    was: Option<DateTime<Utc>>,
    at: Option<DateTime<Utc>>,
) -> Result<bool, DbErr> {
    let mut update = payments::Entity::update_many()
        .col_expr(payments::Column::NetworkAt, Expr::value(at.map(super::now_millis)))
        .filter(payments::Column::Id.eq(id));
    update = match was {
        Some(was) => update.filter(payments::Column::NetworkAt.eq(was)),
        None => update.filter(payments::Column::NetworkAt.is_null()),
    };
    Ok(update.exec(db).await?.rows_affected == 1)
}

/// The history of each of these disputes, oldest first.
pub async fn histories(db: &impl ConnectionTrait, ids: &[&str]) -> Result<Vec<history::Model>, DbErr> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<String> = ids.iter().map(|id| id.to_string()).collect();
    history::Entity::find()
        .filter(history::Column::DisputeId.is_in(ids))
        .order_by_asc(history::Column::Seq)
        .all(db)
        .await
}
