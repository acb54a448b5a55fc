//! The audit trail in the dashboard, for owners and administrators: who did what, from where,
//! newest first, narrowed by who, the kind of action, the object and the dates (days of the
//! shop's zone), and the same records as CSV.

use askama::Template;
use axum::Router;
use axum::extract::{Query, State};
use axum::routing::get;
use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use chrono_tz::Tz;
use serde::Deserialize;

use super::list::{PER_PAGE, next_link};
use super::{Chrome, Merchant, Page, k, local, ok};
use crate::db;
use crate::domain::audit::{Filter, Outcome, Record};
use crate::web::csv::Csv;
use crate::web::error::AppError;
use crate::web::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/dashboard/settings/audit", get(page))
        .route("/dashboard/settings/audit/export.csv", get(export))
}

/// The kinds of action the page's filter offers: the start of their actions, and their label.
const KINDS: &[(&str, &str)] = &[
    ("user.", k("Users and logins")),
    ("session.", k("Sessions")),
    ("two_step.", k("Two-step login")),
    ("api_key.", k("API key")),
    ("webhook_endpoint.", k("Webhook endpoints")),
    ("processor.", k("Processor")),
    ("shop.", k("Shop settings")),
    ("access.", k("Refusals")),
];

/// The actors other than users the filter offers.
const ACTORS: &[(&str, &str)] = &[
    ("api_key", k("The API key")),
    ("operator", k("The operator (command line)")),
    ("subscriber", k("Subscribers")),
    ("processor", k("Processors")),
];

/// The page's filter as typed: dates are days of the shop's zone.
#[derive(Debug, Default, Deserialize)]
struct Typed {
    actor: Option<String>,
    action: Option<String>,
    object_id: Option<String>,
    from: Option<String>,
    until: Option<String>,
    after: Option<String>,
}

impl Typed {
    /// The filter, or what is wrong with it.
    fn filter(&self, tz: Tz) -> Result<Filter, &'static str> {
        let text = |v: &Option<String>| v.as_deref().map(str::trim).filter(|v| !v.is_empty()).map(str::to_string);
        let day = |v: &Option<String>| -> Result<Option<DateTime<Utc>>, &'static str> {
            match text(v) {
                None => Ok(None),
                Some(typed) => NaiveDate::parse_from_str(&typed, "%Y-%m-%d")
                    .ok()
                    .and_then(|d| tz.from_local_datetime(&d.and_hms_opt(0, 0, 0)?).earliest())
                    .map(|t| Some(t.with_timezone(&Utc)))
                    .ok_or(k("A date is not a day like 2026-11-28.")),
            }
        };
        let until = day(&self.until)?.map(|t| t + chrono::Duration::days(1));
        Ok(Filter {
            actor: text(&self.actor),
            action: text(&self.action),
            object_id: text(&self.object_id),
            from: day(&self.from)?,
            until,
        })
    }

    /// The filter's fields, for links that keep it.
    fn pairs(&self) -> Vec<(&'static str, String)> {
        let v = |x: &Option<String>| x.clone().unwrap_or_default();
        vec![
            ("actor", v(&self.actor)),
            ("action", v(&self.action)),
            ("object_id", v(&self.object_id)),
            ("from", v(&self.from)),
            ("until", v(&self.until)),
        ]
    }
}

/// One record as the page shows it.
struct Row {
    at: String,
    who: String,
    role: String,
    action: String,
    object: String,
    changes: Vec<String>,
    address: String,
    refused: bool,
    outcome: &'static str,
}

#[derive(Template)]
#[template(path = "dashboard/audit.html")]
struct AuditPage {
    chrome: Chrome,
    rows: Vec<Row>,
    next: Option<String>,
    export: String,
    /// The filter as typed, and its choices: (value, label).
    typed: Vec<(&'static str, String)>,
    actors: Vec<(String, String)>,
    kinds: Vec<(&'static str, &'static str)>,
    problem: String,
}

impl AuditPage {
    /// What the filter's field `name` holds.
    fn typed(&self, name: &str) -> &str {
        self.typed.iter().find(|(n, _)| *n == name).map_or("", |(_, v)| v.as_str())
    }
}

fn row(r: &Record, m: &Merchant) -> Row {
    let e = &r.entry;
    let who = e.actor.label.clone().unwrap_or_else(|| match e.actor.kind.as_str() {
        "api_key" => m.t("The API key").into(),
        "operator" => m.t("The operator (command line)").into(),
        other => other.into(),
    });
    let show = |v: &serde_json::Value| match v {
        serde_json::Value::Null => "—".to_string(),
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    Row {
        at: local(r.at, m.tz),
        who,
        role: e.actor.role.map(|role| m.t(super::role_name(role)).to_string()).unwrap_or_default(),
        action: e.action.clone(),
        object: e.object.as_ref().map(|(kind, id)| format!("{kind} {id}")).unwrap_or_default(),
        changes: e.changes.iter().map(|c| format!("{}: {} → {}", c.field, show(&c.before), show(&c.after))).collect(),
        address: e.origin.address.clone().unwrap_or_default(),
        refused: e.outcome != Outcome::Success,
        outcome: match e.outcome {
            Outcome::Success => k("done"),
            Outcome::Refused => k("refused"),
            Outcome::Failure => k("failed"),
        },
    }
}

async fn page(State(state): State<AppState>, m: Merchant, Query(typed): Query<Typed>) -> Page {
    let users = db::users::of_shop(&state.db, m.shop.id).await?;
    let mut actors: Vec<(String, String)> = users.into_iter().map(|u| (u.id, u.email)).collect();
    actors.extend(ACTORS.iter().map(|(value, label)| (value.to_string(), m.t(label).to_string())));
    let kinds = KINDS.iter().map(|(value, label)| (*value, m.t(label))).collect();
    let pairs = typed.pairs();
    let export = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(&pairs).finish();
    let mut page = AuditPage {
        chrome: m.chrome("settings").await,
        rows: Vec::new(),
        next: None,
        export: format!("/dashboard/settings/audit/export.csv?{export}"),
        typed: pairs.clone(),
        actors,
        kinds,
        problem: String::new(),
    };
    let filter = match typed.filter(m.tz) {
        Ok(filter) => filter,
        Err(problem) => {
            page.problem = m.t(problem).into();
            return ok(&page);
        }
    };
    let list = db::Page { limit: PER_PAGE, starting_after: typed.after.clone().filter(|a| !a.is_empty()) };
    let listed = db::audit::list(&state.db, m.shop.id, &list, &filter).await.map_err(AppError::from)?;
    page.rows = listed.rows.iter().map(|r| row(r, &m)).collect();
    let params: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (*k, v.as_str())).collect();
    page.next = next_link("/dashboard/settings/audit", &params, listed.next_after);
    ok(&page)
}

/// Records an export reads at a time.
const EXPORT_PAGE: u64 = 1000;

/// The records the filter finds, as CSV sent while it is read.
async fn export(State(state): State<AppState>, m: Merchant, Query(typed): Query<Typed>) -> Page {
    let filter = typed.filter(m.tz).map_err(|problem| AppError::BadRequest(m.t(problem).into()))?;
    let header = Csv::new(&[
        "id",
        "sequence",
        "created_at",
        "actor_type",
        "actor_id",
        "actor",
        "role",
        "action",
        "target_type",
        "target_id",
        "changes",
        "outcome",
        "ip_address",
        "user_agent",
        "request_id",
        "hash",
        "previous_hash",
    ]);
    let shop = m.shop.id;
    let read = move |after: Option<String>| {
        let (state, filter) = (state.clone(), filter.clone());
        async move {
            let page = db::Page { limit: EXPORT_PAGE, starting_after: after };
            let listed = db::audit::list(&state.db, shop, &page, &filter).await.map_err(AppError::from)?;
            Ok((listed.rows, listed.next_after))
        }
    };
    let pages = crate::web::csv::pages(read, |rows: Vec<crate::domain::audit::Record>| {
        let mut csv = Csv::empty();
        for r in &rows {
            export_row(&mut csv, r);
        }
        csv.take()
    });
    Ok(crate::web::csv::stream(&format!("audit-{shop}.csv"), header, pages))
}

/// One record's row of the export.
fn export_row(csv: &mut Csv, r: &crate::domain::audit::Record) {
    let e = &r.entry;
    let text = |v: &Option<String>| v.clone().unwrap_or_default();
    csv.row(&[
        &r.id,
        &r.seq.to_string(),
        &crate::web::views::timestamp(r.at),
        e.actor.kind.as_str(),
        &text(&e.actor.id),
        &text(&e.actor.label),
        e.actor.role.map_or("", |role| role.as_str()),
        &e.action,
        e.object.as_ref().map_or("", |o| o.0.as_str()),
        e.object.as_ref().map_or("", |o| o.1.as_str()),
        &serde_json::to_string(&e.changes).unwrap_or_default(),
        e.outcome.as_str(),
        &text(&e.origin.address),
        &text(&e.origin.user_agent),
        &text(&e.origin.request_id),
        &r.hash,
        &r.prev_hash,
    ]);
}
