//! The invoice and credit note objects: the documents of the merchant's books, as issued.

use serde::Serialize;
use utoipa::ToSchema;

use super::timestamp;
use crate::db::entities::documents;
use crate::domain::currency::Currency;
use crate::domain::invoice::{Content, DocumentKind, DocumentLanguage, Line, Party, TaxTotal, TaxTreatment};

/// An invoice or a credit note as the API returns it. It never changes once issued.
#[derive(Serialize, ToSchema)]
#[schema(as = Document)]
pub struct DocumentView {
    /// `inv_…` or `cn_…`.
    id: String,
    /// `invoice` or `credit_note`.
    #[schema(value_type = String, example = "invoice")]
    object: DocumentKind,
    /// As printed: the series' prefix and the number (`INV-000042`).
    #[schema(example = "INV-000042")]
    number: String,
    /// The number in its series: each series counts 1, 2, 3… without gaps.
    #[schema(example = 42)]
    sequence: i64,
    #[schema(value_type = String, example = "EUR")]
    currency: Currency,
    /// The lines' net amounts added up, in minimal units.
    net_total: i64,
    /// The tax of the lines added up.
    tax_total: i64,
    /// What was paid (an invoice) or given back (a credit note): net plus tax.
    total: i64,
    /// `en` or `ru`: the language the document is written in.
    #[schema(value_type = String, example = "en")]
    language: DocumentLanguage,
    /// The payment an invoice was paid by, or a credit note's invoice was.
    payment_id: Option<String>,
    /// A credit note's invoice.
    invoice_id: Option<String>,
    customer_id: Option<String>,
    subscription_id: Option<String>,
    seller: PartyView,
    buyer: PartyView,
    lines: Vec<LineView>,
    /// The tax per rate: what the lines at each rate add up to.
    tax_totals: Vec<TaxTotalView>,
    /// What the law asks the document to say (a reverse charge, an exemption's reason).
    notes: Vec<String>,
    /// The seller's footer text, as it was at issue.
    footer: Option<String>,
    /// A credit note's invoice, by its number.
    invoice_number: Option<String>,
    test: bool,
    shop_id: i64,
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    issued_at: String,
    /// Its page, public by its id as a receipt is: the document to read and print, with its
    /// PDF and XML.
    hosted_url: String,
    /// Its PDF/A-3b with the e-invoice XML attached, public by its id.
    pdf_url: String,
}

/// The seller or the buyer, as the document names them.
#[derive(Serialize, ToSchema)]
#[schema(as = DocumentParty)]
pub struct PartyView {
    name: String,
    company: Option<String>,
    address_line1: Option<String>,
    address_line2: Option<String>,
    city: Option<String>,
    postal_code: Option<String>,
    region: Option<String>,
    /// ISO 3166-1 alpha-2.
    country: Option<String>,
    vat_id: Option<String>,
    registration_number: Option<String>,
    email: Option<String>,
}

/// A line of a document.
#[derive(Serialize, ToSchema)]
#[schema(as = DocumentLine)]
pub struct LineView {
    description: String,
    /// The start of the period the line pays for, if it pays for one.
    #[schema(format = DateTime, example = "2026-11-22T10:15:30.123Z")]
    period_start: Option<String>,
    /// Its end (exclusive).
    #[schema(format = DateTime, example = "2026-12-22T10:15:30.123Z")]
    period_end: Option<String>,
    quantity: i64,
    /// The price of one, including its tax when `tax_included`.
    unit_price: i64,
    /// Taken off the line (a coupon), in the same terms as the price.
    discount: i64,
    tax_included: bool,
    tax: LineTaxView,
    net: i64,
    tax_amount: i64,
    gross: i64,
}

/// How a line is taxed.
#[derive(Serialize, ToSchema)]
#[schema(as = DocumentLineTax)]
pub struct LineTaxView {
    /// `standard`, `zero_rated`, `exempt`, `reverse_charge` or `not_subject` (no rate).
    #[schema(value_type = String, example = "standard")]
    treatment: TaxTreatment,
    /// EN 16931's category code: `S`, `Z`, `E`, `AE` or `O`.
    #[schema(example = "S")]
    category_code: &'static str,
    #[schema(example = 19.0)]
    percentage: f64,
    /// The shop's tax rate the line was taxed at.
    tax_rate_id: Option<String>,
    tax_rate_name: Option<String>,
    exemption_reason: Option<String>,
}

/// The tax of a document at one rate.
#[derive(Serialize, ToSchema)]
#[schema(as = DocumentTaxTotal)]
pub struct TaxTotalView {
    #[schema(value_type = String, example = "standard")]
    treatment: TaxTreatment,
    #[schema(example = "S")]
    category_code: &'static str,
    #[schema(example = 19.0)]
    percentage: f64,
    exemption_reason: Option<String>,
    net: i64,
    tax: i64,
    gross: i64,
}

fn percentage(units: i64) -> f64 {
    units as f64 / 10_000.0
}

impl From<&Party> for PartyView {
    fn from(p: &Party) -> Self {
        let p = p.clone();
        PartyView {
            name: p.name,
            company: p.company,
            address_line1: p.address_line1,
            address_line2: p.address_line2,
            city: p.city,
            postal_code: p.postal_code,
            region: p.region,
            country: p.country,
            vat_id: p.vat_id,
            registration_number: p.registration_number,
            email: p.email,
        }
    }
}

impl From<&Line> for LineView {
    fn from(l: &Line) -> Self {
        LineView {
            description: l.description.clone(),
            period_start: l.period.map(|p| timestamp(p.start)),
            period_end: l.period.map(|p| timestamp(p.end)),
            quantity: l.quantity,
            unit_price: l.unit_price,
            discount: l.discount,
            tax_included: l.tax_included,
            tax: LineTaxView {
                treatment: l.tax.treatment,
                category_code: l.tax.treatment.code(),
                percentage: percentage(l.tax.percentage),
                tax_rate_id: l.tax.rate_id.clone(),
                tax_rate_name: l.tax.rate_name.clone(),
                exemption_reason: l.tax.exemption_reason.clone(),
            },
            net: l.net,
            tax_amount: l.tax_amount,
            gross: l.gross,
        }
    }
}

impl From<&TaxTotal> for TaxTotalView {
    fn from(t: &TaxTotal) -> Self {
        TaxTotalView {
            treatment: t.treatment,
            category_code: t.treatment.code(),
            percentage: percentage(t.percentage),
            exemption_reason: t.exemption_reason.clone(),
            net: t.net,
            tax: t.tax,
            gross: t.gross,
        }
    }
}

impl DocumentView {
    /// The API's view of a stored document.
    pub fn new(d: &documents::Model, config: &crate::config::Config) -> Self {
        // Written by paydesk from this very type: it always reads back.
        let content: Content = serde_json::from_str(&d.content).unwrap_or_default();
        DocumentView {
            id: d.id.clone(),
            object: d.kind,
            number: d.number_text.clone(),
            sequence: d.number,
            currency: d.currency,
            net_total: d.net_total,
            tax_total: d.tax_total,
            total: d.gross_total,
            language: d.language,
            payment_id: d.payment_id.clone(),
            invoice_id: d.invoice_id.clone(),
            customer_id: d.customer_id.clone(),
            subscription_id: d.subscription_id.clone(),
            seller: PartyView::from(&content.seller),
            buyer: PartyView::from(&content.buyer),
            lines: content.lines.iter().map(LineView::from).collect(),
            tax_totals: content.taxes.iter().map(TaxTotalView::from).collect(),
            notes: content.notes,
            footer: content.footer,
            invoice_number: content.invoice_number,
            test: d.test,
            shop_id: d.shop_id,
            issued_at: timestamp(d.issued_at),
            hosted_url: crate::web::urls::document(config, &d.id),
            pdf_url: format!("{}/pdf", crate::web::urls::document(config, &d.id)),
        }
    }
}

/// A number series as the API returns it.
#[derive(Serialize, ToSchema)]
#[schema(as = Series)]
pub struct SeriesView {
    /// `series`.
    #[schema(example = "series")]
    object: &'static str,
    /// `invoice`, `credit_note`, `test_invoice` or `test_credit_note`.
    #[schema(example = "invoice")]
    name: &'static str,
    /// `invoice` or `credit_note`.
    #[schema(value_type = String, example = "invoice")]
    kind: DocumentKind,
    test: bool,
    #[schema(example = "INV-")]
    prefix: String,
    /// The number the next document takes.
    #[schema(example = 43)]
    next_number: i64,
    /// The highest number issued; 0 before the first.
    #[schema(example = 42)]
    last_issued: i64,
    /// The next document's number as it will be printed.
    #[schema(example = "INV-000043")]
    next: String,
}

impl From<&crate::db::entities::document_series::Model> for SeriesView {
    fn from(s: &crate::db::entities::document_series::Model) -> Self {
        SeriesView {
            object: "series",
            name: crate::domain::series::name_of(s.kind, s.test),
            kind: s.kind,
            test: s.test,
            prefix: s.prefix.clone(),
            next_number: s.next_number,
            last_issued: s.last_issued,
            next: crate::domain::invoice::number_text(&s.prefix, s.next_number),
        }
    }
}
