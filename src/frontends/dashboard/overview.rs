//! The overview: today's and this month's revenue (live payments; test-mode ones beside
//! them), a chart of the last 30 days, recent payments and subscriptions by state.

use askama::Template;
use axum::Router;
use axum::extract::State;
use axum::routing::get;
use chrono::{NaiveDate, Utc};

use super::{Chrome, Merchant, Page, ok};
use crate::db;
use crate::domain::currency::Currency;
use crate::domain::money::Money;
use crate::domain::payment::PaymentFilter;
use crate::domain::revenue::{self, Revenue};
use crate::web::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new().route("/dashboard", get(overview))
}

/// Days the chart shows.
const DAYS: u64 = 30;

/// One bar of a chart, in SVG units.
struct Bar {
    x: u32,
    y: u32,
    height: u32,
    label: String,
}

/// The daily revenue of one currency.
struct Chart {
    currency: String,
    bars: Vec<Bar>,
    max: String,
    /// What the chart shows, for screen readers.
    summary: String,
    first: String,
    last: String,
}

const CHART_HEIGHT: u32 = 160;
const BAR_STEP: u32 = 20;

/// A chart per currency with revenue over the days charted.
fn charts(r: &Revenue, m: &Merchant) -> Vec<Chart> {
    r.daily.iter().map(|(currency, daily)| chart(*currency, daily, m)).collect()
}

fn chart(currency: Currency, daily: &[(NaiveDate, i64)], m: &Merchant) -> Chart {
    let top = daily.iter().map(|(_, a)| *a).max().unwrap_or(0).max(1);
    let bars = daily
        .iter()
        .enumerate()
        .map(|(i, (day, amount))| {
            let height = ((*amount as f64 / top as f64) * CHART_HEIGHT as f64).round() as u32;
            let height = if *amount > 0 { height.max(2) } else { 0 };
            Bar {
                x: i as u32 * BAR_STEP,
                y: CHART_HEIGHT - height,
                height,
                label: format!("{}: {}", m.words.day(*day), m.money(*amount, currency)),
            }
        })
        .collect();
    let first = daily.first().map(|(d, _)| m.words.day(*d)).unwrap_or_default();
    let last = daily.last().map(|(d, _)| m.words.day(*d)).unwrap_or_default();
    let max = m.money(top, currency);
    let summary = m.f("Daily revenue in {} from {} to {}, up to {} a day", &[&currency.code, &first, &last, &max]);
    Chart { currency: currency.code.to_string(), bars, max, summary, first, last }
}

#[derive(Template)]
#[template(path = "dashboard/overview.html")]
struct OverviewPage {
    chrome: Chrome,
    today: Vec<String>,
    month: Vec<String>,
    test_today: Vec<String>,
    test_month: Vec<String>,
    charts: Vec<Chart>,
    /// Whether the charts show test-mode payments (there are no live ones yet).
    test_chart: bool,
    states: Vec<(String, i64)>,
    payments: Vec<super::tables::PaymentRow>,
    /// The open disputes, those due soonest first.
    rows: Vec<super::disputes::Row>,
}

async fn overview(State(state): State<AppState>, m: Merchant) -> Page {
    let now = Utc::now();
    let since = revenue::since(now, m.tz, DAYS);
    let taken = db::payments::taken_since(&state.db, m.shop.id, since).await?;
    // Money counts when it was taken: an authorization when it was captured.
    let of = |test: bool| {
        let rows = taken.iter().filter(move |row| row.3 == test);
        let rows = rows.map(|(net, currency, at, _, payments)| (Money::new(*net, *currency), *at, *payments));
        revenue::summarize(rows, now, m.tz, DAYS)
    };
    let (live, test) = (of(false), of(true));
    let states = db::subscriptions::count_by_state(&state.db, m.shop.id).await?;
    let states = states.into_iter().map(|(s, n)| (s.to_string(), n)).collect();
    let payments = super::tables::recent_payments(&state, &m, PaymentFilter::default(), 10).await?;
    let totals = |t: &[Money]| t.iter().map(|x| m.money(x.amount, x.currency)).collect::<Vec<_>>();
    let page = OverviewPage {
        chrome: m.chrome("overview").await,
        today: totals(&live.today),
        month: totals(&live.month),
        test_today: totals(&test.today),
        test_month: totals(&test.month),
        charts: charts(if live.daily.is_empty() { &test } else { &live }, &m),
        test_chart: live.daily.is_empty() && !test.daily.is_empty(),
        states,
        payments,
        rows: super::disputes::rows(&m, &db::disputes::open_by_due(&state.db, m.shop.id, 5).await?),
    };
    ok(&page)
}
