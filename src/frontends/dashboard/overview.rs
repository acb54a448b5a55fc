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

/// The daily revenue of one currency.
struct Chart {
    currency: String,
    /// Above the zero line a day that took money, below it a day that gave back more than it
    /// took (refunds, disputes).
    bars: super::chart::Bars,
    /// The range of the days' totals, as the caption says it.
    range: String,
    /// What the chart shows, for screen readers.
    summary: String,
    first: String,
    last: String,
}

/// A chart per currency with revenue over the days charted.
fn charts(r: &Revenue, m: &Merchant) -> Vec<Chart> {
    r.daily.iter().map(|(currency, daily)| chart(*currency, daily, m)).collect()
}

fn chart(currency: Currency, daily: &[(NaiveDate, i64)], m: &Merchant) -> Chart {
    let top = daily.iter().map(|(_, a)| *a).max().unwrap_or(0).max(0);
    let bottom = daily.iter().map(|(_, a)| *a).min().unwrap_or(0).min(0);
    let values: Vec<(i64, String)> = daily
        .iter()
        .map(|(day, amount)| (*amount, format!("{}: {}", m.words.day(*day), m.money(*amount, currency))))
        .collect();
    let bars = super::chart::bars(&values);
    let first = daily.first().map(|(d, _)| m.words.day(*d)).unwrap_or_default();
    let last = daily.last().map(|(d, _)| m.words.day(*d)).unwrap_or_default();
    let (max, min) = (m.money(top, currency), m.money(bottom, currency));
    let (range, summary) = match bottom {
        0 => (
            m.f("up to {} a day", &[&max]),
            m.f("Daily revenue in {} from {} to {}, up to {} a day", &[&currency.code, &first, &last, &max]),
        ),
        _ => (
            m.f("from {} to {} a day", &[&min, &max]),
            m.f(
                "Daily revenue in {} from {} to {}, from {} to {} a day; days below the line gave back more than they took",
                &[&currency.code, &first, &last, &min, &max],
            ),
        ),
    };
    Chart { currency: currency.code.to_string(), bars, range, summary, first, last }
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
