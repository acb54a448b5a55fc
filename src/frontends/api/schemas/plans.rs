//! Plans: what `POST /plans` accepts.

use super::*;

/// A new subscription plan (spec 2.2).
#[derive(ToSchema)]
#[schema(example = json!({
    "title": "Gold", "currency": "EUR",
    "plan": {"amount": 990, "interval": 1, "interval_unit": "month"},
    "trial": {"amount": 100, "interval": 7, "interval_unit": "day", "as_first_payment": false},
    "number_payment_attempts": 3, "prevent_payments_at_night": false,
    "infinite": false, "billing_cycles": 12
}))]
pub struct PlanCreate {
    /// The plan's name: 1 to 255 characters, not only spaces.
    #[schema(
        max_length = 255,
        pattern = r"^[^\x00]*[^\x00\t\n\v\f\r \x85\xA0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000][^\x00]*$"
    )]
    title: String,
    /// The currency of every charge.
    currency: Currency,
    /// The language of the plan's pay page.
    #[schema(default = "en")]
    language: Option<Language>,
    /// A test plan: its subscriptions are charged on test cards only and may use test clocks.
    #[schema(default = false)]
    test: Option<FlexibleBoolean>,
    /// How much and how often.
    plan: PlanSchedule,
    /// An optional trial before the plan's own charges.
    trial: Option<PlanTrial>,
    /// True (the default) bills until cancelled; false stops after `billing_cycles` charges.
    #[schema(default = true)]
    infinite: Option<FlexibleBoolean>,
    /// How many charges a finite plan makes (1 to 100,000). Required when `infinite` is false;
    /// ignored (not even checked) otherwise.
    #[schema(value_type = Option<serde_json::Value>)]
    billing_cycles: Option<BillingCycleCount>,
    /// Failed attempts of one charge before the subscription fails (1 to 100).
    #[schema(default = 3)]
    number_payment_attempts: Option<PaymentAttemptCount>,
    /// Moves charges that fall due at night to the morning.
    #[schema(default = false)]
    prevent_payments_at_night: Option<FlexibleBoolean>,
    /// Customer data the pay page asks for besides the e-mail it always asks for.
    /// Duplicates are ignored; `null` reads as none.
    #[schema(default = json!(["email"]))]
    visible_fields: Option<Vec<VisibleField>>,
    /// The shop's tax rate (`txr_…`) its charges are taxed at; `null` or empty: untaxed. An
    /// archived rate is refused.
    #[schema(max_length = 100)]
    tax_rate_id: Option<String>,
    /// Whether the price holds the tax (`inclusive`, what the subscriber pays; fixed once the plan is made) or has it added
    /// (`exclusive`).
    #[schema(default = "inclusive")]
    tax_behavior: Option<TaxBehavior>,
    // `billing_cycles` when `infinite` is false.
    #[serde(flatten)]
    #[schema(schema_with = plan_create_rules)]
    rules: Value,
}

/// The plan's own charges: `amount` every `interval` `interval_unit`s. A missing `plan` names
/// each of its fields as missing.
#[derive(ToSchema)]
pub struct PlanSchedule {
    /// Each charge, in minimal units of the plan's currency.
    amount: MinorAmount,
    /// How many `interval_unit`s between charges (1 to 1000).
    interval: IntervalCount,
    /// The unit of `interval`.
    interval_unit: IntervalUnit,
}

/// A trial period: one charge of `amount`, then the plan's charges start `interval`
/// `interval_unit`s later. `amount` and `interval` come together or not at all; without them
/// there is no trial (`as_first_payment` is still stored).
#[derive(ToSchema)]
pub struct PlanTrial {
    /// The trial's charge in minimal units; 0 for a free trial.
    amount: Option<TrialAmount>,
    /// How many `interval_unit`s the trial lasts (1 to 1000).
    interval: Option<IntervalCount>,
    /// The unit of `interval`; defaults to the plan's `interval_unit`.
    interval_unit: Option<IntervalUnit>,
    /// When true the trial charge counts as the first payment: a failed charge after the trial
    /// is retried as any other. When false a failed charge after the trial is not retried.
    #[schema(default = false)]
    as_first_payment: Option<FlexibleBoolean>,
    // `amount` and `interval` together.
    #[serde(flatten)]
    #[schema(schema_with = trial_rules)]
    rules: Value,
}

/// PlanCreate: `billing_cycles` is required when `infinite` is false.
fn plan_create_rules() -> OneOfBuilder {
    OneOfBuilder::new()
        .item(
            ObjectBuilder::new()
                .title(Some("Billed until cancelled"))
                .property("infinite", values([json!(true), json!("true"), Value::Null])),
        )
        .item(
            ObjectBuilder::new()
                .title(Some("A fixed number of charges"))
                .property("infinite", values([json!(false), json!("false")]))
                .required("infinite")
                .property("billing_cycles", <BillingCycleCount as PartialSchema>::schema())
                .required("billing_cycles"),
        )
        .description(Some("`billing_cycles` is required when `infinite` is false."))
}

/// PlanTrial: `amount` and `interval` together or not at all.
fn trial_rules() -> OneOfBuilder {
    OneOfBuilder::new()
        .item(
            ObjectBuilder::new()
                .title(Some("A trial"))
                .property("amount", given_number())
                .required("amount")
                .property("interval", given_number())
                .required("interval"),
        )
        .item(ObjectBuilder::new().title(Some("No trial")).property("amount", absent()).property("interval", absent()))
        .description(Some("`amount` and `interval` are sent together or not at all."))
}

/// A plan's change: its title, its page's language and fields, its tax rate; what is not
/// sent stays.
#[derive(ToSchema)]
#[schema(example = json!({"title": "Gold (yearly)", "language": "ru"}))]
pub struct PlanUpdate {
    /// The plan's name: 1 to 255 characters, not only spaces.
    #[schema(
        max_length = 255,
        pattern = r"^[^\x00]*[^\x00\t\n\v\f\r \x85\xA0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000][^\x00]*$"
    )]
    title: Option<String>,
    /// The language of the plan's pay page.
    language: Option<Language>,
    /// Customer data the pay page asks for besides the e-mail.
    visible_fields: Option<Vec<VisibleField>>,
    /// The shop's tax rate (`txr_…`) the plan's charges are taxed at from now on; `null` or
    /// empty: untaxed.
    #[schema(max_length = 100)]
    tax_rate_id: Option<String>,
}
