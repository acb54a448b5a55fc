//! Shop settings: name, shop URL, display time zone; the API credentials with key
//! rotation; where notifications go. The shop's users have their own page (`team`).

use crate::db::shops::DisputeChoice;
use askama::Template;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use chrono::Utc;

use super::form::{FormView, PostedForm};
use super::{Chrome, Merchant, Page, Words, ok, render, see_other};
use crate::db;
use crate::domain::Errors;
use crate::domain::account::ShopSettings;
use crate::domain::input::Reader;
use crate::web::error::AppError;
use crate::web::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/dashboard/settings", get(page).post(save))
        .route("/dashboard/settings/language", post(language))
        .route("/dashboard/settings/rotate", post(rotate))
        .route("/dashboard/settings/key", get(new_key))
        .route("/dashboard/settings/notifications", post(notifications))
        .route("/dashboard/settings/disputes", post(disputes))
}

#[derive(Template)]
#[template(path = "dashboard/settings.html")]
struct SettingsPage {
    chrome: Chrome,
    /// The dashboard's languages, each in its own words.
    languages: [(Words, &'static str); 2],
    shop_id: i64,
    system_zone: String,
    /// Every IANA zone, for the searchable list.
    zones: Vec<&'static str>,
    form: FormView,
    rotate_error: bool,
    /// Whether the shop requires two-step login of every user.
    two_step_required: bool,
    /// Minutes the shop's sessions live unused, and the choices.
    idle_minutes: i32,
    idle_choices: Vec<(i32, String)>,
    /// The public key that checks the shop's notifications (PEM, and bare base64).
    public_key: String,
    public_key_base64: String,
    notify_form: FormView,
    /// Whether notifications carry Basic auth (the secret was made since paydesk keeps it).
    notifications_authenticated: bool,
    /// The payment processor's name (a key of the dashboard's words).
    processor: &'static str,
    /// What disputes and fraud warnings do (checkboxes).
    disputes_form: FormView,
}

impl SettingsPage {
    async fn new(state: &AppState, m: &Merchant, form: Option<FormView>) -> Result<Self, super::AppError> {
        let keys = crate::services::keys::key_pair(state, &m.shop).await?;
        let processor = crate::services::processors::find(state, m.shop.id).await?;
        let chrome = m.chrome("settings").await;
        Ok(SettingsPage {
            idle_minutes: m.shop.session_idle_minutes,
            idle_choices: super::sessions::idle_choices(&chrome),
            chrome,
            processor: super::processor::name(processor.kind),
            public_key_base64: keys.public_base64(),
            public_key: keys.public_pem,
            notify_form: FormView::filled(vec![(
                "notification_url",
                m.shop.notification_url.clone().unwrap_or_default(),
            )]),
            notifications_authenticated: crate::services::keys::api_secret(&state.vault, &m.shop).is_some(),
            languages: Words::ALL,
            shop_id: m.shop.id,
            system_zone: state.config.timezone.to_string(),
            zones: chrono_tz::TZ_VARIANTS.iter().map(|z| z.name()).collect(),
            form: form.unwrap_or_else(|| {
                FormView::filled(vec![
                    ("name", m.shop.name.clone()),
                    ("url", m.shop.url.clone().unwrap_or_default()),
                    ("timezone", m.shop.timezone.clone().unwrap_or_default()),
                ])
            }),
            rotate_error: false,
            two_step_required: m.shop.two_step_required,
            disputes_form: FormView::filled(
                DisputeChoice::ALL.into_iter().map(|c| (c.field(), c.of(&m.shop).to_string())).collect(),
            ),
        })
    }
}

async fn page(State(state): State<AppState>, m: Merchant) -> Page {
    ok(&SettingsPage::new(&state, &m, None).await?)
}

async fn save(State(state): State<AppState>, m: Merchant, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    match ShopSettings::parse(&form.to_json(&[], &[])) {
        Ok(settings) => {
            let audit = m.audit("shop.updated");
            crate::services::shops::update_settings(&state, m.shop.id, &settings, &audit, Utc::now()).await?;
            m.flash(m.t("Settings saved.")).await;
            see_other("/dashboard/settings")
        }
        Err(errors) => {
            let page = SettingsPage::new(&state, &m, Some(FormView::sent(&form, errors, m.words))).await?;
            Ok(render(StatusCode::UNPROCESSABLE_ENTITY, &page))
        }
    }
}

/// Sets the language the user reads the dashboard in (and remembers it in this browser).
async fn language(State(state): State<AppState>, m: Merchant, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let code = form.get("language").unwrap_or("");
    if !Words::known(code) {
        return Err(AppError::BadRequest(m.t("Choose one of the languages listed.").to_string()));
    }
    let words = Words::of(code);
    db::users::set_language(&state.db, &m.user.id, words.stored(), Utc::now()).await?;
    m.flash(words.t("From now on the dashboard speaks English.")).await;
    Ok(super::merchant::signed_in("/dashboard/settings", words))
}

#[derive(Template)]
#[template(path = "dashboard/secret.html")]
struct SecretPage {
    chrome: Chrome,
    shop_id: i64,
    secret_key: String,
}

/// A new secret key, once the merchant confirmed that the old one stops working.
async fn rotate(State(state): State<AppState>, m: Merchant, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    if form.get("confirm") != Some("yes") {
        let mut page = SettingsPage::new(&state, &m, None).await?;
        page.rotate_error = true;
        return Ok(render(StatusCode::UNPROCESSABLE_ENTITY, &page));
    }
    let Some(secret_key) =
        crate::services::keys::rotate_secret(&state, (*m.shop).clone(), &m.audit("api_key.rotated"), Utc::now())
            .await?
    else {
        let message = m.t("The key was rotated by another request a moment ago; its new key is the one that works.");
        return Err(AppError::Conflict(message.into()));
    };
    tracing::info!(shop_id = m.shop.id, "secret key rotated");
    // Post/redirect/get: the new key waits in the session, sealed, for the one page that
    // shows it; reloading that page never rotates again.
    let sealed = state.vault.seal(secret_key.as_bytes(), &new_key_context(&m));
    m.session.insert(NEW_KEY, sealed).await.map_err(|e| AppError::Internal(e.to_string()))?;
    see_other("/dashboard/settings/key")
}

/// The session's slot for a new secret key until its page shows it.
const NEW_KEY: &str = "new_secret_key";

fn new_key_context(m: &Merchant) -> String {
    format!("dashboard-new-key:{}:{}", m.shop.id, m.user.id)
}

/// The new secret key, once: the page after a rotation.
async fn new_key(State(state): State<AppState>, m: Merchant) -> Page {
    let sealed: Option<String> = m.session.remove(NEW_KEY).await.ok().flatten();
    let Some(secret_key) = sealed.and_then(|s| state.vault.open_text(&s, &new_key_context(&m)).ok()) else {
        m.flash(m.t("A new secret key is shown only once. Rotate the key again if you did not copy it.")).await;
        return see_other("/dashboard/settings");
    };
    ok(&SecretPage { chrome: m.chrome("settings").await, shop_id: m.shop.id, secret_key })
}

/// Where bePaid notifications go when a product or subscription names no URL.
async fn notifications(State(state): State<AppState>, m: Merchant, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let body = form.to_json(&[], &[]);
    let mut errors = Errors::default();
    let url = crate::domain::product::read_url(&Reader::new(&body), "notification_url", &mut errors);
    let allow_private = state.config.webhooks_allow_private;
    if let Err(refused) = crate::domain::webhook::public_url(url.as_deref(), "notification_url", allow_private) {
        refused.for_each(|field, message| errors.add(field, message));
    }
    if !errors.is_empty() {
        let mut page = SettingsPage::new(&state, &m, None).await?;
        page.notify_form = FormView::sent(&form, errors, m.words);
        return Ok(render(StatusCode::UNPROCESSABLE_ENTITY, &page));
    }
    let audit = m.audit("shop.updated");
    crate::services::shops::set_notification_url(&state, m.shop.id, url, &audit, Utc::now()).await?;
    m.flash(m.t("Notification settings saved.")).await;
    see_other("/dashboard/settings")
}

/// What disputes and early fraud warnings do: each choice written only if it changed.
async fn disputes(State(state): State<AppState>, m: Merchant, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    for choice in DisputeChoice::ALL {
        let value = form.get(choice.field()) == Some("true");
        if value != choice.of(&m.shop) {
            let audit = m.audit("shop.updated");
            let write = crate::db::shops::set_dispute_choice(&state.db, m.shop.id, choice, value, &audit, Utc::now());
            crate::services::shops::changing(&state, m.shop.id, write).await?;
        }
    }
    m.flash(m.t("Dispute settings saved.")).await;
    see_other("/dashboard/settings")
}
