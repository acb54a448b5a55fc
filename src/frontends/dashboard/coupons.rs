//! Coupons in the dashboard: the list with what each takes off and how often it was
//! redeemed, a form to make one (the API's rules and messages), and archiving.

use askama::Template;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use chrono::Utc;

use super::form::{FormView, PostedForm, minor_units};
use super::{Chrome, Merchant, Page, local, ok, render, see_other};
use crate::db::entities::{coupons, plans};
use crate::db::{self, Page as DbPage};
use crate::domain::Errors;
use crate::domain::coupon::{CouponDuration, CouponFields, Off};
use crate::web::error::AppError;
use crate::web::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/dashboard/coupons", get(list).post(create))
        .route("/dashboard/coupons/{id}/archive", post(archive))
}

/// A coupon in the table.
struct Row {
    id: String,
    code: String,
    off: String,
    duration: String,
    redeemed: String,
    until: String,
    test: bool,
    archived: bool,
}

#[derive(Template)]
#[template(path = "dashboard/coupons.html")]
struct ListPage {
    chrome: Chrome,
    rows: Vec<Row>,
    form: FormView,
    durations: &'static [&'static str],
    /// The shop's plans a coupon may be limited to: (id, title).
    plans: Vec<(String, String)>,
}

fn row(c: &coupons::Model, m: &Merchant) -> Row {
    let off = match c.off() {
        Off::Percent(p) => format!("{p}%"),
        Off::Amount(amount, currency) => m.money(amount, currency),
    };
    let duration = match (c.duration, c.duration_in_periods) {
        (CouponDuration::Repeating, Some(n)) => m.f("{} payments", &[&n]),
        (d, _) => m
            .t(match d {
                CouponDuration::Once => "once",
                _ => "forever",
            })
            .to_string(),
    };
    let redeemed = match c.max_redemptions {
        Some(max) => format!("{} / {max}", c.times_redeemed),
        None => c.times_redeemed.to_string(),
    };
    Row {
        id: c.id.clone(),
        code: c.code.clone(),
        off,
        duration,
        redeemed,
        until: c.redeem_by.map(|t| local(t, m.tz)).unwrap_or_default(),
        test: c.test,
        archived: c.archived_at.is_some(),
    }
}

async fn list_page(state: &AppState, m: &Merchant, form: FormView) -> Result<ListPage, AppError> {
    let page = DbPage { limit: 500, starting_after: None };
    let listed = db::list::<coupons::Entity>(&state.db, m.shop.id, &page).await?;
    let plans = db::search_archived::<plans::Entity>(&state.db, m.shop.id, &page, "", false).await?;
    Ok(ListPage {
        chrome: m.chrome("coupons").await,
        rows: listed.rows.iter().map(|c| row(c, m)).collect(),
        form,
        durations: CouponDuration::WORDS,
        plans: plans.rows.iter().map(|p| (p.id.clone(), p.title.clone())).collect(),
    })
}

async fn list(State(state): State<AppState>, m: Merchant) -> Page {
    let form = FormView::filled(vec![("duration", "once".into()), ("kind", "percent".into())]);
    ok(&list_page(&state, &m, form).await?)
}

/// Makes a coupon from the form: a percent, or an amount in the currency typed (in its units,
/// `5.00`); the redeem-by day ends at midnight in the shop's zone.
async fn create(State(state): State<AppState>, m: Merchant, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let mut body = form.to_json(&["test"], &["plans"]);
    match form.get("kind") {
        Some("amount") => body.remove("percent_off"),
        _ => {
            body.remove("currency");
            body.remove("amount_off")
        }
    };
    let typed = minor_units(&mut body, &["amount_off"], m.words);
    let mut errors = Errors::default();
    let redeem_by = match form.get("redeem_by").map(str::trim).filter(|d| !d.is_empty()) {
        None => None,
        Some(day) => match chrono::NaiveDate::parse_from_str(day, "%Y-%m-%d") {
            Ok(day) => day
                .succ_opt()
                .map(|next| crate::domain::billing::resolve_local(m.tz, next.and_time(chrono::NaiveTime::MIN))),
            Err(_) => {
                errors.add("redeem_by", "must be a date (YYYY-MM-DD)");
                None
            }
        },
    };
    let parsed = typed.refuse(CouponFields::parse(&body, redeem_by, Utc::now()));
    let created = match parsed {
        Ok(fields) if errors.is_empty() => {
            crate::services::coupons::create(&state, m.shop.id, &fields, Utc::now()).await
        }
        Ok(_) => Err(AppError::Validation(errors)),
        Err(more) => {
            more.for_each(|field, message| errors.add(field, message));
            Err(AppError::Validation(errors))
        }
    };
    match created {
        Ok(coupon) => {
            m.flash(&m.f("Coupon {} made.", &[&coupon.code])).await;
            see_other("/dashboard/coupons")
        }
        Err(AppError::Validation(errors)) => {
            let page = list_page(&state, &m, FormView::sent(&form, errors, m.words)).await?;
            Ok(render(StatusCode::UNPROCESSABLE_ENTITY, &page))
        }
        Err(e) => Err(e),
    }
}

/// Archives a coupon: it takes no more redemptions; subscriptions keep their discount.
async fn archive(State(state): State<AppState>, m: Merchant, Path(id): Path<String>, form: PostedForm) -> Page {
    m.check(form.get("csrf"))?;
    let coupon = db::find::<coupons::Entity>(&state.db, m.shop.id, &id).await?.ok_or(AppError::NotFound("Coupon"))?;
    if crate::services::coupons::archive(&state, m.shop.id, &coupon.id).await? {
        m.flash(&m.f("Coupon {} archived: it takes no more redemptions.", &[&coupon.code])).await;
    }
    see_other("/dashboard/coupons")
}
