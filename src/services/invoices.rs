//! Invoices: each charge that takes money is invoiced in the transaction that records it, so
//! a succeeded charge never stands without its invoice, nor an invoice without its charge,
//! whatever is retried, answered twice or stopped. A shop issues invoices once its seller
//! details are complete; until then its customers get receipts only.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sea_orm::{ConnectionTrait, DbErr};

use crate::config::Config;
use crate::db::documents::{NewDocument, payment_source};
use crate::db::entities::{customers, documents, payments, plans, products, subscriptions, tax_rates};
use crate::db::{self, events::NewEvent};
use crate::domain::billing::{self as rules, Terms};
use crate::domain::checkout;
use crate::domain::event::EventType;
use crate::domain::invoice::{self, DocumentKind, DocumentLanguage, LineInput, LineTax, Party, Period, TaxTreatment};
use crate::domain::tax::{TaxBehavior, line_amounts};
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
    for (shop_id, details) in db::sellers::of_shops(txn, &shops).await? {
        let Some(seller) = Party::seller(&details) else { continue };
        let footer = details.invoice_footer;
        let of_shop: Vec<&payments::Model> = taken.iter().copied().filter(|p| p.shop_id == shop_id).collect();
        let about = About::load(txn, shop_id, &of_shop).await?;
        for p in of_shop {
            match about.invoice(p, &seller, footer.clone(), config.timezone, now) {
                Some(document) => new.push(document),
                None => {
                    tracing::error!(payment = %p.id, "a succeeded charge could not be invoiced: what it paid for is gone")
                }
            }
        }
    }
    let issued = db::documents::issue(txn, new, now).await?;
    let events: Vec<NewEvent> = issued.iter().map(|d| event(d, config)).collect();
    crate::services::events::record(txn, config, events).await?;
    Ok(issued)
}

/// Issues, in the caller's transaction, the credit note of money a payment gave back:
/// `source` (`refund:rfd_…`, `dispute:dsp_…`) gave back `amount` of payment `payment_id`.
/// Nothing when the payment has no invoice (it was paid before the seller's details were
/// complete); no more than what is left of the invoice to credit.
pub async fn credit(
    txn: &impl ConnectionTrait,
    config: &Config,
    (source, payment_id): (String, &str),
    amount: i64,
    reason: Option<String>,
    now: DateTime<Utc>,
) -> Result<Option<documents::Model>, DbErr> {
    let Some(payment) = db::find_public::<payments::Entity>(txn, payment_id).await? else { return Ok(None) };
    // Held before the invoice and what was credited of it are read: two credits of one
    // payment, or a credit and the invoice's reissue, go one after another.
    db::documents::hold(txn, (payment.shop_id, DocumentKind::CreditNote, payment.test), now).await?;
    let Some(invoice) = db::documents::invoice_of_payment(txn, payment_id).await? else { return Ok(None) };
    let (content, credited) = credited(txn, &invoice).await?;
    let amount = amount.min(content.totals().gross - credited.total());
    let Some(lines) = invoice::credit_lines(&content, &credited, amount) else { return Ok(None) };
    let Some(note) = invoice::credit_note(&content, &invoice.number_text, lines, reason) else { return Ok(None) };
    let document = correcting(&invoice, DocumentKind::CreditNote, source, note, now);
    issue(txn, config, document, now).await
}

/// Issues, in the caller's transaction, the corrective invoice of a refund that failed after
/// its credit note was issued: it bills again what that credit note credited, so the books
/// show the money the merchant kept. Nothing when the refund had no credit note.
pub async fn rebill_failed_refund(
    txn: &impl ConnectionTrait,
    config: &Config,
    refund_id: &str,
    now: DateTime<Utc>,
) -> Result<Option<documents::Model>, DbErr> {
    let Some(note) = db::documents::by_source(txn, &format!("refund:{refund_id}")).await? else { return Ok(None) };
    let Some(invoice_id) = note.invoice_id.as_deref() else { return Ok(None) };
    let Some(invoice) = db::find_public::<documents::Entity>(txn, invoice_id).await? else { return Ok(None) };
    let credited: invoice::Content = read(&note)?;
    let reason = Some(format!("The refund {refund_id} failed after its credit note {} was issued", note.number_text));
    let content = invoice::Content { reason, invoice_number: Some(invoice.number_text.clone()), ..credited };
    let source = format!("refund_failed:{refund_id}");
    issue(txn, config, correcting(&invoice, DocumentKind::Invoice, source, content, now), now).await
}

/// An invoice's content, and what its documents credited so far.
async fn credited(
    txn: &impl ConnectionTrait,
    invoice: &documents::Model,
) -> Result<(invoice::Content, invoice::Credited), DbErr> {
    let content = read(invoice)?;
    let documents = db::documents::of_invoice(txn, invoice).await?;
    let read: Vec<(invoice::Content, bool)> =
        documents.iter().map(|d| Ok((read(d)?, d.kind == DocumentKind::CreditNote))).collect::<Result<_, DbErr>>()?;
    let credited = invoice::Credited::of(&content, read.iter().map(|(c, credits)| (c, *credits)));
    Ok((content, credited))
}

fn read(document: &documents::Model) -> Result<invoice::Content, DbErr> {
    serde_json::from_str(&document.content).map_err(|e| DbErr::Custom(format!("document {}: {e}", document.id)))
}

/// A document that corrects `invoice`, of `kind`, for `source`.
fn correcting(
    invoice: &documents::Model,
    kind: DocumentKind,
    source: String,
    content: invoice::Content,
    now: DateTime<Utc>,
) -> NewDocument {
    NewDocument {
        shop_id: invoice.shop_id,
        kind,
        test: invoice.test,
        source,
        payment_id: invoice.payment_id.clone(),
        invoice_id: Some(invoice.id.clone()),
        customer_id: invoice.customer_id.clone(),
        subscription_id: invoice.subscription_id.clone(),
        currency: invoice.currency,
        language: invoice.language,
        issued_at: now,
        content,
    }
}

/// Issues one document with its event, in the caller's transaction.
async fn issue(
    txn: &impl ConnectionTrait,
    config: &Config,
    document: NewDocument,
    now: DateTime<Utc>,
) -> Result<Option<documents::Model>, DbErr> {
    let issued = db::documents::issue(txn, vec![document], now).await?.pop();
    crate::services::events::record(txn, config, issued.iter().map(|d| event(d, config)).collect()).await?;
    Ok(issued)
}

/// Whether a payment is invoiced: it took money (a saved card's zero-amount check does not).
fn invoiced(p: &payments::Model) -> bool {
    p.status == PaymentStatus::Succeeded
        && p.amount > 0
        && !p.billing_key.as_deref().is_some_and(rules::is_card_update_key)
}

/// The event of an issued document.
pub fn event(d: &documents::Model, config: &Config) -> NewEvent {
    let kind = match d.kind {
        DocumentKind::Invoice => EventType::InvoiceIssued,
        DocumentKind::CreditNote => EventType::CreditNoteIssued,
    };
    let data = serde_json::to_value(DocumentView::new(d, config)).unwrap_or_default();
    NewEvent { shop_id: d.shop_id, kind, object_id: d.id.clone(), test: d.test, data, child: None }
}

/// What a shop's payments were for and who made them (the stored customer only where the
/// page took no buyer), read in a few queries.
struct About {
    customers: HashMap<String, customers::Model>,
    products: HashMap<String, products::Model>,
    plans: HashMap<String, plans::Model>,
    subscriptions: HashMap<String, subscriptions::Model>,
    rates: HashMap<String, tax_rates::Model>,
}

impl About {
    async fn load(txn: &impl ConnectionTrait, shop_id: i64, payments: &[&payments::Model]) -> Result<Self, DbErr> {
        let ids = |f: fn(&payments::Model) -> Option<&String>| -> Vec<&str> {
            payments.iter().filter_map(|p| f(p).map(String::as_str)).collect()
        };
        Ok(About {
            customers: db::by_ids::<customers::Entity>(
                txn,
                shop_id,
                &ids(|p| p.customer_id.as_ref().filter(|_| typed(p).is_none())),
            )
            .await?,
            products: db::by_ids::<products::Entity>(txn, shop_id, &ids(|p| p.product_id.as_ref())).await?,
            plans: db::by_ids::<plans::Entity>(txn, shop_id, &ids(|p| p.plan_id.as_ref())).await?,
            subscriptions: db::by_ids::<subscriptions::Entity>(txn, shop_id, &ids(|p| p.subscription_id.as_ref()))
                .await?,
            rates: db::by_ids::<tax_rates::Entity>(txn, shop_id, &ids(|p| p.tax_rate_id.as_ref())).await?,
        })
    }

    /// How a payment's line is taxed, as it was charged, and whether its price held the tax.
    fn tax_of(&self, p: &payments::Model) -> (LineTax, bool) {
        let Some(rate) = p.tax_rate_id.as_ref().and_then(|id| self.rates.get(id)) else {
            return (LineTax::none(), true);
        };
        let treatment = if p.reverse_charge { TaxTreatment::ReverseCharge } else { TaxTreatment::from(rate.category) };
        let tax = LineTax {
            treatment,
            percentage: if p.reverse_charge { 0 } else { rate.percentage },
            rate_id: Some(rate.id.clone()),
            rate_name: Some(rate.name.clone()),
            exemption_reason: rate.exemption_reason.clone(),
        };
        (tax, p.tax_behavior != Some(TaxBehavior::Exclusive))
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
        let (tax, tax_included) = self.tax_of(p);
        // An added tax is not part of the price the line starts from.
        let price = if tax_included { p.amount } else { p.amount.checked_sub(p.tax_amount)? };
        // A capture of part of an authorization took less than the price and its tax: its
        // line holds the tax of what it took.
        let added = line_amounts(1, price, 0, tax.percentage, false).map(|l| l.gross);
        let (price, tax_included) = match tax_included || added == Some(p.amount) {
            true => (price, tax_included),
            false => (p.amount, true),
        };
        let line = LineInput {
            description,
            period,
            quantity: 1,
            unit_price: price.checked_add(p.discount_amount)?,
            discount: p.discount_amount,
            tax,
            tax_included,
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

/// The buyer: as the pay page took them for this payment, else the paying customer as
/// stored; named by their name (by their e-mail without one), or by the name on the card when
/// the page asked for neither.
fn buyer(c: Option<&customers::Model>, p: &payments::Model) -> Party {
    let Some(c) = typed(p).or_else(|| c.map(customers::Model::fields)) else {
        return Party { name: p.card_holder.clone(), ..Party::default() };
    };
    let name = [c.first_name.as_deref(), c.last_name.as_deref()].into_iter().flatten().collect::<Vec<_>>().join(" ");
    let name = [name.trim(), c.email.trim(), p.card_holder.trim()].into_iter().find(|n| !n.is_empty());
    Party {
        name: name.unwrap_or_default().to_owned(),
        company: c.company,
        address_line1: c.address,
        city: c.city,
        postal_code: c.zip,
        region: c.state,
        country: c
            .country
            .or_else(|| c.vat_id.as_deref().and_then(crate::domain::vat_id::country_of).map(str::to_owned)),
        vat_id: c.vat_id,
        email: Some(c.email).filter(|e| !e.is_empty()),
        ..Party::default()
    }
}

/// The buyer as the pay page took them for this payment, if it did.
fn typed(p: &payments::Model) -> Option<crate::domain::customer::CustomerFields> {
    p.customer_details.as_deref().and_then(checkout::customer_from_json)
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

/// Issues, when asked (`paydesk invoices issue`), the invoices of the shop's charges that took
/// money and have none: those made before an upgrade brought invoices, or before the seller
/// details were complete. Each is issued as of now (its supply keeps the charge's date and
/// period), oldest first, each in its own transaction, with the credit notes of the refunds
/// that gave money back of it since. Answers how many invoices were issued: nothing when the
/// seller details are still incomplete. Asked again, it issues only what is still missing.
pub async fn issue_missing(
    db: &sea_orm::DatabaseConnection,
    config: &Config,
    shop_id: i64,
    now: DateTime<Utc>,
) -> Result<usize, DbErr> {
    if Party::seller(&db::sellers::find(db, shop_id).await?).is_none() {
        return Ok(0);
    }
    let mut issued = 0;
    let mut after = 0;
    loop {
        let batch = db::payments::taken_without_invoice(db, shop_id, after, 100).await?;
        let Some(last) = batch.last() else { return Ok(issued) };
        after = last.seq;
        for p in &batch {
            let txn = db::begin(db).await?;
            // The credit notes' series first, as refunds hold it: a refund recorded meanwhile
            // is credited by it or by this, once.
            db::documents::hold(&txn, (shop_id, DocumentKind::CreditNote, p.test), now).await?;
            // Invoiced for what was charged, whatever was given back since.
            let charged = payments::Model { status: PaymentStatus::Succeeded, ..p.clone() };
            if issue_for_payments(&txn, config, &[&charged], now).await?.is_empty() {
                // What it paid for is gone, or another run issued it: on to the next.
                continue;
            }
            for refund in db::refunds::of_payment(&txn, &p.id).await? {
                if refund.status == crate::domain::vocab::RefundStatus::Succeeded {
                    let source = (format!("refund:{}", refund.id), p.id.as_str());
                    credit(&txn, config, source, refund.amount, refund.reason.clone(), now).await?;
                }
            }
            txn.commit().await?;
            issued += 1;
        }
    }
}

/// Why an invoice is not issued again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotReissued {
    /// Something was credited of it already: its corrections go on from there.
    Credited,
    /// It was issued again already: the new one is the invoice to correct.
    Replaced,
    /// It is not a payment's invoice (it bills again what a failed refund's credit note
    /// credited): its payment's invoice is the one to correct.
    NotAPayments,
    /// It was reverse-charged, and the corrected buyer has no VAT id to account for the tax.
    NeedsVatId,
}

/// Issues `invoice` again for the `buyer` as corrected, in one transaction: a credit note of
/// all of it, and a new invoice (numbered on) with the same lines, as charged, naming the
/// buyer as corrected and the invoice it replaces. An issued invoice is never edited. Answers
/// the new invoice.
pub async fn reissue(
    db: &sea_orm::DatabaseConnection,
    config: &Config,
    invoice: &documents::Model,
    buyer: Party,
    now: DateTime<Utc>,
) -> Result<Result<documents::Model, NotReissued>, DbErr> {
    if !(invoice.source.starts_with("payment:") || invoice.source.starts_with(db::documents::REISSUE)) {
        return Ok(Err(NotReissued::NotAPayments));
    }
    let txn = db::begin(db).await?;
    // Held first: credits of this invoice are worked out one after another.
    db::documents::hold(&txn, (invoice.shop_id, DocumentKind::CreditNote, invoice.test), now).await?;
    let source = format!("{}{}", db::documents::REISSUE, invoice.id);
    if db::documents::by_source(&txn, &source).await?.is_some() {
        return Ok(Err(NotReissued::Replaced));
    }
    let (content, credited) = credited(&txn, invoice).await?;
    if credited.total() != 0 {
        return Ok(Err(NotReissued::Credited));
    }
    let reverse_charged = content.lines.iter().any(|l| l.tax.treatment == TaxTreatment::ReverseCharge);
    if reverse_charged && buyer.vat_id.is_none() {
        return Ok(Err(NotReissued::NeedsVatId));
    }
    let reason = match invoice.language {
        DocumentLanguage::En => format!("The buyer's details of invoice {} were corrected", invoice.number_text),
        DocumentLanguage::Ru => format!("Исправлены данные покупателя в счёте {}", invoice.number_text),
    };
    let whole = content.totals().gross;
    let note = invoice::credit_lines(&content, &credited, whole)
        .and_then(|lines| invoice::credit_note(&content, &invoice.number_text, lines, Some(reason.clone())));
    let Some(note) = note else { return Err(DbErr::Custom(format!("invoice {} could not be credited", invoice.id))) };
    let credit_source = format!("reissued:{}", invoice.id);
    issue(&txn, config, correcting(invoice, DocumentKind::CreditNote, credit_source, note, now), now).await?;
    let replacement = invoice::Content {
        buyer: buyer.clone(),
        invoice_number: Some(invoice.number_text.clone()),
        reason: Some(reason),
        ..content
    };
    let Some(issued) =
        issue(&txn, config, correcting(invoice, DocumentKind::Invoice, source, replacement, now), now).await?
    else {
        return Err(DbErr::Custom(format!("invoice {} could not be issued again", invoice.id)));
    };
    let changes = vec![crate::domain::audit::Change::of("buyer", &content_buyer(invoice)?, &buyer)];
    db::audit::record_acting(&txn, invoice.shop_id, "invoice.reissued", ("invoice", &invoice.id), changes, now).await?;
    txn.commit().await?;
    Ok(Ok(issued))
}

/// The buyer an invoice names.
fn content_buyer(invoice: &documents::Model) -> Result<Party, DbErr> {
    Ok(read(invoice)?.buyer)
}
