//! A document as it reads, in its language: every amount, date and rate written out. Its PDF
//! and its page show the same sheet.

use chrono::{DateTime, Utc};

use super::Words;
use crate::db::entities::documents;
use crate::domain::invoice::{Content, LineTax, Party, TaxTreatment};
use crate::domain::tax::format_percentage;

/// A document written out.
pub struct Sheet {
    pub title: &'static str,
    /// A test document's warning.
    pub test: Option<&'static str>,
    /// Its number, date, payment, and the invoice it corrects: label and value.
    pub facts: Vec<(&'static str, String)>,
    pub seller: Vec<String>,
    pub buyer: Vec<String>,
    pub lines: Vec<SheetLine>,
    pub taxes: Vec<SheetTax>,
    /// Net, tax, total (the one in bold), paid, due.
    pub totals: Vec<(&'static str, String, bool)>,
    pub notes: Vec<String>,
    pub footer: Option<String>,
}

pub struct SheetLine {
    pub description: String,
    pub period: Option<String>,
    pub quantity: String,
    pub unit_price: String,
    pub discount: String,
    pub rate: String,
    pub net: String,
    pub tax: String,
    pub gross: String,
}

pub struct SheetTax {
    pub rate: String,
    pub net: String,
    pub tax: String,
    pub gross: String,
}

impl Sheet {
    pub fn of(d: &documents::Model, c: &Content) -> Sheet {
        let w = Words::of(d.language);
        let money = |amount: i64| crate::web::locale::money(amount, d.currency, w.language);
        let mut facts = vec![(w.number, d.number_text.clone()), (w.issued, day(d.issued_at, w))];
        if let Some(invoice) = &c.invoice_number {
            facts.push((w.corrects, invoice.clone()));
        }
        if let Some(payment) = &d.payment_id {
            facts.push((w.payment, payment.clone()));
        }
        let lines = c
            .lines
            .iter()
            .map(|l| SheetLine {
                description: l.description.clone(),
                period: l
                    .period
                    .map(|p| format!("{} – {}", day(p.start, w), day(p.end - chrono::Duration::seconds(1), w))),
                quantity: l.quantity.to_string(),
                unit_price: money(l.unit_price),
                discount: if l.discount == 0 { String::new() } else { money(l.discount) },
                rate: rate(&l.tax, w),
                net: money(l.net),
                tax: money(l.tax_amount),
                gross: money(l.gross),
            })
            .collect();
        let taxes = c
            .taxes
            .iter()
            .map(|t| {
                let tax = LineTax {
                    treatment: t.treatment,
                    percentage: t.percentage,
                    rate_id: None,
                    rate_name: None,
                    exemption_reason: None,
                };
                SheetTax { rate: rate(&tax, w), net: money(t.net), tax: money(t.tax), gross: money(t.gross) }
            })
            .collect();
        let totals = c.totals();
        Sheet {
            title: w.title(d.kind, c.invoice_number.is_some()),
            test: d.test.then_some(w.test),
            facts,
            seller: party(&c.seller, w),
            buyer: party(&c.buyer, w),
            lines,
            taxes,
            totals: vec![
                (w.net, money(totals.net), false),
                (w.tax, money(totals.tax), false),
                (w.total, money(totals.gross), true),
                (w.paid, money(totals.gross), false),
                (w.due, money(0), false),
            ],
            notes: c.reason.iter().chain(&c.notes).cloned().collect(),
            footer: c.footer.clone(),
        }
    }
}

/// A party's lines: company, name, address, country, VAT id, registration, e-mail.
fn party(p: &Party, w: &Words) -> Vec<String> {
    let mut rows = Vec::new();
    if let Some(company) = p.company.as_ref().filter(|c| !c.is_empty()) {
        rows.push(company.clone());
    }
    if !p.name.is_empty() {
        rows.push(p.name.clone());
    }
    rows.extend(p.address_line1.iter().chain(&p.address_line2).cloned());
    let city = [p.postal_code.as_deref(), p.city.as_deref(), p.region.as_deref()];
    let city = city.into_iter().flatten().filter(|s| !s.is_empty()).collect::<Vec<_>>().join(" ");
    if !city.is_empty() {
        rows.push(city);
    }
    if let Some(country) = &p.country {
        rows.push(crate::web::locale::country_name(country, w.language));
    }
    if let Some(vat_id) = &p.vat_id {
        rows.push(format!("{}: {vat_id}", w.vat_id));
    }
    if let Some(number) = &p.registration_number {
        rows.push(format!("{}: {number}", w.registration));
    }
    rows.extend(p.email.iter().cloned());
    rows
}

/// What a line's tax is called: its rate, or why it has none.
fn rate(tax: &LineTax, w: &Words) -> String {
    match tax.treatment {
        TaxTreatment::NotSubject => w.not_subject.to_owned(),
        TaxTreatment::ReverseCharge => format!("0 % ({})", w.reverse_charge),
        _ => format!("{} %", format_percentage(tax.percentage)),
    }
}

/// A day as the document's language writes it, in UTC (as its XML does).
fn day(at: DateTime<Utc>, w: &Words) -> String {
    crate::web::locale::date(at, chrono_tz::UTC, w.language)
}
