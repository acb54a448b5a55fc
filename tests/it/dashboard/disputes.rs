//! The dashboard's disputes: the overview's open disputes with the time left, the list and
//! its filter, a dispute's page, evidence saved and submitted (after a tick, never empty, and
//! shown once sent), accepting after a confirmation, the payment's page with the amount and
//! the fee apart, the overview's chart below zero, the settings, and the same in Russian.

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
        assert!(list.html.contains(&format!("/dashboard/disputes/{id}")) && list.html.contains("Needs your answer"));
        let won = m.get("/dashboard/disputes?status=won").await;
        assert!(!won.html.contains(&format!("/dashboard/disputes/{id}")));
        let open = m.get("/dashboard/disputes?status=open").await;
        assert!(open.html.contains(&format!("/dashboard/disputes/{id}")));

        let page = m.get(&format!("/dashboard/disputes/{id}")).await;
        assert!(page.html.contains("Your evidence") && page.html.contains("Fraudulent"), "{}", page.html);
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
        let sent = m.post(&format!("/dashboard/disputes/{id}"), &[("customer_name", "Ann Lee"), ("product_description", "A signed book"), ("understood", "true"), ("submit", "true")]).await;
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

db_tests! {
    async fn evidence_is_submitted_only_ticked_and_not_empty_and_then_shown_as_sent(app) {
        let m = sign_up(&app, "Corner Books", "owner@example.com").await;
        let shop = api_shop(&m).await;
        let (payment, id) = disputed(&app, &shop).await;
        let path = format!("/dashboard/disputes/{id}");
        let api = format!("/disputes/{id}");
        let page = m.get(&path).await;
        assert!(page.html.contains("name=\"understood\" type=\"checkbox\""), "a tick before submitting: {}", page.html);
        assert!(!page.html.contains("data-testid=\"evidence-sent\""), "nothing sent yet");

        // Nothing to send: refused, whatever the tick.
        let empty = m.post(&path, &[("customer_name", "  "), ("understood", "true"), ("submit", "true")]).await;
        assert_eq!(empty.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(empty.html.contains("data-testid=\"evidence-empty\""), "{}", empty.html);
        assert_eq!(app.get(&shop, &api).await.1["status"], "needs_response");
        // Evidence, but the box not ticked: refused, the form kept as typed.
        let unticked = m.post(&path, &[("customer_name", "Ann Lee"), ("submit", "true")]).await;
        assert_eq!(unticked.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(unticked.html.contains("data-testid=\"evidence-unconfirmed\"") && unticked.html.contains(">Ann Lee</textarea>"), "{}", unticked.html);
        assert!(unticked.html.contains("id=\"f-understood\" name=\"understood\" type=\"checkbox\" value=\"true\" aria-describedby=\"h-understood e-understood\" aria-invalid=\"true\""), "{}", unticked.html);
        let seen = app.get(&shop, &api).await.1;
        assert_eq!((seen["status"].as_str(), seen["evidence"].clone()), (Some("needs_response"), json!({})), "nothing staged or sent");
        // A draft needs no tick, and may be empty.
        let draft = m.post(&path, &[("submit", "false")]).await;
        assert_eq!(draft.status, StatusCode::SEE_OTHER, "{}", draft.html);

        // Ticked, with evidence: submitted, and shown read-only as sent.
        let sent = m.post(&path, &[("customer_name", "Ann Lee"), ("service_date", "2026-11-02"), ("uncategorized_text", "Signed for\nat the door"), ("understood", "true"), ("submit", "true")]).await;
        assert_eq!(sent.status, StatusCode::SEE_OTHER, "{}", sent.html);
        assert_eq!(app.get(&shop, &api).await.1["status"], "under_review");
        let page = m.get(&path).await;
        let shown = page.html.split("data-testid=\"evidence-sent\"").nth(1).expect("the evidence sent").split("</section>").next().unwrap();
        assert!(shown.contains("<dt>Customer&#39;s name</dt><dd>Ann Lee</dd>") || shown.contains("<dt>Customer&#x27;s name</dt><dd>Ann Lee</dd>"), "{shown}");
        assert!(shown.contains("2026-11-02") && shown.contains("Signed for\nat the door"), "{shown}");
        assert!(!shown.contains("Shipment tracking number"), "empty fields are not listed");
        assert!(!page.html.contains("<textarea"), "read-only");

        // The money taken: the payment's part and the fee apart; English words, not API codes.
        assert!(page.html.contains("data-testid=\"withdrawn\">€24.90: €9.90 of the payment and a €15.00 dispute fee</dd>"), "{}", page.html);
        for said in ["Chargeback", "Fraudulent", "Under review", "Evidence submitted", "Money taken"] {
            assert!(page.html.contains(said), "{said}: {}", page.html);
        }
        for code in [">fraudulent<", ">chargeback<", ">under_review<", "funds_withdrawn<"] {
            assert!(!page.html.contains(code), "{code}");
        }
        let paid = m.get(&format!("/dashboard/payments/{payment}")).await;
        assert!(paid.html.contains("€9.90 taken back, and a dispute fee of €15.00"), "{}", paid.html);
        assert!(!paid.html.contains("€24.90 taken back"));
        m.post("/dashboard/settings/language", &[("language", "ru")]).await;
        let ru = m.get(&path).await;
        assert!(ru.html.contains("— сумма платежа, 15,00") && ru.html.contains("— комиссия за спор"), "{}", ru.html);
        assert!(ru.html.contains("Отправленные доказательства") && ru.html.contains("чарджбэк"));
    }

    async fn the_overview_charts_a_day_that_disputes_made_negative_below_zero(app) {
        let m = sign_up(&app, "Corner Books", "owner@example.com").await;
        let shop = api_shop(&m).await;
        // €9.90 taken, then €9.90 and a €15.00 fee taken back: the day is €15.00 down.
        disputed(&app, &shop).await;
        let overview = m.get("/dashboard").await;
        let chart = overview.html.split("data-testid=\"chart-EUR\"").nth(1).expect("a chart of the day").split("</figure>").next().unwrap();
        let below = chart.split("class=\"below\"").count() - 1;
        assert_eq!(below, 1, "one day below zero: {chart}");
        let bar = chart.split("<rect").find(|r| r.contains("class=\"below\"")).unwrap();
        let height: u32 = bar.split("height=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
        assert!(height >= 100, "the lowest day fills the chart below zero: {bar}");
        assert!(bar.contains("-€15.00") || bar.contains("−€15.00"), "{bar}");
        let zero: u32 = chart.split("<line").nth(1).unwrap().split("y1=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
        assert!(zero < 10, "no day above zero: the line runs at the top ({zero})");
        assert!(chart.contains("from -€15.00 to €0.00 a day") || chart.contains("from −€15.00 to €0.00 a day"), "{chart}");
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
