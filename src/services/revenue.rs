//! Monthly recurring revenue kept as subscriptions change (docs/revenue.md).
//!
//! Every `subscription.*` event carries the subscription as it was; its MRR is read from
//! that snapshot, and a change of it is a movement, written beside the event in the
//! transaction that recorded it. `rebuild` makes the movements again from the events kept,
//! through the same steps, so it gives exactly what was kept.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sea_orm::{ConnectionTrait, DbErr};
use serde_json::Value;

use crate::db::{self, entities::coupons, entities::tax_rates};
use crate::domain::billing::State;
use crate::domain::coupon;
use crate::domain::currency::Currency;
use crate::domain::mrr::cohorts::{Cohort, Reader, Retention};
use crate::domain::mrr::figures::{self, Moved, Period};
use crate::domain::mrr::subscribers::Months;
use crate::domain::mrr::{self, Customer, Standing};
use crate::domain::tax::{self, TaxBehavior};
use crate::domain::vocab::IntervalUnit;

/// A subscription as one of its events recorded it: what its MRR is made of.
#[derive(Debug, Clone)]
pub struct Snapshot {
    event_id: String,
    shop_id: i64,
    test: bool,
    subscription_id: String,
    customer_id: String,
    currency: Currency,
    state: State,
    paid: i32,
    amount: i64,
    interval: i32,
    unit: IntervalUnit,
    behavior: TaxBehavior,
    /// A coupon that lasts for ever (one for some periods leaves MRR as it is).
    coupon: Option<String>,
    /// The rate its latest charge was taxed at, and whether it was reverse-charged.
    tax: Option<(String, bool)>,
    /// The subscription's own time.
    at: DateTime<Utc>,
}

impl Snapshot {
    /// The snapshot `data` of the event `event_id`, if it is a subscription's.
    pub fn read(event_id: &str, kind: &str, data: &Value) -> Option<Snapshot> {
        if !kind.starts_with("subscription.") {
            return None;
        }
        let word = |v: &Value| v.as_str().map(str::to_owned);
        let plan = &data["plan"];
        let terms = &plan["plan"];
        let forever = data["discount"].is_object() && data["discount"]["periods_left"].is_null();
        let tax = &data["last_transaction"]["tax"];
        Some(Snapshot {
            event_id: event_id.to_owned(),
            shop_id: data["shop_id"].as_i64()?,
            test: data["test"].as_bool()?,
            subscription_id: word(&data["id"])?,
            customer_id: word(&data["customer"]["id"])?,
            currency: crate::domain::currency::find(plan["currency"].as_str()?)?,
            state: State::parse(data["state"].as_str()?)?,
            paid: i32::try_from(data["paid_billing_cycles"].as_i64()?).ok()?,
            amount: terms["amount"].as_i64()?,
            interval: i32::try_from(terms["interval"].as_i64()?).ok()?,
            unit: IntervalUnit::parse(terms["interval_unit"].as_str()?)?,
            behavior: plan["tax_behavior"].as_str().and_then(TaxBehavior::parse).unwrap_or(TaxBehavior::Inclusive),
            coupon: if forever { word(&data["discount"]["coupon"]) } else { None },
            tax: word(&tax["rate"]).map(|rate| (rate, tax["reverse_charge"].as_bool().unwrap_or(false))),
            at: DateTime::parse_from_rfc3339(data["updated_at"].as_str()?).ok()?.to_utc(),
        })
    }
}

/// The coupons and tax rates snapshots name: neither changes once made.
#[derive(Default)]
struct Terms {
    coupons: HashMap<String, coupons::Model>,
    rates: HashMap<String, tax_rates::Model>,
}

impl Terms {
    async fn load(db: &impl ConnectionTrait, snapshots: &[Snapshot]) -> Result<Terms, DbErr> {
        let coupons: Vec<&str> = snapshots.iter().filter_map(|s| s.coupon.as_deref()).collect();
        let rates: Vec<&str> = snapshots.iter().filter_map(|s| s.tax.as_ref().map(|t| t.0.as_str())).collect();
        Ok(Terms {
            coupons: db::coupons::by_ids_of_any_shop(db, &coupons).await?,
            rates: db::tax_rates::by_ids_of_any_shop(db, &rates).await?,
        })
    }

    /// What `s`'s plan brings in a month: less a discount for ever, net of the tax its price
    /// holds at its latest charge's rate.
    fn monthly(&self, s: &Snapshot) -> i64 {
        let off =
            s.coupon.as_ref().and_then(|id| self.coupons.get(id)).map_or(0, |c| coupon::discount(s.amount, c.off()));
        let price = s.amount - off;
        let held = match (&s.tax, s.behavior) {
            (Some((rate, reverse)), TaxBehavior::Inclusive) => self
                .rates
                .get(rate)
                .and_then(|r| tax::charged(price, r.rate(), TaxBehavior::Inclusive, *reverse))
                .map_or(0, |(_, tax)| tax),
            _ => 0,
        };
        mrr::monthly(price - held, s.interval, s.unit)
    }
}

/// Where subscriptions and their customers stand while movements are made one after another:
/// read from the ledger for a change, empty for a rebuild.
#[derive(Default)]
struct Books {
    subscriptions: HashMap<String, Standing>,
    /// Customers that ever held MRR, with what they hold.
    holders: HashMap<db::mrr::Holder, Standing>,
}

impl Books {
    async fn load(db: &impl ConnectionTrait, snapshots: &[Snapshot]) -> Result<Books, DbErr> {
        let subscriptions: Vec<&str> = snapshots.iter().map(|s| s.subscription_id.as_str()).collect();
        let customers: Vec<&str> = snapshots.iter().map(|s| s.customer_id.as_str()).collect();
        let (subscriptions, holders) = db::mrr::books(db, &subscriptions, &customers).await?;
        Ok(Books { subscriptions, holders })
    }

    /// The movement `s` makes, if its standing changed.
    fn step(&mut self, s: &Snapshot, monthly: i64) -> Option<db::mrr::NewMovement> {
        let before = self.subscriptions.get(&s.subscription_id).copied().unwrap_or_default();
        let after = Standing::of(s.state, s.paid, monthly);
        let holder = (s.customer_id.clone(), s.currency.code, s.test);
        let held = self.holders.get(&holder).copied();
        let customer = Customer { held: held.unwrap_or_default(), ever: held.is_some() };
        let m = mrr::movement(customer, before, after)?;
        let now = Standing { mrr: customer.held.mrr + m.mrr, paused: customer.held.paused + m.paused };
        self.holders.insert(holder, now);
        self.subscriptions.insert(s.subscription_id.clone(), after);
        Some(db::mrr::NewMovement {
            shop_id: s.shop_id,
            test: s.test,
            currency: s.currency,
            customer_id: s.customer_id.clone(),
            subscription_id: s.subscription_id.clone(),
            event_id: s.event_id.clone(),
            movement: m,
            after,
            at: s.at,
        })
    }
}

/// In the caller's transaction: the movements of the subscriptions' events being recorded
/// (`ids` in the order of `events`), added to `batch`, which the caller sends in `db` with the
/// events.
pub async fn follow(
    db: &impl ConnectionTrait,
    batch: &mut db::Batch,
    events: &[db::events::NewEvent],
    ids: &[String],
) -> Result<(), DbErr> {
    let snapshots: Vec<Snapshot> =
        events.iter().zip(ids).filter_map(|(e, id)| Snapshot::read(id, e.kind.as_str(), &e.data)).collect();
    if snapshots.is_empty() {
        return Ok(());
    }
    let customers: Vec<&str> = snapshots.iter().map(|s| s.customer_id.as_str()).collect();
    db::mrr::hold(db, &customers).await?;
    let terms = Terms::load(db, &snapshots).await?;
    let mut books = Books::load(db, &snapshots).await?;
    let rows: Vec<_> = snapshots.iter().filter_map(|s| books.step(s, terms.monthly(s))).collect();
    db::mrr::insert_into(batch, rows);
    Ok(())
}

/// Events read at a time by a rebuild.
const PAGE: u64 = 1_000;

/// Makes a shop's movements again from its events, in one transaction: how many it made.
pub async fn rebuild(db: &sea_orm::DatabaseConnection, shop_id: i64) -> Result<usize, DbErr> {
    let txn = db::begin(db).await?;
    db::mrr::delete_shop(&txn, shop_id).await?;
    let mut books = Books::default();
    let (mut after, mut made) = (0, 0);
    loop {
        let page = db::mrr::subscription_events(&txn, shop_id, after, PAGE).await?;
        let Some(last) = page.last() else { break };
        after = last.seq;
        let snapshots: Vec<Snapshot> = page
            .iter()
            .filter_map(|e| {
                let data: Value = serde_json::from_str(&e.data).ok()?;
                Snapshot::read(&e.id, e.kind.as_str(), &data)
            })
            .collect();
        let terms = Terms::load(&txn, &snapshots).await?;
        let rows: Vec<_> = snapshots.iter().filter_map(|s| books.step(s, terms.monthly(s))).collect();
        made += rows.len();
        db::mrr::insert(&txn, rows).await?;
    }
    txn.commit().await?;
    Ok(made)
}

/// A ledger's figures over `q`'s range, in `tz`: what stood before the range, and the
/// movements inside each period, each read from the ledger's time index; and the trials due
/// to end in each period.
pub async fn figures(
    db: &impl ConnectionTrait,
    shop_id: i64,
    q: &figures::Query,
    tz: chrono_tz::Tz,
) -> Result<Vec<Period>, DbErr> {
    let ledger = (shop_id, q.test, q.currency);
    let bounds = q.range.bounds(tz);
    let mut before = Moved::default();
    for (kind, sums) in db::mrr::before(db, ledger, q.range.instants(tz).0).await? {
        before.add(kind, sums);
    }
    let groups = db::mrr::sums(db, ledger, &bounds).await?;
    let trials = db::mrr::trials(db, ledger, &bounds).await?;
    Ok(figures::series(&q.range, figures::Made { before: &before, groups: &groups, trials: &trials }))
}

/// Movements read at a time for retention.
const HISTORY_PAGE: u64 = 10_000;

/// A ledger's retention and cohorts over `q`'s range, month by month in `tz`: every movement
/// until the range's end is read, oldest first, a page at a time.
pub async fn cohorts(
    db: &impl ConnectionTrait,
    shop_id: i64,
    q: &figures::Query,
    tz: chrono_tz::Tz,
) -> Result<(Vec<Retention>, Vec<Cohort>), DbErr> {
    let ledger = (shop_id, q.test, q.currency);
    let (_, until) = q.range.instants(tz);
    let mut reader = Reader::new(&q.range, tz);
    let mut cursor = None;
    loop {
        let page = db::mrr::history(db, ledger, until, cursor, HISTORY_PAGE).await?;
        for (customer, at, kind, mrr, _) in &page {
            reader.read(customer, *at, *kind, *mrr);
        }
        match page.last() {
            Some((_, at, _, _, seq)) if page.len() as u64 == HISTORY_PAGE => cursor = Some((*at, *seq)),
            _ => return Ok(reader.finish(q.range.to)),
        }
    }
}

/// Movements read at a time for MRR per subscriber.
pub const SUBSCRIBERS_PAGE: u64 = 5_000;

/// A customer's row of MRR per subscriber: its id, e-mail, and MRR at each month's end.
pub struct SubscriberRow {
    pub customer_id: String,
    pub email: String,
    pub mrr: Vec<i64>,
}

/// Where a read of MRR per subscriber goes on: after the last movement read, with the
/// movements read so far of the customer the page ended inside.
pub struct Carry {
    cursor: db::mrr::CustomerCursor,
    partial: Vec<db::mrr::Change>,
}

/// The next rows of a ledger's MRR per subscriber over `months`, after `carry` (none: from
/// the first customer): each customer whose movements are all read by now and who held MRR at
/// some month's end. The ledger is read customer by customer up to the last month's end,
/// `page` movements at a time ([`SUBSCRIBERS_PAGE`]); what goes on says where the next rows
/// start (none: there are no more).
pub async fn subscribers(
    db: &impl ConnectionTrait,
    ledger: db::mrr::Ledger,
    months: &Months,
    carry: Option<Carry>,
    page: u64,
) -> Result<(Vec<SubscriberRow>, Option<Carry>), DbErr> {
    let Some(&until) = months.ends.last() else { return Ok((Vec::new(), None)) };
    let (cursor, mut moved) = carry.map_or((None, Vec::new()), |c| (Some(c.cursor), c.partial));
    let read = db::mrr::by_customer(db, ledger, until, cursor, page).await?;
    let next = read.last().filter(|_| read.len() as u64 == page).map(|(c, at, seq, _)| (c.clone(), *at, *seq));
    moved.extend(read);
    // The page's last customer may have more movements in the next page.
    let partial = match &next {
        Some((last, _, _)) => moved.split_off(moved.iter().rposition(|m| m.0 != *last).map_or(0, |i| i + 1)),
        None => Vec::new(),
    };
    let mut rows: Vec<SubscriberRow> = moved
        .chunk_by(|a, b| a.0 == b.0)
        .filter_map(|group| {
            let changes: Vec<(DateTime<Utc>, i64)> = group.iter().map(|(_, at, _, mrr)| (*at, *mrr)).collect();
            let mrr = months.at_ends(&changes);
            mrr.iter().any(|m| *m != 0).then(|| SubscriberRow {
                customer_id: group[0].0.clone(),
                email: String::new(),
                mrr,
            })
        })
        .collect();
    let ids: Vec<&str> = rows.iter().map(|r| r.customer_id.as_str()).collect();
    let emails = db::customers::emails(db, ledger.0, &ids).await?;
    for row in &mut rows {
        row.email = emails.get(&row.customer_id).cloned().unwrap_or_default();
    }
    Ok((rows, next.map(|cursor| Carry { cursor, partial })))
}

/// MRR per subscriber per month as CSV, sent as it is read: a row per customer who held MRR
/// at some month's end of `q`'s range (in `tz`), with its id, e-mail and MRR at the end of
/// each month, in major units.
pub fn subscribers_csv(
    state: crate::web::state::AppState,
    shop_id: i64,
    q: &figures::Query,
    tz: chrono_tz::Tz,
) -> axum::response::Response {
    use crate::web::csv::{Csv, pages, stream};
    let months = Months::of(&q.range, tz);
    let labels: Vec<String> = months.starts.iter().map(|m| m.format("%Y-%m").to_string()).collect();
    let mut columns = vec!["customer_id", "email"];
    columns.extend(labels.iter().map(String::as_str));
    let (ledger, currency) = ((shop_id, q.test, q.currency), q.currency);
    let read = move |carry| {
        let (state, months) = (state.clone(), months.clone());
        async move { Ok(subscribers(&state.db, ledger, &months, carry, SUBSCRIBERS_PAGE).await?) }
    };
    let write = move |rows: Vec<SubscriberRow>| {
        let mut csv = Csv::empty();
        for r in rows {
            let amounts: Vec<String> =
                r.mrr.iter().map(|m| crate::domain::money::Money::new(*m, currency).major()).collect();
            let mut cells = vec![r.customer_id.as_str(), r.email.as_str()];
            cells.extend(amounts.iter().map(String::as_str));
            csv.row(&cells);
        }
        csv.take()
    };
    let mode = if q.test { "test" } else { "live" };
    let name =
        format!("mrr-{}-{}-{}-{mode}.csv", currency.code, q.range.from.format("%Y%m"), q.range.to.format("%Y%m"));
    stream(&name, Csv::new(&columns), pages(read, write))
}
