//! What each mail says: the facts it tells, read when it is rendered (a subscription's next
//! charge and state as its event recorded them), in the language of the plan's or
//! product's page, as HTML and plain text.

use askama::Template;
use chrono::{DateTime, Utc};
use chrono_tz::Tz;

use super::words::{MailTexts, fill, mail_texts};
use crate::db::entities::{customers, documents, mails, payments, plans, products, refunds, shops, subscriptions};
use crate::db::mails::Rendered;
use crate::db::portal::Opening;
use crate::db::{self};
use crate::domain::billing::State;
use crate::domain::mail::{self as rules, MailKind};
use crate::domain::vocab::{IntervalUnit, Language};
use crate::web::error::AppError;
use crate::web::i18n::{Texts, texts};
use crate::web::state::AppState;
use crate::web::urls;

/// A mail's content, the same for both its parts.
pub struct Letter {
    pub lang: &'static str,
    pub subject: String,
    pub shop_name: String,
    pub test_note: Option<&'static str>,
    pub heading: String,
    pub paragraphs: Vec<String>,
    /// Label and value lines (amount, order, date…).
    pub facts: Vec<(String, String)>,
    /// The button: its label and link.
    pub action: Option<(String, String)>,
    /// Links after the button: an invoice's or credit note's PDF.
    pub links: Vec<(String, String)>,
    pub after: Vec<String>,
    pub manage: &'static str,
    pub manage_url: Option<String>,
    pub why: String,
    pub footer: String,
}

#[derive(Template)]
#[template(path = "mail/letter.html")]
struct Html<'a> {
    l: &'a Letter,
}

#[derive(Template)]
#[template(path = "mail/letter.txt")]
struct Text<'a> {
    l: &'a Letter,
}

impl Letter {
    fn new(t: &'static MailTexts, shop: &shops::Model, test: bool, subject: String, heading: &str) -> Letter {
        let shop_name = shop.name.clone();
        let subject = if test { format!("{}{subject}", t.test_subject) } else { subject };
        Letter {
            lang: t.lang,
            subject,
            test_note: test.then_some(t.test_note),
            heading: heading.to_string(),
            paragraphs: Vec::new(),
            facts: Vec::new(),
            action: None,
            links: Vec::new(),
            after: Vec::new(),
            manage: t.manage,
            manage_url: None,
            why: fill(t.why, &[("shop", &shop_name)]),
            footer: fill(t.footer, &[("shop", &shop_name)]),
            shop_name,
        }
    }

    /// The HTML and the plain-text part.
    pub fn render(&self) -> Result<(String, String), AppError> {
        let html = Html { l: self }.render().map_err(|e| AppError::Internal(format!("a mail's HTML: {e}")))?;
        let text = Text { l: self }.render().map_err(|e| AppError::Internal(format!("a mail's text: {e}")))?;
        Ok((html, text))
    }
}

/// The link of an action taken on the subscriber page: replaced by the mail's own link to it.
const MANAGE: &str = "{manage}";

/// Who a mail goes to and what it says; `Err` with the reason when it has nothing to send.
type Outcome = Result<(Letter, customers::Model), String>;

/// Renders a queued mail; `Ok(Err(why))` when there is nothing to send any more.
pub async fn render(state: &AppState, mail: &mails::Model) -> Result<Result<Rendered, String>, AppError> {
    let shop = crate::services::shops::find(state, mail.shop_id).await?.ok_or(AppError::NotFound("Shop"))?;
    let tz = crate::services::shops::zone(state, &shop);
    let outcome = match mail.kind {
        MailKind::Receipt => receipt(state, &shop, tz, mail).await?,
        MailKind::RefundReceipt => refund(state, &shop, tz, mail).await?,
        MailKind::PortalLink | MailKind::AccountLocked => Err("a mail written when it was queued".to_string()),
        MailKind::SecurityNotice | MailKind::DisputeOpened | MailKind::RefundFailedLater => {
            Err("a mail to the shop's users".to_string())
        }
        _ => subscription(state, &shop, tz, mail).await?,
    };
    let (mut letter, customer) = match outcome {
        Ok(found) => found,
        Err(why) => return Ok(Err(why)),
    };
    let to = mail.to_address.clone().unwrap_or(customer.email.clone());
    if !rules::is_address(&to) {
        return Ok(Err(format!("the customer has no usable e-mail address ({to:?})")));
    }
    // Every mail links to the customer's subscriber page (where a card is updated, too).
    let opening = Opening {
        shop_id: mail.shop_id,
        customer_id: &customer.id,
        language: Language::parse(letter.lang).unwrap_or(Language::En),
        return_url: None,
    };
    let (manage, _) = super::links::mint(&state.db, &state.config, &opening, super::links::IN_MAIL, Utc::now()).await?;
    if let Some((_, url)) = letter.action.as_mut().filter(|(_, url)| url == MANAGE) {
        url.clone_from(&manage);
    }
    letter.manage_url = Some(manage);
    let (html_body, text_body) = letter.render()?;
    Ok(Ok(Rendered {
        customer_id: Some(customer.id),
        message_id: None,
        to_address: to,
        language: letter.lang.to_string(),
        subject: letter.subject,
        text_body,
        html_body,
    }))
}

/// The order a payment paid (a product's name or a plan's title), its page's language and
/// the plan.
async fn order_of(
    state: &AppState,
    payment: &payments::Model,
) -> Result<(String, Language, Option<plans::Model>), AppError> {
    let shop_id = payment.shop_id;
    Ok(match (&payment.product_id, &payment.plan_id) {
        (Some(id), _) => match db::find::<products::Entity>(&state.db, shop_id, id).await? {
            Some(p) => (p.name, p.language, None),
            None => (id.clone(), Language::En, None),
        },
        (_, Some(id)) => match db::find::<plans::Entity>(&state.db, shop_id, id).await? {
            Some(p) => (p.title.clone(), p.language, Some(p)),
            None => (id.clone(), Language::En, None),
        },
        _ => (String::new(), Language::En, None),
    })
}

async fn customer(state: &AppState, shop_id: i64, id: Option<&str>) -> Result<Option<customers::Model>, AppError> {
    Ok(match id {
        Some(id) => db::find::<customers::Entity>(&state.db, shop_id, id).await?,
        None => None,
    })
}

/// A day, or a day and time for hourly plans.
fn when(at: DateTime<Utc>, unit: Option<IntervalUnit>, tz: Tz, p: &Texts) -> String {
    match unit {
        Some(IntervalUnit::Hour) => crate::web::locale::date_time(at, tz, p.language),
        _ => crate::web::locale::date(at, tz, p.language),
    }
}

async fn receipt(state: &AppState, shop: &shops::Model, tz: Tz, mail: &mails::Model) -> Result<Outcome, AppError> {
    let Some(payment) = db::find::<payments::Entity>(&state.db, mail.shop_id, &mail.object_id).await? else {
        return Ok(Err("the payment is gone".into()));
    };
    let Some(customer) = customer(state, mail.shop_id, payment.customer_id.as_deref()).await? else {
        return Ok(Err("the payment has no customer".into()));
    };
    let (order, language, plan) = order_of(state, &payment).await?;
    let (t, p) = (mail_texts(language), texts(language));
    let sub = match &payment.subscription_id {
        Some(id) => db::find::<subscriptions::Entity>(&state.db, mail.shop_id, id).await?,
        None => None,
    };
    let coupon = match &sub {
        Some(sub) => db::coupons::of_subscription(&state.db, sub).await?,
        None => None,
    };
    let next = match plan.as_ref().zip(sub.as_ref()) {
        Some((plan, sub)) => match sub.next_charge(plan, coupon.as_ref()) {
            // Shown as it will be charged: with the plan's tax when the price has it added.
            Some((amount, at)) => {
                Some((crate::services::taxes::of_subscription(&state.db, sub, plan, amount).await?, at))
            }
            None => None,
        },
        None => None,
    };
    let unit = plan.as_ref().map(|p| p.interval_unit);
    let amount = p.price(payment.amount, payment.currency);
    let values = [("shop", shop.name.as_str()), ("order", order.as_str()), ("amount", amount.as_str())];
    let mut letter;
    if payment.amount == 0
        && let (Some(plan), Some((next_amount, at))) = (&plan, next)
    {
        // A free trial's card check: the card is saved, the trial runs.
        letter = Letter::new(t, shop, mail.test, fill(t.trial_subject, &values), t.trial_heading);
        let (price, date) = (p.price(next_amount, plan.currency), when(at, unit, tz, p));
        let every = p.every(plan.interval, plan.interval_unit);
        let trial = [values[0], values[1], ("amount", price.as_str()), ("date", date.as_str()), ("every", &every)];
        letter.paragraphs.push(fill(t.trial_body, &trial));
        letter.after.push(t.how_to_cancel.to_string());
    } else {
        letter = Letter::new(t, shop, mail.test, fill(t.receipt_subject, &values), t.receipt_heading);
        letter.paragraphs.push(fill(t.receipt_body, &values));
        letter.facts.push((t.amount.into(), amount.clone()));
        letter.facts.push((t.order.into(), order.clone()));
        letter.facts.push((t.date.into(), crate::web::locale::date_time(payment.created_at, tz, p.language)));
        if !payment.card_last4.is_empty() {
            letter.facts.push((t.card.into(), payment.card_label()));
        }
        letter.facts.push((t.payment.into(), payment.id.clone()));
        if let (Some(plan), Some((next_amount, at))) = (&plan, next) {
            let next = p.on_date(&p.price(next_amount, plan.currency), &when(at, unit, tz, p));
            letter.facts.push((t.next_payment.into(), next));
        }
        if sub.is_some() {
            letter.after.push(t.receipt_cancel.to_string());
        }
        letter.action = Some((t.receipt_link.into(), urls::receipt(&state.config, &payment.id)));
        if let Some(invoice) = db::documents::invoice_of_payment(&state.db, &payment.id).await? {
            document(state, &mut letter, (t, t.invoice), &invoice);
        }
    }
    Ok(Ok((letter, customer)))
}

async fn refund(state: &AppState, shop: &shops::Model, tz: Tz, mail: &mails::Model) -> Result<Outcome, AppError> {
    let Some(refund) = db::find::<refunds::Entity>(&state.db, mail.shop_id, &mail.object_id).await? else {
        return Ok(Err("the refund is gone".into()));
    };
    let Some(payment) = db::find::<payments::Entity>(&state.db, mail.shop_id, &refund.payment_id).await? else {
        return Ok(Err("the payment is gone".into()));
    };
    let Some(customer) = customer(state, mail.shop_id, payment.customer_id.as_deref()).await? else {
        return Ok(Err("the payment has no customer".into()));
    };
    let (order, language, _) = order_of(state, &payment).await?;
    let (t, p) = (mail_texts(language), texts(language));
    let amount = p.price(refund.amount, payment.currency);
    let values = [("shop", shop.name.as_str()), ("order", order.as_str()), ("amount", amount.as_str())];
    let mut letter = Letter::new(t, shop, mail.test, fill(t.refund_subject, &values), t.refund_heading);
    letter.paragraphs.push(fill(t.refund_body, &values));
    letter.facts.push((t.amount.into(), amount.clone()));
    letter.facts.push((t.order.into(), order));
    letter.facts.push((t.date.into(), crate::web::locale::date_time(refund.created_at, tz, p.language)));
    letter.facts.push((t.payment.into(), payment.id.clone()));
    if let Some(note) = db::documents::by_source(&state.db, &format!("refund:{}", refund.id)).await? {
        document(state, &mut letter, (t, t.credit_note), &note);
    }
    Ok(Ok((letter, customer)))
}

/// A mail's invoice or credit note: its number among the facts, and a link to its PDF.
fn document(state: &AppState, letter: &mut Letter, (t, label): (&MailTexts, &str), d: &documents::Model) {
    letter.facts.push((label.into(), d.number_text.clone()));
    let pdf = format!("{}/pdf", urls::document(&state.config, &d.id));
    letter.links.push((fill(t.document_link, &[("number", &d.number_text)]), pdf));
}

/// A subscription's mails: what its event recorded (state, next charge), else as it is.
async fn subscription(state: &AppState, shop: &shops::Model, tz: Tz, mail: &mails::Model) -> Result<Outcome, AppError> {
    let Some(sub) = db::find::<subscriptions::Entity>(&state.db, mail.shop_id, &mail.object_id).await? else {
        return Ok(Err("the subscription is gone".into()));
    };
    let Some(plan) = db::find::<plans::Entity>(&state.db, mail.shop_id, &sub.plan_id).await? else {
        return Ok(Err("the plan is gone".into()));
    };
    let Some(customer) = customer(state, mail.shop_id, Some(&sub.customer_id)).await? else {
        return Ok(Err("the subscription has no customer".into()));
    };
    let snapshot = match &mail.event_id {
        Some(id) => db::events::by_ids(&state.db, vec![id.clone()]).await?.pop(),
        None => None,
    };
    let data: serde_json::Value =
        snapshot.map(|e| serde_json::from_str(&e.data).unwrap_or_default()).unwrap_or_default();
    let then_state = data["state"].as_str().and_then(State::parse).unwrap_or(sub.state);
    // A reminder tells of the charge it was queued for (its key names it), an event's mail
    // of the moment its event recorded: a test clock may have moved on since.
    let reminded_for = mail.event_id.is_none().then(|| rules::reminder_time(&mail.dedupe_key)).flatten();
    let renew_at = match &data["renew_at"] {
        serde_json::Value::String(at) => at.parse::<DateTime<Utc>>().ok(),
        _ => reminded_for.or(sub.renew_at),
    };
    let language = plan.language;
    let (t, p) = (mail_texts(language), texts(language));
    let unit = Some(plan.interval_unit);
    let card = match (&sub.card_brand, &sub.card_last4) {
        (Some(brand), Some(last4)) => format!("{} •••• {last4}", crate::domain::card::brand_name(brand)),
        _ => "—".into(),
    };
    let next_amount = match reminded_for {
        Some(_) => plan.amount,
        None => {
            let coupon = db::coupons::of_subscription(&state.db, &sub).await?;
            sub.next_charge(&plan, coupon.as_ref()).map_or(plan.amount, |(amount, _)| amount)
        }
    };
    let next_amount = crate::services::taxes::of_subscription(&state.db, &sub, &plan, next_amount).await?;
    let amount = p.price(next_amount, plan.currency);
    let date = renew_at.map(|at| when(at, unit, tz, p)).unwrap_or_default();
    let every = p.every(plan.interval, plan.interval_unit);
    let values = [
        ("shop", shop.name.as_str()),
        ("order", plan.title.as_str()),
        ("amount", amount.as_str()),
        ("card", card.as_str()),
        ("date", date.as_str()),
        ("every", every.as_str()),
    ];
    let card_link = urls::subscription_pay(&state.config, &sub.id);
    let update_card = MANAGE.to_string();
    // A reminder whose subscription has ended, paused, or will end or pause with its period
    // since it was queued has nothing to say.
    let reminder_applies =
        !sub.state.has_ended() && sub.state != State::Paused && !sub.cancel_at_period_end && !sub.pause_at_period_end;
    let letter = match mail.kind {
        MailKind::RenewalFailed if then_state == State::Redirecting => {
            let mut letter = Letter::new(t, shop, mail.test, fill(t.confirm_subject, &values), t.failed_heading);
            letter.paragraphs.push(fill(t.confirm_body, &values));
            letter.action = Some((t.confirm_action.into(), card_link));
            letter
        }
        MailKind::RenewalFailed => {
            let last = match &sub.last_payment_id {
                Some(id) => db::find::<payments::Entity>(&state.db, mail.shop_id, id).await?,
                None => None,
            };
            let (failed_amount, reason) = match &last {
                Some(pay) => (
                    p.price(pay.amount, pay.currency),
                    p.failure(
                        pay.failure_code.as_deref().unwrap_or(""),
                        pay.failure_message.as_deref().unwrap_or(pay.status.as_str()),
                    ),
                ),
                None => (amount.clone(), String::new()),
            };
            let mut letter = Letter::new(t, shop, mail.test, fill(t.failed_subject, &values), t.failed_heading);
            let failed = [values[1], ("amount", failed_amount.as_str()), values[3], ("reason", reason.as_str())];
            letter.paragraphs.push(fill(t.failed_body, &failed));
            letter.paragraphs.push(fill(t.failed_retry, &values));
            letter.action = Some((t.failed_action.into(), update_card));
            letter
        }
        MailKind::SubscriptionEnded => {
            let mut letter = Letter::new(t, shop, mail.test, fill(t.ended_subject, &values), t.ended_heading);
            letter.paragraphs.push(fill(t.ended_body, &values));
            letter
        }
        MailKind::CancellationConfirmed if then_state.has_ended() => {
            let at = sub.cancelled_at.unwrap_or(mail.created_at);
            let on = when(at, unit, tz, p);
            let values = [values[0], values[1], ("date", on.as_str())];
            let mut letter = Letter::new(t, shop, mail.test, fill(t.canceled_subject, &values), t.canceled_heading);
            letter.paragraphs.push(fill(t.canceled_body, &values));
            letter
        }
        MailKind::CancellationConfirmed => {
            if !sub.cancel_at_period_end {
                return Ok(Err("the cancellation was withdrawn".into()));
            }
            let mut letter = Letter::new(t, shop, mail.test, fill(t.ending_subject, &values), t.ending_heading);
            letter.paragraphs.push(fill(t.ending_body, &values));
            letter.after.push(t.ending_undo.to_string());
            letter
        }
        MailKind::TrialEnding if reminder_applies => {
            let mut letter =
                Letter::new(t, shop, mail.test, fill(t.trial_ending_subject, &values), t.trial_ending_heading);
            letter.paragraphs.push(fill(t.trial_ending_body, &values));
            letter.after.push(t.how_to_cancel.to_string());
            letter
        }
        MailKind::RenewalReminder if reminder_applies => {
            let mut letter = Letter::new(t, shop, mail.test, fill(t.renewal_subject, &values), t.renewal_heading);
            letter.paragraphs.push(fill(t.renewal_body, &values));
            letter.after.push(t.how_to_cancel.to_string());
            letter
        }
        MailKind::CardExpiring if reminder_applies => {
            let (Some(month), Some(year)) = (sub.card_exp_month, sub.card_exp_year) else {
                return Ok(Err("the subscription has no card".into()));
            };
            let expiry = format!("{month:02}/{year}");
            let values = [values[1], values[2], values[3], values[4], ("expiry", expiry.as_str())];
            let mut letter = Letter::new(t, shop, mail.test, fill(t.card_subject, &values), t.card_heading);
            letter.paragraphs.push(fill(t.card_body, &values));
            letter.action = Some((t.card_action.into(), update_card));
            letter
        }
        _ => return Ok(Err("the reminder no longer applies: the subscription changed".into())),
    };
    Ok(Ok((letter, customer)))
}

/// The mail that answers a subscriber asking for a link to their page.
pub fn portal_link(shop: &shops::Model, language: Language, test: bool, url: &str) -> Letter {
    let t = mail_texts(language);
    let values = [("shop", shop.name.as_str())];
    let mut letter = Letter::new(t, shop, test, fill(t.link_subject, &values), t.link_heading);
    letter.paragraphs.push(fill(t.link_body, &values));
    letter.action = Some((t.link_action.into(), url.to_string()));
    letter.after.push(t.link_ignore.to_string());
    letter
}

/// A mail of each kind as the shop's customers would get it, with made-up facts: for the
/// dashboard's previews; none for the mails to the shop's own users.
pub fn preview(shop: &shops::Model, kind: MailKind, language: Language, test: bool) -> Option<Letter> {
    let (t, p) = (mail_texts(language), texts(language));
    let amount = p.price(990, crate::domain::currency::Currency { code: "EUR", exponent: 2 });
    let date = crate::web::locale::date(Utc::now() + chrono::TimeDelta::days(7), Tz::UTC, language);
    let order = if language == Language::Ru { "Ежемесячная подписка" } else { "Monthly plan" };
    let every = p.every(1, IntervalUnit::Month);
    let reason = p.failure("insufficient_funds", "");
    let values = [
        ("shop", shop.name.as_str()),
        ("order", order),
        ("amount", amount.as_str()),
        ("card", "Visa •••• 4242"),
        ("date", date.as_str()),
        ("every", every.as_str()),
        ("expiry", "12/2026"),
        ("reason", reason.as_str()),
    ];
    let (subject, heading, body) = match kind {
        MailKind::Receipt => (t.receipt_subject, t.receipt_heading, t.receipt_body),
        MailKind::RefundReceipt => (t.refund_subject, t.refund_heading, t.refund_body),
        MailKind::RenewalFailed => (t.failed_subject, t.failed_heading, t.failed_body),
        MailKind::SubscriptionEnded => (t.ended_subject, t.ended_heading, t.ended_body),
        MailKind::TrialEnding => (t.trial_ending_subject, t.trial_ending_heading, t.trial_ending_body),
        MailKind::RenewalReminder => (t.renewal_subject, t.renewal_heading, t.renewal_body),
        MailKind::CardExpiring => (t.card_subject, t.card_heading, t.card_body),
        MailKind::CancellationConfirmed => (t.ending_subject, t.ending_heading, t.ending_body),
        MailKind::PortalLink => (t.link_subject, t.link_heading, t.link_body),
        MailKind::SecurityNotice | MailKind::AccountLocked | MailKind::DisputeOpened | MailKind::RefundFailedLater => {
            return None;
        }
    };
    let mut letter = Letter::new(t, shop, test, fill(subject, &values), heading);
    letter.paragraphs.push(fill(body, &values));
    Some(letter)
}
