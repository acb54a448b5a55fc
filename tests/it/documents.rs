//! The files of the books: each invoice and credit note as a PDF/A-3b in its language, with
//! its EN 16931 XML attached, read back by the tools an accountant's system uses: qpdf
//! (structure), poppler (text, attachments, metadata) and the Factur-X library of PyPI
//! (the attachment found, and checked against the Factur-X EN 16931 XML schema).

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::helpers::*;
use crate::invoices::{invoices, set_seller};

/// A document's file as the API sends it: status, content type, bytes.
async fn download(app: &TestApp, shop: &Shop, path: &str) -> (StatusCode, String, Vec<u8>) {
    let response = app.req(shop, Method::GET, path).send().await.unwrap();
    let status = response.status();
    let kind = response.headers().get("content-type").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default();
    (status, kind, response.bytes().await.unwrap().to_vec())
}

/// The output of a command of the test environment, which must succeed.
fn run(program: &str, args: &[&str]) -> String {
    let output = std::process::Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program} is needed (tests/run.sh installs it): {e}"));
    assert!(
        output.status.success(),
        "{program} {args:?}: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn python() -> String {
    std::env::var("PAYDESK_TEST_PYTHON")
        .unwrap_or_else(|_| format!("{}/.ci/venv/bin/python", env!("CARGO_MANIFEST_DIR")))
}

/// What the Factur-X library finds in a PDF: the attachment's name, its level, and the XML,
/// checked against the Factur-X XML schema of that level.
fn factur_x(pdf: &std::path::Path) -> (String, String, String) {
    let script = r#"
import sys
from lxml import etree
from facturx import get_xml_from_pdf, get_level, xml_check_xsd
name, xml = get_xml_from_pdf(open(sys.argv[1], "rb").read(), check_xsd=True)
assert xml, "no Factur-X XML found"
xml_check_xsd(xml, flavor="factur-x", level="en16931")
print(name)
print(get_level(etree.fromstring(xml)))
print(xml.decode())
"#;
    let out = run(&python(), &["-c", script, pdf.to_str().unwrap()]);
    let mut lines = out.splitn(3, '\n');
    let (name, level, xml) = (lines.next().unwrap(), lines.next().unwrap(), lines.next().unwrap_or(""));
    (name.to_owned(), level.to_owned(), xml.to_owned())
}

/// Checks a PDF with qpdf, and answers its text (poppler's pdftotext) and metadata.
fn read_pdf(bytes: &[u8]) -> (String, String, (String, String, String)) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("document.pdf");
    std::fs::write(&path, bytes).unwrap();
    let file = path.to_str().unwrap();
    assert!(run("qpdf", &["--check", file]).contains("No syntax or stream encoding errors found"));
    let text = run("pdftotext", &["-layout", file, "-"]);
    let metadata = run("pdfinfo", &["-meta", file]);
    (text, metadata, factur_x(&path))
}

db_tests! {
    async fn an_invoice_is_a_pdf_a_with_its_e_invoice_attached_and_the_same_bytes_each_time(app) {
        let shop = app.shop("Gym").await;
        set_seller(&app, &shop).await;
        let (_, vat) = app.post(&shop, "/tax_rates", &json!({"name": "VAT", "percentage": 19})).await;
        let mut body = test_product_body();
        body["amount"] = json!(10_000);
        body["tax_rate_id"] = vat["id"].clone();
        body["tax_behavior"] = json!("exclusive");
        body["visible_fields"] = json!(["email", "first_name", "last_name", "company", "country", "vat_id"]);
        let product = app.product(&shop, &body).await["id"].as_str().unwrap().to_string();
        let buyer = [("email", "anna@example.fr"), ("first_name", "Anna"), ("last_name", "Leroy"),
                     ("company", "Lumière & Fils SARL"), ("country", "FR"), ("vat_id", "FR1A123456789")];
        assert_eq!(app.pay(&product, cards::SUCCESS, &buyer).await.status, StatusCode::SEE_OTHER);
        let invoice = invoices(&app, &shop, "").await.remove(0);
        let id = invoice["id"].as_str().unwrap();

        let (status, kind, pdf) = download(&app, &shop, &format!("/invoices/{id}/pdf")).await;
        assert_eq!((status, kind.as_str()), (StatusCode::OK, "application/pdf"));
        assert!(pdf.starts_with(b"%PDF-1.7"), "{:?}", &pdf[..20]);
        let (text, metadata, (name, level, xml)) = read_pdf(&pdf);
        for shown in ["Invoice", "TEST-INV-000001", "Gym GmbH", "DE123456789", "Lumière & Fils SARL", "Anna Leroy",
                      "FR1A123456789", "Gift card", "€100.00", "0 % (reverse charge)", "Reverse charge: VAT to be accounted for by the recipient",
                      "TEST DOCUMENT"] {
            assert!(text.contains(shown), "{shown} is not in:\n{text}");
        }
        assert!(metadata.contains("<pdfaid:part>3</pdfaid:part>") && metadata.contains("<pdfaid:conformance>B</pdfaid:conformance>"), "{metadata}");
        assert!(metadata.contains("<fx:DocumentFileName>factur-x.xml</fx:DocumentFileName>") && metadata.contains("<fx:ConformanceLevel>EN 16931</fx:ConformanceLevel>"), "{metadata}");
        assert_eq!((name.as_str(), level.as_str()), ("factur-x.xml", "en16931"));
        assert!(xml.contains("<ram:ID>TEST-INV-000001</ram:ID><ram:TypeCode>380</ram:TypeCode>"), "{xml}");
        assert!(xml.contains("<ram:CategoryCode>AE</ram:CategoryCode>"), "{xml}");

        let (status, kind, again) = download(&app, &shop, &format!("/invoices/{id}/pdf")).await;
        assert_eq!((status, &kind), (StatusCode::OK, &"application/pdf".to_string()));
        assert_eq!(again, pdf, "a document's bytes never change");
        let (status, kind, alone) = download(&app, &shop, &format!("/invoices/{id}/xml")).await;
        assert_eq!((status, kind.as_str()), (StatusCode::OK, "application/xml"));
        assert_eq!(String::from_utf8(alone).unwrap().trim(), xml.trim(), "the XML alone is the one attached");

        // Its page, public by its id, shows the same and leads to the same files.
        assert!(invoice["hosted_url"].as_str().unwrap().ends_with(&format!("/documents/{id}")), "{invoice}");
        assert_eq!(invoice["pdf_url"], json!(format!("{}/pdf", invoice["hosted_url"].as_str().unwrap())));
        let page = app.page(&format!("/documents/{id}")).await;
        assert_eq!(page.status, StatusCode::OK);
        for shown in ["Invoice TEST-INV-000001", "Lumière &#38; Fils SARL", "0 % (reverse charge)", "€100.00", "Download the PDF",
                      &format!("href=\"/documents/{id}/pdf\"")] {
            assert!(page.html.contains(shown), "{shown} is not in:\n{}", page.html);
        }
        let hosted = app.anon(Method::GET, &format!("/documents/{id}/pdf")).send().await.unwrap();
        assert_eq!(hosted.status(), StatusCode::OK);
        assert_eq!(hosted.bytes().await.unwrap().to_vec(), pdf, "the page's PDF is the API's");
        let hosted = app.anon(Method::GET, &format!("/documents/{id}/xml")).send().await.unwrap();
        assert_eq!(hosted.text().await.unwrap().trim(), xml.trim());
        assert_eq!(app.page("/documents/inv_0000000000000000").await.status, StatusCode::NOT_FOUND);

        let other = app.shop("Elsewhere").await;
        assert_eq!(download(&app, &other, &format!("/invoices/{id}/pdf")).await.0, StatusCode::NOT_FOUND);
        assert_eq!(download(&app, &shop, &format!("/credit_notes/{id}/pdf")).await.0, StatusCode::NOT_FOUND);
        assert_eq!(download(&app, &shop, "/invoices/inv_0000000000000000/xml").await.0, StatusCode::NOT_FOUND);
    }

    async fn a_credit_note_in_russian_names_its_invoice(app) {
        let shop = app.shop("Gym").await;
        set_seller(&app, &shop).await;
        let mut body = test_product_body();
        body["language"] = json!("ru");
        body["name"] = json!("Подарочная карта «Зима»");
        let product = app.product(&shop, &body).await["id"].as_str().unwrap().to_string();
        assert_eq!(app.pay(&product, cards::SUCCESS, &[]).await.status, StatusCode::SEE_OTHER);
        let (_, paid) = app.get(&shop, "/payments?status=succeeded").await;
        let payment = paid[0]["id"].as_str().unwrap();
        let (status, _) = app.post(&shop, &format!("/payments/{payment}/refund"), &json!({"amount": 490})).await;
        assert_eq!(status, StatusCode::CREATED);
        let (_, notes) = app.get(&shop, "/credit_notes").await;
        let note: &Value = &notes[0];
        let (status, _, pdf) = download(&app, &shop, &format!("/credit_notes/{}/pdf", note["id"].as_str().unwrap())).await;
        assert_eq!(status, StatusCode::OK);
        let (text, _, (name, _, xml)) = read_pdf(&pdf);
        for shown in ["Кредит-нота", "TEST-CN-000001", "Исправляет счёт", "TEST-INV-000001", "Подарочная карта «Зима»", "4,90"] {
            assert!(text.contains(shown), "{shown} is not in:\n{text}");
        }
        assert_eq!(name, "factur-x.xml");
        assert!(xml.contains("<ram:TypeCode>381</ram:TypeCode>"), "{xml}");
        assert!(xml.contains("<ram:IssuerAssignedID>TEST-INV-000001</ram:IssuerAssignedID>"), "{xml}");
    }
}
