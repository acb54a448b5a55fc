//! The mail outbox: rows written in the transaction of what causes them (or by the reminder
//! sweep), rendered and sent by workers that claim them like webhook deliveries, and the log
//! of every attempt.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{
    ActiveModelTrait, ActiveValue::NotSet, ColumnTrait, ConnectionTrait, DbErr, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect, Set,
};

use super::entities::{mail_attempts as attempts, mails, shops};
use super::{Batch, ListError, Listed, Page, ShopOwned};
use crate::domain::ids::{MAIL, new_id};
use crate::domain::mail::{MailKind, MailSettings, MailStatus, message_id};

impl ShopOwned for mails::Entity {
    const SEQ: mails::Column = mails::Column::Seq;
    const ID: mails::Column = mails::Column::Id;
    const SHOP: mails::Column = mails::Column::ShopId;
    fn public_id(row: &mails::Model) -> &str {
        &row.id
    }
}

/// A mail about to be queued.
pub struct NewMail {
    pub shop_id: i64,
    pub customer_id: Option<String>,
    pub kind: MailKind,
    pub object_id: String,
    pub event_id: Option<String>,
    pub dedupe_key: String,
    pub test: bool,
    /// Known already (a link asked for by address); else found when it is rendered.
    pub to_address: Option<String>,
    /// The address it comes from, whose domain its `Message-ID` names.
    pub sender: String,
    /// What it says, when that is fixed as it is queued (a link that is only known then).
    pub rendered: Option<Rendered>,
}

impl NewMail {
    /// A mail written as it is queued (its words hold what is only known then, such as a
    /// one-time link): one of its own, to the address it was written for.
    pub fn written(shop_id: i64, kind: MailKind, object_id: String, sender: String, rendered: Rendered) -> Self {
        NewMail {
            shop_id,
            customer_id: rendered.customer_id.clone(),
            kind,
            object_id,
            event_id: None,
            dedupe_key: new_id(&format!("{kind}_")),
            test: false,
            to_address: Some(rendered.to_address.clone()),
            sender,
            rendered: Some(rendered),
        }
    }

    /// The mail an event causes: one per event and kind.
    pub fn of_event(
        shop_id: i64,
        kind: MailKind,
        object_id: String,
        event_id: String,
        test: bool,
        sender: String,
    ) -> Self {
        NewMail {
            shop_id,
            customer_id: None,
            kind,
            object_id,
            dedupe_key: format!("{event_id}:{kind}"),
            event_id: Some(event_id),
            test,
            to_address: None,
            sender,
            rendered: None,
        }
    }
}

/// Queues mails, due at `due_at`; one whose key is queued already is left out. The
/// `Message-ID` is fixed now, from the mail's id and its sender's domain.
pub async fn enqueue(db: &impl ConnectionTrait, new: Vec<NewMail>, due_at: DateTime<Utc>) -> Result<(), DbErr> {
    let mut batch = Batch::new(db);
    enqueue_into(&mut batch, new, due_at);
    batch.send(db).await
}

/// [`enqueue`], added to `batch`.
pub fn enqueue_into(batch: &mut Batch, new: Vec<NewMail>, due_at: DateTime<Utc>) {
    let now = super::now_millis(Utc::now());
    let rows: Vec<mails::ActiveModel> = new
        .into_iter()
        .map(|m| {
            let id = new_id(MAIL);
            let (customer_id, to_address) = match &m.rendered {
                Some(r) => (r.customer_id.clone(), Some(r.to_address.clone())),
                None => (m.customer_id, m.to_address),
            };
            let r = m.rendered;
            mails::ActiveModel {
                seq: NotSet,
                message_id: Set(message_id(&id, &m.sender)),
                id: Set(id),
                shop_id: Set(m.shop_id),
                customer_id: Set(customer_id),
                kind: Set(m.kind),
                object_id: Set(m.object_id),
                event_id: Set(m.event_id),
                dedupe_key: Set(m.dedupe_key),
                test: Set(m.test),
                status: Set(MailStatus::Queued),
                to_address: Set(to_address),
                language: Set(r.as_ref().map(|r| r.language.clone())),
                subject: Set(r.as_ref().map(|r| r.subject.clone())),
                text_body: Set(r.as_ref().map(|r| r.text_body.clone())),
                html_body: Set(r.map(|r| r.html_body)),
                attempts: Set(0),
                next_attempt_at: Set(super::now_millis(due_at)),
                claim_token: Set(None),
                claimed_until: Set(None),
                last_code: Set(None),
                last_error: Set(None),
                sent_at: Set(None),
                created_at: Set(now),
                updated_at: Set(now),
            }
        })
        .collect();
    let once = OnConflict::column(mails::Column::DedupeKey).do_nothing().to_owned();
    batch.insert(rows, Some(&once));
}

/// The mail settings and sender (if the shop names one) of these shops.
pub async fn settings_of(
    db: &impl ConnectionTrait,
    shop_ids: &[i64],
) -> Result<HashMap<i64, (MailSettings, Option<String>)>, DbErr> {
    type Row = (i64, String, Option<i32>, bool, Option<String>);
    let rows: Vec<Row> = shops::Entity::find()
        .select_only()
        .columns([shops::Column::Id, shops::Column::MailOff, shops::Column::ReminderDays])
        .columns([shops::Column::ReminderAllPeriods, shops::Column::MailFrom])
        .filter(shops::Column::Id.is_in(shop_ids.iter().copied()))
        .into_tuple()
        .all(db)
        .await?;
    Ok(rows
        .into_iter()
        .map(|(id, off, days, all, from)| (id, (MailSettings::from_db(&off, days, all), from)))
        .collect())
}

/// Claims up to `limit` mails due by `due_by` for `token` until `lease_until`, unless another
/// worker holds a claim that has not run out at `now`; answers the claimed ones.
pub async fn claim_due(
    db: &impl ConnectionTrait,
    due_by: DateTime<Utc>,
    now: DateTime<Utc>,
    limit: u64,
    token: &str,
    lease_until: DateTime<Utc>,
) -> Result<Vec<mails::Model>, DbErr> {
    super::outbox::claim(db, "mails", MailStatus::Queued.as_str(), (due_by, now), limit, token, lease_until).await?;
    mails::Entity::find()
        .filter(mails::Column::ClaimToken.eq(token))
        .filter(mails::Column::Status.eq(MailStatus::Queued))
        .order_by_asc(mails::Column::Seq)
        .all(db)
        .await
}

/// What a mail says, fixed before its first attempt.
pub struct Rendered {
    /// The customer it goes to; none for a mail to the shop's own users.
    pub customer_id: Option<String>,
    /// Its `Message-ID`, when it must name another domain than the one fixed when it was
    /// queued (a mail to the shop's users comes from the instance's address).
    pub message_id: Option<String>,
    pub to_address: String,
    pub language: String,
    pub subject: String,
    pub text_body: String,
    pub html_body: String,
}

/// Stores what a claimed mail says, once: a mail rendered already (by a worker whose claim
/// ran out) keeps what it had. Answers the mail as stored.
pub async fn store_rendered(
    db: &impl ConnectionTrait,
    mail: &mails::Model,
    rendered: Rendered,
) -> Result<Option<mails::Model>, DbErr> {
    let message_id = rendered.message_id.unwrap_or_else(|| mail.message_id.clone());
    mails::Entity::update_many()
        .col_expr(mails::Column::MessageId, Expr::value(message_id))
        .col_expr(mails::Column::CustomerId, Expr::value(rendered.customer_id))
        .col_expr(mails::Column::ToAddress, Expr::value(Some(rendered.to_address)))
        .col_expr(mails::Column::Language, Expr::value(Some(rendered.language)))
        .col_expr(mails::Column::Subject, Expr::value(Some(rendered.subject)))
        .col_expr(mails::Column::TextBody, Expr::value(Some(rendered.text_body)))
        .col_expr(mails::Column::HtmlBody, Expr::value(Some(rendered.html_body)))
        .filter(mails::Column::Id.eq(mail.id.as_str()))
        .filter(mails::Column::Subject.is_null())
        .exec(db)
        .await?;
    mails::Entity::find().filter(mails::Column::Id.eq(mail.id.as_str())).one(db).await
}

/// The columns of the mails' outbox.
const OUTBOX: super::outbox::Columns<mails::Column> = super::outbox::Columns {
    id: mails::Column::Id,
    status: mails::Column::Status,
    attempts: mails::Column::Attempts,
    next_attempt_at: mails::Column::NextAttemptAt,
    claim_token: mails::Column::ClaimToken,
    claimed_until: mails::Column::ClaimedUntil,
    last_code: mails::Column::LastCode,
    last_error: mails::Column::LastError,
    updated_at: mails::Column::UpdatedAt,
};

/// What one attempt got.
pub struct Attempted {
    pub at: DateTime<Utc>,
    pub code: Option<i32>,
    pub latency_ms: i64,
    pub error: Option<String>,
    /// The mail's status after it, and when it is tried again.
    pub status: MailStatus,
    pub next_attempt_at: Option<DateTime<Utc>>,
}

/// Records an attempt of a mail claimed under `token`; answers whether the claim still held
/// (the attempt is logged either way).
pub async fn record_attempt(
    db: &impl ConnectionTrait,
    mail: &mails::Model,
    token: &str,
    attempted: &Attempted,
) -> Result<bool, DbErr> {
    attempts::ActiveModel {
        seq: NotSet,
        mail_id: Set(mail.id.clone()),
        shop_id: Set(mail.shop_id),
        at: Set(super::now_millis(attempted.at)),
        code: Set(attempted.code),
        latency_ms: Set(attempted.latency_ms),
        error: Set(attempted.error.clone()),
    }
    .insert(db)
    .await?;
    let sent_at = (attempted.status == MailStatus::Sent).then_some(super::now_millis(attempted.at));
    let ended = super::outbox::Ended {
        status: attempted.status.as_str(),
        at: attempted.at,
        next_attempt_at: attempted.next_attempt_at,
        code: attempted.code,
        error: attempted.error.clone(),
    };
    let updated = super::outbox::end_attempt::<mails::Entity>(&OUTBOX, &mail.id, token, &ended)
        .col_expr(mails::Column::SentAt, Expr::value(sent_at))
        .exec(db)
        .await?;
    Ok(updated.rows_affected == 1)
}

/// A page of the shop's mails (to one customer, if given), newest first.
pub async fn list(
    db: &impl ConnectionTrait,
    shop_id: i64,
    page: &Page,
    customer_id: Option<&str>,
) -> Result<Listed<mails::Model>, ListError> {
    let mut condition = sea_orm::Condition::all();
    if let Some(id) = customer_id {
        condition = condition.add(mails::Column::CustomerId.eq(id));
    }
    super::list_where::<mails::Entity>(db, shop_id, page, condition).await
}

/// Deletes the mails to a shop's own users still queued from before `before`: an instance
/// that sends no mail queues them all the same, and they are not news any more.
pub async fn prune_stale_staff(db: &impl ConnectionTrait, before: DateTime<Utc>) -> Result<u64, DbErr> {
    let staff =
        [MailKind::SecurityNotice, MailKind::AccountLocked, MailKind::DisputeOpened, MailKind::RefundFailedLater];
    let deleted = mails::Entity::delete_many()
        .filter(mails::Column::Kind.is_in(staff))
        .filter(mails::Column::Status.eq(MailStatus::Queued))
        .filter(mails::Column::Attempts.eq(0))
        .filter(mails::Column::CreatedAt.lt(super::now_millis(before)))
        .exec(db)
        .await?;
    Ok(deleted.rows_affected)
}

/// Deletes the mails that ended (sent, failed for good, skipped) before `before`, with their
/// attempts; answers how many mails went.
pub async fn prune_ended(db: &impl ConnectionTrait, before: DateTime<Utc>) -> Result<u64, DbErr> {
    super::outbox::prune(db, ("mails", MailStatus::Queued.as_str()), ("mail_attempts", "mail_id"), before).await
}

/// Queues a mail of `kind` about `object_id` to each owner of the shop who joined, but
/// `except` (a user id), in the caller's transaction; each owner's mail once, whoever queues
/// it again.
pub async fn to_owners(
    txn: &impl ConnectionTrait,
    shop_id: i64,
    kind: MailKind,
    object_id: &str,
    except: Option<&str>,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    use super::entities::users;
    use crate::domain::access::Role;
    let owners = users::Entity::find()
        .filter(users::Column::ShopId.eq(shop_id))
        .filter(users::Column::Role.eq(Role::Owner))
        .filter(users::Column::InviteHash.is_null())
        .all(txn)
        .await?;
    let mails = owners
        .into_iter()
        .filter(|owner| Some(owner.id.as_str()) != except)
        .map(|owner| NewMail {
            shop_id,
            customer_id: None,
            kind,
            object_id: object_id.to_string(),
            event_id: None,
            dedupe_key: format!("{object_id}:{}", owner.id),
            test: false,
            to_address: Some(owner.email),
            // The instance's address, named when the mail is written.
            sender: String::new(),
            rendered: None,
        })
        .collect();
    enqueue(txn, mails, now).await
}
