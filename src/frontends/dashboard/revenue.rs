//! `/dashboard/revenue`: what the subscriptions are worth, in one currency and mode: MRR and
//! what moved it by month or day, each an SVG chart with its table, and
//! `/dashboard/revenue/movements`, the movements behind a figure with their subscriptions, and
//! `/dashboard/revenue/subscribers.csv`, MRR per subscriber per month.

use askama::Template;
use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::routing::get;
use chrono::{DateTime, Utc};

use super::chart::{self, Bars};
use super::{Chrome, Merchant, Page, local, ok, render};
use crate::db;
use crate::domain::currency::Currency;
use crate::domain::errors::Errors;
use crate::domain::mrr::Kind;
use crate::domain::mrr::figures::{self, Period, Query};
use crate::web::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/dashboard/revenue", get(revenue))
        .route("/dashboard/revenue/movements", get(movements))
        .route("/dashboard/revenue/subscribers.csv", get(subscribers))
}

/// The form that chose the figures, as it was filled in.
struct Form {
    currencies: Vec<&'static str>,
    currency: String,
    test: bool,
    interval: &'static str,
    from: String,
    to: String,
}

impl Form {
    /// The query string of these figures over `period`'s days, for `kind` if given.
    fn link(&self, start: &str, end: &str, kind: Option<Kind>) -> String {
        let mut link = url::form_urlencoded::Serializer::new(String::new());
        link.append_pair("currency", &self.currency).append_pair("test", if self.test { "true" } else { "false" });
        link.append_pair("from", start).append_pair("to", end);
        if let Some(kind) = kind {
            link.append_pair("kind", kind.as_str());
        }
        link.finish()
    }

    /// Where MRR per subscriber per month of these figures is downloaded.
    fn export(&self) -> String {
        format!("/dashboard/revenue/subscribers.csv?{}", self.link(&self.from, &self.to, None))
    }

    /// The query string of the figures page as this form shows it.
    fn figures(&self) -> String {
        let interval =
            url::form_urlencoded::Serializer::new(String::new()).append_pair("interval", self.interval).finish();
        format!("{}&{interval}", self.link(&self.from, &self.to, None))
    }
}

/// `query` as the value of a link's `back` parameter.
fn back_param(query: &str) -> String {
    format!("&back={}", url::form_urlencoded::byte_serialize(query.as_bytes()).collect::<String>())
}

/// One period's row: its figures as the user's language writes them.
struct Row {
    label: String,
    mrr: String,
    paused: String,
    subscribers: i64,
    arpu: String,
    subscriber_churn: String,
    revenue_churn: String,
    /// The trials due to end in the period that were paid: a rate and how many of how many.
    trials: String,
    /// Each kind of movement that moved something: its name, count, change and the link to
    /// the movements behind it.
    moved: Vec<Cell>,
    net: String,
}

struct Cell {
    kind: &'static str,
    count: i64,
    amount: String,
    link: String,
}

#[derive(Template)]
#[template(path = "dashboard/revenue/figures.html")]
struct FiguresPage {
    chrome: Chrome,
    form: Form,
    /// What was wrong with the form; no figures then.
    problems: Vec<String>,
    /// The figures at the range's end: MRR, subscribers, ARPU, paused MRR.
    tiles: Option<(String, i64, String, String)>,
    mrr_chart: Bars,
    net_chart: Bars,
    summary: String,
    net_summary: String,
    /// Whether nothing counted in MRR over the range (the charts are left out then).
    empty: bool,
    rows: Vec<Row>,
}

/// A page's query string as its pairs.
fn pairs_of(raw: Option<&str>) -> Vec<(String, String)> {
    url::form_urlencoded::parse(raw.unwrap_or("").as_bytes()).into_owned().collect()
}

/// The query a page was asked with (its `pairs`), and the form as filled in (the shop's first
/// currency by default).
async fn asked(
    state: &AppState,
    m: &Merchant,
    pairs: &[(String, String)],
) -> Result<(Result<Query, Errors>, Form), sea_orm::DbErr> {
    let get = |key: &str| pairs.iter().find(|(k, v)| k == key && !v.is_empty()).map(|(_, v)| v.clone());
    let currencies: Vec<&'static str> =
        db::plans::currencies(&state.db, m.shop.id).await?.iter().map(|c| c.code).collect();
    let currency =
        get("currency").or_else(|| currencies.first().map(|c| c.to_string())).unwrap_or_else(|| "EUR".into());
    let mut given: Vec<(String, String)> =
        pairs.iter().filter(|(k, v)| k != "currency" && !v.is_empty()).cloned().collect();
    given.push(("currency".into(), currency.clone()));
    let today = Utc::now().with_timezone(&m.tz).date_naive();
    let q = Query::parse(given, today);
    let form = match &q {
        Ok(q) => Form {
            currencies,
            currency: q.currency.code.to_string(),
            test: q.test,
            interval: q.range.interval.as_str(),
            from: q.range.from.to_string(),
            to: q.range.to.to_string(),
        },
        Err(_) => Form {
            currencies,
            currency,
            test: get("test").as_deref() == Some("true"),
            interval: if get("interval").as_deref() == Some("day") { "day" } else { "month" },
            from: get("from").unwrap_or_default(),
            to: get("to").unwrap_or_default(),
        },
    };
    Ok((q, form))
}

fn problems(m: &Merchant, errors: &Errors) -> Vec<String> {
    let mut found = Vec::new();
    errors.for_each(|field, message| found.push(format!("{}: {}", m.words.t_data(field), m.words.t_data(message))));
    found
}

async fn revenue(State(state): State<AppState>, m: Merchant, RawQuery(raw): RawQuery) -> Page {
    let (q, form) = asked(&state, &m, &pairs_of(raw.as_deref())).await?;
    let q = match q {
        Ok(q) => q,
        Err(errors) => {
            let page = FiguresPage {
                chrome: m.chrome("revenue").await,
                form,
                problems: problems(&m, &errors),
                tiles: None,
                mrr_chart: chart::bars(&[]),
                net_chart: chart::bars(&[]),
                summary: String::new(),
                net_summary: String::new(),
                empty: true,
                rows: Vec::new(),
            };
            return Ok(render(StatusCode::UNPROCESSABLE_ENTITY, &page));
        }
    };
    let periods = crate::services::revenue::figures(&state.db, m.shop.id, &q, m.tz).await?;
    let rows: Vec<Row> = periods.iter().map(|p| row(&m, &form, q.currency, q.range.interval, p)).collect();
    let money = |amount: i64| m.money(amount, q.currency);
    let tiles = periods.last().map(|p| {
        let arpu = p.arpu().map(money).unwrap_or_else(|| "–".into());
        (money(p.closing.mrr), p.closing.subscribers, arpu, money(p.closing.paused))
    });
    let mrr: Vec<(i64, String)> =
        rows.iter().zip(&periods).map(|(r, p)| (p.closing.mrr, format!("{}: {}", r.label, r.mrr))).collect();
    let net: Vec<(i64, String)> = rows
        .iter()
        .zip(&periods)
        .map(|(r, p)| (p.closing.mrr - p.opening.mrr, format!("{}: {}", r.label, r.net)))
        .collect();
    let (first, last) = (rows.first().map(|r| r.label.clone()), rows.last().map(|r| r.label.clone()));
    let (first, last) = (first.unwrap_or_default(), last.unwrap_or_default());
    let top = periods.iter().map(|p| p.closing.mrr).max().unwrap_or(0);
    let page = FiguresPage {
        chrome: m.chrome("revenue").await,
        summary: m.f("MRR in {} from {} to {}, up to {}", &[&q.currency.code, &first, &last, &money(top)]),
        net_summary: m.f(
            "MRR's change in {} from {} to {}: above the line it grew, below it shrank",
            &[&q.currency.code, &first, &last],
        ),
        empty: periods.iter().all(|p| p.closing == figures::Standing::default() && p.moved == Default::default()),
        mrr_chart: chart::bars(&mrr),
        net_chart: chart::bars(&net),
        form,
        problems: Vec::new(),
        tiles,
        rows,
    };
    ok(&page)
}

/// MRR per subscriber per month of the figures' currency, mode and days, as CSV.
async fn subscribers(
    State(state): State<AppState>,
    m: Merchant,
    RawQuery(raw): RawQuery,
) -> Result<axum::response::Response, crate::web::error::AppError> {
    let mut pairs = pairs_of(raw.as_deref());
    pairs.retain(|(k, _)| k != "interval");
    let (q, _) = asked(&state, &m, &pairs).await?;
    Ok(crate::services::revenue::subscribers_csv(state, m.shop.id, &q?, m.tz))
}

fn row(m: &Merchant, form: &Form, currency: Currency, interval: figures::Interval, p: &Period) -> Row {
    let money = |amount: i64| m.money(amount, currency);
    let rate = |r: Option<f64>| r.map_or_else(|| "–".to_string(), |r| format!("{:.2} %", r * 100.0));
    let (start, end) = (p.start.to_string(), p.end.to_string());
    let label = match interval {
        figures::Interval::Day => m.words.day(p.start),
        figures::Interval::Month => p.start.format("%Y-%m").to_string(),
    };
    let moved = p
        .moved
        .kinds()
        .filter(|(_, s)| s.count > 0)
        .map(|(kind, s)| Cell {
            kind: kind.as_str(),
            count: s.count,
            amount: money(if matches!(kind, Kind::Pause) { -s.paused } else { s.mrr }),
            link: format!(
                "/dashboard/revenue/movements?{}{}",
                form.link(&start, &end, Some(kind)),
                back_param(&form.figures())
            ),
        })
        .collect();
    Row {
        label,
        mrr: money(p.closing.mrr),
        paused: money(p.closing.paused),
        subscribers: p.closing.subscribers,
        arpu: p.arpu().map(money).unwrap_or_else(|| "–".into()),
        subscriber_churn: rate(p.subscriber_churn_rate()),
        revenue_churn: rate(p.revenue_churn_rate()),
        trials: match p.trial_conversion_rate() {
            Some(r) => {
                m.f("{} ({} of {})", &[&rate(Some(r)), &p.trials.converted, &(p.trials.converted + p.trials.lost)])
            }
            None => "–".into(),
        },
        moved,
        net: money(p.closing.mrr - p.opening.mrr),
    }
}

/// Movements a page shows at once.
const PER_PAGE: u64 = 100;

/// A movement in the list.
struct Movement {
    at: String,
    kind: &'static str,
    customer_id: String,
    email: String,
    subscription_id: String,
    mrr: String,
    paused: String,
}

#[derive(Template)]
#[template(path = "dashboard/revenue/movements.html")]
struct MovementsPage {
    chrome: Chrome,
    form: Form,
    kind: Option<&'static str>,
    problems: Vec<String>,
    rows: Vec<Movement>,
    back: String,
    next: Option<String>,
}

async fn movements(State(state): State<AppState>, m: Merchant, RawQuery(raw): RawQuery) -> Page {
    let pairs = pairs_of(raw.as_deref());
    let (q, form) = asked(&state, &m, &pairs).await?;
    let get = |key: &str| pairs.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
    let cursor = get("after").and_then(cursor_of);
    // The figures the movements were reached from (else those of these days).
    let back = get("back").map_or_else(|| form.figures(), str::to_owned);
    let mut errors = q.as_ref().err().cloned().unwrap_or_default();
    let kind = match get("kind").filter(|k| !k.is_empty()) {
        None => None,
        Some(word) => {
            let kind = Kind::parse(word);
            if kind.is_none() {
                errors.add("kind", "is not a kind of movement");
            }
            kind
        }
    };
    let q = match q {
        Ok(q) if errors.is_empty() => q,
        _ => {
            let problems = problems(&m, &errors);
            let chrome = m.chrome("revenue").await;
            let back = format!("/dashboard/revenue?{back}");
            let page = MovementsPage { chrome, form, kind: None, problems, rows: Vec::new(), back, next: None };
            return Ok(render(StatusCode::UNPROCESSABLE_ENTITY, &page));
        }
    };
    let ledger = (m.shop.id, q.test, q.currency);
    let mut found = db::mrr::page(&state.db, ledger, q.range.instants(m.tz), kind, cursor, PER_PAGE + 1).await?;
    let more = found.len() as u64 > PER_PAGE;
    found.truncate(PER_PAGE as usize);
    let ids: Vec<&str> = found.iter().map(|r| r.customer_id.as_str()).collect();
    let emails = db::customers::emails(&state.db, m.shop.id, &ids).await?;
    let email_of = |id: &str| emails.get(id).cloned().unwrap_or_default();
    let next = found.last().filter(|_| more).map(|r| {
        let kind = kind.map(|k| format!("&kind={}", k.as_str())).unwrap_or_default();
        format!(
            "/dashboard/revenue/movements?{}{kind}&after={}.{}{}",
            form.link(&form.from, &form.to, None),
            r.occurred_at.timestamp_millis(),
            r.seq,
            back_param(&back)
        )
    });
    let rows = found
        .iter()
        .map(|r| Movement {
            at: local(r.occurred_at, m.tz),
            kind: r.kind.as_str(),
            email: email_of(&r.customer_id),
            customer_id: r.customer_id.clone(),
            subscription_id: r.subscription_id.clone(),
            mrr: m.money(r.mrr, q.currency),
            paused: m.money(r.paused, q.currency),
        })
        .collect();
    let page = MovementsPage {
        chrome: m.chrome("revenue").await,
        form,
        kind: kind.map(Kind::as_str),
        problems: Vec::new(),
        rows,
        back: format!("/dashboard/revenue?{back}"),
        next,
    };
    ok(&page)
}

/// A page's cursor (`millis.seq`).
fn cursor_of(text: &str) -> Option<db::mrr::Cursor> {
    let (millis, seq) = text.split_once('.')?;
    Some((DateTime::<Utc>::from_timestamp_millis(millis.parse().ok()?)?, seq.parse().ok()?))
}
