//! An invoice or credit note as the files a person and an accounting system read: its
//! EN 16931 XML, and a PDF/A-3b that shows it in its language with that XML attached
//! (Factur-X). Both are written from the document's frozen content, the same bytes every
//! time: nothing of the moment (no clock, no random id) goes into them.

mod pdf;
mod sheet;
mod words;
mod xmp;

use crate::db::entities::documents;
use crate::domain::invoice::{Content, cii};

pub use sheet::{Sheet, SheetLine, SheetTax};
pub use words::Words;

/// Why a document could not be written (a fault of paydesk: its content is its own).
#[derive(Debug, thiserror::Error)]
#[error("document {id}: {reason}")]
pub struct RenderError {
    pub id: String,
    pub reason: String,
}

/// A stored document's content.
pub fn content(d: &documents::Model) -> Result<Content, RenderError> {
    serde_json::from_str(&d.content).map_err(|e| RenderError { id: d.id.clone(), reason: e.to_string() })
}

/// The document's EN 16931 XML (Factur-X's `factur-x.xml`).
pub fn xml(d: &documents::Model, c: &Content) -> String {
    let header = cii::Header {
        kind: d.kind,
        number: &d.number_text,
        issued_at: d.issued_at,
        currency: (d.currency.code, d.currency.exponent),
        test: d.test,
        payment_id: d.payment_id.as_deref(),
    };
    cii::xml(&header, c)
}

/// The document as a PDF/A-3b with its XML attached.
pub fn pdf(d: &documents::Model, c: &Content) -> Result<Vec<u8>, RenderError> {
    let fail = |reason: String| RenderError { id: d.id.clone(), reason };
    let xml = xml(d, c);
    let bytes = pdf::write(d, c, xml.into_bytes()).map_err(fail)?;
    xmp::declare_factur_x(bytes, cii::type_code(d.kind, c)).map_err(fail)
}

/// The name a document's PDF is downloaded as: its number.
pub fn file_name(d: &documents::Model, extension: &str) -> String {
    let safe: String =
        d.number_text.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
    format!("{safe}.{extension}")
}

/// The files a document is downloaded as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Pdf,
    Xml,
}

/// The answer that downloads `d` as `format`. Written off the request threads (a PDF takes
/// a few milliseconds of work), and kept by browsers and caches as long as they like: a
/// document never changes.
pub async fn download(
    d: documents::Model,
    format: Format,
) -> Result<axum::response::Response, crate::web::error::AppError> {
    use axum::http::header;
    use axum::response::IntoResponse;
    let written = tokio::task::spawn_blocking(move || -> Result<(Vec<u8>, String), RenderError> {
        let c = content(&d)?;
        Ok(match format {
            Format::Pdf => (pdf(&d, &c)?, file_name(&d, "pdf")),
            Format::Xml => (xml(&d, &c).into_bytes(), file_name(&d, "xml")),
        })
    })
    .await
    .map_err(|e| crate::web::error::AppError::Internal(e.to_string()))?;
    let (bytes, name) = written.map_err(|e| crate::web::error::AppError::Internal(e.to_string()))?;
    let kind = match format {
        Format::Pdf => "application/pdf",
        Format::Xml => "application/xml",
    };
    let headers = [
        (header::CONTENT_TYPE, kind.to_owned()),
        (header::CONTENT_DISPOSITION, format!("inline; filename=\"{name}\"")),
        (header::CACHE_CONTROL, "private, max-age=31536000, immutable".to_owned()),
    ];
    Ok((headers, bytes).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::invoice::{self, DocumentKind, DocumentLanguage, LineInput, LineTax, Party, TaxTreatment};

    fn document(language: DocumentLanguage, lines: usize) -> (documents::Model, Content) {
        let tax = LineTax {
            treatment: TaxTreatment::Standard,
            percentage: 190_000,
            rate_id: None,
            rate_name: None,
            exemption_reason: None,
        };
        let line = |i: usize| LineInput {
            description: format!("Line {i}: a long description of what was sold, «Зима» & more, to wrap over lines"),
            period: None,
            quantity: 1,
            unit_price: 11_900,
            discount: 100,
            tax: tax.clone(),
            tax_included: true,
        };
        let seller = Party {
            name: "Gym GmbH".into(),
            country: Some("DE".into()),
            vat_id: Some("DE123456789".into()),
            ..Party::default()
        };
        let buyer = Party {
            name: "Anna 山田 😀\u{7}".into(),
            company: Some("Lumière SARL".into()),
            country: Some("FR".into()),
            ..Party::default()
        };
        let content = invoice::content(
            seller,
            buyer,
            (0..lines).map(line).collect(),
            Some("IBAN DE02 1203 0000 0000 2020 51".into()),
            language,
        )
        .unwrap();
        let totals = content.totals();
        let model = documents::Model {
            seq: 1,
            id: "inv_0123456789abcdef".into(),
            shop_id: 1,
            kind: DocumentKind::Invoice,
            test: true,
            number: 1,
            number_text: "TEST-INV-000001".into(),
            source: "payment:pay_1".into(),
            payment_id: Some("pay_1".into()),
            invoice_id: None,
            customer_id: None,
            subscription_id: None,
            currency: crate::domain::currency::find("EUR").unwrap(),
            net_total: totals.net,
            tax_total: totals.tax,
            gross_total: totals.gross,
            language,
            issued_at: "2026-03-01T10:00:00Z".parse().unwrap(),
            content: serde_json::to_string(&content).unwrap(),
        };
        (model, content)
    }

    #[test]
    fn a_pdf_is_written_the_same_every_time_in_either_language_and_over_pages() {
        for (language, lines) in [(DocumentLanguage::En, 1), (DocumentLanguage::Ru, 1), (DocumentLanguage::En, 60)] {
            let (d, c) = document(language, lines);
            let first = pdf(&d, &c).unwrap_or_else(|e| panic!("{e}"));
            assert!(first.starts_with(b"%PDF-"));
            if let Ok(path) = std::env::var("PAYDESK_KEEP_PDF") {
                std::fs::write(format!("{path}-{}-{lines}.pdf", language.as_str()), &first).unwrap();
            }
            assert_eq!(pdf(&d, &c).unwrap(), first, "the same bytes");
        }
    }
}
