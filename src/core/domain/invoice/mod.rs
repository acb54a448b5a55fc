//! Invoices and credit notes as issued: who sold to whom, the lines with their tax, the
//! totals per rate, and the notes the law asks for. A document's content is worked out once,
//! when it is issued, and kept as it was: what it prints never changes, whatever later
//! happens to the shop's details, the customer or the rates.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::seller::Seller;

mod buyer;
pub mod cii;
mod credit;
mod filter;

use super::tax::{LineAmounts, TaxCategory, line_amounts};
use super::vocab::{Language, words};
pub use buyer::parse_buyer;
pub use credit::{Credited, credit_lines, credit_note};
pub use filter::DocumentFilter;

words! {
    /// What a document of the books is.
    DocumentKind { Invoice = "invoice", CreditNote = "credit_note" }
}

words! {
    /// The languages documents are written in.
    DocumentLanguage { En = "en", Ru = "ru" }
}

impl DocumentKind {
    /// The prefix a shop's series of this kind starts with, in either mode (test documents
    /// say so in their number).
    pub fn default_prefix(self, test: bool) -> &'static str {
        match (self, test) {
            (DocumentKind::Invoice, false) => "INV-",
            (DocumentKind::Invoice, true) => "TEST-INV-",
            (DocumentKind::CreditNote, false) => "CN-",
            (DocumentKind::CreditNote, true) => "TEST-CN-",
        }
    }
}

impl DocumentLanguage {
    /// The language of a document for a page in `language`: Russian for a Russian page,
    /// English for any other.
    pub fn of_page(language: Language) -> Self {
        match language {
            Language::Ru => DocumentLanguage::Ru,
            _ => DocumentLanguage::En,
        }
    }
}

/// A document's number as printed: its series' prefix and the number, at least six digits.
pub fn number_text(prefix: &str, number: i64) -> String {
    format!("{prefix}{number:06}")
}

/// A seller or a buyer as the document names them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Party {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub company: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address_line1: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address_line2: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub city: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub postal_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub country: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vat_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration_number: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
}

impl Party {
    /// The seller of a shop whose details are complete; `None` while invoices cannot start.
    pub fn seller(s: &Seller) -> Option<Party> {
        if !s.missing().is_empty() {
            return None;
        }
        Some(Party {
            name: s.legal_name.clone()?,
            address_line1: s.address_line1.clone(),
            address_line2: s.address_line2.clone(),
            city: s.city.clone(),
            postal_code: s.postal_code.clone(),
            country: s.country.clone(),
            vat_id: s.vat_id.clone(),
            registration_number: s.registration_number.clone(),
            ..Party::default()
        })
    }
}

/// How a line is taxed, in EN 16931's categories: a shop's rate (`S`, `Z`, `E`), a reverse
/// charge (`AE`: the buyer accounts for the tax), or no tax at all (`O`: the product or plan
/// names no rate).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaxTreatment {
    Standard,
    ZeroRated,
    Exempt,
    ReverseCharge,
    NotSubject,
}

impl TaxTreatment {
    /// The category code of EN 16931 (UNCL 5305).
    pub fn code(self) -> &'static str {
        match self {
            TaxTreatment::Standard => "S",
            TaxTreatment::ZeroRated => "Z",
            TaxTreatment::Exempt => "E",
            TaxTreatment::ReverseCharge => "AE",
            TaxTreatment::NotSubject => "O",
        }
    }
}

impl From<TaxCategory> for TaxTreatment {
    fn from(category: TaxCategory) -> Self {
        match category {
            TaxCategory::Standard => TaxTreatment::Standard,
            TaxCategory::ZeroRated => TaxTreatment::ZeroRated,
            TaxCategory::Exempt => TaxTreatment::Exempt,
        }
    }
}

/// The tax of a line: its treatment, the percentage (ten-thousandths of a percent), and the
/// shop's rate it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineTax {
    pub treatment: TaxTreatment,
    pub percentage: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_name: Option<String>,
    /// Why the sale is exempt (an exempt rate's reason).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exemption_reason: Option<String>,
}

impl LineTax {
    /// No tax: the product or plan names no rate.
    pub fn none() -> Self {
        LineTax {
            treatment: TaxTreatment::NotSubject,
            percentage: 0,
            rate_id: None,
            rate_name: None,
            exemption_reason: None,
        }
    }
}

/// The period a line's supply covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Period {
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
}

/// A line as it is asked for: what was sold, and for how much in the price's own terms
/// (with its tax when `tax_included`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineInput {
    pub description: String,
    pub period: Option<Period>,
    pub quantity: i64,
    pub unit_price: i64,
    pub discount: i64,
    pub tax: LineTax,
    pub tax_included: bool,
}

/// A line of an issued document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Line {
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period: Option<Period>,
    pub quantity: i64,
    /// The price of one, with its tax when `tax_included`.
    pub unit_price: i64,
    /// Taken off the line, in the price's terms.
    pub discount: i64,
    pub tax_included: bool,
    pub tax: LineTax,
    pub net: i64,
    pub tax_amount: i64,
    pub gross: i64,
    /// On a credit note or a corrective invoice: the line of the invoice it credits (from 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invoice_line: Option<usize>,
}

/// The tax of a document at one rate: what its lines at that rate add up to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaxTotal {
    pub treatment: TaxTreatment,
    pub percentage: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exemption_reason: Option<String>,
    pub net: i64,
    pub tax: i64,
    pub gross: i64,
}

/// What an issued document says, kept as issued.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Content {
    pub seller: Party,
    pub buyer: Party,
    pub lines: Vec<Line>,
    pub taxes: Vec<TaxTotal>,
    /// What the law asks to be said (a reverse charge, an exemption), in the document's
    /// language.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub footer: Option<String>,
    /// For a credit note: the number of the invoice it corrects, and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub invoice_number: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Content {
    /// The document's totals: net, tax, gross (each within 64 bits: [`content`] made sure).
    pub fn totals(&self) -> LineAmounts {
        let sum = |f: fn(&Line) -> i64| self.lines.iter().map(f).fold(0i64, |a, b| a.saturating_add(b));
        LineAmounts { net: sum(|l| l.net), tax: sum(|l| l.tax_amount), gross: sum(|l| l.gross) }
    }
}

/// The lines added up per rate (treatment, percentage and exemption reason); `None` when a
/// sum would not fit in 64 bits.
pub fn tax_totals(lines: &[Line]) -> Option<Vec<TaxTotal>> {
    let mut taxes: Vec<TaxTotal> = Vec::new();
    for line in lines {
        let t = &line.tax;
        let found = taxes.iter_mut().find(|total| {
            (total.treatment, total.percentage, &total.exemption_reason)
                == (t.treatment, t.percentage, &t.exemption_reason)
        });
        match found {
            Some(total) => {
                total.net = total.net.checked_add(line.net)?;
                total.tax = total.tax.checked_add(line.tax_amount)?;
                total.gross = total.gross.checked_add(line.gross)?;
            }
            None => taxes.push(TaxTotal {
                treatment: t.treatment,
                percentage: t.percentage,
                exemption_reason: t.exemption_reason.clone(),
                net: line.net,
                tax: line.tax_amount,
                gross: line.gross,
            }),
        }
    }
    // The document's totals are the rates' totals added up: they must fit too.
    let mut whole = LineAmounts { net: 0, tax: 0, gross: 0 };
    for t in &taxes {
        whole = LineAmounts {
            net: whole.net.checked_add(t.net)?,
            tax: whole.tax.checked_add(t.tax)?,
            gross: whole.gross.checked_add(t.gross)?,
        };
    }
    Some(taxes)
}

/// The note a reverse-charged invoice carries.
pub fn reverse_charge_note(language: DocumentLanguage) -> &'static str {
    match language {
        DocumentLanguage::En => {
            "Reverse charge: VAT to be accounted for by the recipient (Article 196 of Directive 2006/112/EC)."
        }
        DocumentLanguage::Ru => "Обратное начисление: НДС уплачивает получатель (статья 196 Директивы 2006/112/ЕС).",
    }
}

/// Works out a document's lines, their tax and its totals per rate; `None` when an amount
/// would not fit in 64 bits.
pub fn content(
    seller: Party,
    buyer: Party,
    inputs: Vec<LineInput>,
    footer: Option<String>,
    language: DocumentLanguage,
) -> Option<Content> {
    let mut lines = Vec::with_capacity(inputs.len());
    for input in inputs {
        let rate = match input.tax.treatment {
            TaxTreatment::ReverseCharge | TaxTreatment::NotSubject => 0,
            _ => input.tax.percentage,
        };
        let amounts = line_amounts(input.quantity, input.unit_price, input.discount, rate, input.tax_included)?;
        lines.push(Line {
            description: input.description,
            period: input.period,
            quantity: input.quantity,
            unit_price: input.unit_price,
            discount: input.discount,
            tax_included: input.tax_included,
            tax: input.tax,
            net: amounts.net,
            tax_amount: amounts.tax,
            gross: amounts.gross,
            invoice_line: None,
        });
    }
    let taxes = tax_totals(&lines)?;
    let mut notes = Vec::new();
    if lines.iter().any(|l| l.tax.treatment == TaxTreatment::ReverseCharge) {
        notes.push(reverse_charge_note(language).to_owned());
    }
    for reason in lines.iter().filter_map(|l| l.tax.exemption_reason.as_ref()) {
        if !notes.contains(reason) {
            notes.push(reason.clone());
        }
    }
    Some(Content { seller, buyer, lines, taxes, notes, footer, invoice_number: None, reason: None })
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub(super) fn line(unit_price: i64, discount: i64, tax: LineTax, tax_included: bool) -> LineInput {
        LineInput { description: "Plan".into(), period: None, quantity: 1, unit_price, discount, tax, tax_included }
    }

    pub(super) fn rate(treatment: TaxTreatment, percentage: i64) -> LineTax {
        LineTax {
            treatment,
            percentage,
            rate_id: Some("txr_1".into()),
            rate_name: Some("VAT".into()),
            exemption_reason: None,
        }
    }

    pub(super) fn issue(lines: Vec<LineInput>) -> Content {
        content(Party::default(), Party::default(), lines, None, DocumentLanguage::En).unwrap()
    }

    #[test]
    fn lines_are_taxed_one_by_one_and_totalled_per_rate() {
        let c = issue(vec![
            line(11_900, 0, rate(TaxTreatment::Standard, 190_000), true),
            line(1_000, 100, rate(TaxTreatment::Standard, 190_000), false),
            line(500, 0, rate(TaxTreatment::Standard, 70_000), false),
        ]);
        assert_eq!((c.lines[0].net, c.lines[0].tax_amount, c.lines[0].gross), (10_000, 1_900, 11_900));
        assert_eq!((c.lines[1].net, c.lines[1].tax_amount, c.lines[1].gross), (900, 171, 1_071));
        assert_eq!(c.taxes.len(), 2);
        assert_eq!((c.taxes[0].net, c.taxes[0].tax, c.taxes[0].gross), (10_900, 2_071, 12_971));
        assert_eq!((c.taxes[1].net, c.taxes[1].tax), (500, 35));
        assert_eq!(c.totals(), LineAmounts { net: 11_400, tax: 2_106, gross: 13_506 });
        assert!(c.notes.is_empty());
    }

    #[test]
    fn a_reverse_charge_is_untaxed_and_says_so() {
        let c = issue(vec![line(11_900, 0, rate(TaxTreatment::ReverseCharge, 0), true)]);
        assert_eq!(c.totals(), LineAmounts { net: 11_900, tax: 0, gross: 11_900 });
        assert_eq!(c.notes, [reverse_charge_note(DocumentLanguage::En)]);
        assert_eq!(c.taxes[0].treatment.code(), "AE");
    }

    #[test]
    fn an_exempt_sale_prints_its_reason_once() {
        let exempt = LineTax { exemption_reason: Some("Art. 132".into()), ..rate(TaxTreatment::Exempt, 0) };
        let c = issue(vec![line(100, 0, exempt.clone(), false), line(200, 0, exempt, false)]);
        assert_eq!(c.notes, ["Art. 132"]);
        assert_eq!(c.taxes.len(), 1);
        assert_eq!(c.totals().gross, 300);
    }

    #[test]
    fn no_rate_is_no_tax_and_overflow_is_refused() {
        let c = issue(vec![line(700, 0, LineTax::none(), true)]);
        assert_eq!(c.totals(), LineAmounts { net: 700, tax: 0, gross: 700 });
        assert!(
            content(
                Party::default(),
                Party::default(),
                vec![line(i64::MAX, -1, LineTax::none(), true)],
                None,
                DocumentLanguage::En
            )
            .is_none()
        );
    }

    #[test]
    fn numbers_are_padded_and_test_series_say_so() {
        assert_eq!(number_text(DocumentKind::Invoice.default_prefix(false), 42), "INV-000042");
        assert_eq!(number_text(DocumentKind::CreditNote.default_prefix(true), 1_234_567), "TEST-CN-1234567");
    }

    #[test]
    fn content_reads_back_as_written() {
        let c = issue(vec![line(11_900, 0, rate(TaxTreatment::Standard, 190_000), true)]);
        let text = serde_json::to_string(&c).unwrap();
        assert_eq!(serde_json::from_str::<Content>(&text).unwrap(), c);
    }
}
