//! Signing up, logging in and out, sessions, CSRF, passwords and settings.

use paydesk::config::ConfigArgs;
use reqwest::StatusCode;
use sea_orm::EntityTrait;
use serde_json::{Value, json};

use super::*;
use crate::helpers::*;

db_tests! {
    async fn every_dashboard_page_needs_a_login(app) {
        let stranger = Merchant { base: app.base.clone(), client: browser(), csrf: String::new() };
        for path in ["/dashboard", "/dashboard/products", "/dashboard/products/new", "/dashboard/products/prd_0000000000000000",
                     "/dashboard/plans", "/dashboard/plans/new", "/dashboard/customers", "/dashboard/customers/new",
                     "/dashboard/payments", "/dashboard/payments/pay_0000000000000000", "/dashboard/subscriptions",
                     "/dashboard/subscriptions/sbs_0000000000000000", "/dashboard/settings", "/dashboard/password"] {
            let a = stranger.get(path).await;
            assert_eq!(a.status, StatusCode::SEE_OTHER, "{path}");
            assert!(a.location.starts_with("/dashboard/login?next=%2Fdashboard"), "{path}: {}", a.location);
        }
        for path in ["/dashboard/products", "/dashboard/plans", "/dashboard/customers", "/dashboard/settings",
                     "/dashboard/settings/rotate", "/dashboard/logout", "/dashboard/payments/pay_0000000000000000/capture"] {
            let a = stranger.post_raw(path, &[("name", "x")]).await;
            assert_eq!(a.status, StatusCode::SEE_OTHER, "{path}");
            assert!(a.location.starts_with("/dashboard/login"), "{path}");
        }
        assert_eq!(stranger.get("/").await.location, "/dashboard");
    }

    async fn a_merchant_signs_up_logs_out_and_logs_in_again(app) {
        let m = sign_up(&app, "Corner <Books>", "Ann@Example.com").await;
        let home = m.get("/dashboard").await;
        assert!(home.html.contains("Corner &#60;Books&#62;") || home.html.contains("Corner &lt;Books&gt;"), "escaped");
        assert!(!home.html.contains("Corner <Books>"));
        assert!(home.html.contains("ann@example.com"));

        // The session cookie is HttpOnly and SameSite=Lax.
        let page = m.client.get(format!("{}/dashboard/login", app.base)).send().await.unwrap();
        drop(page);
        let fresh = browser();
        let signup = fresh.get(format!("{}/dashboard/signup", app.base)).send().await.unwrap();
        let html = signup.text().await.unwrap();
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs([("csrf", csrf_of(&html).as_str()), ("shop_name", "Other"), ("email", "bob@example.com"),
                           ("password", PASSWORD), ("password_confirmation", PASSWORD)])
            .finish();
        let done = fresh.post(format!("{}/dashboard/signup", app.base))
            .header("content-type", "application/x-www-form-urlencoded").body(body).send().await.unwrap();
        let cookie = done.headers().get_all("set-cookie").iter().map(|v| v.to_str().unwrap().to_string())
            .find(|c| c.starts_with("pd_session=")).expect("a session cookie");
        assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax"), "{cookie}");
        assert!(!cookie.contains("Secure"), "not on plain http");

        // A second shop cannot take the same address.
        let again = Merchant { base: app.base.clone(), client: browser(), csrf: String::new() };
        let page = again.get("/dashboard/signup").await;
        let token = csrf_of(&page.html);
        let taken = again.post_raw("/dashboard/signup", &[("csrf", &token), ("shop_name", "Copy"), ("email", "ann@example.com"),
            ("password", PASSWORD), ("password_confirmation", PASSWORD)]).await;
        assert_eq!(taken.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(taken.html.contains("has already been taken"));
        let short = again.post_raw("/dashboard/signup", &[("csrf", &token), ("shop_name", ""), ("email", "x"),
            ("password", "short"), ("password_confirmation", "short")]).await;
        assert_eq!(short.status, StatusCode::UNPROCESSABLE_ENTITY);
        for message in ["can&#39;t be blank", "is invalid", "is too short (minimum is 12 characters)"] {
            assert!(short.html.contains(message) || short.html.contains(&message.replace("&#39;", "&#x27;")), "{message}");
        }

        // Logging out ends the session on the server: the old cookie no longer opens anything.
        let out = m.post("/dashboard/logout", &[]).await;
        assert_eq!((out.status, out.location.as_str()), (StatusCode::SEE_OTHER, "/dashboard/login"));
        assert_eq!(m.get("/dashboard").await.status, StatusCode::SEE_OTHER);

        let (_, wrong) = log_in(&app, "ann@example.com", "not the password").await;
        assert_eq!(wrong.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(wrong.html.contains("Wrong e-mail or password."));
        let (_, unknown) = log_in(&app, "nobody@example.com", PASSWORD).await;
        assert_eq!(unknown.status, StatusCode::UNPROCESSABLE_ENTITY);
        let (back, ok) = log_in(&app, " ANN@example.com ", PASSWORD).await;
        assert_eq!((ok.status, ok.location.as_str()), (StatusCode::SEE_OTHER, "/dashboard"));
        assert_eq!(back.get("/dashboard/products").await.status, StatusCode::OK);
    }

    async fn a_login_gets_a_new_session_id_and_returns_to_the_page_asked_for(app) {
        sign_up(&app, "Books", "ann@example.com").await;
        let m = Merchant { base: app.base.clone(), client: browser(), csrf: String::new() };
        let bounced = m.get("/dashboard/payments?status=failed").await;
        assert_eq!(bounced.location, "/dashboard/login?next=%2Fdashboard%2Fpayments%3Fstatus%3Dfailed");
        let page = m.get(&bounced.location).await;
        assert!(page.html.contains("value=\"/dashboard/payments?status=failed\""));
        let token = csrf_of(&page.html);
        let done = m.post_raw("/dashboard/login", &[("csrf", &token), ("email", "ann@example.com"), ("password", PASSWORD),
                                                     ("next", "/dashboard/payments?status=failed")]).await;
        assert_eq!(done.location, "/dashboard/payments?status=failed");
        // Only the dashboard's own pages are followed.
        let (m2, _) = log_in(&app, "ann@example.com", PASSWORD).await;
        let page = m2.get("/dashboard/login?next=https://evil.example/").await;
        assert!(page.html.contains("value=\"/dashboard\""));
        let token = csrf_of(&page.html);
        let odd = m2.post_raw("/dashboard/login", &[("csrf", &token), ("email", "ann@example.com"), ("password", PASSWORD),
                                                   ("next", "/dashboard\n\rSet-Cookie: x=1")]).await;
        assert_eq!((odd.status, odd.location.as_str()), (StatusCode::SEE_OTHER, "/dashboard"));

        // A session id planted before login is not the one used after it.
        let planted = Merchant { base: app.base.clone(), client: browser(), csrf: String::new() };
        let before = planted.client.get(format!("{}/dashboard/login", app.base)).send().await.unwrap();
        let html = before.text().await.unwrap();
        let login = planted.client.post(format!("{}/dashboard/login", app.base))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(format!("csrf={}&email=ann%40example.com&password=correct+horse+battery", csrf_of(&html)))
            .send().await.unwrap();
        let set: Vec<String> = login.headers().get_all("set-cookie").iter().map(|v| v.to_str().unwrap().to_string()).collect();
        assert!(set.iter().any(|c| c.starts_with("pd_session=")), "a new session cookie at login: {set:?}");
    }

    async fn forms_without_this_sessions_csrf_token_are_refused(app) {
        let m = sign_up(&app, "Books", "ann@example.com").await;
        let other = sign_up(&app, "Games", "bob@example.com").await;
        let fields = [("name", "Mug"), ("description", "A mug"), ("amount", "9.90"), ("currency", "EUR"),
                      ("infinite", "true"), ("immortal", "true")];
        let none = m.post_raw("/dashboard/products", &fields).await;
        assert_eq!(none.status, StatusCode::FORBIDDEN);
        assert!(none.html.contains("The form has expired"));
        let mut foreign = vec![("csrf", other.csrf.as_str())];
        foreign.extend_from_slice(&fields);
        assert_eq!(m.post_raw("/dashboard/products", &foreign).await.status, StatusCode::FORBIDDEN);
        assert!(m.get("/dashboard/products").await.html.contains("No products yet"), "nothing was created");
        assert_eq!(m.post_raw("/dashboard/logout", &[]).await.status, StatusCode::FORBIDDEN);
        // Login and sign-up forms carry their own token too.
        let stranger = Merchant { base: app.base.clone(), client: browser(), csrf: String::new() };
        let login = stranger.post_raw("/dashboard/login", &[("email", "ann@example.com"), ("password", PASSWORD)]).await;
        assert_eq!(login.status, StatusCode::FORBIDDEN);
    }

    async fn settings_change_the_shop_rotate_the_key_and_add_users(app) {
        let m = sign_up(&app, "Books", "ann@example.com").await;
        let bad = m.post("/dashboard/settings", &[("name", ""), ("url", "ftp://x"), ("timezone", "Mars/Base")]).await;
        assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(bad.html.contains("id=\"e-timezone\">is not included in the list</p>"));
        assert!(bad.html.contains("id=\"e-url\">is not an absolute http or https URL</p>"));
        let saved = m.post("/dashboard/settings", &[("name", "Corner Books"), ("url", "https://books.example"),
            ("timezone", "Europe/Berlin")]).await;
        assert_eq!(saved.status, StatusCode::SEE_OTHER);
        let page = m.get("/dashboard/settings").await;
        assert!(page.html.contains("Settings saved.") && page.html.contains("value=\"Europe/Berlin\""));

        let unconfirmed = m.post("/dashboard/settings/rotate", &[]).await;
        assert_eq!(unconfirmed.status, StatusCode::UNPROCESSABLE_ENTITY);
        let first = api_shop(&m).await;
        assert_eq!(app.get(&first, "/products").await.0, StatusCode::OK);
        let second = api_shop(&m).await;
        assert_eq!(app.get(&first, "/products").await.0, StatusCode::UNAUTHORIZED, "the old key stops working");
        assert_eq!(app.get(&second, "/products").await.0, StatusCode::OK);
        assert!(!m.get("/dashboard/settings").await.html.contains(&second.secret), "shown once only");
        let reload = m.get("/dashboard/settings/key").await;
        assert_eq!((reload.status, reload.location.as_str()), (StatusCode::SEE_OTHER, "/dashboard/settings"), "a reload never rotates");
        assert!(m.get("/dashboard/settings").await.html.contains("A new secret key is shown only once."));
        assert_eq!(app.get(&second, "/products").await.0, StatusCode::OK, "the key of the last rotation still works");

        let bad = m.post("/dashboard/settings/users", &[("email", "ann@example.com"), ("password", "short"),
                                                          ("password_confirmation", "short")]).await;
        assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
        let cleo = invite_and_join(&app, &m, "cleo@example.com").await;
        assert!(cleo.get("/dashboard/settings").await.html.contains(&format!(">{}</code>", second.id)), "the same shop");

        let wrong = m.post("/dashboard/password", &[("current_password", "nope"), ("password", "a new password!"),
                                                     ("password_confirmation", "a new password!")]).await;
        assert_eq!(wrong.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(wrong.html.contains("id=\"e-current_password\">is wrong</p>"));
        assert!(!wrong.html.contains(PASSWORD) && !wrong.html.contains("value=\"nope\""), "passwords are never sent back");
        let (elsewhere, _) = log_in(&app, "ann@example.com", PASSWORD).await;
        assert_eq!(elsewhere.get("/dashboard").await.status, StatusCode::OK);
        let changed = m.post("/dashboard/password", &[("current_password", PASSWORD), ("password", "a new password!"),
                                                       ("password_confirmation", "a new password!")]).await;
        assert_eq!(changed.status, StatusCode::SEE_OTHER);
        assert_eq!(m.get("/dashboard").await.status, StatusCode::OK, "this session goes on");
        assert_eq!(elsewhere.get("/dashboard").await.status, StatusCode::SEE_OTHER, "other sessions end");
        assert_eq!(log_in(&app, "ann@example.com", PASSWORD).await.1.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(log_in(&app, "ann@example.com", "a new password!").await.1.status, StatusCode::SEE_OTHER);
    }

    async fn expired_sessions_are_never_loaded_and_are_cleared(app) {
        use paydesk::db::sessions::DbSessionStore;
        use tower_sessions::cookie::time::{Duration, OffsetDateTime};
        use tower_sessions::session::{Id, Record};
        use tower_sessions::session_store::{ExpiredDeletion, SessionStore};

        let store = DbSessionStore::new(app.db.clone());
        let mut live = Record { id: Id::default(), data: Default::default(), expiry_date: OffsetDateTime::now_utc() + Duration::hours(1) };
        live.data.insert("user_id".into(), json!("usr_1"));
        let mut old = Record { id: Id::default(), data: Default::default(), expiry_date: OffsetDateTime::now_utc() - Duration::minutes(1) };
        store.create(&mut live).await.unwrap();
        store.create(&mut old).await.unwrap();
        assert_eq!(store.load(&live.id).await.unwrap().unwrap().data["user_id"], "usr_1");
        assert!(store.load(&old.id).await.unwrap().is_none(), "an expired session is gone for its browser");
        store.delete_expired().await.unwrap();
        let rows = paydesk::db::entities::sessions::Entity::find().all(&app.db).await.unwrap();
        assert_eq!(rows.iter().map(|r| r.id.clone()).collect::<Vec<_>>(), vec![live.id.to_string()]);
        live.data.insert("flash".into(), json!("saved"));
        store.save(&live).await.unwrap();
        assert_eq!(store.load(&live.id).await.unwrap().unwrap().data.len(), 2);
        store.delete(&live.id).await.unwrap();
        assert!(store.load(&live.id).await.unwrap().is_none());
    }

    async fn the_command_line_adds_a_user_who_can_log_in(app) {
        use std::io::Write;
        let shop = app.shop("Books").await;
        let run = |email: &str, password: &str, role: &str| {
            let mut child = crate::cli::paydesk(&app.database_url)
                .args(["user", "create", "--shop-id", &shop.id.to_string(), "--email", email])
                .args(if role.is_empty() { vec![] } else { vec!["--role", role] })
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            writeln!(child.stdin.take().unwrap(), "{password}").unwrap();
            child.wait_with_output().unwrap()
        };
        let short = run("ann@example.com", "short", "");
        assert!(!short.status.success());
        assert!(String::from_utf8_lossy(&short.stderr).contains("Password is too short"));
        let common = run("ann@example.com", "QwertyQwerty", "");
        assert!(String::from_utf8_lossy(&common.stderr).contains("one of the most common passwords"));
        let boss = run("ann@example.com", PASSWORD, "boss");
        assert!(String::from_utf8_lossy(&boss.stderr).contains("--role must be one of owner, administrator, developer, support, analyst"));
        let made = run("Ann@Example.com", PASSWORD, "");
        assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
        let user: Value = serde_json::from_slice(&made.stdout).unwrap();
        assert_eq!((user["shop_id"].as_i64(), user["email"].as_str()), (Some(shop.id), Some("ann@example.com")));
        assert_eq!(user["role"], "owner");
        let support = run("sam@example.com", PASSWORD, "support");
        assert_eq!(serde_json::from_slice::<Value>(&support.stdout).unwrap()["role"], "support");
        let (m, done) = log_in(&app, "ann@example.com", PASSWORD).await;
        assert_eq!(done.status, StatusCode::SEE_OTHER);
        assert!(m.get("/dashboard/settings").await.html.contains(&format!(">{}</code>", shop.id)));
    }

    async fn ten_wrong_passwords_lock_the_account_even_with_no_mail_to_send(app) {
        sign_up(&app, "Books", "ann@example.com").await;
        for _ in 0..9 {
            assert_eq!(log_in(&app, "ann@example.com", "guess guess guess").await.1.status, StatusCode::UNPROCESSABLE_ENTITY);
        }
        let (_, tenth) = log_in(&app, "ann@example.com", "guess guess guess").await;
        assert_eq!(tenth.status, StatusCode::TOO_MANY_REQUESTS);
        let (_, locked) = log_in(&app, "ann@example.com", PASSWORD).await;
        assert_eq!(locked.status, StatusCode::TOO_MANY_REQUESTS, "even the right password waits");
        assert!(locked.html.contains("This account is locked after too many wrong passwords."), "{}", locked.html);
        let wait: u64 = locked.headers["retry-after"].to_str().unwrap().parse().unwrap();
        assert!((1790..=1800).contains(&wait), "Retry-After {wait}");
        assert_eq!(log_in(&app, "bob@example.com", PASSWORD).await.1.status, StatusCode::UNPROCESSABLE_ENTITY);
        // No mail is queued where none can be sent: the lock ends by itself.
        use sea_orm::{ConnectionTrait, Statement};
        let count = Statement::from_string(app.db.get_database_backend(), "SELECT COUNT(*) AS n FROM mails WHERE kind = 'account_locked'");
        let queued: i64 = app.db.query_one(count).await.unwrap().unwrap().try_get("", "n").unwrap();
        assert_eq!(queued, 0);
    }
}

#[tokio::test]
async fn sign_up_can_be_turned_off() {
    let app =
        TestApp::spawn_with(Backend::Sqlite, ConfigArgs { signup: Some("off".into()), ..Default::default() }).await;
    let stranger = Merchant { base: app.base.clone(), client: browser(), csrf: String::new() };
    assert_eq!(stranger.get("/dashboard/signup").await.status, StatusCode::NOT_FOUND);
    assert_eq!(stranger.post_raw("/dashboard/signup", &[("shop_name", "x")]).await.status, StatusCode::NOT_FOUND);
    assert!(!stranger.get("/dashboard/login").await.html.contains("/dashboard/signup"));
}

#[tokio::test]
async fn cookies_are_secure_when_the_dashboard_is_served_over_https() {
    let args = ConfigArgs { base_url: Some("https://dash.example.test".into()), ..Default::default() };
    let app = TestApp::spawn_with(Backend::Sqlite, args).await;
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let page = client.get(format!("{}/dashboard/signup", app.base)).send().await.unwrap();
    let csrf_cookie = page.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(csrf_cookie.contains("; Secure"), "{csrf_cookie}");
    let token = csrf_of(&page.text().await.unwrap());
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs([
            ("csrf", token.as_str()),
            ("shop_name", "Books"),
            ("email", "ann@example.com"),
            ("password", PASSWORD),
            ("password_confirmation", PASSWORD),
        ])
        .finish();
    let done = client
        .post(format!("{}/dashboard/signup", app.base))
        .header("content-type", "application/x-www-form-urlencoded")
        .header("cookie", csrf_cookie.split(';').next().unwrap())
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(done.status(), StatusCode::SEE_OTHER);
    let session = done
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap().to_string())
        .find(|c| c.starts_with("pd_session="));
    let session = session.expect("a session cookie");
    assert!(
        session.contains("Secure") && session.contains("HttpOnly") && session.contains("SameSite=Lax"),
        "{session}"
    );
}

/// Invites `email` into `m`'s shop as an administrator and goes through the link as the
/// invited user would: the user, logged in by it.
pub(super) async fn invite_and_join(app: &TestApp, m: &Merchant, email: &str) -> Merchant {
    invite_as(app, m, email, "administrator").await
}

/// Invites `email` into `m`'s shop with `role` and goes through the link as the invited user
/// would: the user, logged in by it.
pub(crate) async fn invite_as(app: &TestApp, m: &Merchant, email: &str, role: &str) -> Merchant {
    let invited = m.post("/dashboard/settings/users", &[("email", email), ("role", role)]).await;
    assert_eq!((invited.status, invited.location.as_str()), (StatusCode::SEE_OTHER, "/dashboard/settings/invitation"));
    let page = m.get("/dashboard/settings/invitation").await;
    let marker = "data-testid=\"invitation-link\"";
    let at = page.html.find(marker).expect("the invitation link");
    let link = page.html[..at].rsplit("value=\"").next().unwrap().split('"').next().unwrap().to_string();
    assert!(link.starts_with(&format!("{}/dashboard/invite/", app.base)), "{link}");
    let again = m.get("/dashboard/settings/invitation").await;
    assert_eq!(again.status, StatusCode::SEE_OTHER, "shown once");
    assert!(!m.get("/dashboard/settings/users").await.html.contains(&link), "never shown again");
    let path = link.strip_prefix(&app.base).unwrap().to_string();
    assert_eq!(log_in(app, email, PASSWORD).await.1.status, StatusCode::UNPROCESSABLE_ENTITY, "no password yet");

    let mut newcomer = Merchant { base: app.base.clone(), client: browser(), csrf: String::new() };
    let open = newcomer.get(&path).await;
    assert_eq!(open.status, StatusCode::OK);
    assert!(open.html.contains(email));
    let token = csrf_of(&open.html);
    let short =
        newcomer.post_raw(&path, &[("csrf", &token), ("password", "short"), ("password_confirmation", "short")]).await;
    assert_eq!(short.status, StatusCode::UNPROCESSABLE_ENTITY);
    let token = csrf_of(&short.html);
    let done = newcomer
        .post_raw(&path, &[("csrf", &token), ("password", PASSWORD), ("password_confirmation", PASSWORD)])
        .await;
    assert_eq!((done.status, done.location.as_str()), (StatusCode::SEE_OTHER, "/dashboard"), "{}", done.html);
    newcomer.csrf = csrf_of(&newcomer.get("/dashboard").await.html);
    let spent = browser().get(&link).send().await.unwrap();
    assert_eq!(spent.status(), StatusCode::GONE, "the link works once");
    assert!(spent.text().await.unwrap().contains("This invitation link no longer works"));
    newcomer
}

db_tests! {
    async fn a_user_is_invited_by_a_one_time_link_and_removed_after_a_confirmation(app) {
        let m = sign_up(&app, "Books", "ann@example.com").await;
        let dan = invite_and_join(&app, &m, "dan@example.com").await;
        assert_eq!(dan.get("/dashboard").await.status, StatusCode::OK);
        let (again, _) = log_in(&app, "dan@example.com", PASSWORD).await;
        assert_eq!(again.get("/dashboard").await.status, StatusCode::OK, "the chosen password logs in");

        let settings = m.get("/dashboard/settings/users").await;
        let marker = "/remove\"";
        let at = settings.html.find(marker).expect("a remove button for dan");
        let path = settings.html[..at].rsplit("action=\"").next().unwrap().to_string() + "/remove";
        let ask = m.post(&path, &[]).await;
        assert!(ask.html.contains("Remove dan@example.com?"), "{}", ask.html);
        assert_eq!(dan.get("/dashboard").await.status, StatusCode::OK, "nothing happened yet");
        assert_eq!(m.post(&path, &[("confirm", "yes")]).await.status, StatusCode::SEE_OTHER);
        let gone = dan.get("/dashboard").await;
        assert_eq!((gone.status, gone.location.as_str()), (StatusCode::SEE_OTHER, "/dashboard/login?next=%2Fdashboard"), "logged out");
        assert_eq!(log_in(&app, "dan@example.com", PASSWORD).await.1.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(m.get("/dashboard/settings/users").await.html.contains("dan@example.com was removed from the shop."));

        assert!(settings.html.contains("(you)"), "the user sees themselves");
        let ann_id = paydesk::db::users::by_email(&app.db, "ann@example.com").await.unwrap().unwrap().id;
        assert_eq!(m.post(&format!("/dashboard/settings/users/{ann_id}/remove"), &[("confirm", "yes")]).await.status,
                   StatusCode::CONFLICT, "nobody removes themselves");
        let theirs = sign_up(&app, "Games", "bob@example.com").await;
        assert_eq!(theirs.post(&format!("/dashboard/settings/users/{ann_id}/remove"), &[("confirm", "yes")]).await.status,
                   StatusCode::NOT_FOUND, "nor another shop's users");
    }
}
