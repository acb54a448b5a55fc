//! Payments in the dashboard: the list with its filters, one payment, capturing or voiding
//! an authorization, and refunding, which asks for a confirmation first.

use askama::Template;
use axum::Router;
use axum::extract::{Path, RawQuery, State};

use axum::http::StatusCode;
use axum::routing::{get, post};
use chrono::Utc;

use super::form::{FormView, PostedForm, minor_units, new_once, once_id};
use super::list::{PER_PAGE, next_link};
use super::tables::{Named, PaymentRow, payment_rows};
use super::{Chrome, Merchant, Page, k, local, ok, see_other};
use crate::db::entities::{customers, payments, plans, products, refunds, subscriptions};
use crate::db::{self, Page as DbPage};
use crate::domain::card::brand_name;
use crate::domain::money::Money;
use crate::domain::payment::PaymentSearch;
use crate::domain::refund::RefundAsk;
use crate::domain::vocab::PaymentStatus;
use crate::web::csv::Csv;
use crate::web::error::AppError;
use crate::web::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/dashboard/payments", get(list))
        .route("/dashboard/payments/export.csv", get(export))
        .route("/dashboard/payments/{id}", get(show))
        .route("/dashboard/payments/{id}/capture", post(capture))
        .route("/dashboard/payments/{id}/void", post(void))
        .route("/dashboard/payments/{id}/refund", post(refund))
}

/// The names a payments search may carry.
const SEARCH_NAMES: [&str; 9] = ["q", "status", "product", "plan", "customer", "subscription", "mode", "from", "to"];

/// A search of the payments list, as its query string has it.
struct Asked {
    /// The names and values given (blank ones left out), `after` aside.
    params: Vec<(String, String)>,
    after: Option<String>,
    search: Result<PaymentSearch, crate::domain::Errors>,
}

impl Asked {
    fn read(query: Option<String>, tz: chrono_tz::Tz) -> Asked {
        let query = query.unwrap_or_default();
        let pairs: Vec<(String, String)> = url::form_urlencoded::parse(query.as_bytes()).into_owned().collect();
        let after = pairs.iter().find(|(k, v)| k == "after" && !v.is_empty()).map(|(_, v)| v.clone());
        let params: Vec<(String, String)> =
            pairs.into_iter().filter(|(k, v)| !v.trim().is_empty() && SEARCH_NAMES.contains(&k.as_str())).collect();
        let search = PaymentSearch::parse(params.iter().map(|(k, v)| (k.as_str(), v.as_str())), tz);
        Asked { params, after, search }
    }

    fn get(&self, name: &str) -> &str {
        self.params.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str()).unwrap_or("")
    }

    fn pairs(&self) -> Vec<(&str, &str)> {
        self.params.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
    }
}

#[derive(Template)]
#[template(path = "dashboard/payments/list.html")]
struct ListPage {
    chrome: Chrome,
    form: FormView,
    statuses: &'static [&'static str],
    products: Vec<(String, String)>,
    plans: Vec<(String, String)>,
    /// Filters the form has no field for (a customer's or subscription's payments), shown so
    /// they can be cleared.
    scope: Vec<Scope>,
    filtered: bool,
    export: String,
    payments: Vec<PaymentRow>,
    next: Option<String>,
}

/// A filter the form has no field for: what it keeps, the object by name, and its page.
struct Scope {
    /// The query's name for it, and the id it holds.
    key: &'static str,
    id: String,
    label: &'static str,
    name: String,
    href: String,
}

/// The customer and subscription the payments are filtered by, named (an unknown id as it is).
async fn scope(state: &AppState, m: &Merchant, asked: &Asked) -> Result<Vec<Scope>, AppError> {
    let mut scope = Vec::new();
    let customer = asked.get("customer");
    if !customer.is_empty() {
        let found = db::find::<customers::Entity>(&state.db, m.shop.id, customer).await?;
        scope.push(Scope {
            key: "customer",
            id: customer.to_string(),
            label: m.t("Only the payments of customer"),
            name: found.map_or_else(|| customer.to_string(), |c| c.email),
            href: format!("/dashboard/customers/{customer}"),
        });
    }
    let subscription = asked.get("subscription");
    if !subscription.is_empty() {
        let found = db::find::<subscriptions::Entity>(&state.db, m.shop.id, subscription).await?;
        let plan = match &found {
            Some(s) => db::find::<plans::Entity>(&state.db, m.shop.id, &s.plan_id).await?.map(|p| p.title),
            None => None,
        };
        scope.push(Scope {
            key: "subscription",
            id: subscription.to_string(),
            label: m.t("Only the payments of subscription"),
            name: plan.map_or_else(|| subscription.to_string(), |title| format!("{title} · {subscription}")),
            href: format!("/dashboard/subscriptions/{subscription}"),
        });
    }
    Ok(scope)
}

/// The shop's products and plans by name, for the filters (the latest 500 of each).
async fn choices(state: &AppState, m: &Merchant) -> Result<(Vec<(String, String)>, Vec<(String, String)>), AppError> {
    let page = DbPage { limit: 500, starting_after: None };
    let products = db::list::<products::Entity>(&state.db, m.shop.id, &page).await?;
    let plans = db::list::<plans::Entity>(&state.db, m.shop.id, &page).await?;
    let mut products: Vec<(String, String)> = products.rows.into_iter().map(|p| (p.id, p.name)).collect();
    let mut plans: Vec<(String, String)> = plans.rows.into_iter().map(|p| (p.id, p.title)).collect();
    products.sort_by_cached_key(|(_, name)| name.to_lowercase());
    plans.sort_by_cached_key(|(_, name)| name.to_lowercase());
    Ok((products, plans))
}

async fn list(State(state): State<AppState>, m: Merchant, RawQuery(query): RawQuery) -> Page {
    let asked = Asked::read(query, m.tz);
    let (listed, errors) = match &asked.search {
        Ok(search) => {
            let page = DbPage { limit: PER_PAGE, starting_after: asked.after.clone() };
            (db::payments::search(&state.db, m.shop.id, &page, search).await.map_err(AppError::from)?, None)
        }
        Err(errors) => (db::Listed { rows: Vec::new(), next_after: None }, Some(errors.clone())),
    };
    let pairs = asked.pairs();
    let (products, plans) = choices(&state, &m).await?;
    let mut form = FormView::filled(pairs.iter().map(|(k, v)| (*k, v.to_string())).collect());
    form.errors = errors.unwrap_or_default();
    form.words = m.words;
    let export = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(&pairs).finish();
    let page = ListPage {
        chrome: m.chrome("payments").await,
        statuses: PaymentStatus::WORDS,
        products,
        plans,
        scope: scope(&state, &m, &asked).await?,
        filtered: !pairs.is_empty(),
        export: format!("/dashboard/payments/export.csv?{export}"),
        payments: payment_rows(&state, &m, &listed.rows).await?,
        next: next_link("/dashboard/payments", &pairs, listed.next_after),
        form,
    };
    let status = if page.form.has_errors() { StatusCode::UNPROCESSABLE_ENTITY } else { StatusCode::OK };
    Ok(super::render(status, &page))
}

/// The columns of the payments export.
const EXPORT_COLUMNS: [&str; 19] = [
    "id",
    "created_at",
    "amount",
    "currency",
    "status",
    "test",
    "paid_for",
    "customer_email",
    "customer_name",
    "card_brand",
    "card_last4",
    "card_holder",
    "refunded",
    "disputed",
    "failure_code",
    "product_id",
    "plan_id",
    "subscription_id",
    "customer_id",
];

/// Payments an export reads at a time.
const EXPORT_PAGE: u64 = 1000;

/// Every payment a search finds, as CSV sent while it is read: page after page in the order
/// of the list (an index's order), so the first byte leaves at once and memory stays flat.
async fn export(State(state): State<AppState>, m: Merchant, RawQuery(query): RawQuery) -> Page {
    let asked = Asked::read(query, m.tz);
    let search = match asked.search {
        Ok(search) => search,
        Err(errors) => {
            let summary = FormView::sent(&PostedForm::default(), errors, m.words).message();
            return Ok(super::error_page_in(m.words, StatusCode::UNPROCESSABLE_ENTITY, &summary));
        }
    };
    let filename = format!("payments-{}.csv", Utc::now().format("%Y%m%d"));
    let shop = m.shop.id;
    let read = move |after: Option<(chrono::DateTime<Utc>, i64)>| {
        let (state, search) = (state.clone(), search.clone());
        async move {
            let rows = db::payments::exported_after(&state.db, shop, &search, after, EXPORT_PAGE).await?;
            let named = Named::load(&state, shop, &rows).await?;
            let next = rows.last().map(|last| (last.created_at, last.seq)).filter(|_| rows.len() as u64 == EXPORT_PAGE);
            // Each page starts after the one before; one that did not would be sent forever.
            if let (Some(before), Some(next)) = (after, next)
                && next >= before
            {
                return Err(AppError::Internal("the payments export went back on itself".into()));
            }
            Ok(((rows, named), next))
        }
    };
    let write = |(rows, named): (Vec<db::payments::Exported>, Named)| {
        let mut csv = Csv::empty();
        for p in &rows {
            export_row(&mut csv, p, &named);
        }
        csv.take()
    };
    Ok(crate::web::csv::stream(&filename, Csv::new(&EXPORT_COLUMNS), crate::web::csv::pages(read, write)))
}

/// One payment's row of the export.
fn export_row(csv: &mut Csv, p: &db::payments::Exported, named: &Named) {
    let customer = named.customer(p).map(|(_, c)| c);
    let name = customer.map(|c| c.name());
    csv.row(&[
        &p.id,
        &p.created_at.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
        &Money::new(p.amount, p.currency).major(),
        p.currency.code,
        p.status.as_str(),
        if p.test { "true" } else { "false" },
        named.paid_for_name(p).unwrap_or(""),
        customer.map_or("", |c| c.email.as_str()),
        name.as_deref().unwrap_or(""),
        &p.card_brand,
        &p.card_last4,
        &p.card_holder,
        &Money::new(p.refunded_amount, p.currency).major(),
        &Money::new(p.disputed_amount + p.dispute_fees, p.currency).major(),
        p.failure_code.as_deref().unwrap_or(""),
        p.product_id.as_deref().unwrap_or(""),
        p.plan_id.as_deref().unwrap_or(""),
        p.subscription_id.as_deref().unwrap_or(""),
        p.customer_id.as_deref().unwrap_or(""),
    ]);
}

#[derive(Template)]
#[template(path = "dashboard/payments/show.html")]
struct ShowPage {
    chrome: Chrome,
    p: payments::Model,
    amount: String,
    created: String,
    captured: Option<String>,
    voided: Option<String>,
    holdable: bool,
    refunded: String,
    /// What disputes took back of the payment, and their fees apart.
    disputed: String,
    /// The refund form, while something is left to refund.
    refund: Option<RefundForm>,
    refunds: Vec<RefundRow>,
    /// What it paid for and who paid, as the table row names them.
    row: PaymentRow,
}

/// The refund form of a payment page: the amount left, prefilled.
struct RefundForm {
    form: FormView,
    left: String,
    amount_label: String,
}

/// A refund of the payment.
struct RefundRow {
    id: String,
    amount: String,
    status: String,
    reason: String,
    failure: String,
    created: String,
}

async fn find(state: &AppState, m: &Merchant, id: &str) -> Result<payments::Model, AppError> {
    db::find::<payments::Entity>(&state.db, m.shop.id, id).await?.ok_or(AppError::NotFound("Payment"))
}

async fn show(State(state): State<AppState>, m: Merchant, Path(id): Path<String>) -> Page {
    let p = find(&state, &m, &id).await?;
    show_page(&state, &m, p, None).await
}

/// The payment's page; `refund_form` refills a refused refund form.
async fn show_page(state: &AppState, m: &Merchant, p: payments::Model, refund_form: Option<FormView>) -> Page {
    let refused = refund_form.as_ref().is_some_and(FormView::has_errors);
    let left = p.refundable().amount_to_refund(None).ok();
    let refund = left.map(|left| RefundForm {
        form: refund_form.unwrap_or_else(|| FormView::filled(vec![("amount", m.words.typed(left, p.currency))])),
        left: m.money(left, p.currency),
        amount_label: m.f("Amount to refund ({})", &[&p.currency]),
    });
    let refunds = db::refunds::of_payment(&state.db, &p.id).await?;
    let row = payment_rows(state, m, std::slice::from_ref(&p)).await?.pop().ok_or(AppError::NotFound("Payment"))?;
    let page = ShowPage {
        row,
        amount: m.money(p.amount, p.currency),
        created: local(p.created_at, m.tz),
        captured: p.captured_at.map(|t| local(t, m.tz)),
        voided: p.voided_at.map(|t| local(t, m.tz)),
        holdable: p.status == PaymentStatus::Authorized && p.settling.is_none(),
        refunded: m.money(p.refunded_amount, p.currency),
        disputed: match p.dispute_fees {
            0 => m.f("{} taken back", &[&m.money(p.disputed_amount, p.currency)]),
            fees => m.f(
                "{} taken back, and a dispute fee of {}",
                &[&m.money(p.disputed_amount, p.currency), &m.money(fees, p.currency)],
            ),
        },
        refund,
        refunds: refunds.iter().map(|r| refund_row(r, m)).collect(),
        chrome: m.chrome("payments").await,
        p,
    };
    if refused { Ok(super::render(axum::http::StatusCode::UNPROCESSABLE_ENTITY, &page)) } else { ok(&page) }
}

fn refund_row(r: &refunds::Model, m: &Merchant) -> RefundRow {
    RefundRow {
        id: r.id.clone(),
        amount: m.money(r.amount, r.currency),
        status: r.status.to_string(),
        reason: r.reason.clone().unwrap_or_default(),
        failure: m.words.t_data(r.failure_message.as_deref().unwrap_or_default()).to_string(),
        created: local(r.created_at, m.tz),
    }
}

async fn capture(State(state): State<AppState>, m: Merchant, Path(id): Path<String>, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    match crate::services::captures::capture(&state, m.shop.id, &id, Utc::now()).await {
        Ok(p) => m.flash(&m.f("Captured {}.", &[&m.money(p.amount, p.currency)])).await,
        Err(AppError::Conflict(_)) => m.flash(&settled_already(&find(&state, &m, &id).await?, &m)).await,
        Err(e) => return Err(e),
    }
    see_other(&format!("/dashboard/payments/{id}"))
}

/// What a payment's page says when a capture or void finds it settled already (by a second
/// click, or by another user a moment before).
fn settled_already(p: &payments::Model, m: &Merchant) -> String {
    if p.status == PaymentStatus::Authorized && p.settling.is_some() {
        return m.t("A capture or void of this payment is under way: look again in a moment.").into();
    }
    match p.status {
        PaymentStatus::Voided => m.t("This authorization was already voided: the funds are released.").into(),
        status if status.is_taken() => m.t("This payment was already captured.").into(),
        status => {
            m.f("This payment is {}: nothing is held to capture or void.", &[&m.words.t_in("payment", status.as_str())])
        }
    }
}

async fn void(State(state): State<AppState>, m: Merchant, Path(id): Path<String>, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let p = find(&state, &m, &id).await?;
    if p.status != PaymentStatus::Authorized || p.settling.is_some() {
        m.flash(&settled_already(&p, &m)).await;
        return see_other(&format!("/dashboard/payments/{id}"));
    }
    if form.get("confirm") != Some("yes") {
        let held = m.money(p.amount, p.currency);
        let page = super::ConfirmPage {
            chrome: m.chrome("payments").await,
            title: m.f("Void the authorization of {}?", &[&held]),
            lines: vec![
                m.f(
                    "The {} held on {} •••• {} is released to the customer.",
                    &[&held, &brand_name(&p.card_brand), &p.card_last4],
                ),
                m.t("You cannot capture it afterwards: to take the money, the customer has to pay again.").into(),
            ],
            action: format!("/dashboard/payments/{id}/void"),
            fields: Vec::new(),
            button: m.t("Void the authorization").into(),
            back: format!("/dashboard/payments/{id}"),
            back_label: k("Keep it"),
        };
        return ok(&page);
    }
    match crate::services::captures::void(&state, m.shop.id, &id, Utc::now()).await {
        Ok(_) => m.flash(m.t("The authorization was voided: the funds are released.")).await,
        Err(AppError::Conflict(_)) => m.flash(&settled_already(&find(&state, &m, &id).await?, &m)).await,
        Err(e) => return Err(e),
    }
    see_other(&format!("/dashboard/payments/{id}"))
}

#[derive(Template)]
#[template(path = "dashboard/payments/refund.html")]
struct ConfirmRefundPage {
    chrome: Chrome,
    id: String,
    card: String,
    amount: String,
    /// The amount as the form sends it again (major units).
    typed: String,
    reason: String,
    /// The confirmation's one-time id: the refund it makes is named after it, so sending
    /// the confirmation twice (a double click, a reload, a retry) makes one refund.
    once: String,
}

/// A refund form: checked and shown for confirmation first, made once confirmed.
async fn refund(State(state): State<AppState>, m: Merchant, Path(id): Path<String>, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let p = find(&state, &m, &id).await?;
    let mut body = form.to_json(&[], &[]);
    body.insert("currency".into(), p.currency.to_string().into());
    let amounts = minor_units(&mut body, &["amount"], m.words);
    let ask = match amounts.refuse(RefundAsk::read(&body)) {
        Ok(ask) => ask,
        Err(errors) => return show_page(&state, &m, p, Some(FormView::sent(&form, errors, m.words))).await,
    };
    let amount = match p.refundable().amount_to_refund(ask.amount).map_err(|refusal| refusal.explain()) {
        Ok(amount) => amount,
        Err(Err(errors)) => {
            let errors = amounts.as_money(errors);
            return show_page(&state, &m, p, Some(FormView::sent(&form, errors, m.words))).await;
        }
        // The payment changed since the form was shown (refunded in full, say): its page says so.
        Err(Ok(conflict)) => {
            m.flash(&m.words.rule(&conflict)).await;
            return see_other(&format!("/dashboard/payments/{id}"));
        }
    };
    let refund_id = once_id(crate::domain::ids::REFUND, m.shop.id, &id, form.get("once"));
    let (Some("yes"), Some(refund_id)) = (form.get("confirm"), refund_id) else {
        let page = ConfirmRefundPage {
            chrome: m.chrome("payments").await,
            card: p.card_label(),
            amount: m.money(amount, p.currency),
            typed: m.words.typed(amount, p.currency),
            reason: ask.reason.unwrap_or_default(),
            once: new_once(),
            id,
        };
        return ok(&page);
    };
    let ask = RefundAsk { amount: Some(amount), id: Some(refund_id), ..ask };
    let refund = crate::services::refunds::refund(&state, m.shop.id, &id, ask, Utc::now()).await?;
    let refunded = m.money(refund.amount, refund.currency);
    match refund.failure_message {
        None => m.flash(&m.f("Refunded {}.", &[&refunded])).await,
        Some(why) => m.flash(&m.f("The refund of {} failed: {}", &[&refunded, &m.words.t_data(&why)])).await,
    }
    see_other(&format!("/dashboard/payments/{id}"))
}
