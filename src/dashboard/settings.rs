//! Shop settings: name, shop URL, display time zone; the API credentials with key
//! rotation; and the shop's users.

use askama::Template;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use chrono::Utc;

use super::form::{FormView, PostedForm};
use super::{Chrome, Merchant, Page, local, ok, render, see_other};
use crate::db::{self, users::NewUserError};
use crate::domain::Errors;
use crate::domain::account::{ShopSettings, email, new_password};
use crate::domain::input::Reader;
use crate::error::AppError;
use crate::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/dashboard/settings", get(page).post(save))
        .route("/dashboard/settings/rotate", post(rotate))
        .route("/dashboard/settings/key", get(new_key))
        .route("/dashboard/settings/notifications", post(notifications))
        .route("/dashboard/settings/users", post(add_user))
}

#[derive(Template)]
#[template(path = "dashboard/settings.html")]
struct SettingsPage {
    chrome: Chrome,
    shop_id: i64,
    system_zone: String,
    /// Every IANA zone, for the searchable list.
    zones: Vec<&'static str>,
    form: FormView,
    user_form: FormView,
    rotate_error: bool,
    users: Vec<(String, String)>,
    /// The public key that checks the shop's notifications (PEM, and bare base64).
    public_key: String,
    public_key_base64: String,
    notify_form: FormView,
    /// Whether notifications carry Basic auth (the secret was made since paydesk keeps it).
    notifications_authenticated: bool,
}

impl SettingsPage {
    async fn new(
        state: &AppState,
        m: &Merchant,
        form: Option<FormView>,
        user_form: FormView,
    ) -> Result<Self, super::AppError> {
        let users = db::users::of_shop(&state.db, m.shop.id).await?;
        let keys = crate::keys::key_pair(state, &m.shop).await?;
        Ok(SettingsPage {
            public_key_base64: keys.public_base64(),
            public_key: keys.public_pem,
            notify_form: FormView::filled(vec![(
                "notification_url",
                m.shop.notification_url.clone().unwrap_or_default(),
            )]),
            notifications_authenticated: crate::keys::api_secret(&state.vault, &m.shop).is_some(),
            chrome: m.chrome("settings").await,
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
            user_form,
            rotate_error: false,
            users: users.iter().map(|u| (u.email.clone(), local(u.created_at, m.tz))).collect(),
        })
    }
}

async fn page(State(state): State<AppState>, m: Merchant) -> Page {
    ok(&SettingsPage::new(&state, &m, None, FormView::default()).await?)
}

async fn save(State(state): State<AppState>, m: Merchant, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    match ShopSettings::parse(&form.to_json(&[], &[])) {
        Ok(settings) => {
            crate::shops::update_settings(&state, (*m.shop).clone(), &settings, Utc::now()).await?;
            m.flash("Settings saved.").await;
            see_other("/dashboard/settings")
        }
        Err(errors) => {
            let page = SettingsPage::new(&state, &m, Some(FormView::sent(&form, errors)), FormView::default()).await?;
            Ok(render(StatusCode::UNPROCESSABLE_ENTITY, &page))
        }
    }
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
        let mut page = SettingsPage::new(&state, &m, None, FormView::default()).await?;
        page.rotate_error = true;
        return Ok(render(StatusCode::UNPROCESSABLE_ENTITY, &page));
    }
    let Some(secret_key) = crate::keys::rotate_secret(&state, (*m.shop).clone(), Utc::now()).await? else {
        let message = "The key was rotated by another request a moment ago; its new key is the one that works.";
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
        m.flash("A new secret key is shown only once. Rotate the key again if you did not copy it.").await;
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
    if !errors.is_empty() {
        let mut page = SettingsPage::new(&state, &m, None, FormView::default()).await?;
        page.notify_form = FormView::sent(&form, errors);
        return Ok(render(StatusCode::UNPROCESSABLE_ENTITY, &page));
    }
    crate::shops::set_notification_url(&state, m.shop.id, url, Utc::now()).await?;
    m.flash("Notification settings saved.").await;
    see_other("/dashboard/settings")
}

/// Another user of the shop, with a first password the merchant hands over.
async fn add_user(State(state): State<AppState>, m: Merchant, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let body = form.to_json(&[], &[]);
    let r = Reader::new(&body);
    let mut errors = Errors::default();
    let address = email(&r, "email", &mut errors);
    let password = new_password(&r, "password", &mut errors);
    if let (Some(address), Some(password)) = (&address, password)
        && errors.is_empty()
    {
        let hash = crate::passwords::hash(password).await?;
        match db::users::insert(&state.db, m.shop.id, address, hash, Utc::now()).await {
            Ok(_) => {
                m.flash(&format!("{address} can now log in to this shop.")).await;
                return see_other("/dashboard/settings");
            }
            Err(NewUserError::EmailTaken) => errors.add("email", "has already been taken"),
            Err(NewUserError::Db(e)) => return Err(e.into()),
        }
    }
    let page = SettingsPage::new(&state, &m, None, FormView::sent(&form, errors)).await?;
    Ok(render(StatusCode::UNPROCESSABLE_ENTITY, &page))
}
