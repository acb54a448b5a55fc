//! Security notices: whatever could hand a shop's money or access to someone else mails each
//! of its owners (in the language each reads), once, from the instance's address, naming who
//! did it, from where, and what changed; a refused attempt, or a change of less weight, mails
//! no one.

use reqwest::StatusCode;
use serde_json::json;

use super::accounts::invite_as;
use super::*;
use crate::doubles::smtp::Smtp;
use crate::mails::{address, flush, mailing_app};

/// The subjects `address` got, once nothing more comes.
async fn subjects(app: &TestApp, server: &Smtp, address: &str, count: usize) -> Vec<String> {
    flush(app).await;
    server.wait_for(address, count).await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    flush(app).await;
    server.received(address).into_iter().map(|m| m.subject).collect()
}

backend_tests! {
    async fn each_owner_is_mailed_once_of_each_change_to_access_or_money(backend) {
        let server = Smtp::shared().await;
        let app = mailing_app(backend, server.url()).await;
        let ann = address("ann");
        let owner = sign_up(&app, "Books", &ann).await;
        let olga = address("olga");
        let second = invite_as(&app, &owner, &olga, "owner").await;
        assert_eq!(second.post("/dashboard/settings/language", &[("language", "ru")]).await.status, StatusCode::SEE_OTHER);
        let shop = api_shop(&owner).await;
        let bob = address("bob");
        let support = invite_as(&app, &owner, &bob, "support").await;
        // Refused: nothing to tell.
        assert_eq!(support.post("/dashboard/settings/rotate", &[("confirm", "yes")]).await.status, StatusCode::FORBIDDEN);
        let page = owner.get("/dashboard/settings/users").await;
        let row = page.html.split("data-testid=\"member\"").find(|row| row.contains(&bob)).unwrap();
        let bob_id = row.split("/dashboard/settings/users/").nth(1).unwrap().split('/').next().unwrap().to_string();
        let role = owner.post(&format!("/dashboard/settings/users/{bob_id}/role"), &[("role", "analyst")]).await;
        assert_eq!(role.status, StatusCode::SEE_OTHER);
        // By the API key: a webhook endpoint, the processor, the notification URL; the time
        // zone (of less weight).
        let (status, endpoint) = app.post(&shop, "/webhook_endpoints", &json!({"url": "https://hooks.example/a"})).await;
        assert_eq!(status, StatusCode::CREATED, "{endpoint}");
        let secret = "sk_test_NeverInAMail0123456789";
        let (status, _) = app.put(&shop, "/shop/processor", &json!({"kind": "stripe", "test": {"secret_key": secret}})).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(app.put(&shop, "/shop", &json!({"notification_url": "https://erp.example/n"})).await.0, StatusCode::OK);
        let zone = owner.post("/dashboard/settings", &[("name", "Books"), ("url", ""), ("timezone", "Europe/Berlin")]).await;
        assert_eq!(zone.status, StatusCode::SEE_OTHER, "{}", zone.html);
        let removed = owner.post(&format!("/dashboard/settings/users/{bob_id}/remove"), &[("confirm", "yes")]).await;
        assert_eq!(removed.status, StatusCode::SEE_OTHER);
        let made = owner.post("/dashboard/api_keys", &[("name", "ERP"), ("access", "all"), ("lifetime", "0")]).await;
        assert_eq!(made.status, StatusCode::CREATED);
        // A key for a week: the owners hear now that it stops within 7 days.
        let week = owner.post("/dashboard/api_keys", &[("name", "Audit firm"), ("access", "all"), ("lifetime", "7")]).await;
        assert_eq!(week.status, StatusCode::CREATED);
        paydesk::services::api_keys::tend(&app.state, app.state.clock.now()).await.unwrap();

        let expected = [
            "a user was invited",
            "a user joined the team",
            "the API key was rotated",
            "a user was invited",
            "a user joined the team",
            "a user's role changed",
            "a webhook endpoint was added",
            "the processor's settings changed",
            "the shop's addresses or security settings changed",
            "a user was removed",
            "an API key was made",
            "an API key was made",
            "an API key stops working within 7 days",
        ];
        // Ann hears of Olga joining too, and of her own changes (whoever holds her session).
        let got = subjects(&app, server, &ann, expected.len()).await;
        let mut got_sorted = got.clone();
        got_sorted.sort();
        let mut want: Vec<String> = expected.iter().map(|w| format!("Books: {w}")).collect();
        want.sort();
        assert_eq!(got_sorted, want);
        // Olga reads Russian; she hears of everything from her own joining on.
        let russian = subjects(&app, server, &olga, 12).await;
        assert!(russian.iter().any(|s| s.ends_with(": API-ключ заменён")), "{russian:?}");
        assert!(russian.iter().any(|s| s.ends_with(": изменены настройки процессинга")), "{russian:?}");
        assert!(russian.iter().any(|s| s.ends_with(": создан API-ключ")), "{russian:?}");
        assert!(russian.iter().any(|s| s.ends_with(": API-ключ перестанет работать в течение 7 дней")), "{russian:?}");
        assert_eq!(russian.len(), 12, "{russian:?}");
        // A notice is written when it is sent: her own joining may be told before she chose
        // Russian a moment later. Everything after it is in Russian.
        let own_joining = |s: &&String| s.ends_with(": a user joined the team") || s.ends_with(": в команду вошёл пользователь");
        assert_eq!(russian.iter().filter(own_joining).count(), 2, "{russian:?}");
        let after: Vec<&String> = russian.iter().filter(|s| !own_joining(s)).collect();
        assert!(after.iter().all(|s| s.starts_with("Books: ") && !s.contains("user")), "{russian:?}");
        assert!(server.received(&bob).is_empty(), "a support user gets no notices");

        let mails = server.received(&ann);
        let processor = mails.iter().find(|m| m.subject.ends_with("the processor's settings changed")).unwrap();
        assert!(processor.text.contains("By: the API key Secret key (sk_"), "names the key: {}", processor.text);
        assert!(processor.text.contains("From: 127.0.0.1"), "{}", processor.text);
        assert!(!processor.text.contains(secret) && !processor.html.contains(secret), "no secret in a mail");
        assert!(processor.from.contains("paydesk"), "{}", processor.from);
        assert_eq!(processor.headers.get("x-paydesk-mail").map(String::as_str), Some("security_notice"));
        let expiring = mails.iter().find(|m| m.subject.ends_with("stops working within 7 days")).unwrap();
        assert!(expiring.text.contains("By: paydesk") && expiring.text.contains("expires_at"), "{}", expiring.text);
        let role = mails.iter().find(|m| m.subject.ends_with("a user's role changed")).unwrap();
        assert!(role.text.contains(&format!("Of: {bob}")), "names the user: {}", role.text);
        assert!(role.text.contains(&format!("By: {ann} (owner)")), "{}", role.text);
        assert!(role.text.contains("role: support → analyst"), "{}", role.text);
    }
}
