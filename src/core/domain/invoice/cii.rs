//! A document as an EN 16931 e-invoice: the UN/CEFACT Cross Industry Invoice (CII) of the
//! Factur-X / ZUGFeRD "EN 16931" profile, the XML attached to each PDF. Written from the
//! frozen content, so that the same document always gives the same bytes.

use std::fmt::Write;

use chrono::{DateTime, Utc};

use super::{Content, DocumentKind, Line, Party, TaxTreatment};
use crate::domain::money::major_units as amount;
use crate::domain::tax::format_percentage;

/// What the XML says of a document besides its content.
pub struct Header<'a> {
    pub kind: DocumentKind,
    pub number: &'a str,
    pub issued_at: DateTime<Utc>,
    /// ISO 4217 code, and how many decimals its minor unit has.
    pub currency: (&'a str, u32),
    pub test: bool,
    /// The payment it was paid by (or gave back to), as the payment's reference.
    pub payment_id: Option<&'a str>,
}

/// What a test document's XML says first.
pub const TEST_NOTE: &str = "TEST DOCUMENT: made in test mode, not a tax document";

/// The name the XML has inside a PDF (Factur-X asks for exactly this one).
pub const FILE_NAME: &str = "factur-x.xml";
/// The Factur-X profile, as its metadata names it.
pub const CONFORMANCE_LEVEL: &str = "EN 16931";

/// The document type code of UNTDID 1001: a commercial invoice, a credit note, or a
/// corrected invoice (one that bills again what a credit note credited).
pub fn type_code(kind: DocumentKind, content: &Content) -> &'static str {
    match (kind, content.invoice_number.is_some()) {
        (DocumentKind::Invoice, false) => "380",
        (DocumentKind::Invoice, true) => "384",
        (DocumentKind::CreditNote, _) => "381",
    }
}

/// The CII XML of a document.
pub fn xml(h: &Header, c: &Content) -> String {
    let mut x = String::with_capacity(4096);
    x.push_str(r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    x.push_str(concat!(
        r#"<rsm:CrossIndustryInvoice xmlns:rsm="urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100""#,
        r#" xmlns:ram="urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100""#,
        r#" xmlns:qdt="urn:un:unece:uncefact:data:standard:QualifiedDataType:100""#,
        r#" xmlns:udt="urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100">"#,
    ));
    x.push_str("<rsm:ExchangedDocumentContext>");
    x.push_str("<ram:GuidelineSpecifiedDocumentContextParameter><ram:ID>urn:cen.eu:en16931:2017</ram:ID>");
    x.push_str("</ram:GuidelineSpecifiedDocumentContextParameter></rsm:ExchangedDocumentContext>");
    document(&mut x, h, c);
    x.push_str("<rsm:SupplyChainTradeTransaction>");
    for (i, line) in c.lines.iter().enumerate() {
        line_item(&mut x, h, i + 1, line);
    }
    x.push_str("<ram:ApplicableHeaderTradeAgreement>");
    party(&mut x, "SellerTradeParty", &c.seller, None);
    party(&mut x, "BuyerTradeParty", &c.buyer, c.seller.country.as_deref());
    x.push_str("</ram:ApplicableHeaderTradeAgreement>");
    // The supply's date: the issue's (a line's period, where it has one, is on the line).
    x.push_str("<ram:ApplicableHeaderTradeDelivery><ram:ActualDeliverySupplyChainEvent><ram:OccurrenceDateTime>");
    date(&mut x, h.issued_at);
    x.push_str("</ram:OccurrenceDateTime></ram:ActualDeliverySupplyChainEvent></ram:ApplicableHeaderTradeDelivery>");
    settlement(&mut x, h, c);
    x.push_str("</rsm:SupplyChainTradeTransaction></rsm:CrossIndustryInvoice>");
    x
}

fn document(x: &mut String, h: &Header, c: &Content) {
    x.push_str("<rsm:ExchangedDocument>");
    element(x, "ram:ID", h.number);
    element(x, "ram:TypeCode", type_code(h.kind, c));
    x.push_str("<ram:IssueDateTime>");
    date(x, h.issued_at);
    x.push_str("</ram:IssueDateTime>");
    // The profile has no test indicator: a test document says so in a note (and its number).
    let test = h.test.then(|| TEST_NOTE.to_owned());
    let notes = test.iter().chain(&c.reason).chain(&c.notes).chain(&c.footer);
    for note in notes {
        x.push_str("<ram:IncludedNote>");
        element(x, "ram:Content", note);
        x.push_str("</ram:IncludedNote>");
    }
    x.push_str("</rsm:ExchangedDocument>");
}

fn line_item(x: &mut String, h: &Header, id: usize, l: &Line) {
    x.push_str("<ram:IncludedSupplyChainTradeLineItem><ram:AssociatedDocumentLineDocument>");
    element(x, "ram:LineID", &id.to_string());
    x.push_str("</ram:AssociatedDocumentLineDocument><ram:SpecifiedTradeProduct>");
    element(x, "ram:Name", &l.description);
    x.push_str("</ram:SpecifiedTradeProduct><ram:SpecifiedLineTradeAgreement><ram:NetPriceProductTradePrice>");
    // The price of one, net of its tax and discount (the line's net is quantity × it).
    element(x, "ram:ChargeAmount", &unit_price(l.net, l.quantity, h.currency.1));
    x.push_str("</ram:NetPriceProductTradePrice></ram:SpecifiedLineTradeAgreement><ram:SpecifiedLineTradeDelivery>");
    let _ = write!(x, r#"<ram:BilledQuantity unitCode="C62">{}</ram:BilledQuantity>"#, l.quantity);
    x.push_str("</ram:SpecifiedLineTradeDelivery><ram:SpecifiedLineTradeSettlement><ram:ApplicableTradeTax>");
    element(x, "ram:TypeCode", "VAT");
    element(x, "ram:CategoryCode", l.tax.treatment.code());
    if l.tax.treatment != TaxTreatment::NotSubject {
        element(x, "ram:RateApplicablePercent", &format_percentage(l.tax.percentage));
    }
    x.push_str("</ram:ApplicableTradeTax>");
    if let Some(p) = l.period {
        x.push_str("<ram:BillingSpecifiedPeriod><ram:StartDateTime>");
        date(x, p.start);
        x.push_str("</ram:StartDateTime><ram:EndDateTime>");
        // The period's last day: it ends where the next one starts.
        date(x, p.end - chrono::Duration::seconds(1));
        x.push_str("</ram:EndDateTime></ram:BillingSpecifiedPeriod>");
    }
    x.push_str("<ram:SpecifiedTradeSettlementLineMonetarySummation>");
    element(x, "ram:LineTotalAmount", &amount(l.net, h.currency.1));
    x.push_str("</ram:SpecifiedTradeSettlementLineMonetarySummation>");
    x.push_str("</ram:SpecifiedLineTradeSettlement></ram:IncludedSupplyChainTradeLineItem>");
}

/// A trade party. A buyer whose country is not known is placed in `fallback_country` (the
/// seller's): EN 16931 asks every address for a country.
fn party(x: &mut String, tag: &str, p: &Party, fallback_country: Option<&str>) {
    let _ = write!(x, "<ram:{tag}>");
    let name = p.company.as_deref().filter(|c| !c.is_empty()).unwrap_or(&p.name);
    element(x, "ram:Name", name);
    if let Some(number) = &p.registration_number {
        x.push_str("<ram:SpecifiedLegalOrganization>");
        element(x, "ram:ID", number);
        x.push_str("</ram:SpecifiedLegalOrganization>");
    }
    if p.company.as_deref().is_some_and(|c| !c.is_empty()) && !p.name.is_empty() {
        x.push_str("<ram:DefinedTradeContact>");
        element(x, "ram:PersonName", &p.name);
        x.push_str("</ram:DefinedTradeContact>");
    }
    if let Some(country) = p.country.as_deref().or(fallback_country) {
        x.push_str("<ram:PostalTradeAddress>");
        optional(x, "ram:PostcodeCode", &p.postal_code);
        optional(x, "ram:LineOne", &p.address_line1);
        optional(x, "ram:LineTwo", &p.address_line2);
        optional(x, "ram:CityName", &p.city);
        element(x, "ram:CountryID", country);
        optional(x, "ram:CountrySubDivisionName", &p.region);
        x.push_str("</ram:PostalTradeAddress>");
    }
    if let Some(email) = &p.email {
        x.push_str(r#"<ram:URIUniversalCommunication><ram:URIID schemeID="EM">"#);
        escape(x, email);
        x.push_str("</ram:URIID></ram:URIUniversalCommunication>");
    }
    if let Some(vat_id) = &p.vat_id {
        x.push_str(r#"<ram:SpecifiedTaxRegistration><ram:ID schemeID="VA">"#);
        escape(x, vat_id);
        x.push_str("</ram:ID></ram:SpecifiedTaxRegistration>");
    }
    let _ = write!(x, "</ram:{tag}>");
}

fn settlement(x: &mut String, h: &Header, c: &Content) {
    let decimals = h.currency.1;
    x.push_str("<ram:ApplicableHeaderTradeSettlement>");
    if let Some(payment) = h.payment_id {
        element(x, "ram:PaymentReference", payment);
    }
    element(x, "ram:InvoiceCurrencyCode", h.currency.0);
    // Paid by card when it was issued: a payment card (48), nothing left to pay.
    x.push_str("<ram:SpecifiedTradeSettlementPaymentMeans>");
    element(x, "ram:TypeCode", "48");
    x.push_str("</ram:SpecifiedTradeSettlementPaymentMeans>");
    for t in &c.taxes {
        x.push_str("<ram:ApplicableTradeTax>");
        element(x, "ram:CalculatedAmount", &amount(t.tax, decimals));
        element(x, "ram:TypeCode", "VAT");
        let reason = match t.treatment {
            TaxTreatment::ReverseCharge => Some("Reverse charge"),
            TaxTreatment::Exempt => t.exemption_reason.as_deref(),
            TaxTreatment::NotSubject => Some("Not subject to VAT"),
            _ => None,
        };
        if let Some(reason) = reason {
            element(x, "ram:ExemptionReason", reason);
        }
        element(x, "ram:BasisAmount", &amount(t.net, decimals));
        element(x, "ram:CategoryCode", t.treatment.code());
        match t.treatment {
            TaxTreatment::ReverseCharge => element(x, "ram:ExemptionReasonCode", "VATEX-EU-AE"),
            TaxTreatment::NotSubject => element(x, "ram:ExemptionReasonCode", "VATEX-EU-O"),
            _ => {}
        }
        if t.treatment != TaxTreatment::NotSubject {
            element(x, "ram:RateApplicablePercent", &format_percentage(t.percentage));
        }
        x.push_str("</ram:ApplicableTradeTax>");
    }
    x.push_str("<ram:SpecifiedTradePaymentTerms>");
    element(x, "ram:Description", "Paid");
    x.push_str("</ram:SpecifiedTradePaymentTerms>");
    let totals = c.totals();
    x.push_str("<ram:SpecifiedTradeSettlementHeaderMonetarySummation>");
    element(x, "ram:LineTotalAmount", &amount(totals.net, decimals));
    element(x, "ram:TaxBasisTotalAmount", &amount(totals.net, decimals));
    let _ = write!(
        x,
        r#"<ram:TaxTotalAmount currencyID="{}">{}</ram:TaxTotalAmount>"#,
        h.currency.0,
        amount(totals.tax, decimals)
    );
    element(x, "ram:GrandTotalAmount", &amount(totals.gross, decimals));
    element(x, "ram:TotalPrepaidAmount", &amount(totals.gross, decimals));
    element(x, "ram:DuePayableAmount", &amount(0, decimals));
    x.push_str("</ram:SpecifiedTradeSettlementHeaderMonetarySummation>");
    if let Some(invoice) = &c.invoice_number {
        x.push_str("<ram:InvoiceReferencedDocument>");
        element(x, "ram:IssuerAssignedID", invoice);
        x.push_str("</ram:InvoiceReferencedDocument>");
    }
    x.push_str("</ram:ApplicableHeaderTradeSettlement>");
}

/// The net price of one of `quantity`, to four more decimals than the currency has where it
/// does not divide (the line's net, not this price, is what is charged).
fn unit_price(net: i64, quantity: i64, decimals: u32) -> String {
    if quantity <= 1 || net % quantity == 0 {
        return amount(net / quantity.max(1), decimals);
    }
    let scaled = i128::from(net) * 10_000 / i128::from(quantity);
    let text = amount(i64::try_from(scaled).unwrap_or(i64::MAX), decimals + 4);
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// A date as CII writes it: format 102, `YYYYMMDD` (in UTC).
fn date(x: &mut String, at: DateTime<Utc>) {
    let _ = write!(x, r#"<udt:DateTimeString format="102">{}</udt:DateTimeString>"#, at.format("%Y%m%d"));
}

fn element(x: &mut String, tag: &str, text: &str) {
    let _ = write!(x, "<{tag}>");
    escape(x, text);
    let _ = write!(x, "</{tag}>");
}

fn optional(x: &mut String, tag: &str, text: &Option<String>) {
    if let Some(text) = text.as_deref().filter(|t| !t.is_empty()) {
        element(x, tag, text);
    }
}

/// XML text: `&`, `<`, `>` and quotes escaped, and characters XML 1.0 cannot hold (control
/// characters other than tab and line breaks) left out.
fn escape(x: &mut String, text: &str) {
    for ch in text.chars() {
        match ch {
            '&' => x.push_str("&amp;"),
            '<' => x.push_str("&lt;"),
            '>' => x.push_str("&gt;"),
            '"' => x.push_str("&quot;"),
            '\'' => x.push_str("&apos;"),
            '\t' | '\n' | '\r' => x.push(ch),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => {}
            c => x.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{issue, line, rate};
    use super::*;

    fn header(kind: DocumentKind) -> Header<'static> {
        Header {
            kind,
            number: "INV-000042",
            issued_at: "2026-03-01T10:00:00Z".parse().unwrap(),
            currency: ("EUR", 2),
            test: false,
            payment_id: Some("pay_1"),
        }
    }

    #[test]
    fn amounts_are_written_in_major_units() {
        assert_eq!(amount(11_900, 2), "119.00");
        assert_eq!(amount(-5, 2), "-0.05");
        assert_eq!(amount(1_000, 0), "1000");
        assert_eq!(amount(1_234, 3), "1.234");
        assert_eq!(amount(i64::MIN, 2), "-92233720368547758.08");
        assert_eq!(unit_price(1_000, 3, 2), "3.333333");
        assert_eq!(unit_price(900, 3, 2), "3.00");
    }

    #[test]
    fn an_invoice_says_its_lines_taxes_and_totals_in_the_profiles_order() {
        let mut c = issue(vec![line(11_900, 0, rate(TaxTreatment::Standard, 190_000), true)]);
        c.seller = Party {
            name: "Gym & Co <GmbH>".into(),
            country: Some("DE".into()),
            vat_id: Some("DE123456789".into()),
            ..Party::default()
        };
        c.buyer = Party { name: "Ann".into(), ..Party::default() };
        let x = xml(&header(DocumentKind::Invoice), &c);
        assert!(x.starts_with(r#"<?xml version="1.0" encoding="UTF-8"?><rsm:CrossIndustryInvoice"#));
        assert!(x.contains("<ram:ID>urn:cen.eu:en16931:2017</ram:ID>"));
        assert!(x.contains("<ram:ID>INV-000042</ram:ID><ram:TypeCode>380</ram:TypeCode>"));
        assert!(x.contains(r#"<udt:DateTimeString format="102">20260301</udt:DateTimeString>"#));
        assert!(x.contains("<ram:Name>Gym &amp; Co &lt;GmbH&gt;</ram:Name>"));
        assert!(x.contains(r#"<ram:SpecifiedTaxRegistration><ram:ID schemeID="VA">DE123456789</ram:ID>"#));
        assert!(x.contains("<ram:NetPriceProductTradePrice><ram:ChargeAmount>100.00</ram:ChargeAmount>"));
        assert!(x.contains(
            "<ram:CategoryCode>S</ram:CategoryCode><ram:RateApplicablePercent>19</ram:RateApplicablePercent>"
        ));
        assert!(x.contains(concat!(
            "<ram:LineTotalAmount>100.00</ram:LineTotalAmount><ram:TaxBasisTotalAmount>100.00</ram:TaxBasisTotalAmount>",
            r#"<ram:TaxTotalAmount currencyID="EUR">19.00</ram:TaxTotalAmount><ram:GrandTotalAmount>119.00</ram:GrandTotalAmount>"#,
            "<ram:TotalPrepaidAmount>119.00</ram:TotalPrepaidAmount><ram:DuePayableAmount>0.00</ram:DuePayableAmount>"
        )));
        // The buyer's address is in the seller's country when the buyer's is not known.
        assert!(x.contains(
            "<ram:BuyerTradeParty><ram:Name>Ann</ram:Name><ram:PostalTradeAddress><ram:CountryID>DE</ram:CountryID>"
        ));
        assert_eq!(x, xml(&header(DocumentKind::Invoice), &c), "the same bytes each time");
    }

    #[test]
    fn a_credit_note_names_its_invoice_and_an_untaxed_line_has_no_rate() {
        let mut c = issue(vec![line(500, 0, crate::domain::invoice::LineTax::none(), true)]);
        c.invoice_number = Some("INV-000001".into());
        let x = xml(&header(DocumentKind::CreditNote), &c);
        assert!(x.contains("<ram:TypeCode>381</ram:TypeCode>"));
        assert!(x.contains("<ram:InvoiceReferencedDocument><ram:IssuerAssignedID>INV-000001</ram:IssuerAssignedID>"));
        assert!(!x.contains("RateApplicablePercent"), "{x}");
        assert!(x.contains(
            "<ram:CategoryCode>O</ram:CategoryCode><ram:ExemptionReasonCode>VATEX-EU-O</ram:ExemptionReasonCode>"
        ));
        assert_eq!(type_code(DocumentKind::Invoice, &c), "384", "an invoice that corrects another");
    }

    #[test]
    fn text_xml_cannot_hold_is_left_out() {
        let mut x = String::new();
        escape(&mut x, "a\u{1}b\"'\u{ffff}c");
        assert_eq!(x, "ab&quot;&apos;c");
    }
}
