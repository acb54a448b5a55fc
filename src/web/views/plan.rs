//! The plan object (spec 2.2).

use serde::Serialize;
use utoipa::ToSchema;

use super::timestamp;
use crate::config::Config;
use crate::db::entities::plans;
use crate::domain::currency::Currency;
use crate::domain::vocab::{IntervalUnit, Language};
use crate::web::urls;

/// A plan as the API returns it.
#[derive(Serialize, ToSchema)]
#[schema(as = Plan)]
pub struct PlanView {
    id: String,
    title: String,
    currency: Currency,
    language: Language,
    plan: Schedule,
    trial: TrialView,
    number_payment_attempts: i32,
    test: bool,
    infinite: bool,
    billing_cycles: Option<i32>,
    prevent_payments_at_night: bool,
    pay_url: String,
    /// What its page asks for, the e-mail first.
    #[schema(value_type = Vec<crate::domain::vocab::VisibleField>)]
    visible_fields: Vec<&'static str>,
    /// The shop's rate its charges are taxed at (`txr_…`); `null`: untaxed.
    tax_rate_id: Option<String>,
    tax_behavior: crate::domain::tax::TaxBehavior,
    shop_id: i64,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    created_at: String,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    updated_at: String,
    /// When the merchant archived it (its link then takes no payments); null while it is not.
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    archived_at: Option<String>,
}

#[derive(Serialize, ToSchema)]
#[schema(as = PlanTerms)]
struct Schedule {
    amount: i64,
    interval: i32,
    interval_unit: IntervalUnit,
}

/// The trial section: always an object, with nulls when the plan has no trial.
#[derive(Serialize, ToSchema)]
#[schema(as = PlanTrialTerms)]
struct TrialView {
    amount: Option<i64>,
    interval: Option<i32>,
    interval_unit: Option<IntervalUnit>,
    as_first_payment: bool,
}

impl PlanView {
    /// The API's view of a stored plan.
    pub fn new(p: &plans::Model, config: &Config) -> Self {
        let f = p.fields();
        PlanView {
            id: p.id.clone(),
            title: f.title,
            currency: f.currency,
            language: f.language,
            plan: Schedule { amount: f.amount, interval: f.interval, interval_unit: f.interval_unit },
            trial: TrialView {
                amount: f.trial.map(|t| t.amount),
                interval: f.trial.map(|t| t.interval),
                interval_unit: f.trial.map(|t| t.interval_unit),
                as_first_payment: f.trial_as_first_payment,
            },
            number_payment_attempts: f.number_payment_attempts,
            test: f.test,
            infinite: f.infinite,
            billing_cycles: f.billing_cycles,
            prevent_payments_at_night: f.prevent_payments_at_night,
            pay_url: urls::plan_pay(config, &p.id),
            visible_fields: f.visible_fields.iter().map(|v| v.as_str()).collect(),
            tax_rate_id: f.taxing.rate_id,
            tax_behavior: f.taxing.behavior,
            shop_id: p.shop_id,
            created_at: timestamp(p.created_at),
            updated_at: timestamp(p.updated_at),
            archived_at: p.archived_at.map(timestamp),
        }
    }
}
