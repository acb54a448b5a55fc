//! Invoices: each charge that takes money is invoiced in the transaction that records it, so
//! a succeeded charge never stands without its invoice, nor an invoice without its charge,
//! whatever is retried, answered twice or stopped. A shop issues invoices once its seller
//! details are complete; until then its customers get receipts only.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sea_orm::{ConnectionTrait, DbErr};

use crate::config::Config;
use crate::db::documents::{NewDocument, payment_source};
use crate::db::entities::{customers, documents, payments, plans, products, subscriptions};
use crate::db::{self, events::NewEvent};
use crate::domain::billing::{self as rules, Terms};
use crate::domain::event::EventType;
use crate::domain::invoice::{self, DocumentKind, DocumentLanguage, LineInput, LineTax, Party, Period};
use crate::domain::vocab::PaymentStatus;
use crate::web::views::DocumentView;

/// Issues, in the caller's transaction, the invoice of each of `payments` that took money
/// and has none yet, and records their `invoice.issued` events; answers the invoices.
pub async fn issue_for_payments(
    txn: &impl ConnectionTrait,
    config: &Config,
    payments: &[&payments::Model],
    now: DateTime<Utc>,
) -> Result<Vec<documents::Model>, DbErr> {
    let taken: Vec<&payments::Model> = payments.iter().copied().filter(|p| invoiced(p)).collect();
    if taken.is_empty() {
        return Ok(Vec::new());
    }
    let mut new = Vec::with_capacity(taken.len());
    let mut shops: Vec<i64> = taken.iter().map(|p| p.shop_id).collect();
    shops.sort_unstable();
    shops.dedup();
    for shop_id in shops {
        let details = db::sellers::find(txn, shop_id).await?;
        let Some(seller) = Party::seller(&details) else { continue };
        let footer = details.invoice_footer;
        let of_shop: Vec<&payments::Model> = taken.iter().copied().filter(|p| p.shop_id == shop_id).collect();
        let about = About::load(txn, shop_id, &of_shop).await?;
        for p in of_shop {
            if let Some(document) = about.invoice(p, &seller, footer.clone(), config.timezone, now) {
                new.push(document);
            }
        }
    }
    let issued = db::documents::issue(txn, new, now).await?;
    let events: Vec<NewEvent> = issued.iter().map(event).collect();
    crate::services::events::record(txn, config, events).await?;
    Ok(issued)
}

/// Issues, in the caller's transaction, the credit note of money a payment gave back:
/// `source` (`refund:rfd_…`, `dispute:dsp_…`) gave back `amount` of payment `payment_id`.
/// Nothing when the payment has no invoice (it was paid before the seller's details were
/// complete), or its invoice is credited in full already. Call it after the payment's row
/// was changed in the same transaction: that holds the row, so credit notes of one payment
/// are issued one after another.
pub async fn credit(
    txn: &impl ConnectionTrait,
    config: &Config,
    (source, payment_id): (String, &str),
    amount: i64,
    reason: Option<String>,
    now: DateTime<Utc>,
) -> Result<Option<documents::Model>, DbErr> {
    let Some(invoice) = db::documents::invoice_of_payment(txn, payment_id).await? else { return Ok(None) };
    let content: invoice::Content =
        serde_json::from_str(&invoice.content).map_err(|e| DbErr::Custom(format!("invoice {}: {e}", invoice.id)))?;
    let before = db::documents::credited(txn, &invoice.id).await?;
    let after = before.saturating_add(amount).min(invoice.gross_total);
    if after <= before {
        return Ok(None);
    }
    let Some(lines) = invoice::credit_lines(&content, before, after) else { return Ok(None) };
    let document = NewDocument {
        shop_id: invoice.shop_id,
        kind: DocumentKind::CreditNote,
        test: invoice.test,
        source,
        payment_id: invoice.payment_id.clone(),
        invoice_id: Some(invoice.id.clone()),
        customer_id: invoice.customer_id.clone(),
        subscription_id: invoice.subscription_id.clone(),
        currency: invoice.currency,
        language: invoice.language,
        issued_at: now,
        content: invoice::credit_note(&content, &invoice.number_text, lines, reason),
    };
    let issued = db::documents::issue(txn, vec![document], now).await?.pop();
    crate::services::events::record(txn, config, issued.iter().map(event).collect()).await?;
    Ok(issued)
}

/// Whether a payment is invoiced: it took money (a saved card's zero-amount check does not).
fn invoiced(p: &payments::Model) -> bool {
    p.status == PaymentStatus::Succeeded
        && p.amount > 0
        && !p.billing_key.as_deref().is_some_and(rules::is_card_update_key)
}

/// The event of an issued document.
pub fn event(d: &documents::Model) -> NewEvent {
    let kind = match d.kind {
        DocumentKind::Invoice => EventType::InvoiceIssued,
        DocumentKind::CreditNote => EventType::CreditNoteIssued,
    };
    let data = serde_json::to_value(DocumentView::from(d)).unwrap_or_default();
    NewEvent { shop_id: d.shop_id, kind, object_id: d.id.clone(), test: d.test, data, child: None }
}

/// What a shop's payments were for and who made them, read in a few queries.
struct About {
    customers: HashMap<String, customers::Model>,
    products: HashMap<String, products::Model>,
    plans: HashMap<String, plans::Model>,
    subscriptions: HashMap<String, subscriptions::Model>,
}

impl About {
    async fn load(txn: &impl ConnectionTrait, shop_id: i64, payments: &[&payments::Model]) -> Result<Self, DbErr> {
        let ids = |f: fn(&payments::Model) -> Option<&String>| -> Vec<&str> {
            payments.iter().filter_map(|p| f(p).map(String::as_str)).collect()
        };
        Ok(About {
            customers: db::by_ids::<customers::Entity>(txn, shop_id, &ids(|p| p.customer_id.as_ref())).await?,
            products: db::by_ids::<products::Entity>(txn, shop_id, &ids(|p| p.product_id.as_ref())).await?,
            plans: db::by_ids::<plans::Entity>(txn, shop_id, &ids(|p| p.plan_id.as_ref())).await?,
            subscriptions: db::by_ids::<subscriptions::Entity>(txn, shop_id, &ids(|p| p.subscription_id.as_ref()))
                .await?,
        })
    }

    /// The invoice of `p`: one line, the product's unit or the plan's period, less its
    /// discount. `None` if what it was for is gone, or its amounts would overflow.
    fn invoice(
        &self,
        p: &payments::Model,
        seller: &Party,
        footer: Option<String>,
        tz: chrono_tz::Tz,
        now: DateTime<Utc>,
    ) -> Option<NewDocument> {
        let (description, period, language) = match (&p.product_id, &p.plan_id) {
            (Some(id), _) => {
                let product = self.products.get(id)?;
                (product.name.clone(), None, product.fields().language)
            }
            (None, Some(id)) => {
                let plan = self.plans.get(id)?;
                let sub = p.subscription_id.as_ref().and_then(|s| self.subscriptions.get(s));
                (plan.title.clone(), sub.and_then(|s| period_of(p, s, plan, tz)), plan.fields().language)
            }
            (None, None) => return None,
        };
        let language = DocumentLanguage::of_page(language);
        let line = LineInput {
            description,
            period,
            quantity: 1,
            unit_price: p.amount.checked_add(p.discount_amount)?,
            discount: p.discount_amount,
            tax: LineTax::none(),
            tax_included: true,
        };
        let buyer = buyer(p.customer_id.as_ref().and_then(|c| self.customers.get(c)), p);
        let content = invoice::content(seller.clone(), buyer, vec![line], footer, language)?;
        Some(NewDocument {
            shop_id: p.shop_id,
            kind: DocumentKind::Invoice,
            test: p.test,
            source: payment_source(&p.id),
            payment_id: Some(p.id.clone()),
            invoice_id: None,
            customer_id: p.customer_id.clone(),
            subscription_id: p.subscription_id.clone(),
            currency: p.currency,
            language,
            issued_at: now,
            content,
        })
    }
}

/// The buyer: the paying customer, named as the page took them (by their e-mail without a
/// name), or by the name on the card when the page asked for neither.
fn buyer(c: Option<&customers::Model>, p: &payments::Model) -> Party {
    let Some(c) = c else { return Party { name: p.card_holder.clone(), ..Party::default() } };
    let name = [c.first_name.as_deref(), c.last_name.as_deref()].into_iter().flatten().collect::<Vec<_>>().join(" ");
    Party {
        name: [name.trim(), c.email.trim(), p.card_holder.trim()]
            .into_iter()
            .find(|n| !n.is_empty())
            .unwrap_or_default()
            .to_owned(),
        address_line1: c.address.clone(),
        city: c.city.clone(),
        postal_code: c.zip.clone(),
        region: c.state.clone(),
        country: c.country.clone(),
        email: Some(c.email.clone()).filter(|e| !e.is_empty()),
        ..Party::default()
    }
}

/// The period a subscription's charge pays for: its trial, or its plan period; none for a
/// plan change's charge (it pays for the rest of a period already under way).
fn period_of(
    p: &payments::Model,
    sub: &subscriptions::Model,
    plan: &plans::Model,
    tz: chrono_tz::Tz,
) -> Option<Period> {
    let (period, _) = rules::charge_of_key(p.billing_key.as_deref()?)?;
    if period < 0 {
        return Some(Period { start: sub.started_at?, end: sub.trial_ends_at? });
    }
    let terms = Terms::from(&plan.fields());
    let anchor = sub.anchor(p.created_at);
    Some(Period { start: terms.start_of(anchor, period, tz), end: terms.start_of(anchor, period + 1, tz) })
}
