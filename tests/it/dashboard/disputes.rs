//! The dashboard's disputes: the overview's open disputes with the time left, the list and
//! its filter, a dispute's page, evidence saved and submitted, accepting after a
//! confirmation, the payment's page, the settings, and the same in Russian.

use reqwest::StatusCode;
use serde_json::json;

use super::{api_shop, sign_up};
use crate::helpers::*;

/// A test payment with the dispute card, disputed by the card network: its id and the
/// dispute's.
pub(super) async fn disputed(app: &TestApp, shop: &Shop) -> (String, String) {
    // The dispute card again, though a dispute stands against it.
    assert_eq!(app.put(shop, "/shop", &serde_json::json!({"refuse_disputed_cards": false})).await.0, StatusCode::OK);
    let product = app.product(shop, &test_product_body()).await;
    let id = product["id"].as_str().unwrap();
    app.pay(id, "4000000000000259", &[]).await;
    let later = chrono::Utc::now() + chrono::Duration::minutes(3);
    paydesk::services::network::run(&app.state, None, later).await.unwrap();
    let (_, payments) = app.get(shop, &format!("/payments?product={id}")).await;
    let payment = payments[0]["id"].as_str().unwrap().to_string();
    let (_, disputes) = app.get(shop, &format!("/disputes?payment={payment}")).await;
    (payment, disputes[0]["id"].as_str().unwrap().to_string())
}

db_tests! {
    async fn a_merchant_sees_a_dispute_answers_it_and_accepts_another(app) {
        let m = sign_up(&app, "Corner Books", "owner@example.com").await;
        let shop = api_shop(&m).await;
        let (payment, id) = disputed(&app, &shop).await;

        let overview = m.get("/dashboard").await;
        assert!(overview.html.contains("data-testid=\"open-disputes\""), "{}", overview.html);
        assert!(overview.html.contains("7 days left"), "the time left to answer");
        let list = m.get("/dashboard/disputes").await;
        assert_eq!(list.status, StatusCode::OK);
        assert!(list.html.contains(&format!("/dashboard/disputes/{id}")) && list.html.contains("needs your answer"));
        let won = m.get("/dashboard/disputes?status=won").await;
        assert!(!won.html.contains(&format!("/dashboard/disputes/{id}")));
        let open = m.get("/dashboard/disputes?status=open").await;
        assert!(open.html.contains(&format!("/dashboard/disputes/{id}")));

        let page = m.get(&format!("/dashboard/disputes/{id}")).await;
        assert!(page.html.contains("Your evidence") && page.html.contains("fraudulent"), "{}", page.html);
        assert!(page.html.contains("€24.90") || page.html.contains("24.90"), "what it took now, fee included");
        let paid = m.get(&format!("/dashboard/payments/{payment}")).await;
        assert!(paid.html.contains("data-testid=\"dispute\"") && !paid.html.contains("Review the refund"), "no refund of disputed money");

        // Too long together: refused with the form as sent.
        let long = "x".repeat(150_001);
        let refused = m.post(&format!("/dashboard/disputes/{id}"), &[("uncategorized_text", &long), ("submit", "false")]).await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
        // A draft, then the evidence submitted.
        let draft = m.post(&format!("/dashboard/disputes/{id}"), &[("customer_name", "Ann Lee"), ("submit", "false")]).await;
        assert_eq!((draft.status, draft.location.as_str()), (StatusCode::SEE_OTHER, format!("/dashboard/disputes/{id}").as_str()));
        let page = m.get(&format!("/dashboard/disputes/{id}")).await;
        assert!(page.html.contains("saved as a draft") && page.html.contains(">Ann Lee</textarea>"), "{}", page.html);
        let sent = m.post(&format!("/dashboard/disputes/{id}"), &[("customer_name", "Ann Lee"), ("product_description", "A signed book"), ("submit", "true")]).await;
        assert_eq!(sent.status, StatusCode::SEE_OTHER);
        let (_, api) = app.get(&shop, &format!("/disputes/{id}")).await;
        assert_eq!(api["status"], "under_review");
        assert_eq!(api["evidence"], json!({"customer_name": "Ann Lee", "product_description": "A signed book"}));
        let page = m.get(&format!("/dashboard/disputes/{id}")).await;
        assert!(!page.html.contains("Submit the evidence"), "no form once submitted");

        // Another dispute, accepted after a confirmation.
        let (_, other) = disputed(&app, &shop).await;
        let asked = m.post(&format!("/dashboard/disputes/{other}/accept"), &[]).await;
        assert_eq!(asked.status, StatusCode::OK);
        assert!(asked.html.contains("data-testid=\"confirm\""), "{}", asked.html);
        let (_, still) = app.get(&shop, &format!("/disputes/{other}")).await;
        assert_eq!(still["status"], "needs_response", "nothing before the confirmation");
        let done = m.post(&format!("/dashboard/disputes/{other}/accept"), &[("confirm", "yes")]).await;
        assert_eq!(done.status, StatusCode::SEE_OTHER);
        let (_, accepted) = app.get(&shop, &format!("/disputes/{other}")).await;
        assert_eq!(accepted["status"], "accepted");
        let again = m.post(&format!("/dashboard/disputes/{other}/accept"), &[("confirm", "yes")]).await;
        assert_eq!(again.status, StatusCode::SEE_OTHER);
        assert!(m.get(&format!("/dashboard/disputes/{other}")).await.html.contains("This dispute is closed"));

        // The settings.
        let saved = m.post("/dashboard/settings/disputes", &[("refund_fraud_warnings", "true")]).await;
        assert_eq!(saved.status, StatusCode::SEE_OTHER);
        let (_, settings) = app.get(&shop, "/shop").await;
        assert_eq!((settings["cancel_disputed_subscriptions"].clone(), settings["refund_fraud_warnings"].clone()), (json!(false), json!(true)));

        // Another shop's dispute is not found; in Russian the page speaks Russian.
        let other_shop = sign_up(&app, "Other", "other@example.com").await;
        assert_eq!(other_shop.get(&format!("/dashboard/disputes/{id}")).await.status, StatusCode::NOT_FOUND);
        m.post("/dashboard/settings/language", &[("language", "ru")]).await;
        let ru = m.get(&format!("/dashboard/disputes/{id}")).await;
        assert!(ru.html.contains("на рассмотрении") && ru.html.contains("мошенничество"), "{}", ru.html);
    }
}

backend_tests! {
    async fn each_owner_is_mailed_once_of_a_new_dispute_in_their_language(backend) {
        use crate::doubles::smtp::Smtp;
        use crate::mails::{address, flush, mailing_app};
        let server = Smtp::shared().await;
        let app = mailing_app(backend, server.url()).await;
        let ann = address("ann");
        let owner = sign_up(&app, "Books", &ann).await;
        assert_eq!(owner.post("/dashboard/settings/language", &[("language", "ru")]).await.status, StatusCode::SEE_OTHER);
        let shop = api_shop(&owner).await;
        let (_, id) = disputed(&app, &shop).await;
        // The network runs again: the dispute is not opened twice, nor mailed twice.
        paydesk::services::network::run(&app.state, None, chrono::Utc::now() + chrono::Duration::minutes(4)).await.unwrap();
        flush(&app).await;
        let got = server.wait_for(&ann, 2).await;
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        flush(&app).await;
        let disputes: Vec<_> = server.received(&ann).into_iter().filter(|m| m.subject.contains("оспорен")).collect();
        assert_eq!(disputes.len(), 1, "{:?}", got.iter().map(|m| &m.subject).collect::<Vec<_>>());
        let mail = &disputes[0];
        assert!(mail.subject.contains("Books") && mail.subject.contains("9,90"), "{}", mail.subject);
        assert!(mail.text.contains(&format!("/dashboard/disputes/{id}")), "{}", mail.text);
        assert!(mail.text.contains("fraudulent") && mail.text.contains("Ответить до"), "{}", mail.text);
    }
}
