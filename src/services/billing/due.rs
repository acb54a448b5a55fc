//! Claiming what is due: the subscriptions a run (or a customer's card) claims, and what
//! each owes: a charge with its idempotency key, or a change that charges nothing.

use super::*;

/// The first charge of a subscription of `plan` whose card just arrived, with the customer
/// present. `None` when another request started the subscription first.
pub async fn start(
    state: &AppState,
    plan: &crate::db::entities::plans::Model,
    sub: subscriptions::Model,
    card: &CardRef,
    now: DateTime<Utc>,
) -> Result<Option<subscriptions::Model>, DbErr> {
    let token = random_hex(12);
    let Some(sub) = claim_start(&state.db, state, plan, sub, card, &token, now).await? else { return Ok(None) };
    let (_, mut billed) = bill(state, vec![sub], now, true, &token).await?;
    Ok(billed.pop())
}

/// Starts a subscription of `plan` waiting for its card with `card`, claimed under `token`
/// for its first charge; `None` when another request started it first.
pub(super) async fn claim_start(
    db: &impl ConnectionTrait,
    state: &AppState,
    plan: &crate::db::entities::plans::Model,
    sub: subscriptions::Model,
    card: &CardRef,
    token: &str,
    now: DateTime<Utc>,
) -> Result<Option<subscriptions::Model>, DbErr> {
    let anchor = Terms::from(&plan.fields()).anchor(now, state.config.timezone);
    // The trial ends where this plan's first period begins, whatever plan it moves to later.
    let trial_ends_at = plan.trial_amount.is_some().then_some(anchor);
    let start = db::subscriptions::Start { at: now, anchor_at: anchor, trial_ends_at };
    db::subscriptions::start(db, sub, card, start, (token, lease_from_now(state))).await
}

/// The charge a customer confirms with a new card, for a subscription waiting for them
/// since the bank asked for them on a renewal. `None` when it no longer waits.
pub async fn take_card(
    state: &AppState,
    sub: subscriptions::Model,
    card: &CardRef,
    now: DateTime<Utc>,
) -> Result<Option<subscriptions::Model>, DbErr> {
    let token = random_hex(12);
    let txn = crate::db::begin(&state.db).await?;
    let Some(sub) = claim_card(&txn, state, sub, card, &token, now).await? else { return Ok(None) };
    txn.commit().await?;
    let (_, mut billed) = bill(state, vec![sub], now, true, &token).await?;
    Ok(billed.pop())
}

/// Takes `card` for a started subscription waiting for its customer (or in its retries),
/// claimed under `token` for the charge they make now; `None` when it no longer waits or an
/// engine holds it.
pub(super) async fn claim_card(
    db: &impl ConnectionTrait,
    state: &AppState,
    sub: subscriptions::Model,
    card: &CardRef,
    token: &str,
    now: DateTime<Utc>,
) -> Result<Option<subscriptions::Model>, DbErr> {
    let overdue = sub.state == rules::State::FailedAttempt;
    let claim = (token, lease_from_now(state));
    let Some(sub) = db::subscriptions::take_card(db, sub, card, now, claim).await? else { return Ok(None) };
    if overdue {
        // A subscriber paying what is overdue with another card has updated the card.
        events::record_about(db, &state.config, EventType::SubscriptionCardUpdated, &sub).await?;
    }
    Ok(Some(sub))
}

/// Charges a subscription due now that its caller claimed under `token` (resumed with a new
/// period), without its customer. `None` when a change won over the charge.
pub async fn charge_claimed(
    state: &AppState,
    sub: subscriptions::Model,
    now: DateTime<Utc>,
    token: &str,
) -> Result<Option<subscriptions::Model>, DbErr> {
    let (_, mut billed) = bill(state, vec![sub], now, false, token).await?;
    Ok(billed.pop())
}

/// One due charge of a batch.
pub(super) struct Charge {
    pub(super) sub: subscriptions::Model,
    pub(super) terms: Terms,
    pub(super) progress: Progress,
    pub(super) amount: i64,
    pub(super) currency: Currency,
    pub(super) card: CardRef,
    pub(super) key: String,
    pub(super) payment_id: Option<String>,
    /// Known already (recorded before an interruption): no charge is made.
    pub(super) known: Option<PaymentStatus>,
    /// Asked before with no answer known: the acquirer looks it up first.
    pub(super) again: bool,
    /// Answered before (recorded before an interruption) that the bank wants the customer.
    pub(super) known_needs_customer: bool,
    /// When it was first asked (lookups of an unknown answer back off from then).
    pub(super) asked: Option<DateTime<Utc>>,
    /// Who moves the money; `None` when the shop's processor has no account for the mode.
    pub(super) acquirer: Option<Arc<dyn Acquirer>>,
    /// The plan's title, as the processor shows the charge.
    pub(super) description: String,
    /// Where a customer who must authenticate comes back to (charges they are present for).
    pub(super) return_url: Option<String>,
    /// How a test subscription's card was told to behave now.
    pub(super) simulate: Option<Behaviour>,
    /// The card the customer paid this charge with on the processor's page: the
    /// subscription's card from now on.
    pub(super) new_card: Option<CardRef>,
    /// The plan change asked now that this charge pays for.
    pub(super) change: Option<Change>,
    /// The subscription's coupon and what it took off this charge.
    pub(super) discount: Option<(String, i64)>,
    /// The tax `amount` holds.
    pub(super) tax: Option<ChargeTax>,
}

/// A subscription's change to another plan: the plan, its terms, and when it was asked (the
/// proration's moment).
#[derive(Clone)]
pub(super) struct Change {
    pub(super) plan_id: String,
    pub(super) terms: Terms,
    pub(super) at: DateTime<Utc>,
}

/// Does what is due for `subs` (claimed under `token`) at `now`: charges (or ends) them and
/// reschedules. Answers what it did and the subscriptions as saved; a subscription
/// cancelled meanwhile, or taken over by another run, is left as that change left it.
pub(super) async fn bill(
    state: &AppState,
    subs: Vec<subscriptions::Model>,
    now: DateTime<Utc>,
    customer_present: bool,
    token: &str,
) -> Result<(Report, Vec<subscriptions::Model>), DbErr> {
    let renewer = renew_meanwhile(state, token);
    let (mut charges, ending) = plan_charges(&state.db, subs).await?;
    let mut acquirers = Acquirers::default();
    for c in charges.iter_mut() {
        c.acquirer = acquirers.of(state, c.sub.shop_id, c.sub.test).await?;
    }
    resume_earlier(state, &mut charges).await?;
    resume_pages(state, &mut charges).await?;
    // A card the customer just typed behaves as its number says: the schedule of test outcomes
    // is the saved card's.
    if !customer_present {
        simulate_test_cards(state, &mut charges, now).await?;
    }
    // A group at a time: the gate (still claimed, not cancelled), the payment rows, the
    // acquirer. A subscription that fails the gate is not charged.
    let mut answers = Vec::with_capacity(charges.len());
    for group in charges.chunks_mut(CONCURRENT_CHARGES) {
        write_processing_rows(state, group, token, now).await?;
        if customer_present {
            for c in group.iter_mut() {
                c.return_url = c.payment_id.as_deref().map(|id| crate::web::urls::payment_return(&state.config, id));
            }
        }
        answers.extend(ask_acquirer(group, customer_present, now).await);
    }
    // The claims are extended once and no longer renewed while the outcomes are recorded (a
    // renewal would lock the same rows in another order).
    db::subscriptions::renew_claims(&state.db, token, lease_from_now(state)).await?;
    drop(renewer);
    record(state, charges, answers, ending, token, now).await
}

/// Keeps the claims under `token` alive while the charges run.
pub(super) fn renew_meanwhile(state: &AppState, token: &str) -> Renewer {
    let (db, token) = (state.db.clone(), token.to_string());
    Renewer::start(state, move |until| {
        let (db, token) = (db.clone(), token.clone());
        async move { db::subscriptions::renew_claims(&db, &token, until).await }
    })
}

/// Step 1: what is due for each subscription: a charge (with its idempotency key), or its end
/// (its billing cycles paid, or the paid period it was cancelled for over).
pub(super) async fn plan_charges(
    db: &impl ConnectionTrait,
    subs: Vec<subscriptions::Model>,
) -> Result<(Vec<Charge>, Vec<Transition>), DbErr> {
    let plan_ids: Vec<&str> =
        subs.iter().flat_map(|s| [Some(s.plan_id.as_str()), s.change_plan_id.as_deref()]).flatten().collect();
    let plans = db::plans::by_ids_of_any_shop(db, &plan_ids).await?;
    let coupon_ids: Vec<&str> = subs.iter().filter(|s| s.discounted()).filter_map(|s| s.coupon_id.as_deref()).collect();
    let coupons = db::coupons::by_ids_of_any_shop(db, &coupon_ids).await?;
    let taxings: Vec<Taxing> = plans.values().map(|p| p.fields().taxing).collect();
    let shops: Vec<i64> = subs.iter().map(|s| s.shop_id).collect();
    let taxes = Taxes::load(db, &taxings.iter().collect::<Vec<_>>(), &shops).await?;
    let customer_ids: Vec<&str> = subs.iter().map(|s| s.customer_id.as_str()).collect();
    let buyers: HashMap<String, Buyer> = if taxings.iter().any(|t| t.rate_id.is_some()) {
        db::customers::by_ids_of_any_shop(db, &customer_ids)
            .await?
            .iter()
            .map(|c| (c.id.clone(), Buyer::of_customer(c)))
            .collect()
    } else {
        HashMap::new()
    };
    let (mut charges, mut ending) = (Vec::new(), Vec::new());
    for sub in subs {
        let Some(plan) = plans.get(&sub.plan_id) else { continue };
        let terms = Terms::from(&plan.fields());
        let progress = sub.progress();
        let change = sub.change_plan_id.as_ref().and_then(|id| plans.get(id)).map(|p| Change {
            plan_id: p.id.clone(),
            terms: Terms::from(&p.fields()),
            at: sub.change_at.unwrap_or_default(),
        });
        let due = rules::due(&terms, &progress);
        let discount = discount_of(&sub, &due, sub.coupon_id.as_ref().and_then(|id| coupons.get(id)));
        let charged = match due {
            Due::Charge { amount, period, attempt } => {
                let off = discount.as_ref().map_or(0, |d| d.1);
                Some((amount - off, rules::charge_key(&sub.id, period, attempt), None))
            }
            Due::Prorate { amount } => match (&change, &sub.change_id) {
                (Some(change), Some(id)) => Some((amount, rules::change_key(&sub.id, id), Some(change.clone()))),
                // Its plan is gone: the change is dropped as the period goes on.
                _ => None,
            },
            _ => None,
        };
        match charged {
            Some((price, key, change)) => {
                let Some(card) = sub.card() else { continue };
                let currency = plan.currency;
                let charged_plan = change.as_ref().and_then(|c| plans.get(&c.plan_id)).unwrap_or(plan);
                let description = charged_plan.title.clone();
                let buyer = buyers.get(&sub.customer_id).cloned().unwrap_or_default();
                let (amount, tax) = taxes.price(sub.shop_id, price, &charged_plan.fields().taxing, &buyer)?;
                charges.push(Charge {
                    sub,
                    terms,
                    progress,
                    amount,
                    currency,
                    card,
                    key,
                    payment_id: None,
                    known: None,
                    again: false,
                    known_needs_customer: false,
                    asked: None,
                    acquirer: None,
                    description,
                    return_url: None,
                    simulate: None,
                    new_card: None,
                    change,
                    discount,
                    tax,
                });
            }
            None => ending.push(Transition { sub, terms, progress, due, change }),
        }
    }
    Ok((charges, ending))
}

/// A due subscription that changes without a charge: it ends (its billing cycles paid, or
/// the paid period it was cancelled for over), pauses (the paid period it was paused from
/// over), or resumes (its resume date came).
pub(super) struct Transition {
    pub(super) sub: subscriptions::Model,
    pub(super) terms: Terms,
    pub(super) progress: Progress,
    pub(super) due: Due,
    /// The change to another plan it has pending, with that plan's terms.
    pub(super) change: Option<Change>,
}

/// What `due` takes off with `sub`'s coupon (`coupon`, read): a plan period's charge takes the
/// subscription's discount while it lasts (the trial's does not).
fn discount_of(
    sub: &subscriptions::Model,
    due: &Due,
    coupon: Option<&crate::db::entities::coupons::Model>,
) -> Option<(String, i64)> {
    match (due, coupon) {
        (Due::Charge { amount, period, .. }, Some(c)) if *period >= 0 && sub.discounted() => {
            Some((c.id.clone(), coupon::discount(*amount, c.off())))
        }
        _ => None,
    }
}

/// A subscription's charge due now as the engine makes it: of its period and attempt, the
/// plan's price less the subscription's discount, with the plan's tax for its customer (by
/// default, a charge of nothing).
#[derive(Debug, Clone, Default)]
pub struct DueCharge {
    pub period: i64,
    pub attempt: i32,
    pub amount: i64,
    pub discount: Option<(String, i64)>,
    pub tax: Option<ChargeTax>,
}

/// The charge `sub` of `plan` owes now, priced as the engine prices it, for a page the
/// customer pays it on; `None` when nothing is due.
pub async fn due_charge(
    db: &impl ConnectionTrait,
    sub: &subscriptions::Model,
    plan: &plans::Model,
) -> Result<Option<DueCharge>, DbErr> {
    let due = rules::due(&Terms::from(&plan.fields()), &sub.progress());
    let Due::Charge { amount, period, attempt } = due else { return Ok(None) };
    let coupon = db::coupons::of_subscription(db, sub).await?;
    let discount = discount_of(sub, &due, coupon.as_ref());
    let price = amount - discount.as_ref().map_or(0, |d| d.1);
    let taxing = plan.fields().taxing;
    let buyer = match taxing.rate_id {
        Some(_) => db::find_public::<crate::db::entities::customers::Entity>(db, &sub.customer_id)
            .await?
            .as_ref()
            .map(Buyer::of_customer)
            .unwrap_or_default(),
        None => Buyer::default(),
    };
    let (amount, tax) = crate::services::taxes::price(db, sub.shop_id, price, &taxing, &buyer).await?;
    Ok(Some(DueCharge { period, attempt, amount, discount, tax }))
}
