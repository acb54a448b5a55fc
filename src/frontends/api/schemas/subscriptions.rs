//! Subscriptions: what `POST /subscriptions`, cancelling, a test card's outcome and `GET /subscriptions` accept.

use super::customers::CustomerCreate;
use super::*;
use crate::domain::billing::ResumeBilling;

/// A new subscription: a plan (`plan.id` or `plan_id`), a customer (inline `customer`, an
/// existing one as `customer.id`, or `customer_id`) and optionally a card. Without a card the
/// subscription waits in `redirecting` until the customer enters one at its `redirect_url`.
/// With a card the first charge is made at once. Unknown plan, customer or test clock ids are
/// refused with 422.
#[derive(ToSchema)]
#[schema(example = json!({
    "plan": {"id": "pln_5b1e0c4d9a7f3e21"},
    "customer": {"email": "ann@example.com", "ip": "203.0.113.9", "first_name": "Ann"},
    "card": {"number": "4200000000000000", "exp_month": 12, "exp_year": 2030, "cvc": "123", "holder": "Ann Lee"},
    "return_url": "https://books.example/thanks", "tracking_id": "order-42"
}))]
pub struct SubscriptionCreate {
    /// The plan. When sent (not `null`), `plan_id` is ignored.
    plan: Option<SubscriptionPlanRef>,
    /// The plan's id, when `plan` is not sent.
    #[schema(max_length = 64, pattern = r"^[A-Za-z0-9_]{1,64}$", example = "pln_5b1e0c4d9a7f3e21")]
    plan_id: Option<String>,
    /// The customer: `{"id": "cst_…"}` for an existing one, or a new customer's fields. When
    /// sent (not `null`), `customer_id` is ignored (but still checked).
    customer: Option<SubscriptionCustomer>,
    /// An existing customer's id, when `customer` is not sent.
    #[schema(max_length = 64, pattern = r"^[A-Za-z0-9_]{1,64}$", example = "cst_1a2b3c4d5e6f7a8b")]
    customer_id: Option<String>,
    /// The card to charge now and on every renewal.
    card: Option<SubscriptionCard>,
    /// Where the customer goes after entering a card on the hosted page.
    #[schema(
        max_length = 2048,
        pattern = r"^$|^https?://([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z]([A-Za-z0-9-]*[A-Za-z0-9])?(:[0-9]{1,4})?([/?#][^\x00]*)?$"
    )]
    return_url: Option<String>,
    /// Where bePaid-style notifications of this subscription go (else the shop's).
    #[schema(
        max_length = 2048,
        pattern = r"^$|^https?://([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?\.)*[A-Za-z]([A-Za-z0-9-]*[A-Za-z0-9])?(:[0-9]{1,4})?([/?#][^\x00]*)?$"
    )]
    notification_url: Option<String>,
    /// The merchant's own reference, returned with the subscription: text, or a whole number
    /// (kept as its digits).
    #[schema(schema_with = merchant_reference)]
    tracking_id: Option<String>,
    /// Any JSON object, kept and returned as sent. No key or text in it may contain NUL.
    additional_data: Option<HashMap<String, Value>>,
    /// A test clock (`clk_…`) to run the subscription on: test plans only.
    #[schema(max_length = 64, pattern = r"^[A-Za-z0-9_]{1,64}$", example = "clk_0a1b2c3d4e5f6a7b")]
    test_clock: Option<String>,
    // One of `plan`/`plan_id`, one of `customer`/`customer_id`.
    #[serde(flatten)]
    #[schema(schema_with = subscription_rules)]
    rules: Value,
}

/// A plan by id.
#[derive(ToSchema)]
pub struct SubscriptionPlanRef {
    /// The plan's id (`pln_…`).
    #[schema(max_length = 64, pattern = r"^[A-Za-z0-9_]{1,64}$", example = "pln_5b1e0c4d9a7f3e21")]
    id: String,
}

/// An existing customer by id. Any other field sent with `id` is ignored.
#[derive(ToSchema)]
pub struct CustomerRef {
    /// The customer's id (`cst_…`): a JSON string (an object whose `id` is not a string is
    /// read as a new customer).
    #[schema(max_length = 64, pattern = r"^[A-Za-z0-9_]{1,64}$", example = "cst_1a2b3c4d5e6f7a8b")]
    id: String,
}

/// A card as the customer would type it, checked before any charge (length, Luhn checksum,
/// expiry, CVC). In test mode only the documented test numbers are accepted
/// (`4200000000000000` succeeds); a live plan takes a card only with a real acquirer.
#[derive(ToSchema)]
pub struct SubscriptionCard {
    /// 12 to 19 digits passing the Luhn check (spaces and dashes are ignored), as text or a
    /// JSON integer.
    #[schema(schema_with = card_number)]
    number: String,
    /// Expiry month.
    exp_month: CardExpMonth,
    /// Expiry year.
    exp_year: CardExpYear,
    /// The 3 or 4 digits on the card, as text (a JSON integer loses leading zeros).
    #[schema(schema_with = card_code)]
    cvc: String,
    /// Another name for `cvc`, read when `cvc` is absent or blank.
    #[schema(schema_with = card_code)]
    verification_value: Option<String>,
    /// The name on the card: 1 to 100 characters, not only spaces.
    #[schema(
        max_length = 100,
        pattern = r"^[^\x00]*[^\x00\t\n\v\f\r \x85\xA0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000][^\x00]*$",
        example = "Ann Lee"
    )]
    holder: String,
}

/// Cancelling a subscription (the body may be empty). 409 when it has already ended.
#[derive(ToSchema)]
#[schema(example = json!({"cancel_reason": "The customer asked"}))]
pub struct SubscriptionCancel {
    /// Why, kept with the subscription.
    #[schema(max_length = 255, pattern = r"^[^\x00]*$")]
    cancel_reason: Option<String>,
}

/// A subscription's change: ending it with its paid period, or not.
#[derive(ToSchema)]
#[schema(example = json!({"cancel_at_period_end": true, "cancel_reason": "The customer asked"}))]
pub struct SubscriptionUpdate {
    /// True: it ends when its paid period (or trial) ends; false: it goes on.
    cancel_at_period_end: Option<FlexibleBoolean>,
    /// Why, kept with the subscription (with `cancel_at_period_end: true`).
    #[schema(max_length = 255, pattern = r"^[^\x00]*$")]
    cancel_reason: Option<String>,
}

/// Pausing a subscription (the body may be empty: paused now, until resumed). Nothing is
/// charged or retried while paused. 409 when it has ended, waits for its customer's card, is
/// set to end with its period, or a charge of it is in flight (try again in a moment).
#[derive(ToSchema)]
#[schema(example = json!({"at": "now", "resume_at": "2027-01-15T09:00:00Z", "resume_billing": "new_period"}))]
pub struct SubscriptionPause {
    /// `now` (default; a trial, a paid period or retries) or `period_end` (a trial or a paid
    /// period: it pauses when that ends, uncharged; `subscription.pause_requested`). Asked of a
    /// paused subscription, it only changes when and how it resumes.
    #[schema(value_type = Option<String>, example = "now", pattern = "^(now|period_end)$")]
    at: Option<String>,
    /// When it resumes by itself; after the subscription's current time (its clock's).
    /// Without it, it stays paused until resumed.
    resume_at: Option<TimeInput>,
    /// How it goes on when it resumes by itself (see the resume operation).
    resume_billing: Option<ResumeBilling>,
}

/// Resuming a paused subscription (the body may be empty).
#[derive(ToSchema)]
#[schema(example = json!({"billing": "new_period"}))]
pub struct SubscriptionResume {
    /// `new_period` (default): its periods start afresh now and the first is charged at once
    /// (08:00 with the night flag); the rest of a period paused in the middle is not credited.
    /// `continue`: its old schedule goes on: the next charge is the first period of it that
    /// starts at or after both now and the end of what was paid; periods that began while it
    /// was paused are never charged.
    billing: Option<ResumeBilling>,
}

/// Moving a subscription to another plan (its preview takes the same body).
#[derive(ToSchema)]
#[schema(example = json!({"plan": "pln_5b1e0c4d9a7f3e21", "at": "now"}))]
pub struct PlanChange {
    /// The plan's id (also `{"id": …}`, or `plan_id`): of the shop, the subscription's currency
    /// and mode, not archived.
    #[schema(min_length = 1, max_length = 255, example = "pln_5b1e0c4d9a7f3e21", pattern = r"^[^\x00]*\S[^\x00]*$")]
    plan: String,
    /// `now` (default: prorated and charged at once) or `period_end`.
    #[schema(value_type = Option<String>, example = "now", pattern = "^(now|period_end)$")]
    at: Option<String>,
    /// Asked now: the moment to prorate at (default now; within the current period, not in
    /// the future), as a preview gave it.
    proration_date: Option<TimeInput>,
}

/// Test mode: how the subscription's card behaves from `from` on. Only test subscriptions.
#[derive(ToSchema)]
#[schema(example = json!({"outcome": "declined", "from": "2026-12-01T00:00:00Z"}))]
pub struct TestCardOutcome {
    /// What every charge from `from` on does (until a later entry of the schedule).
    outcome: ChargeOutcome,
    /// From when; defaults to the subscription's current time (its test clock's, if it has
    /// one), and must not be before it. The same `from` again replaces that entry.
    from: Option<TimeInput>,
}

/// `GET /subscriptions`: each filter given narrows the list.
#[derive(serde::Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SubscriptionFilterParams {
    /// Page size, 1 to 1000.
    #[param(minimum = 1, maximum = 1000, default = 100)]
    limit: Option<u64>,
    /// The last id of the previous page (an id of this list, else 404); empty means the first.
    #[param(max_length = 64, pattern = r"^[A-Za-z0-9_]{0,64}$")]
    starting_after: Option<String>,
    /// Subscriptions in this state.
    #[param(value_type = Option<SubscriptionState>, inline)]
    state: Option<String>,
    /// Subscriptions to this plan (`pln_…`).
    plan: Option<String>,
    /// Same as `plan`.
    plan_id: Option<String>,
    /// Subscriptions of this customer (`cst_…`).
    customer: Option<String>,
    /// Same as `customer`.
    customer_id: Option<String>,
}

/// The `customer` of a new subscription: an existing customer by id, or a new one. An object
/// whose `id` is a string is an existing customer; any other object is a new one.
pub struct SubscriptionCustomer;

impl PartialSchema for SubscriptionCustomer {
    fn schema() -> RefOr<Schema> {
        // anyOf: an object with a string `id` and valid customer fields matches both (it is
        // read as the existing customer).
        AnyOfBuilder::new()
            .item(Ref::from_schema_name(CustomerRef::name()))
            .item(Ref::from_schema_name(CustomerCreate::name()))
            .description(Some(
                "`{\"id\": \"cst_…\"}` for an existing customer, or a new customer's fields (created with the subscription).",
            ))
            .into()
    }
}

impl ToSchema for SubscriptionCustomer {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("SubscriptionCustomer")
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.push((CustomerRef::name().into_owned(), CustomerRef::schema()));
        <CustomerRef as ToSchema>::schemas(schemas);
        schemas.push((CustomerCreate::name().into_owned(), CustomerCreate::schema()));
        <CustomerCreate as ToSchema>::schemas(schemas);
    }
}

/// SubscriptionCreate: the plan as `plan` or `plan_id`, the customer as `customer` or
/// `customer_id`. One branch per combination.
fn subscription_rules() -> OneOfBuilder {
    let mut rules = OneOfBuilder::new().description(Some(
        "The plan is `plan` (an object) or, when `plan` is absent or null, `plan_id`; the customer is \
         `customer` (an object) or, when `customer` is absent or null, `customer_id`.",
    ));
    for plan_inline in [true, false] {
        for customer_inline in [true, false] {
            let title = format!(
                "{} and {}",
                if plan_inline { "plan" } else { "plan_id" },
                if customer_inline { "customer" } else { "customer_id" }
            );
            let mut branch = ObjectBuilder::new().title(Some(title));
            branch = if plan_inline {
                branch.property("plan", given(Type::Object)).required("plan")
            } else {
                branch.property("plan", absent()).property("plan_id", given(Type::String)).required("plan_id")
            };
            branch = if customer_inline {
                branch.property("customer", given(Type::Object)).required("customer")
            } else {
                branch
                    .property("customer", absent())
                    .property("customer_id", given(Type::String))
                    .required("customer_id")
            };
            rules = rules.item(branch);
        }
    }
    rules
}
