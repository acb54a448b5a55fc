//! An account locked by wrong passwords: the tenth for one account within a day locks it for
//! 30 minutes, even for the right password; its user is mailed the link that opens it at once
//! (one mail however many wrong passwords raced), the shop's owners a security notice, and
//! the trail records it all.

use chrono::Duration;
use reqwest::StatusCode;
use serde_json::Value;

use super::accounts::invite_as;
use super::two_step::{code, enrol};
use super::*;
use crate::doubles::smtp::Smtp;
use crate::mails::{address, flush, mailing_app};

/// The `user.` records of the shop's trail, oldest first.
async fn user_records(app: &TestApp, shop: &Shop) -> Vec<Value> {
    let (status, page) = app.get(shop, "/audit_events?limit=1000&action=user.").await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let mut records = page.as_array().unwrap().clone();
    records.reverse();
    records
}

/// The path of the unlock link in a lock mail's text.
fn unlock_path(app: &TestApp, text: &str) -> String {
    let link = text.lines().find_map(|l| l.strip_prefix("Unlock my account now: ")).expect("the unlock link");
    link.strip_prefix(&app.base).expect("a link to this instance").to_string()
}

backend_tests! {
    async fn wrong_passwords_lock_the_account_once_and_its_link_opens_it_once(backend) {
        let server = Smtp::shared().await;
        let app = mailing_app(backend, server.url()).await;
        let ann = address("ann");
        let owner = sign_up(&app, "Books", &ann).await;
        let shop = api_shop(&owner).await;
        let bob = address("bob");
        invite_as(&app, &owner, &bob, "support").await;

        // Twelve wrong passwords at once: one of them locks the account, one mail goes.
        let guesses = (0..12).map(|_| log_in(&app, &bob, "guess guess guess"));
        let answers = futures::future::join_all(guesses).await;
        for (_, answer) in &answers {
            assert!(
                [StatusCode::UNPROCESSABLE_ENTITY, StatusCode::TOO_MANY_REQUESTS].contains(&answer.status),
                "{}",
                answer.html
            );
        }
        let (_, right) = log_in(&app, &bob, PASSWORD).await;
        assert_eq!(right.status, StatusCode::TOO_MANY_REQUESTS, "the right password waits too");
        assert!(right.html.contains("This account is locked after too many wrong passwords."), "{}", right.html);
        let wait: u64 = right.headers["retry-after"].to_str().unwrap().parse().unwrap();
        assert!((1700..=1800).contains(&wait), "Retry-After {wait}");
        // A stranger's guesses cannot tell a right password: the answer is the same.
        let (_, guess) = log_in(&app, &bob, "another guess here").await;
        assert_eq!(guess.status, right.status);

        flush(&app).await;
        server.wait_for(&bob, 1).await;
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        flush(&app).await;
        let mails: Vec<_> = server.received(&bob).into_iter().filter(|m| m.subject.contains("locked")).collect();
        assert_eq!(mails.len(), 1, "one lock, one mail: {:?}", mails.iter().map(|m| &m.subject).collect::<Vec<_>>());
        let mail = &mails[0];
        assert_eq!(mail.subject, "Books: your account is locked");
        assert!(mail.from.contains("paydesk"), "from the instance: {}", mail.from);
        assert!(mail.text.contains(&bob) && mail.text.contains("not even with the right password"), "{}", mail.text);
        assert!(!mail.text.contains("guess guess"), "no password typed is told");
        let link = unlock_path(&app, &mail.text);

        // The owner hears of it; the locked user gets only their own mail.
        let notices = server.wait_for(&ann, 1).await;
        let notice = notices.iter().find(|m| m.subject == "Books: an account was locked after wrong passwords");
        let notice = notice.unwrap_or_else(|| panic!("{:?}", notices.iter().map(|m| &m.subject).collect::<Vec<_>>()));
        assert!(notice.text.contains(&bob), "names the account: {}", notice.text);
        assert!(notice.text.contains("/dashboard/settings/audit"), "{}", notice.text);
        assert!(!server.received(&bob).iter().any(|m| m.subject.contains("an account was locked")));

        let records = user_records(&app, &shop).await;
        let locks: Vec<_> = records.iter().filter(|r| r["action"] == "user.locked").collect();
        assert_eq!(locks.len(), 1, "one lock recorded");
        assert_eq!(locks[0]["actor"]["type"], "system", "{}", locks[0]);
        assert!(records.iter().any(|r| r["action"] == "user.login_failed"
            && r["changes"].as_array().unwrap().iter().any(|c| c["after"] == "locked")), "refusals while locked are recorded");

        // The link asks before it opens (a mail scanner's GET spends nothing), then opens once.
        let mut visitor = Merchant { base: app.base.clone(), client: browser(), csrf: String::new() };
        let page = visitor.get(&link).await;
        assert_eq!(page.status, StatusCode::OK);
        assert!(page.html.contains(&bob) && page.html.contains("Unlock my account"), "{}", page.html);
        assert_eq!(visitor.get(&link).await.status, StatusCode::OK, "a look spends nothing");
        let forged = visitor.post_raw(&link, &[("csrf", "forged")]).await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN);
        visitor.csrf = csrf_of(&visitor.get(&link).await.html);
        let opened = visitor.post(&link, &[]).await;
        assert_eq!((opened.status, opened.location.as_str()), (StatusCode::SEE_OTHER, "/dashboard/login?unlocked=1"));
        assert!(visitor.get(&opened.location).await.html.contains("Your account is open again."));
        let (_, signed_in) = log_in(&app, &bob, PASSWORD).await;
        assert_eq!(signed_in.status, StatusCode::SEE_OTHER, "open at once: {}", signed_in.html);
        let spent = visitor.get(&link).await;
        assert_eq!(spent.status, StatusCode::GONE);
        assert!(spent.html.contains("This unlock link no longer works"));
        assert_eq!(visitor.post(&link, &[]).await.status, StatusCode::GONE, "used once");
        assert!(user_records(&app, &shop).await.iter().any(|r| r["action"] == "user.unlocked" && r["actor"]["id"].is_string()));
    }

    async fn a_lock_ends_by_itself_after_thirty_minutes_and_its_link_with_it(backend) {
        let server = Smtp::shared().await;
        let app = mailing_app(backend, server.url()).await;
        let ann = address("ann");
        sign_up(&app, "Books", &ann).await;
        for attempt in 1..=10 {
            let (_, answer) = log_in(&app, &ann, "guess guess guess").await;
            let expected = if attempt < 10 { StatusCode::UNPROCESSABLE_ENTITY } else { StatusCode::TOO_MANY_REQUESTS };
            assert_eq!(answer.status, expected, "attempt {attempt}");
        }
        flush(&app).await;
        let mail = server.wait_for(&ann, 1).await.into_iter().find(|m| m.subject.contains("locked")).unwrap();
        let link = unlock_path(&app, &mail.text);
        app.state.clock.advance(Duration::minutes(29));
        assert_eq!(log_in(&app, &ann, PASSWORD).await.1.status, StatusCode::TOO_MANY_REQUESTS);
        app.state.clock.advance(Duration::minutes(2));
        let visitor = Merchant { base: app.base.clone(), client: browser(), csrf: String::new() };
        assert_eq!(visitor.get(&link).await.status, StatusCode::GONE, "the lock is over, and its link with it");
        // The per-address throttle (15 minutes) is over too by now.
        let (m, done) = log_in(&app, &ann, PASSWORD).await;
        assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.html);
        // The count starts again: one wrong password after the lock does not lock again.
        assert_eq!(log_in(&app, &ann, "guess guess guess").await.1.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(m.get("/dashboard").await.status, StatusCode::OK);
    }
}

db_tests! {
    async fn a_login_waiting_for_its_code_stops_when_the_account_locks(app) {
        let ann = sign_up(&app, "Books", "ann@example.com").await;
        let (secret, _) = enrol(&ann).await;
        let (m, first) = log_in(&app, "ann@example.com", PASSWORD).await;
        assert_eq!(first.location, "/dashboard/login/code");
        let page = m.get("/dashboard/login/code").await;
        // Meanwhile a stranger's guesses lock the account.
        let user = paydesk::db::users::by_email(&app.db, "ann@example.com").await.unwrap().unwrap();
        let now = chrono::Utc::now();
        let entry = paydesk::domain::audit::Entry::new(user.shop_id, paydesk::domain::audit::Actor::system(), Default::default(), "user.locked");
        let lock = (now + Duration::minutes(30), paydesk::domain::ids::hash_token("t"));
        assert!(paydesk::db::users::lock(&app.db, &user.id, lock, None, &entry, now).await.unwrap());
        let done = m.post_raw("/dashboard/login/code", &[("csrf", &csrf_of(&page.html)), ("code", &code(&secret, 1))]).await;
        assert_eq!((done.status, done.location.as_str()), (StatusCode::SEE_OTHER, "/dashboard/login"));
        assert_eq!(m.get("/dashboard").await.status, StatusCode::SEE_OTHER, "not signed in");
        assert_eq!(m.get("/dashboard/login/code").await.status, StatusCode::SEE_OTHER, "the pending login is gone");
    }
}
