//! Who may touch the money, in a real headless Chromium: an owner turns on two-step login by
//! typing the secret the page shows (as an authenticator app would read it), signs in again
//! with a code, and finds it in the audit trail; a support user refunds a payment but is shown
//! no API key; and the audit trail's table, long changes and all, fits a 1366-pixel screen
//! and is reached by the keyboard. Screenshots land in `test-artifacts/access-*.png`.

use fantoccini::Locator;

use crate::browser::{Browser, backend_name};
use crate::dashboard::accounts::invite_as;
use crate::dashboard::two_step::{base32, code};
use crate::helpers::*;

db_tests! {
    async fn an_owner_turns_on_two_step_login_and_a_support_user_refunds_without_keys(app) {
        let m = crate::dashboard::sign_up(&app, "Corner Books", "owner@example.com").await;
        let shop = crate::dashboard::api_shop(&m).await;
        let product = app.product(&shop, &test_product_body()).await;
        app.pay(product["id"].as_str().unwrap(), cards::SUCCESS, &[]).await;
        let (_, paid) = app.get(&shop, "/payments").await;
        let payment = paid[0]["id"].as_str().unwrap().to_string();
        let db = backend_name(&app);
        let b = Browser::start().await;
        b.log_in(&app.base, "owner@example.com").await;

        // Two-step login, set up with the secret typed in (what the QR code holds).
        b.open(&format!("{}/dashboard/two-step", app.base)).await;
        assert!(b.has("img[src='/dashboard/two-step/qr.svg']").await || b.has("[data-testid=two-step-qr]").await);
        let typed = b.text_of("[data-testid=two-step-secret]").await;
        let secret = base32(&typed);
        assert_eq!(secret.len(), 20, "{typed}");
        b.screenshot(&format!("access-two-step-{db}")).await;
        b.fill("code", &code(&secret, 0)).await;
        b.send("form[action='/dashboard/two-step'] button[type=submit]").await;
        let codes = b.client.find_all(Locator::Css("main li code")).await.unwrap();
        assert_eq!(codes.len(), 10, "the recovery codes, shown once");
        b.screenshot(&format!("access-recovery-codes-{db}")).await;

        // The next login asks for a code after the password.
        b.send("form[action='/dashboard/logout'] button[type=submit]").await;
        b.open(&format!("{}/dashboard/login", app.base)).await;
        b.fill("email", "owner@example.com").await;
        b.fill("password", crate::dashboard::PASSWORD).await;
        b.send_main_form().await;
        assert!(b.client.current_url().await.unwrap().path().ends_with("/dashboard/login/code"));
        b.screenshot(&format!("access-login-code-{db}")).await;
        b.fill("code", &code(&secret, 1)).await;
        b.send_main_form().await;
        assert_eq!(b.text_of("h1").await, "Overview");

        // The audit trail shows it, newest first.
        b.open(&format!("{}/dashboard/settings/audit", app.base)).await;
        let first = b.text_of("[data-testid=audit-record]").await;
        assert!(first.contains("user.logged_in") && first.contains("password and code"), "{first}");
        let all = b.text_of("main table").await;
        assert!(all.contains("two_step.enabled") && all.contains("api_key.rotated"), "{all}");
        b.screenshot(&format!("access-audit-{db}")).await;

        // A support user refunds, and sees no API key, no webhooks, no team.
        let _support = invite_as(&app, &m, "sue@example.com", "support").await;
        b.send("form[action='/dashboard/logout'] button[type=submit]").await;
        b.log_in(&app.base, "sue@example.com").await;
        assert!(!b.has("nav a[href='/dashboard/webhooks']").await);
        b.open(&format!("{}/dashboard/settings", app.base)).await;
        assert!(!b.has("[data-testid=shop-id]").await && !b.has("form[action='/dashboard/settings/rotate']").await);
        assert!(!b.has("a[href='/dashboard/settings/users']").await && !b.has("a[href='/dashboard/settings/audit']").await);
        b.screenshot(&format!("access-support-settings-{db}")).await;
        b.open(&format!("{}/dashboard/payments/{payment}", app.base)).await;
        b.send("form[action$='/refund'] button[type=submit]").await;
        b.send("main section.danger button[type=submit]").await;
        assert!(b.text_of(".flash").await.contains("Refunded"));
        assert_eq!(app.get(&shop, &format!("/payments/{payment}")).await.1["status"], "refunded");
        b.open(&format!("{}/dashboard/settings/key", app.base)).await;
        assert_eq!(b.text_of("h1").await, "Forbidden");
        b.close().await;
    }

    async fn the_audit_trail_fits_a_laptop_screen_and_the_keyboard_reaches_its_table(app) {
        let m = crate::dashboard::sign_up(&app, "Corner Books", "owner@example.com").await;
        let shop = crate::dashboard::api_shop(&m).await;
        // Changes far wider than the page, with nowhere to break but anywhere.
        let long = format!("https://merchant.example/{}", "notifications-of-payments-and-subscriptions/".repeat(6));
        let saved = m.post("/dashboard/settings/notifications", &[("notification_url", &long)]).await;
        assert_eq!(saved.status, reqwest::StatusCode::SEE_OTHER, "{}", saved.html);
        let hook = serde_json::json!({"url": format!("{long}hooks"), "enabled_events": ["*"]});
        assert_eq!(app.post(&shop, "/webhook_endpoints", &hook).await.0, reqwest::StatusCode::CREATED);
        let db = backend_name(&app);
        let b = Browser::start().await;
        b.client.set_window_size(1366, 900).await.unwrap();
        b.log_in(&app.base, "owner@example.com").await;
        b.open(&format!("{}/dashboard/settings/audit", app.base)).await;
        let measured = b
            .client
            .execute(
                "const wrap = document.querySelector('[data-testid=audit-records]');
                 const edge = wrap.getBoundingClientRect().right;
                 const rights = [...wrap.querySelectorAll('tr')].map(r => r.lastElementChild.getBoundingClientRect().right);
                 wrap.focus();
                 const label = document.getElementById(wrap.getAttribute('aria-labelledby'));
                 return [wrap.scrollWidth - wrap.clientWidth, Math.max(...rights) - edge,
                         document.activeElement === wrap, wrap.getAttribute('role'), label ? label.textContent : null,
                         document.body.scrollWidth - document.documentElement.clientWidth];",
                vec![],
            )
            .await
            .unwrap();
        b.screenshot(&format!("access-audit-1366-{db}")).await;
        let m = measured.as_array().unwrap();
        assert!(m[0].as_f64().unwrap() <= 0.0, "the table scrolls sideways by {} px", m[0]);
        assert!(m[1].as_f64().unwrap() <= 1.0, "the address column ends {} px out of view", m[1]);
        assert_eq!((m[2].as_bool(), m[3].as_str(), m[4].as_str()), (Some(true), Some("region"), Some("Audit trail")), "a focusable, named region");
        assert!(m[5].as_f64().unwrap() <= 0.0, "the page scrolls sideways by {} px", m[5]);
        b.close().await;
    }
}
