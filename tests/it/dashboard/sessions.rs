//! Sessions through a clock the tests move: re-authentication before what can redirect money
//! or access, held forms sent on unchanged, idle and absolute expiry, a shop's longer idle
//! time, and a user's list of sessions with signing one or all out.

use chrono::Duration;
use reqwest::StatusCode;

use super::two_step::{code, enrol};
use super::*;

/// Posts the page's held form again with `password` (and `code`): every hidden field as the
/// page holds it.
async fn confirm(m: &Merchant, held: &Answer, password: &str, code: Option<&str>) -> Answer {
    let form = held.html.split("data-testid=\"reauth\"").nth(1).expect("the page asking again");
    let action = form.split("<form method=\"post\" action=\"").nth(1).unwrap().split('"').next().unwrap();
    let form = form.split("</form>").next().unwrap();
    let mut pairs: Vec<(String, String)> = form
        .split("<input type=\"hidden\" name=\"")
        .skip(1)
        .map(|field| {
            let name = field.split('"').next().unwrap();
            let value = field.split("value=\"").nth(1).unwrap().split('"').next().unwrap();
            (name.to_string(), html_unescape(value))
        })
        .collect();
    pairs.push(("reauth_password".into(), password.into()));
    if let Some(code) = code {
        pairs.push(("reauth_code".into(), code.into()));
    }
    let pairs: Vec<(&str, &str)> = pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    m.post_raw(action, &pairs).await
}

fn html_unescape(text: &str) -> String {
    text.replace("&#x2F;", "/")
        .replace("&#47;", "/")
        .replace("&#58;", ":")
        .replace("&#x3A;", ":")
        .replace("&#60;", "<")
        .replace("&#62;", ">")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
        .replace("&#38;", "&")
        .replace("&quot;", "\"")
        .replace("&#34;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
}

/// Whether the page is the one asking for the password again.
fn asks_again(a: &Answer) -> bool {
    a.html.contains("data-testid=\"reauth\"")
}

db_tests! {
    async fn a_sensitive_change_asks_for_the_password_again_after_ten_minutes_and_is_then_made_once(app) {
        let m = sign_up(&app, "Books", "ann@example.com").await;
        let shop = api_shop(&m).await;
        // Just signed in: the session is fresh, the key rotates at once.
        let rotated = m.post("/dashboard/settings/rotate", &[("confirm", "yes")]).await;
        assert_eq!(rotated.location, "/dashboard/settings/key");
        let key = m.get("/dashboard/settings/key").await;
        assert!(!key.html.contains(&shop.secret));

        app.state.clock.advance(Duration::minutes(11));
        let rotate = m.post("/dashboard/settings/rotate", &[("confirm", "yes")]).await;
        assert_eq!(rotate.status, StatusCode::OK);
        assert!(asks_again(&rotate), "{}", rotate.html);
        assert_eq!(m.get("/dashboard/settings/key").await.status, StatusCode::SEE_OTHER, "nothing rotated while asked");
        let wrong = confirm(&m, &rotate, "not the password", None).await;
        assert_eq!(wrong.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(wrong.html.contains("The password is wrong. Nothing was changed."));
        assert!(asks_again(&wrong));
        let done = confirm(&m, &rotate, PASSWORD, None).await;
        assert_eq!((done.status, done.location.as_str()), (StatusCode::SEE_OTHER, "/dashboard/settings/key"), "{}", done.html);
        assert!(m.get("/dashboard/settings/key").await.html.contains("data-testid=\"secret-key\""));
        // Fresh again for ten minutes.
        app.state.clock.advance(Duration::minutes(9));
        assert_eq!(m.post("/dashboard/settings/rotate", &[("confirm", "yes")]).await.status, StatusCode::SEE_OTHER);
        app.state.clock.advance(Duration::minutes(2));
        assert!(asks_again(&m.post("/dashboard/settings/rotate", &[("confirm", "yes")]).await));
        // What is not sensitive never asks.
        let product = m.post("/dashboard/products", &[("name", "Book"), ("description", "A book"), ("amount", "9.90"), ("currency", "EUR"),
            ("infinite", "true"), ("immortal", "true")]).await;
        assert_eq!(product.status, StatusCode::SEE_OTHER, "{}", product.html);
    }

    async fn a_held_form_is_sent_on_unchanged_once_the_password_and_code_are_right(app) {
        let m = sign_up(&app, "Books", "ann@example.com").await;
        // Enrolment spent the code of this 30-second step; the session stays signed in.
        let (secret, _) = enrol(&m).await;
        let shop = api_shop(&m).await;
        app.state.clock.advance(Duration::minutes(11));
        let url = "https://hooks.example.com/paydesk?a=1&b=%22x%22";
        let fields = [("url", url), ("enabled_events", "payment.*"), ("enabled_events", "refund.failed"), ("description", "Books <&> \"shop\"")];
        let held = m.post("/dashboard/webhooks", &fields).await;
        assert!(asks_again(&held), "{}", held.html);
        assert!(held.html.contains("id=\"f-reauth-code\""), "a user with two-step login gives a code too");
        assert_eq!(app.get(&shop, "/webhook_endpoints").await.1.as_array().unwrap().len(), 0);
        // A form of another site is not held: its handler refuses it.
        let forged = m.post_raw("/dashboard/webhooks", &[("csrf", "forged"), ("url", url)]).await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN);
        assert!(!asks_again(&forged));
        let no_code = confirm(&m, &held, PASSWORD, Some("000000")).await;
        assert_eq!(no_code.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(no_code.html.contains("The password or the code is wrong. Nothing was changed."));
        let added = confirm(&m, &held, PASSWORD, Some(&code(&secret, 1))).await;
        assert_eq!(added.status, StatusCode::CREATED, "{}", added.html);
        let (_, endpoints) = app.get(&shop, "/webhook_endpoints").await;
        assert_eq!(endpoints.as_array().unwrap().len(), 1);
        assert_eq!(endpoints[0]["url"], url);
        assert_eq!(endpoints[0]["enabled_events"], serde_json::json!(["payment.*", "refund.failed"]));
        assert_eq!(endpoints[0]["description"], "Books <&> \"shop\"");
    }

    async fn wrong_passwords_given_again_are_throttled(app) {
        let m = sign_up(&app, "Books", "ann@example.com").await;
        app.state.clock.advance(Duration::minutes(11));
        let held = m.post("/dashboard/settings/notifications", &[("notification_url", "https://example.com/n")]).await;
        assert!(asks_again(&held));
        for _ in 0..10 {
            assert_eq!(confirm(&m, &held, "wrong", None).await.status, StatusCode::UNPROCESSABLE_ENTITY);
        }
        let locked = confirm(&m, &held, PASSWORD, None).await;
        assert_eq!(locked.status, StatusCode::TOO_MANY_REQUESTS);
        assert!(locked.headers.contains_key("retry-after"));
        assert!(locked.html.contains("Too many failed attempts."));
    }

    async fn a_session_ends_after_the_shops_idle_time_and_twelve_hours_after_its_login(app) {
        let m = sign_up(&app, "Books", "ann@example.com").await;
        app.state.clock.advance(Duration::minutes(14));
        assert_eq!(m.get("/dashboard").await.status, StatusCode::OK, "used within 15 minutes");
        app.state.clock.advance(Duration::minutes(16));
        let ended = m.get("/dashboard/products").await;
        assert_eq!(ended.status, StatusCode::SEE_OTHER);
        assert_eq!(ended.location, "/dashboard/login?next=%2Fdashboard%2Fproducts&ended=1");
        let login = m.get(&ended.location).await;
        assert!(login.html.contains("Your session has ended: sign in again to go on."));
        assert_eq!(m.get("/dashboard").await.status, StatusCode::SEE_OTHER, "ended for good, not only once");

        // An owner lets sessions sit for an hour: outside PCI DSS, and said so.
        let (m, _) = log_in(&app, "ann@example.com", PASSWORD).await;
        let settings = m.get("/dashboard/settings").await;
        assert!(settings.html.contains("PCI DSS asks for 15 minutes"));
        let refused = m.post("/dashboard/settings/sessions", &[("idle_minutes", "61")]).await;
        assert_eq!(refused.status, StatusCode::BAD_REQUEST);
        let longer = m.post("/dashboard/settings/sessions", &[("idle_minutes", "60")]).await;
        assert_eq!(longer.status, StatusCode::SEE_OTHER, "{}", longer.html);
        assert!(m.get("/dashboard/settings").await.html.contains("Sessions now live longer without use than PCI DSS allows"));
        app.state.clock.advance(Duration::minutes(50));
        assert_eq!(m.get("/dashboard").await.status, StatusCode::OK);
        // However busy, a session lives 12 hours.
        for _ in 0..13 {
            app.state.clock.advance(Duration::minutes(50));
            assert_eq!(m.get("/dashboard").await.status, StatusCode::OK);
        }
        app.state.clock.advance(Duration::minutes(50));
        let old = m.get("/dashboard").await;
        assert_eq!(old.status, StatusCode::SEE_OTHER);
        assert!(old.location.ends_with("&ended=1"));
    }

    async fn a_page_writes_nothing_and_the_last_use_is_kept_once_a_minute(app) {
        use paydesk::db::entities::sessions::{Column, Entity};
        use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
        let m = sign_up(&app, "Books", "ann@example.com").await;
        let user = m.get("/dashboard/products").await;
        assert_eq!(user.status, StatusCode::OK);
        let stored = || async {
            let rows = Entity::find().filter(Column::UserId.is_not_null()).all(&app.db).await.unwrap();
            assert_eq!(rows.len(), 1);
            let row = rows.into_iter().next().unwrap();
            (row.record, row.expires_at, row.seen_at)
        };
        let before = stored().await;
        // The store's expiry moves with real time: a second later, a save would show.
        tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
        for page in ["/dashboard", "/dashboard/products", "/dashboard/payments", "/dashboard/customers", "/dashboard/settings"] {
            let answer = m.get(page).await;
            assert_eq!(answer.status, StatusCode::OK, "{page}");
            let cookie = answer.headers.get(reqwest::header::SET_COOKIE);
            assert!(cookie.is_none(), "{page} sends no cookie: {cookie:?}");
        }
        assert_eq!(stored().await, before, "pages within a minute write nothing");

        app.state.clock.advance(Duration::seconds(61));
        assert_eq!(m.get("/dashboard/products").await.status, StatusCode::OK);
        let after = stored().await;
        let (seen_before, seen_after) = (before.2.unwrap(), after.2.unwrap());
        assert!(seen_after >= seen_before + Duration::seconds(61), "the last use, a minute on: {seen_after}");
        assert!(after.1 > before.1, "and the store keeps it longer");
    }

    async fn a_user_lists_their_sessions_and_signs_one_or_all_out(app) {
        let laptop = sign_up(&app, "Books", "ann@example.com").await;
        let (phone, _) = log_in(&app, "ann@example.com", PASSWORD).await;
        let other = sign_up(&app, "Toys", "bob@example.com").await;
        let list = laptop.get("/dashboard/sessions").await;
        assert_eq!(list.status, StatusCode::OK);
        assert_eq!(list.html.matches("data-testid=\"session\"").count(), 2, "{}", list.html);
        assert_eq!(list.html.matches("data-testid=\"this-session\"").count(), 1);
        assert!(list.html.contains("127.0.0.1"));
        assert_eq!(other.get("/dashboard/sessions").await.html.matches("data-testid=\"session\"").count(), 1, "only one's own");

        // The phone's row is the one not marked as this session.
        let rows: Vec<&str> = list.html.split("data-testid=\"session\"").skip(1).collect();
        let phone_row = rows.iter().find(|r| !r.split("</tr>").next().unwrap().contains("this-session")).unwrap();
        let action = phone_row.split("action=\"").nth(1).unwrap().split('"').next().unwrap();
        // Another user cannot end it.
        assert_eq!(other.post(action, &[]).await.status, StatusCode::SEE_OTHER);
        assert!(other.get("/dashboard/sessions").await.html.contains("That session had already ended."));
        assert_eq!(phone.get("/dashboard").await.status, StatusCode::OK);
        let ended = laptop.post(action, &[]).await;
        assert_eq!((ended.status, ended.location.as_str()), (StatusCode::SEE_OTHER, "/dashboard/sessions"));
        assert_eq!(phone.get("/dashboard").await.status, StatusCode::SEE_OTHER, "the phone is signed out");
        assert_eq!(laptop.get("/dashboard").await.status, StatusCode::OK);

        let (phone, _) = log_in(&app, "ann@example.com", PASSWORD).await;
        let all = laptop.post("/dashboard/sessions/end-all", &[]).await;
        assert_eq!((all.status, all.location.as_str()), (StatusCode::SEE_OTHER, "/dashboard/login"));
        assert_eq!(phone.get("/dashboard").await.status, StatusCode::SEE_OTHER);
        assert_eq!(laptop.get("/dashboard").await.status, StatusCode::SEE_OTHER);
        assert_eq!(other.get("/dashboard").await.status, StatusCode::OK, "another user's sessions stay");
    }
}
