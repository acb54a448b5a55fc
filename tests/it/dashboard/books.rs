//! The books in the dashboard: what is missing before invoices start, the seller details,
//! numbering and tax rates set there (audited, as through the API), the invoices and credit
//! notes listed, searched and shown, and a period's CSV for the accountant.

use reqwest::StatusCode;
use serde_json::json;

use super::accounts::invite_as;
use super::{api_shop, sign_up};
use crate::helpers::*;

db_tests! {
    async fn a_merchant_sets_up_invoicing_and_finds_the_invoices_it_issues(app) {
        let m = sign_up(&app, "Corner Books", "owner@example.com").await;
        let shop = api_shop(&m).await;
        let list = m.get("/dashboard/invoices").await;
        assert_eq!(list.status, StatusCode::OK);
        assert!(list.html.contains("data-testid=\"seller-missing\"") && list.html.contains("Legal name, Address, City, Country."), "{}", list.html);

        // The seller: a wrong VAT id is refused with the form as sent, then saved and audited.
        let seller = [("legal_name", "Corner Books GmbH"), ("address_line1", "Hauptstraße 1"), ("city", "Berlin"),
                      ("postal_code", "10115"), ("country", "DE"), ("vat_id", "FR1A123456789")];
        let refused = m.post("/dashboard/settings/seller", &seller).await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(refused.html.contains("is not in the form of the country") && refused.html.contains("value=\"Corner Books GmbH\""), "{}", refused.html);
        let mut seller = seller.to_vec();
        seller[5] = ("vat_id", "de 123 456 789");
        let saved = m.post("/dashboard/settings/seller", &seller).await;
        assert_eq!((saved.status, saved.location.as_str()), (StatusCode::SEE_OTHER, "/dashboard/settings/invoicing"));
        let (_, stored) = app.get(&shop, "/shop/seller").await;
        assert_eq!((&stored["vat_id"], &stored["missing"]), (&json!("DE123456789"), &json!([])));
        let page = m.get("/dashboard/settings/invoicing").await;
        assert!(page.html.contains("data-testid=\"seller-complete\""), "{}", page.html);
        let (_, trail) = app.get(&shop, "/audit_events?action=seller.updated").await;
        assert_eq!(trail[0]["actor"]["type"], "user", "{trail}");

        // A tax rate, then numbering: a number at or below the last one is refused.
        let made = m.post("/dashboard/settings/tax_rates", &[("name", "VAT"), ("percentage", "19"), ("category", "standard"), ("country", "DE")]).await;
        assert_eq!(made.status, StatusCode::SEE_OTHER);
        let (_, rates) = app.get(&shop, "/tax_rates").await;
        let rate = rates[0]["id"].as_str().unwrap().to_string();
        assert!(m.get("/dashboard/products/new").await.html.contains(&format!("value=\"{rate}\"")), "products can choose it");
        let bad = m.post("/dashboard/settings/tax_rates", &[("name", "VAT"), ("percentage", "19.12345"), ("category", "standard")]).await;
        assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(bad.html.contains("may have at most 4 decimals"), "{}", bad.html);
        let moved = m.post("/dashboard/settings/series/test_invoice", &[("prefix", "T-"), ("next_number", "41")]).await;
        assert_eq!(moved.status, StatusCode::SEE_OTHER);

        // A sale: its invoice listed, found by number and by the customer's e-mail, and shown.
        let mut body = test_product_body();
        body["visible_fields"] = json!(["email", "company"]);
        body["tax_rate_id"] = json!(rate);
        let product = app.product(&shop, &body).await;
        let paid = app.pay(product["id"].as_str().unwrap(), cards::SUCCESS, &[("email", "anna@example.com"), ("company", "Lumière SARL")]).await;
        assert_eq!(paid.status, StatusCode::SEE_OTHER);
        let (_, invoices) = app.get(&shop, "/invoices").await;
        let id = invoices[0]["id"].as_str().unwrap();
        assert_eq!(invoices[0]["number"], "T-000041");
        for q in ["", "?q=T-000041", "?q=41", "?q=anna%40example.com", "?q=anna"] {
            let found = m.get(&format!("/dashboard/invoices{q}")).await;
            assert!(found.html.contains(&format!("/dashboard/invoices/{id}")) && found.html.contains("Lumière SARL"), "{q}: {}", found.html);
        }
        assert!(!m.get("/dashboard/invoices?q=nobody%40example.com").await.html.contains(id));
        let shown = m.get(&format!("/dashboard/invoices/{id}")).await;
        assert_eq!(shown.status, StatusCode::OK);
        assert!(shown.html.contains("Invoice T-000041") && shown.html.contains("€9.90") && shown.html.contains(&format!("/documents/{id}/pdf")), "{}", shown.html);

        // A refund's credit note, under Credit notes and linked from its invoice.
        let payment = invoices[0]["payment_id"].as_str().unwrap();
        assert_eq!(app.post(&shop, &format!("/payments/{payment}/refund"), &json!({"amount": 990})).await.0, StatusCode::CREATED);
        let (_, notes) = app.get(&shop, "/credit_notes").await;
        let note = notes[0]["id"].as_str().unwrap();
        assert!(m.get("/dashboard/credit_notes").await.html.contains(&format!("/dashboard/credit_notes/{note}")));
        assert!(m.get(&format!("/dashboard/invoices/{id}")).await.html.contains(&format!("/dashboard/credit_notes/{note}")));

        // The period's books: a row per document and rate, the test series asked for.
        let today = chrono::Utc::now().format("%Y-%m-%d").to_string();
        let csv = m.get(&format!("/dashboard/invoices/export.csv?from={today}&to={today}&mode=test")).await;
        assert_eq!(csv.status, StatusCode::OK);
        let rows: Vec<&str> = csv.html.lines().collect();
        assert!(rows[0].starts_with("kind,number,issued_at,currency,tax_category,tax_rate,net,tax,gross,buyer"), "{}", csv.html);
        assert_eq!(rows.len(), 3, "{}", csv.html);
        assert!(rows[1].starts_with("invoice,T-000041,") && rows[1].contains(",EUR,S,19,8.32,1.58,9.90,Lumière SARL,"), "{}", rows[1]);
        assert!(rows[2].starts_with("credit_note,TEST-CN-000001,") && rows[2].contains(",8.32,1.58,9.90,") && rows[2].contains(",T-000041,"), "{}", rows[2]);
        let live = m.get(&format!("/dashboard/invoices/export.csv?from={today}&to={today}")).await;
        assert_eq!(live.html.lines().count(), 1, "no live documents: {}", live.html);
        assert_eq!(m.get("/dashboard/invoices/export.csv?from=someday&to=2026-01-01").await.status, StatusCode::UNPROCESSABLE_ENTITY);

        // Another shop sees none of it.
        let other = sign_up(&app, "Elsewhere", "bob@example.com").await;
        assert_eq!(other.get(&format!("/dashboard/invoices/{id}")).await.status, StatusCode::NOT_FOUND);
        assert!(!other.get("/dashboard/invoices?q=41").await.html.contains(id));
    }

    async fn an_analyst_reads_the_books_and_changes_none_of_their_settings(app) {
        let owner = sign_up(&app, "Corner Books", "owner@example.com").await;
        let analyst = invite_as(&app, &owner, "analyst@example.com", "analyst").await;
        let page = analyst.get("/dashboard/settings/invoicing").await;
        assert_eq!(page.status, StatusCode::OK);
        assert!(!page.html.contains("action=\"/dashboard/settings/seller\""), "no form for an analyst");
        let refused = analyst.post("/dashboard/settings/seller", &[("legal_name", "Mallory Ltd")]).await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN);
        assert!(analyst.get("/dashboard/invoices").await.html.contains("Invoices"));
    }
}
