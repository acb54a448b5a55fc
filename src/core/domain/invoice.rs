//! Invoices and credit notes as issued: who sold to whom, the lines with their tax, the
//! totals per rate, and the notes the law asks for. A document's content is worked out once,
//! when it is issued, and kept as it was: what it prints never changes, whatever later
//! happens to the shop's details, the customer or the rates.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::Errors;
use super::event::moment;
use super::seller::Seller;
use super::tax::{LineAmounts, TaxCategory, line_amounts, round_div};
use super::vocab::{Language, words};

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
    /// The document's totals: net, tax, gross.
    pub fn totals(&self) -> LineAmounts {
        let sum = |f: fn(&Line) -> i64| self.lines.iter().map(f).sum();
        LineAmounts { net: sum(|l| l.net), tax: sum(|l| l.tax_amount), gross: sum(|l| l.gross) }
    }
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
        });
    }
    let mut taxes: Vec<TaxTotal> = Vec::new();
    for line in &lines {
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

/// The lines of a credit note that takes a document from `before` to `after` credited (of
/// its gross, in minimal units): each line gets its share of the credit in proportion to its
/// gross, and its tax in proportion within the line. Shares are worked out on what is
/// credited in all (before and after), so credit notes add up exactly to their invoice once
/// it is credited in full, and never to more. `None` when `before..after` is not within the
/// invoice.
pub fn credit_lines(invoice: &Content, before: i64, after: i64) -> Option<Vec<Line>> {
    let total = invoice.totals().gross;
    if !(0 <= before && before < after && after <= total) {
        return None;
    }
    let share = |part: i64, of: i64, whole: i64| -> Option<i64> {
        let exact = i128::from(part) * i128::from(of);
        i64::try_from(round_div(exact, i128::from(whole))).ok()
    };
    // The gross of each line credited once `credited` of the whole is: the running sums of
    // the lines, each rounded, so the lines add up to `credited` exactly.
    let of_lines = |credited: i64| -> Option<Vec<i64>> {
        let mut upto = 0i64;
        let mut given = 0i64;
        let mut shares = Vec::with_capacity(invoice.lines.len());
        for line in &invoice.lines {
            upto = upto.checked_add(line.gross)?;
            let running = share(credited, upto, total)?;
            shares.push(running - given);
            given = running;
        }
        Some(shares)
    };
    let (was, is) = (of_lines(before)?, of_lines(after)?);
    let mut lines = Vec::new();
    for ((line, was), is) in invoice.lines.iter().zip(was).zip(is) {
        let gross = is - was;
        if gross == 0 {
            continue;
        }
        let tax_of =
            |credited: i64| if line.gross == 0 { Some(0) } else { share(line.tax_amount, credited, line.gross) };
        let tax = tax_of(is)? - tax_of(was)?;
        lines.push(Line {
            quantity: 1,
            unit_price: gross,
            discount: 0,
            tax_included: true,
            net: gross - tax,
            tax_amount: tax,
            gross,
            ..line.clone()
        });
    }
    Some(lines)
}

/// A credit note's content for `lines` of `invoice`, numbered `invoice_number`.
pub fn credit_note(invoice: &Content, invoice_number: &str, lines: Vec<Line>, reason: Option<String>) -> Content {
    let mut taxes: Vec<TaxTotal> = Vec::new();
    for line in &lines {
        let t = &line.tax;
        match taxes.iter_mut().find(|total| {
            (total.treatment, total.percentage, &total.exemption_reason)
                == (t.treatment, t.percentage, &t.exemption_reason)
        }) {
            Some(total) => {
                total.net += line.net;
                total.tax += line.tax_amount;
                total.gross += line.gross;
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
    Content { lines, taxes, invoice_number: Some(invoice_number.to_owned()), reason, ..invoice.clone() }
}

/// Which documents a list shows: `?customer=`, `?subscription=`, `?payment=`, `?invoice=`
/// (a credit note's), `?number=` (as printed, or its digits), and `?issued[gte]=` / `[gt]` /
/// `[lte]` / `[lt]` (RFC 3339 or Unix seconds).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DocumentFilter {
    pub customer: Option<String>,
    pub subscription: Option<String>,
    pub payment: Option<String>,
    pub invoice: Option<String>,
    pub number: Option<String>,
    /// From this moment on (inclusive).
    pub since: Option<DateTime<Utc>>,
    /// Before this moment (exclusive).
    pub until: Option<DateTime<Utc>>,
}

impl DocumentFilter {
    /// The filters among `pairs` (name, value); other names are ignored, and so is an empty
    /// value.
    pub fn parse<K: AsRef<str>, V: AsRef<str>>(pairs: impl IntoIterator<Item = (K, V)>) -> Result<Self, Errors> {
        let mut filter = DocumentFilter::default();
        let mut errors = Errors::default();
        for (key, value) in pairs {
            let (key, value) = (key.as_ref(), value.as_ref().trim());
            let text = Some(value.to_owned()).filter(|v| !v.is_empty());
            match key.trim_end_matches("_id") {
                "customer" => filter.customer = text,
                "subscription" => filter.subscription = text,
                "payment" => filter.payment = text,
                "invoice" => filter.invoice = text,
                "number" => filter.number = text,
                "issued[gte]" | "issued[gt]" | "issued[lte]" | "issued[lt]" => {
                    let Some(at) = moment(value) else {
                        errors.add(key, "must be an RFC 3339 time or Unix seconds");
                        continue;
                    };
                    let millisecond = chrono::TimeDelta::milliseconds(1);
                    match key {
                        "issued[gte]" => filter.since = Some(at),
                        "issued[gt]" => filter.since = Some(at + millisecond),
                        "issued[lte]" => filter.until = Some(at + millisecond),
                        _ => filter.until = Some(at),
                    }
                }
                _ => {}
            }
        }
        errors.into_result(|| filter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(unit_price: i64, discount: i64, tax: LineTax, tax_included: bool) -> LineInput {
        LineInput { description: "Plan".into(), period: None, quantity: 1, unit_price, discount, tax, tax_included }
    }

    fn rate(treatment: TaxTreatment, percentage: i64) -> LineTax {
        LineTax {
            treatment,
            percentage,
            rate_id: Some("txr_1".into()),
            rate_name: Some("VAT".into()),
            exemption_reason: None,
        }
    }

    fn issue(lines: Vec<LineInput>) -> Content {
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
    fn credit_notes_follow_the_refunded_share_and_add_up_to_their_invoice() {
        let invoice = issue(vec![
            line(11_900, 0, rate(TaxTreatment::Standard, 190_000), true),
            line(1_000, 0, rate(TaxTreatment::Standard, 70_000), false),
        ]);
        let total = invoice.totals();
        assert_eq!(total, LineAmounts { net: 11_000, tax: 1_970, gross: 12_970 });
        let mut credited = LineAmounts { net: 0, tax: 0, gross: 0 };
        let mut before = 0;
        for after in [1, 1_000, 1_001, 7_777, 12_969, 12_970] {
            let lines = credit_lines(&invoice, before, after).unwrap();
            let note = credit_note(&invoice, "INV-000001", lines, None);
            let t = note.totals();
            assert_eq!(t.gross, after - before);
            assert_eq!(t.net + t.tax, t.gross);
            for l in &note.lines {
                assert!(l.net >= 0 && l.tax_amount >= 0, "{l:?}");
            }
            credited =
                LineAmounts { net: credited.net + t.net, tax: credited.tax + t.tax, gross: credited.gross + t.gross };
            before = after;
        }
        assert_eq!(credited, total, "credited in full, exactly the invoice");
        assert!(credit_lines(&invoice, 12_970, 12_971).is_none(), "never more than the invoice");
        assert!(credit_lines(&invoice, 5, 5).is_none());
    }

    #[test]
    fn filters_read_ids_numbers_and_times() {
        let f = DocumentFilter::parse([("customer_id", "cst_1"), ("number", " INV-000002 "), ("issued[lt]", "60")])
            .unwrap();
        assert_eq!(f.customer.as_deref(), Some("cst_1"));
        assert_eq!(f.number.as_deref(), Some("INV-000002"));
        assert_eq!(f.until, DateTime::from_timestamp(60, 0));
        assert!(DocumentFilter::parse([("issued[gte]", "soon")]).unwrap_err().has("issued[gte]"));
    }

    #[test]
    fn content_reads_back_as_written() {
        let c = issue(vec![line(11_900, 0, rate(TaxTreatment::Standard, 190_000), true)]);
        let text = serde_json::to_string(&c).unwrap();
        assert_eq!(serde_json::from_str::<Content>(&text).unwrap(), c);
    }
}
