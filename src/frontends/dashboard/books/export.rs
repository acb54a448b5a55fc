//! `/dashboard/invoices/export.csv`: a period's books for the accountant, one row per document
//! and tax rate (its net, tax and total at that rate), invoices first and then credit notes,
//! each in the order issued. Streamed a page at a time: the memory it takes does not grow with
//! the period.

use axum::Router;
use axum::extract::{Query, State};
use axum::routing::get;
use chrono::{DateTime, NaiveDate, TimeZone, Utc};

use super::super::{Merchant, Page};
use crate::db::{self, entities::documents};
use crate::domain::Errors;
use crate::domain::invoice::DocumentKind;
use crate::domain::money::major_units;
use crate::web::csv::{Csv, pages, stream};
use crate::web::error::AppError;
use crate::web::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new().route("/dashboard/invoices/export.csv", get(export))
}

/// Documents read at a time.
const PAGE: u64 = 500;

#[derive(serde::Deserialize)]
struct Period {
    from: Option<String>,
    to: Option<String>,
    mode: Option<String>,
}

/// Where the next page starts: the kind being read, and the last document read of it.
type Cursor = (DocumentKind, Option<(DateTime<Utc>, i64)>);

async fn export(State(state): State<AppState>, m: Merchant, Query(period): Query<Period>) -> Page {
    let day = |field: &str, text: &Option<String>| {
        let parsed = text.as_deref().and_then(|t| NaiveDate::parse_from_str(t.trim(), "%Y-%m-%d").ok());
        parsed.ok_or_else(|| AppError::Validation(Errors::one(field, "must be a date (YYYY-MM-DD)")))
    };
    let (from, to) = (day("from", &period.from)?, day("to", &period.to)?);
    if to < from {
        return Err(AppError::Validation(Errors::one("to", "must not be before from")));
    }
    let start = |d: NaiveDate| m.tz.from_local_datetime(&d.and_hms_opt(0, 0, 0).unwrap_or_default()).earliest();
    let (Some(since), Some(until)) = (start(from), to.succ_opt().and_then(start)) else {
        return Err(AppError::Validation(Errors::one("to", "must be a date (YYYY-MM-DD)")));
    };
    let (since, until) = (since.with_timezone(&Utc), until.with_timezone(&Utc));
    let test = period.mode.as_deref() == Some("test");
    let header = Csv::new(&[
        "kind",
        "number",
        "issued_at",
        "currency",
        "tax_category",
        "tax_rate",
        "net",
        "tax",
        "gross",
        "buyer",
        "buyer_vat_id",
        "buyer_country",
        "corrects",
        "payment_id",
        "customer_id",
        "document_id",
    ]);
    let shop = m.shop.id;
    let read = move |after: Option<Cursor>| {
        let state = state.clone();
        async move {
            let (kind, position) = after.unwrap_or((DocumentKind::Invoice, None));
            let rows = db::documents::of_period(&state.db, (shop, kind, test), (since, until), position, PAGE).await?;
            let next = match (rows.last(), kind) {
                (Some(last), _) if rows.len() as u64 == PAGE => Some((kind, Some((last.issued_at, last.seq)))),
                (_, DocumentKind::Invoice) => Some((DocumentKind::CreditNote, None)),
                (_, DocumentKind::CreditNote) => None,
            };
            Ok((rows, next))
        }
    };
    let body = pages(read, |rows: Vec<documents::Model>| {
        let mut csv = Csv::empty();
        for d in &rows {
            write(&mut csv, d);
        }
        csv.take()
    });
    let name =
        format!("books-{}-{}-{}.csv", from.format("%Y%m%d"), to.format("%Y%m%d"), if test { "test" } else { "live" });
    Ok(stream(&name, header, body))
}

/// A document's rows: one per tax rate.
fn write(csv: &mut Csv, d: &documents::Model) {
    let Ok(c) = crate::web::documents::content(d) else { return };
    let amount = |minor: i64| major_units(minor, d.currency.exponent);
    let issued = d.issued_at.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string();
    let buyer = c.buyer.company.clone().filter(|c| !c.is_empty()).unwrap_or_else(|| c.buyer.name.clone());
    let text = |v: &Option<String>| v.clone().unwrap_or_default();
    for t in &c.taxes {
        let rate = crate::domain::tax::format_percentage(t.percentage);
        csv.row(&[
            d.kind.as_str(),
            &d.number_text,
            &issued,
            d.currency.code,
            t.treatment.code(),
            &rate,
            &amount(t.net),
            &amount(t.tax),
            &amount(t.gross),
            &buyer,
            &text(&c.buyer.vat_id),
            &text(&c.buyer.country),
            &text(&c.invoice_number),
            &text(&d.payment_id),
            &text(&d.customer_id),
            &d.id,
        ]);
    }
}
