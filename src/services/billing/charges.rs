//! Making the charges: payments an earlier run left are taken as they stand, the processing
//! rows are written before the acquirer is asked, and the acquirer is asked for a group at
//! once.

use super::*;

/// Step 2: the payments an interrupted run (or an unknown answer) left. Answered ones are
/// not charged again; those still `processing` are asked again under the same key: the
/// acquirer looks them up, and answers the first result.
pub(super) async fn resume_earlier(state: &AppState, charges: &mut [Charge]) -> Result<(), DbErr> {
    let keys = charges.iter().map(|c| c.key.clone()).collect();
    let earlier: HashMap<String, _> = db::payments::find_by_billing_keys(&state.db, keys)
        .await?
        .into_iter()
        .filter_map(|p| Some((p.billing_key.clone()?, p)))
        .collect();
    for c in charges {
        if let Some(p) = earlier.get(&c.key) {
            c.take_earlier(p);
        }
    }
    Ok(())
}

impl Charge {
    /// This charge is `p`, a payment written before under its key: answered, it is not asked
    /// again; still `processing`, it is looked up under the same key. One the customer made
    /// on the processor's page is never asked as a charge: its page says how it ended.
    pub(super) fn take_earlier(&mut self, p: &payments::Model) {
        self.payment_id = Some(p.id.clone());
        self.known = Some(p.status).filter(|s| *s != PaymentStatus::Processing || p.checkout_token.is_some());
        self.again = self.known.is_none();
        self.known_needs_customer = p.failure_code.as_deref() == Some(NEEDS_CUSTOMER);
        self.asked = Some(p.created_at);
        self.new_card = paid_on_page(p, &self.sub);
    }
}

/// The card a subscription's charge was paid with on the processor's page, if it is not the
/// subscription's card yet.
pub(super) fn paid_on_page(p: &payments::Model, sub: &subscriptions::Model) -> Option<CardRef> {
    let paid = p.checkout_token.is_some() && p.status == PaymentStatus::Succeeded;
    (paid && Some(&p.card_token) != sub.card_token.as_ref()).then(|| p.card())
}

/// Step 2b: a subscriber in the retries who opened the processor's page to pay what is
/// overdue: the page is looked up before the saved card is charged. Paid, it is this charge;
/// still open (or its end unknown), the retry waits for it; ended unpaid, the retry goes on.
pub(super) async fn resume_pages(state: &AppState, charges: &mut [Charge]) -> Result<(), DbErr> {
    let overdue = charges.iter().filter(|c| c.sub.state == rules::State::FailedAttempt && c.payment_id.is_none());
    let ids: Vec<String> = overdue.map(|c| c.sub.id.clone()).collect();
    if ids.is_empty() {
        return Ok(());
    }
    for page in db::payments::open_pages(&state.db, ids).await? {
        let Some(c) = charges.iter_mut().find(|c| page.subscription_id.as_ref() == Some(&c.sub.id)) else { continue };
        if c.known == Some(PaymentStatus::Succeeded) {
            // Another page paid the period: this one, if paid too, stays a stray.
            continue;
        }
        // The page lives in real time, whatever the subscription's clock says.
        let page = match (page.status, &page.checkout_token) {
            // Its page is being opened: the customer may pay there in a moment.
            (PaymentStatus::Processing, None) => page,
            // Boxed: settling a paid page may bill the subscription (when no engine holds it).
            (PaymentStatus::Processing, Some(_)) => Box::pin(settle(state, page, Utc::now())).await?,
            _ => page,
        };
        let customer_id = c.sub.customer_id.clone();
        match page.status {
            PaymentStatus::Succeeded => {
                // Its settling may have made it this charge already, under the same key; any
                // other payment under the key is the charge, and this page a stray.
                let txn = db::begin(&state.db).await?;
                let attached = db::payments::attach(&txn, &page.id, &c.sub.id, &customer_id, &c.key).await?;
                txn.commit().await?;
                if !attached {
                    let under_key = db::payments::find_by_billing_keys(&state.db, vec![c.key.clone()]).await?;
                    if under_key.first().is_none_or(|p| p.id != page.id) {
                        continue;
                    }
                }
                c.new_card = paid_on_page(&page, &c.sub);
                c.known = Some(PaymentStatus::Succeeded);
            }
            PaymentStatus::Processing => c.known = Some(PaymentStatus::Processing),
            _ => continue,
        }
        c.payment_id = Some(page.id.clone());
        c.asked = Some(page.created_at);
    }
    Ok(())
}

/// Step 3: past the gate, the `processing` rows of a group's new charges, written before the
/// acquirer is asked so that no charge goes unrecorded.
pub(super) async fn write_processing_rows(
    state: &AppState,
    group: &mut [Charge],
    token: &str,
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    let ids = group.iter().filter(|c| c.payment_id.is_none()).map(|c| c.sub.id.clone()).collect::<Vec<_>>();
    if ids.is_empty() {
        return Ok(());
    }
    let open = db::subscriptions::still_billing(&state.db, ids, token).await?;
    let mut rows = Vec::new();
    for c in group.iter().filter(|c| c.payment_id.is_none() && open.contains(&c.sub.id)) {
        let new = NewPayment {
            shop_id: c.sub.shop_id,
            product_id: None,
            plan_id: Some(c.change.as_ref().map_or(&c.sub.plan_id, |change| &change.plan_id)),
            subscription_id: Some(&c.sub.id),
            customer_id: Some(&c.sub.customer_id),
            amount: c.amount,
            currency: c.currency,
            transaction_type: TransactionType::Payment,
            test: c.sub.test,
            card: &c.card,
            billing_key: Some(c.key.clone()),
            discount: c.discount.as_ref().map(|(id, off)| (id.as_str(), *off)),
            customer_details: None,
            tax: c.tax.clone(),
        };
        rows.push(db::payments::processing_row(new, now));
    }
    if rows.is_empty() {
        return Ok(());
    }
    let written: HashMap<String, String> =
        rows.iter().filter_map(|r| Some((r.billing_key.clone().unwrap()?, r.id.clone().unwrap()))).collect();
    if db::payments::insert_rows(&state.db, rows).await? {
        for c in group.iter_mut().filter(|c| c.payment_id.is_none()) {
            c.payment_id = written.get(&c.key).cloned();
        }
        return Ok(());
    }
    // Another run (or a customer's page, paid a moment ago) wrote some of these keys first:
    // its rows are the ones that count, as they stand.
    let keys = written.keys().cloned().collect();
    let found: HashMap<String, payments::Model> = db::payments::find_by_billing_keys(&state.db, keys)
        .await?
        .into_iter()
        .filter_map(|p| Some((p.billing_key.clone()?, p)))
        .collect();
    for c in group.iter_mut().filter(|c| c.payment_id.is_none()) {
        match found.get(&c.key) {
            Some(p) if written.get(&c.key) != Some(&p.id) => c.take_earlier(p),
            Some(p) => c.payment_id = Some(p.id.clone()),
            None => {}
        }
    }
    Ok(())
}

/// Step 4: the acquirer's answers for a group, asked at once; `None` where nothing is asked
/// (no row, or an answer recorded by an earlier run).
pub(super) async fn ask_acquirer(
    group: &[Charge],
    customer_present: bool,
    now: DateTime<Utc>,
) -> Vec<Option<ChargeOutcome>> {
    let calls = group.iter().map(|c| {
        let request = ChargeRequest {
            amount: c.amount,
            currency: c.currency,
            capture: true,
            idempotency_key: &c.key,
            customer_present,
            again: c.again,
            if_unsent: IfUnsent::Resend,
            first_sent: c.asked,
            description: &c.description,
            return_url: c.return_url.as_deref(),
            now,
            simulate: c.simulate,
        };
        let ask = c.payment_id.is_some() && c.known.is_none();
        async move {
            match (ask, &c.acquirer) {
                // Nothing to charge (a discount took it all): paid without the processor.
                (true, _) if c.amount == 0 => Some(ChargeOutcome::Approved { reference: "nothing to charge".into() }),
                (true, Some(acquirer)) => Some(acquirer.charge(&c.card, request).await),
                (true, None) => Some(ChargeOutcome::Error {
                    code: "processing_error",
                    message: "The shop's payment processor has no account for this mode.".into(),
                }),
                (false, _) => None,
            }
        }
    });
    futures::future::join_all(calls).await
}

/// How the cards of test subscriptions behave at `now`, as their schedules say (the latest
/// entry from before `now`); one query for the batch.
pub(super) async fn simulate_test_cards(
    state: &AppState,
    charges: &mut [Charge],
    now: DateTime<Utc>,
) -> Result<(), DbErr> {
    let test: Vec<&str> = charges.iter().filter(|c| c.sub.test).map(|c| c.sub.id.as_str()).collect();
    let schedules = db::subscriptions::test_outcomes_of(&state.db, &test).await?;
    for c in charges.iter_mut() {
        let schedule = schedules.get(&c.sub.id).map_or(&[][..], Vec::as_slice);
        c.simulate = schedule.iter().rev().find(|e| e.effective_from <= now).map(|e| e.outcome);
    }
    Ok(())
}
