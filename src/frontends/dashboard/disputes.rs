//! Disputes in the dashboard: the list with the time left to answer each, one dispute with
//! its payment and history, the evidence form (staged or submitted) where the processor takes
//! answers through paydesk, and accepting a dispute, which asks for a confirmation first.

use askama::Template;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use chrono::Utc;
use serde::Deserialize;

use super::form::{FormView, PostedForm};
use super::list::{PER_PAGE, next_link};
use super::{Chrome, Merchant, Page, k, local, ok, see_other};
use crate::db::disputes::DisputeFilter;
use crate::db::entities::{dispute_history, disputes};
use crate::db::{self, Page as DbPage};
use crate::domain::Errors;
use crate::domain::dispute::{DisputeStatus, DueIn, Evidence, EvidenceAsk, due_in, merge_evidence};
use crate::web::error::AppError;
use crate::web::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/dashboard/disputes", get(list))
        .route("/dashboard/disputes/{id}", get(show).post(answer))
        .route("/dashboard/disputes/{id}/accept", post(accept))
}

/// The evidence fields the form shows, with their labels: those that answer most disputes
/// (the API takes the others too).
const FIELDS: [(&str, &str); 8] = [
    ("product_description", k("What was sold")),
    ("customer_name", k("Customer's name")),
    ("customer_email_address", k("Customer's e-mail address")),
    ("service_date", k("When it was delivered or used")),
    ("access_activity_log", k("Use of the service (logins, visits)")),
    ("shipping_tracking_number", k("Shipment tracking number")),
    ("refund_policy_disclosure", k("How the refund policy was shown")),
    ("uncategorized_text", k("Anything else the bank should know")),
];

/// `?status=` (one status, `open` for those still open) and `?after=`.
#[derive(Deserialize, Default)]
struct ListQuery {
    status: Option<String>,
    after: Option<String>,
}

/// The statuses the list filters by, after "open" and "any".
const STATUSES: &[DisputeStatus] = DisputeStatus::ALL;

#[derive(Template)]
#[template(path = "dashboard/disputes/list.html")]
struct ListPage {
    chrome: Chrome,
    status: String,
    statuses: Vec<(&'static str, &'static str)>,
    rows: Vec<Row>,
    next: Option<String>,
}

/// A dispute as a row of the list or the overview.
pub struct Row {
    pub id: String,
    pub payment_id: String,
    pub amount: String,
    pub status: &'static str,
    pub status_label: &'static str,
    pub stage: &'static str,
    pub reason: String,
    /// The time left to answer, while an answer is awaited.
    pub due: Option<String>,
    /// The countdown is under a day, or past.
    pub urgent: bool,
    pub created: String,
    pub test: bool,
}

/// The rows of `disputes` in the user's words.
pub fn rows(m: &Merchant, disputes: &[disputes::Model]) -> Vec<Row> {
    let now = Utc::now();
    disputes
        .iter()
        .map(|d| {
            let left =
                d.evidence_due_by.filter(|_| d.status == DisputeStatus::NeedsResponse).map(|due| due_in(due, now));
            Row {
                id: d.id.clone(),
                payment_id: d.payment_id.clone(),
                amount: m.money(d.amount, d.currency),
                status: d.status.as_str(),
                status_label: m.words.t_in("dispute", d.status.as_str()),
                stage: m.words.t_in("dispute", d.stage.as_str()),
                reason: m.words.t_in("reason", &d.reason).replace('_', " "),
                due: left.map(|left| countdown(m, left)),
                urgent: matches!(left, Some(DueIn::Hours(_) | DueIn::Past)),
                created: local(d.created_at, m.tz),
                test: d.test,
            }
        })
        .collect()
}

/// The time left, in words: `6 days left`, `5 hours left`, `past due`.
fn countdown(m: &Merchant, left: DueIn) -> String {
    match left {
        DueIn::Days(days) => m.words.n(days, "{} day left|{} days left"),
        DueIn::Hours(hours) => m.words.n(hours, "{} hour left|{} hours left"),
        DueIn::Past => m.t("past due").into(),
    }
}

async fn list(State(state): State<AppState>, m: Merchant, Query(query): Query<ListQuery>) -> Page {
    let status = query.status.unwrap_or_default();
    let filter = DisputeFilter { status: DisputeStatus::parse(&status), open: status == "open", ..Default::default() };
    let page = DbPage { limit: PER_PAGE, starting_after: query.after };
    let listed = db::disputes::list(&state.db, m.shop.id, &page, &filter).await?;
    let mut statuses = vec![("", m.t("Any status")), ("open", m.t("Open: awaiting an answer or a decision"))];
    statuses.extend(STATUSES.iter().map(|s| (s.as_str(), m.words.t_in("dispute", s.as_str()))));
    let page = ListPage {
        chrome: m.chrome("disputes").await,
        rows: rows(&m, &listed.rows),
        next: next_link("/dashboard/disputes", &[("status", &status)], listed.next_after),
        statuses,
        status,
    };
    ok(&page)
}

#[derive(Template)]
#[template(path = "dashboard/disputes/show.html")]
struct ShowPage {
    chrome: Chrome,
    d: disputes::Model,
    row: Row,
    fee: Option<String>,
    /// What it took from the merchant, and of that how much was the payment and the fee.
    withdrawn: String,
    due_by: Option<String>,
    payment: String,
    history: Vec<Line>,
    /// The processor takes answers through paydesk.
    here: bool,
    /// The evidence form, while the dispute needs an answer.
    form: Option<FormView>,
    fields: Vec<(&'static str, &'static str)>,
    submitted: Option<String>,
    /// Why the evidence was not submitted, when the form asked to submit it.
    unsent: Unsent,
    /// The evidence as submitted (label, text), once it was.
    sent: Vec<(String, String)>,
}

/// Why the form's evidence was not submitted: submitting cannot be undone, so it asks for a
/// tick first, and an empty answer (which loses the dispute) is refused.
#[derive(Debug, Clone, Copy, Default)]
struct Unsent {
    /// Every evidence field was empty.
    empty: bool,
    /// The box saying it cannot be undone was not ticked.
    unconfirmed: bool,
}

impl Unsent {
    fn any(self) -> bool {
        self.empty || self.unconfirmed
    }
}

/// A line of the dispute's history.
struct Line {
    at: String,
    step: &'static str,
    status: &'static str,
    amount: Option<String>,
}

async fn find(state: &AppState, m: &Merchant, id: &str) -> Result<disputes::Model, AppError> {
    db::find::<disputes::Entity>(&state.db, m.shop.id, id).await?.ok_or(AppError::NotFound("Dispute"))
}

async fn show(State(state): State<AppState>, m: Merchant, Path(id): Path<String>) -> Page {
    let d = find(&state, &m, &id).await?;
    show_page(&state, &m, d, None, Unsent::default()).await
}

/// The dispute's page; `form` refills a refused evidence form, refused for its fields or for
/// what `unsent` says.
async fn show_page(state: &AppState, m: &Merchant, d: disputes::Model, form: Option<FormView>, unsent: Unsent) -> Page {
    let refused = form.as_ref().is_some_and(FormView::has_errors) || unsent.any();
    let here = crate::services::disputes::answered_here(state, d.shop_id, d.test).await;
    let history = db::disputes::history(&state.db, &d.id).await?;
    let payment = db::find::<crate::db::entities::payments::Entity>(&state.db, m.shop.id, &d.payment_id).await?;
    let evidence = d.evidence();
    let form = (here && d.status == DisputeStatus::NeedsResponse).then(|| {
        let mut form = form.unwrap_or_else(|| {
            FormView::filled(
                FIELDS.iter().map(|(name, _)| (*name, evidence.get(*name).cloned().unwrap_or_default())).collect(),
            )
        });
        form.words = m.words;
        form
    });
    let page = ShowPage {
        chrome: m.chrome("disputes").await,
        row: rows(m, std::slice::from_ref(&d)).pop().ok_or(AppError::NotFound("Dispute"))?,
        fee: d.fee.map(|fee| m.money(fee, d.currency)),
        withdrawn: withdrawn(m, &d),
        sent: match d.evidence_submitted_at {
            Some(_) => sent(m, &evidence),
            None => Vec::new(),
        },
        unsent,
        due_by: d.evidence_due_by.map(|t| local(t, m.tz)),
        payment: payment.map_or_else(
            || d.payment_id.clone(),
            |p| format!("{} · {}", m.money(p.amount, p.currency), p.card_label()),
        ),
        history: history.iter().map(|h| line(m, h, d.currency)).collect(),
        fields: FIELDS.iter().map(|(name, label)| (*name, m.t(label))).collect(),
        submitted: d.evidence_submitted_at.map(|t| local(t, m.tz)),
        here,
        form,
        d,
    };
    match refused {
        true => Ok(super::render(StatusCode::UNPROCESSABLE_ENTITY, &page)),
        false => ok(&page),
    }
}

/// What the dispute took from the merchant: the whole, and the payment's part apart from the
/// fee's when there is a fee.
fn withdrawn(m: &Merchant, d: &disputes::Model) -> String {
    let total = m.money(d.withdrawn_amount + d.withdrawn_fee, d.currency);
    match d.withdrawn_fee {
        0 => total,
        fee => {
            let (amount, fee) = (m.money(d.withdrawn_amount, d.currency), m.money(fee, d.currency));
            m.f("{}: {} of the payment and a {} dispute fee", &[&total, &amount, &fee])
        }
    }
}

/// The evidence submitted, each text under its label (the form's fields first, in its
/// order, then any other the API sent, by its name).
fn sent(m: &Merchant, evidence: &Evidence) -> Vec<(String, String)> {
    let known = FIELDS.iter().filter_map(|(name, label)| Some((m.t(label).to_string(), evidence.get(*name)?.clone())));
    let others = evidence.iter().filter(|(name, _)| !FIELDS.iter().any(|(f, _)| f == name));
    let others = others.map(|(name, text)| (crate::domain::errors::humanize(name), text.clone()));
    known.chain(others).filter(|(_, text)| !text.is_empty()).collect()
}

fn line(m: &Merchant, h: &dispute_history::Model, currency: crate::domain::currency::Currency) -> Line {
    Line {
        at: local(h.at, m.tz),
        step: m.words.t_in("dispute", h.step.as_str()),
        status: m.words.t_in("dispute", h.status.as_str()),
        amount: h.amount.map(|a| m.money(a, currency)),
    }
}

/// The evidence form: saved as a draft, or submitted (`submit=true`).
async fn answer(State(state): State<AppState>, m: Merchant, Path(id): Path<String>, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let d = find(&state, &m, &id).await?;
    let mut evidence = serde_json::Map::new();
    for (name, _) in FIELDS {
        evidence.insert(name.into(), form.get(name).unwrap_or_default().into());
    }
    let submit = form.get("submit") == Some("true");
    let body = serde_json::json!({"evidence": evidence, "submit": submit});
    let ask = match EvidenceAsk::read(body.as_object().unwrap_or(&serde_json::Map::new())) {
        Ok(ask) => ask,
        Err(errors) => return show_page(&state, &m, d, Some(refill(&form, errors, &m)), Unsent::default()).await,
    };
    if submit {
        let unsent = Unsent {
            empty: merge_evidence(&d.evidence(), &ask.evidence).is_ok_and(|e| e.is_empty()),
            unconfirmed: form.get("understood") != Some("true"),
        };
        if unsent.any() {
            let form = FormView::sent(&form, Errors::default(), m.words);
            return show_page(&state, &m, d, Some(form), unsent).await;
        }
    }
    match crate::services::disputes::answer(&state, d, ask, Utc::now()).await {
        Ok(_) if submit => {
            m.flash(m.t("The evidence was submitted. The bank decides; this page shows its answer.")).await
        }
        Ok(_) => m.flash(m.t("The evidence was saved as a draft. Submit it before the due date.")).await,
        Err(AppError::Validation(errors)) => {
            let d = find(&state, &m, &id).await?;
            return show_page(&state, &m, d, Some(refill(&form, errors, &m)), Unsent::default()).await;
        }
        Err(AppError::Conflict(why) | AppError::Acquirer(why)) => m.flash(&m.words.rule(&why)).await,
        Err(e) => return Err(e),
    }
    see_other(&format!("/dashboard/disputes/{id}"))
}

/// The form as sent, with its errors named by field (`evidence.customer_name` is the form's
/// `customer_name`).
fn refill(form: &PostedForm, errors: Errors, m: &Merchant) -> FormView {
    let mut named = Errors::default();
    errors.for_each(|field, message| named.add(field.strip_prefix("evidence.").unwrap_or(field), message));
    FormView::sent(form, named, m.words)
}

/// Accepting a dispute: confirmed first, then told to the processor.
async fn accept(State(state): State<AppState>, m: Merchant, Path(id): Path<String>, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let d = find(&state, &m, &id).await?;
    if form.get("confirm") != Some("yes") {
        let amount = m.money(d.amount, d.currency);
        let page = super::ConfirmPage {
            chrome: m.chrome("disputes").await,
            title: m.f("Accept the dispute of {}?", &[&amount]),
            lines: vec![
                m.f("The {} stays with the cardholder, and the dispute closes as accepted.", &[&amount]),
                m.t("This cannot be undone: you can no longer send evidence.").into(),
            ],
            action: format!("/dashboard/disputes/{id}/accept"),
            fields: Vec::new(),
            button: m.t("Accept the dispute").into(),
            back: format!("/dashboard/disputes/{id}"),
            back_label: k("Keep disputing: go back"),
        };
        return ok(&page);
    }
    match crate::services::disputes::accept(&state, d, Utc::now()).await {
        Ok(_) => m.flash(m.t("The dispute was accepted.")).await,
        Err(AppError::Conflict(why) | AppError::Acquirer(why)) => m.flash(&m.words.rule(&why)).await,
        Err(e) => return Err(e),
    }
    see_other(&format!("/dashboard/disputes/{id}"))
}
