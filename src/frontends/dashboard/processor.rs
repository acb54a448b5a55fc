//! Settings → Payment processor: who moves the shop's money, where customers type their card,
//! the processor's accounts (secret keys never shown again, only their last characters), and
//! a check that the processor takes them.

use askama::Template;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use chrono::Utc;
use serde_json::{Map, Value};

use super::form::{FormView, PostedForm, nest};
use super::{Chrome, Merchant, Page, k, ok, render, see_other};
use crate::db::entities::shop_processors::Model;
use crate::domain::processor::{Mode, ProcessorChange, ProcessorKind};
use crate::external::acquirer::Check;
use crate::services::processors;
use crate::web::error::AppError;
use crate::web::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/dashboard/settings/processor", get(page).post(save))
        .route("/dashboard/settings/processor/check", post(check))
}

/// The account fields of a mode, as the form names them.
const ACCOUNT_FIELDS: [&str; 4] = ["shop_id", "secret_key", "public_key", "webhook_secret"];

#[derive(Template)]
#[template(path = "dashboard/processor.html")]
struct ProcessorPage {
    chrome: Chrome,
    form: FormView,
    accounts: [AccountForm; 2],
    /// Whether a check can run (a processor with an account).
    checkable: bool,
    /// Where bePaid's back office is to send its notifications.
    notification_url: String,
    /// Whether the shop chose Stripe: its webhook endpoint is shown instead.
    stripe: bool,
    /// The webhook endpoint to add in Stripe's dashboard, and the events it is to send.
    stripe_url: String,
    stripe_events: String,
}

/// A mode's fieldset: its legend, its fields' names, and what is said of its secret key.
struct AccountForm {
    mode: &'static str,
    legend: &'static str,
    shop_id: String,
    secret_key: String,
    public_key: String,
    webhook_secret: String,
    remove: String,
    secret_hint: String,
    webhook_hint: String,
    /// Whether the account is stored (it can be removed).
    stored: bool,
}

impl ProcessorPage {
    async fn new(state: &AppState, m: &Merchant, row: &Model, form: Option<FormView>) -> ProcessorPage {
        let account = |mode: Mode, legend: &'static str| {
            let hint = row.account(mode).secret_hint;
            let field = mode.field();
            AccountForm {
                mode: field,
                legend: m.t(legend),
                shop_id: format!("{field}.shop_id"),
                secret_key: format!("{field}.secret_key"),
                public_key: format!("{field}.public_key"),
                webhook_secret: format!("{field}.webhook_secret"),
                remove: format!("{field}.remove"),
                secret_hint: match hint {
                    Some(last) => m.words.f("Stored, ending in {}; leave empty to keep it.", &[&last]),
                    None => m.t("Shown once in the processor's back office; kept sealed here.").to_string(),
                },
                webhook_hint: match row.account(mode).webhook_hint {
                    Some(last) => m.words.f("Stored, ending in {}; leave empty to keep it.", &[&last]),
                    None => {
                        m.t("whsec_…, shown on the webhook endpoint's page in Stripe; kept sealed here.").to_string()
                    }
                },
                stored: hint.is_some(),
            }
        };
        ProcessorPage {
            chrome: m.chrome("settings").await,
            form: form.unwrap_or_else(|| filled(row)),
            accounts: [
                account(Mode::Test, k("Test account (test products and plans)")),
                account(Mode::Live, k("Live account (live products and plans)")),
            ],
            notification_url: crate::web::urls::bepaid_notifications(&state.config, m.shop.id),
            stripe: row.kind == ProcessorKind::Stripe,
            stripe_url: crate::web::urls::stripe_webhooks(&state.config, m.shop.id),
            stripe_events: crate::services::notifications::STRIPE_EVENTS.join(", "),
            checkable: row.kind != ProcessorKind::Simulated
                && [Mode::Test, Mode::Live].iter().any(|mode| row.account(*mode).secret_hint.is_some()),
        }
    }
}

/// The form as the stored settings fill it (never a secret key).
fn filled(row: &Model) -> FormView {
    let mut values = vec![
        ("kind", row.kind.to_string()),
        ("card_entry", row.card_entry.to_string()),
        ("gateway_url", row.gateway_url.clone()),
        ("checkout_url", row.checkout_url.clone()),
    ];
    for (mode, shop_id, public_key) in
        [(Mode::Test, "test.shop_id", "test.public_key"), (Mode::Live, "live.shop_id", "live.public_key")]
    {
        let a = row.account(mode);
        values.push((shop_id, a.shop_id.unwrap_or_default().to_string()));
        values.push((public_key, a.public_key.unwrap_or_default().to_string()));
    }
    FormView::filled(values)
}

async fn page(State(state): State<AppState>, m: Merchant) -> Page {
    let row = processors::find(&state, m.shop.id).await?;
    ok(&ProcessorPage::new(&state, &m, &row, None).await)
}

/// The API's change from the form: a mode's account is sent when one of its fields is
/// filled (an empty secret key keeps the stored one), removed when its box is ticked.
fn change_of(form: &PostedForm) -> Map<String, Value> {
    let mut flat = form.to_json(&[], &[]);
    flat.remove("csrf");
    for mode in [Mode::Test, Mode::Live] {
        let field = mode.field();
        if form.get(&format!("{field}.remove")) == Some("yes") {
            for name in ACCOUNT_FIELDS {
                flat.remove(&format!("{field}.{name}"));
            }
            flat.remove(&format!("{field}.remove"));
            flat.insert(field.to_string(), Value::Null);
        }
    }
    let mut body = nest(flat);
    for mode in [Mode::Test, Mode::Live] {
        let empty = body
            .get(mode.field())
            .and_then(Value::as_object)
            .is_some_and(|a| a.values().all(|v| v.as_str().is_some_and(|s| s.trim().is_empty())));
        if empty {
            body.remove(mode.field());
        }
    }
    body
}

async fn save(State(state): State<AppState>, m: Merchant, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let refused = |errors| async {
        let row = processors::find(&state, m.shop.id).await?;
        let mut view = FormView::sent(&form, errors, m.words);
        // A typed secret is never sent back to the browser.
        view.values.retain(|(name, _)| !name.ends_with(".secret_key") && !name.ends_with(".webhook_secret"));
        Ok(render(StatusCode::UNPROCESSABLE_ENTITY, &ProcessorPage::new(&state, &m, &row, Some(view)).await))
    };
    let change = match ProcessorChange::parse(&change_of(&form)) {
        Ok(change) => change,
        Err(errors) => return refused(errors).await,
    };
    match processors::change(&state, m.shop.id, change, &m.audit("processor.updated"), Utc::now()).await {
        Ok(_) => {
            m.flash(m.t("Payment processor saved.")).await;
            see_other("/dashboard/settings/processor")
        }
        Err(AppError::Validation(errors)) => refused(errors).await,
        Err(e) => Err(e),
    }
}

async fn check(State(state): State<AppState>, m: Merchant, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let row = processors::find(&state, m.shop.id).await?;
    let mut said = Vec::new();
    for (mode, result) in processors::check(&state, &row).await? {
        let account = match mode {
            Mode::Test => m.t("The test account"),
            Mode::Live => m.t("The live account"),
        };
        said.push(match result {
            Check::Works => m.words.f("{}: the processor takes it.", &[&account]),
            Check::Refused => m
                .words
                .f("{}: the processor refused the account's keys. Copy them again from its back office.", &[&account]),
            Check::Answered(status) => {
                m.words.f("{}: the processor answered HTTP {}. Check its URL.", &[&account, &status])
            }
            Check::Unreachable(why) => m.words.f("{}: the processor could not be reached ({}).", &[&account, &why]),
        });
    }
    if said.is_empty() {
        said.push(m.t("There is no account to check.").to_string());
    }
    m.flash(&said.join(" ")).await;
    see_other("/dashboard/settings/processor")
}

/// The processor's name on the settings page.
pub fn name(kind: ProcessorKind) -> &'static str {
    match kind {
        ProcessorKind::Bepaid => k("bePaid (BeGateway)"),
        ProcessorKind::Stripe => k("Stripe"),
        ProcessorKind::Simulated => k("Simulated (no money moves)"),
    }
}
