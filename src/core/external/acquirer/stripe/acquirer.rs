//! A shop's Stripe account as paydesk's [`Acquirer`]. Charges are PaymentIntents (held with
//! `capture_method=manual` for authorizations; renewals `off_session` on the saved card);
//! cards are typed on Stripe's Checkout page by default, or on paydesk's page (a PaymentMethod
//! attached to a Customer) when the shop chose it. Every request carries an `Idempotency-Key`
//! made of paydesk's own reference and the operation, and every PaymentIntent and Refund
//! carries that reference in its metadata: a lost answer is found again there, or by sending
//! the very same request under the same key; never by charging anew.

use std::time::Duration;

use async_trait::async_trait;

use super::api::{Account, Api, encode};
use super::status::{self, Operation, Reading, SessionReading};
use super::wire::{CheckoutSession, Form, PaymentMethod, REFERENCE_KEY};
use crate::domain::card::{CardInput, CardRef, Outcome};
use crate::domain::dispute::Evidence;
use crate::external::acquirer::{
    Acquirer, CardRefused, ChargeRequest, DisputeAnswer, Hosted, HostedRequest, IfUnsent, RefundRequest, SettleRequest,
    never_refunded, never_sent, page_unavailable,
};
use crate::external::outbound::Outbound;

/// Stripe's own pages a customer is sent to: Checkout, and the bank's check (3-D Secure).
const STRIPE_PAGES: [&str; 2] = ["https://checkout.stripe.com", "https://hooks.stripe.com"];

/// How long after its first request a key is surely still kept by Stripe ("at least 24
/// hours"), with an hour to spare for clocks.
const KEY_KEPT: chrono::TimeDelta = chrono::TimeDelta::hours(23);

/// How often a capture or void whose answer was lost is sent again (under the same key)
/// before paydesk looks the payment up.
const SETTLE_TRIES: u32 = 3;

/// One shop's Stripe account in one mode.
pub struct Stripe {
    pub outbound: Outbound,
    pub account: Account,
    /// Customers type their cards on Stripe's Checkout page, not paydesk's.
    pub hosted: bool,
    /// How long an answer is waited for before the outcome is unknown.
    pub timeout: Duration,
}

/// A saved card as paydesk keeps it: `cus_…/pm_…`, the Customer it belongs to and the
/// PaymentMethod (renewals need both).
fn card_token(customer: Option<&str>, payment_method: &str) -> String {
    match customer {
        Some(customer) => format!("{customer}/{payment_method}"),
        None => payment_method.to_string(),
    }
}

/// The Customer and PaymentMethod of a kept card.
fn card_parts(token: &str) -> (Option<&str>, &str) {
    match token.split_once('/') {
        Some((customer, pm)) => (Some(customer), pm),
        None => (None, token),
    }
}

impl Stripe {
    fn api(&self) -> Api<'_> {
        Api { outbound: &self.outbound, account: &self.account, timeout: self.timeout }
    }

    /// What became of the PaymentIntent made under `reference`, by a lookup only: `None`
    /// when it is not found (it never arrived, or it cannot be told now).
    async fn looked_up(&self, reference: &str) -> Option<Reading> {
        match self.api().find_intent(reference).await {
            Ok(Some(pi)) => Some(status::intent(Operation::Charge, &pi)),
            Ok(None) => None,
            Err(_) => Some(Reading::Unknown),
        }
    }

    /// A customer at paydesk's page must authenticate and Stripe gave no page for it (it
    /// does when asked with a return URL): confirms again with `return_url`. Answers what
    /// that says. When Stripe clearly gives no page (it answers the intent still without one,
    /// or refuses the confirmation), the payment is canceled and, once Stripe says canceled,
    /// declined; anything not known stays pending, to be looked up.
    async fn authenticate(&self, id: &str, key: &str, return_url: &str) -> Reading {
        let form = Form::new().set("return_url", return_url);
        let path = format!("/v1/payment_intents/{}/confirm", encode(id));
        match self.api().post(&path, &form, &format!("{key}:confirm"), Operation::Charge).await {
            Reading::NeedsCustomer { redirect_url: None, .. } | Reading::Refused { .. } => {}
            reading => return reading,
        }
        let path = format!("/v1/payment_intents/{}/cancel", encode(id));
        match self.api().post(&path, &Form::new(), &format!("{key}:cancel"), Operation::Cancel).await {
            Reading::Succeeded { .. } => Reading::Declined {
                id: Some(id.to_string()),
                code: "authentication_required",
                message: "The bank asks the customer to confirm this payment, and Stripe gave no page for it.".into(),
            },
            _ => Reading::Pending { id: id.to_string() },
        }
    }

    async fn settle(&self, operation: Operation, request: SettleRequest<'_>) -> Outcome {
        let (path, form, key) = match operation {
            Operation::Cancel => ("cancel", Form::new(), format!("{}:cancel", request.idempotency_key)),
            _ => (
                "capture",
                Form::new().set("amount_to_capture", request.amount),
                format!("{}:capture", request.idempotency_key),
            ),
        };
        let path = format!("/v1/payment_intents/{}/{path}", encode(request.reference));
        let mut outcome = Outcome::unknown();
        for attempt in 0..SETTLE_TRIES {
            if attempt > 0 {
                tokio::time::sleep(Duration::from_millis(500 * u64::from(attempt))).await;
            }
            outcome = child_outcome(self.api().post(&path, &form, &key, operation).await, "refused");
            if !matches!(outcome, Outcome::Pending { .. }) {
                break;
            }
        }
        if matches!(outcome, Outcome::Approved { .. }) {
            return outcome;
        }
        // Not known, or refused (it may have been done already, here or in Stripe's
        // dashboard): the PaymentIntent says whether it happened.
        let intent = format!("/v1/payment_intents/{}", encode(request.reference));
        match self.api().get(&intent, operation).await {
            reading @ Reading::Succeeded { .. } => child_outcome(reading, "refused"),
            _ => outcome,
        }
    }

    /// The card a finished Checkout Session saved or paid with, as paydesk keeps it.
    fn card_of_session(session: &CheckoutSession) -> Option<CardRef> {
        let (pm, customer) = match (&session.payment_intent, &session.setup_intent) {
            (Some(pi), _) => {
                let pi = pi.object()?;
                (pi.payment_method.as_ref()?, pi.customer.as_ref().and_then(|c| c.id()).map(str::to_string))
            }
            (None, Some(si)) => {
                let si = si.object()?;
                (si.payment_method.as_ref()?, si.customer.as_ref().and_then(|c| c.id()).map(str::to_string))
            }
            (None, None) => return None,
        };
        let customer = customer.or_else(|| session.customer.as_ref().and_then(|c| c.id()).map(str::to_string));
        match pm.object() {
            Some(pm) => Some(card_ref(pm, customer.as_deref())),
            None => Some(CardRef { token: card_token(customer.as_deref(), pm.id()?), ..CardRef::default() }),
        }
    }
}

/// What may be shown of a saved card, and its token.
fn card_ref(pm: &PaymentMethod, customer: Option<&str>) -> CardRef {
    let card = pm.card.clone().unwrap_or_default();
    let customer = customer.or_else(|| pm.customer.as_ref().and_then(|c| c.id()));
    CardRef {
        token: card_token(customer, &pm.id),
        brand: card.brand.unwrap_or_else(|| "card".into()),
        last4: card.last4.unwrap_or_default(),
        exp_month: card.exp_month.unwrap_or(0),
        exp_year: card.exp_year.unwrap_or(0),
        holder: pm.billing_details.as_ref().and_then(|b| b.name.clone()).unwrap_or_default(),
        fingerprint: card.fingerprint.map(|f| format!("stripe_{f}")),
    }
}

#[async_trait]
impl Acquirer for Stripe {
    fn is_simulated(&self) -> bool {
        false
    }

    async fn tokenize(&self, card: &CardInput, _test: bool) -> Result<CardRef, CardRefused> {
        // Nothing moves money here and there is no record yet: the keys only make each
        // request's own repeats harmless.
        let key = crate::domain::ids::new_id("card_");
        let refused = |reading: Reading| match reading {
            Reading::Declined { message, .. } | Reading::Error { message } => CardRefused::Invalid(message),
            other => {
                tracing::warn!(reading = ?other, "Stripe did not take a card typed on paydesk's page");
                CardRefused::Unavailable
            }
        };
        let mut form = Form::new()
            .set("type", "card")
            .set("card[number]", card.number())
            .set("card[exp_month]", card.exp_month)
            .set("card[exp_year]", card.exp_year)
            .set("card[cvc]", card.cvc());
        if !card.holder.trim().is_empty() {
            form = form.set("billing_details[name]", &card.holder);
        }
        let pm: PaymentMethod =
            self.api().create("/v1/payment_methods", &form, &format!("{key}:pm")).await.map_err(refused)?;
        let customer = self.api().customer(&Form::new(), &format!("{key}:customer")).await.map_err(refused)?;
        let attach = Form::new().set("customer", &customer.id);
        let path = format!("/v1/payment_methods/{}/attach", encode(&pm.id));
        let attached: PaymentMethod =
            self.api().create(&path, &attach, &format!("{key}:attach")).await.map_err(refused)?;
        let mut kept = card_ref(&attached, Some(&customer.id));
        kept.brand = attached.card.as_ref().and_then(|c| c.brand.clone()).unwrap_or_else(|| card.brand().to_string());
        if kept.last4.is_empty() {
            kept.last4 = card.last4().to_string();
        }
        kept.exp_month = card.exp_month as i32;
        kept.exp_year = card.exp_year;
        kept.holder = card.holder.clone();
        Ok(kept)
    }

    async fn charge(&self, card: &CardRef, request: ChargeRequest<'_>) -> Outcome {
        let (customer, payment_method) = card_parts(&card.token);
        // Nothing to take (a free trial): attaching the card to its Customer checked and saved it.
        if request.amount == 0 {
            return Outcome::Approved { reference: payment_method.to_string() };
        }
        let key = request.idempotency_key;
        if request.again {
            // Within the key's retention the same request is safe to send whatever the lookup
            // says (Stripe answers it with its first answer); past it, only once a lookup
            // found that it never arrived.
            let kept = request.first_sent.is_some_and(|at| request.now - at < KEY_KEPT);
            match self.looked_up(key).await {
                None | Some(Reading::Unknown) if request.if_unsent == IfUnsent::Resend && kept => {}
                None if request.if_unsent == IfUnsent::Resend => {}
                None if request.if_unsent == IfUnsent::GiveUp => return never_sent(),
                None | Some(Reading::Unknown) => return Outcome::unknown(),
                // Waiting for a customer who was never given Stripe's page for it.
                Some(Reading::NeedsCustomer { id, redirect_url: None }) if request.customer_present => {
                    let reading = match request.return_url {
                        Some(back) => self.authenticate(&id, key, back).await,
                        None => Reading::NeedsCustomer { id, redirect_url: None },
                    };
                    return charge_outcome(reading, true, true);
                }
                Some(found) => return charge_outcome(found, true, request.customer_present),
            }
        }
        let form = Form::new()
            .set("amount", request.amount)
            .set("currency", request.currency.code.to_ascii_lowercase())
            .maybe("customer", customer)
            .set("payment_method", payment_method)
            .set("payment_method_types[]", "card")
            .set("capture_method", if request.capture { "automatic" } else { "manual" })
            .set("confirm", "true")
            .maybe("off_session", (!request.customer_present).then_some("true"))
            .set(&format!("metadata[{REFERENCE_KEY}]"), key);
        let mut reading =
            self.api().post("/v1/payment_intents", &form, &format!("{key}:payment_intent"), Operation::Charge).await;
        if let (Reading::NeedsCustomer { id, redirect_url: None }, true, Some(back)) =
            (&reading, request.customer_present, request.return_url)
        {
            reading = self.authenticate(&id.clone(), key, back).await;
        }
        charge_outcome(reading, request.again, request.customer_present)
    }

    async fn capture(&self, request: SettleRequest<'_>) -> Outcome {
        self.settle(Operation::Capture, request).await
    }

    async fn void(&self, request: SettleRequest<'_>) -> Outcome {
        self.settle(Operation::Cancel, request).await
    }

    async fn refund(&self, _card: &CardRef, request: RefundRequest<'_>) -> Outcome {
        // Asked before (its answer lost, or Stripe still processing it): Stripe's refund of
        // this payment that carries the refund's reference says how it stands. A repeat of the
        // request would only replay the first answer.
        if let Ok(Some(found)) = self.api().find_refund(request.reference, request.idempotency_key).await {
            return child_outcome(status::refund(&found), "refund_failed");
        }
        let form = Form::new()
            .set("payment_intent", request.reference)
            .set("amount", request.amount)
            .set(&format!("metadata[{REFERENCE_KEY}]"), request.idempotency_key)
            .maybe("metadata[reason]", Some(request.reason).filter(|r| !r.trim().is_empty()));
        let key = format!("{}:refund", request.idempotency_key);
        child_outcome(self.api().post("/v1/refunds", &form, &key, Operation::Refund).await, "refund_failed")
    }

    async fn find_refund(&self, _card: &CardRef, request: RefundRequest<'_>) -> Outcome {
        match self.api().find_refund(request.reference, request.idempotency_key).await {
            Ok(Some(found)) => child_outcome(status::refund(&found), "refund_failed"),
            Ok(None) => never_refunded(),
            Err(_) => Outcome::unknown(),
        }
    }

    async fn close_hosted(&self, token: &str) -> bool {
        let path = format!("/v1/checkout/sessions/{}/expire", encode(token));
        self.api().create::<CheckoutSession>(&path, &Form::new(), &format!("{token}:expire")).await.is_ok()
    }

    async fn abandon(&self, reference: &str, idempotency_key: &str) -> bool {
        let path = format!("/v1/payment_intents/{}/cancel", encode(reference));
        let key = format!("{idempotency_key}:abandon");
        matches!(self.api().post(&path, &Form::new(), &key, Operation::Cancel).await, Reading::Succeeded { .. })
    }

    fn customer_origins(&self) -> Vec<String> {
        let mut origins: Vec<String> = STRIPE_PAGES.iter().map(|s| s.to_string()).collect();
        if let Ok(api) = url::Url::parse(&self.account.api_url) {
            origins.push(api.origin().ascii_serialization());
        }
        origins
    }

    fn hosted(&self) -> bool {
        self.hosted
    }

    fn answers_disputes(&self) -> bool {
        true
    }

    async fn answer_dispute(&self, reference: &str, evidence: &Evidence, submit: bool, key: &str) -> DisputeAnswer {
        self.api().answer_dispute(reference, evidence, submit, key).await
    }

    async fn accept_dispute(&self, reference: &str, key: &str) -> DisputeAnswer {
        self.api().close_dispute(reference, key).await
    }

    fn test_cards(&self) -> [&'static str; 3] {
        ["4242 4242 4242 4242", "4000 0000 0000 0002", "4000 0027 6000 3184"]
    }

    async fn start_hosted(&self, request: HostedRequest<'_>) -> Result<Hosted, Outcome> {
        let reference = request.reference;
        let mut form = Form::new()
            .set("payment_method_types[]", "card")
            .set("success_url", request.return_url)
            .set("cancel_url", request.back_url)
            .set("client_reference_id", reference)
            .set(&format!("metadata[{REFERENCE_KEY}]"), reference)
            .set("locale", if request.language == "ru" { "ru" } else { "en" })
            .set("expires_at", request.expires_at.timestamp());
        if request.amount == 0 {
            // A card saved for later charges: it must belong to a Customer.
            let who = Form::new().maybe("email", request.email);
            let customer = match self.api().customer(&who, &format!("{reference}:customer")).await {
                Ok(customer) => customer,
                Err(reading) => return Err(start_failed(reading)),
            };
            form = form
                .set("mode", "setup")
                .set("customer", customer.id)
                .set(&format!("setup_intent_data[metadata][{REFERENCE_KEY}]"), reference);
        } else {
            form = form
                .set("mode", "payment")
                .set("line_items[0][quantity]", 1)
                .set("line_items[0][price_data][currency]", request.currency.code.to_ascii_lowercase())
                .set("line_items[0][price_data][unit_amount]", request.amount)
                .set("line_items[0][price_data][product_data][name]", request.description)
                .set(&format!("payment_intent_data[metadata][{REFERENCE_KEY}]"), reference)
                .set("payment_intent_data[capture_method]", if request.capture { "automatic" } else { "manual" })
                .maybe("customer_email", request.email);
            if request.keep_card {
                form = form
                    .set("payment_intent_data[setup_future_usage]", "off_session")
                    .set("customer_creation", "always");
            }
        }
        let key = format!("{reference}:checkout:{}", request.expires_at.timestamp());
        match self.api().create::<CheckoutSession>("/v1/checkout/sessions", &form, &key).await {
            Ok(CheckoutSession { id, url: Some(url), .. }) => Ok(Hosted { token: id, redirect_url: url }),
            Ok(_) => Err(start_failed(Reading::Unknown)),
            Err(reading) => Err(start_failed(reading)),
        }
    }

    async fn hosted_outcome(&self, token: &str) -> (Outcome, Option<CardRef>) {
        let session = match self.api().session(token).await {
            Ok(session) => session,
            Err(_) => return (Outcome::unknown(), None),
        };
        match status::session(&session) {
            SessionReading::Open => (Outcome::unknown(), None),
            SessionReading::Expired => (
                Outcome::Declined {
                    code: "payment_expired",
                    message: "The customer did not finish paying on Stripe's page in time.".into(),
                },
                None,
            ),
            SessionReading::Finished(reading) => {
                let card =
                    matches!(reading, Reading::Succeeded { .. }).then(|| Stripe::card_of_session(&session)).flatten();
                (charge_outcome(reading, true, true), card)
            }
        }
    }
}

/// Why a Checkout Session could not be opened (no money moved: the payment can start again).
fn start_failed(reading: Reading) -> Outcome {
    let why = match reading {
        Reading::Refused { message } | Reading::Error { message } | Reading::Declined { message, .. } => {
            format!("Stripe refused to open its payment page: {message}")
        }
        Reading::Unreached { message } => format!("Stripe could not be reached to open its payment page: {message}."),
        _ => "Stripe answered with an error while opening its payment page.".into(),
    };
    page_unavailable(why)
}

/// What a charge's reading means; `again`: the charge was sent before, so a refusal now (of
/// the lookup) says nothing about it. A bank that asks for a customer who is not there (a
/// renewal) declines it as `authentication_required`: no retry helps without them.
fn charge_outcome(reading: Reading, again: bool, customer_present: bool) -> Outcome {
    match reading {
        Reading::Succeeded { id } => Outcome::Approved { reference: id },
        Reading::Declined { code, message, .. } => Outcome::Declined { code, message: message.into() },
        Reading::NeedsCustomer { .. } if !customer_present && !again => Outcome::Declined {
            code: "authentication_required",
            message: "The bank asks the customer to confirm this payment.".into(),
        },
        Reading::NeedsCustomer { id, redirect_url } => Outcome::Pending { reference: Some(id), redirect_url },
        Reading::Pending { id } => Outcome::Pending { reference: Some(id), redirect_url: None },
        Reading::Refused { .. } | Reading::Unreached { .. } if again => Outcome::unknown(),
        Reading::Error { message } | Reading::Refused { message } => {
            Outcome::Error { code: "processing_error", message: message.into() }
        }
        Reading::Unreached { message } => Outcome::Error {
            code: "processing_error",
            message: format!("Stripe could not be reached: {message}").into(),
        },
        Reading::RetryLater | Reading::Unknown | Reading::NotFound => Outcome::unknown(),
    }
}

/// What a capture's, void's or refund's reading means; a refusal is a decline with `refused_code`.
fn child_outcome(reading: Reading, refused_code: &'static str) -> Outcome {
    match reading {
        Reading::Succeeded { id } => Outcome::Approved { reference: id },
        Reading::Declined { message, .. } | Reading::Refused { message } => {
            Outcome::Declined { code: refused_code, message: format!("Stripe refused: {message}").into() }
        }
        Reading::Error { message } => Outcome::Error { code: "processing_error", message: message.into() },
        Reading::Unreached { message } => Outcome::Error {
            code: "processing_error",
            message: format!("Stripe could not be reached: {message}").into(),
        },
        Reading::NeedsCustomer { id, .. } | Reading::Pending { id } => {
            Outcome::Pending { reference: Some(id), redirect_url: None }
        }
        Reading::RetryLater | Reading::Unknown | Reading::NotFound => Outcome::unknown(),
    }
}
