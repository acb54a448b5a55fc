//! Two-step login over HTTP, with codes computed here from the secret the page shows (RFC 6238
//! and RFC 4226 written out independently of paydesk): enrolment, login with a code, codes
//! used once, stale codes, recovery codes once each, throttling, a shop that requires it, and
//! the owner's and the operator's reset.

use hmac::{Hmac, Mac};
use reqwest::StatusCode;
use serde_json::Value;

use paydesk::frontends::dashboard::access::ENROLMENT;

use super::accounts::invite_as;
use super::*;
use crate::helpers::*;

/// RFC 4648 base32, as the page shows a secret (groups of four, no padding).
pub fn base32(text: &str) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let (mut bits, mut value, mut out) = (0u32, 0u64, Vec::new());
    for c in text.bytes().filter(|c| !c.is_ascii_whitespace()) {
        value = (value << 5) | ALPHABET.iter().position(|a| *a == c).expect("a base32 letter") as u64;
        bits += 5;
        if bits >= 8 {
            bits -= 8;
            out.push((value >> bits) as u8);
        }
    }
    out
}

/// RFC 4226's HOTP with HMAC-SHA1, six digits.
fn hotp(secret: &[u8], counter: u64) -> String {
    let mut mac = Hmac::<sha1::Sha1>::new_from_slice(secret).unwrap();
    mac.update(&counter.to_be_bytes());
    let sum = mac.finalize().into_bytes();
    let offset = (sum[19] & 0xf) as usize;
    let binary = u32::from_be_bytes([sum[offset] & 0x7f, sum[offset + 1], sum[offset + 2], sum[offset + 3]]);
    format!("{:06}", binary % 1_000_000)
}

/// The code of `secret` for the 30-second step `offset` steps from now.
pub fn code(secret: &[u8], offset: i64) -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    hotp(secret, (now / 30 + offset) as u64)
}

#[test]
fn the_codes_here_are_rfc_6238s() {
    let secret = b"12345678901234567890";
    for (t, expected) in
        [(59u64, "287082"), (1_111_111_109, "081804"), (1_234_567_890, "005924"), (2_000_000_000, "279037")]
    {
        assert_eq!(hotp(secret, t / 30), expected);
    }
    assert_eq!(base32("GEZD GNBV GY3T QOJQ GEZD GNBV GY3T QOJQ"), secret);
}

/// Turns two-step login on for `m` through its page: the secret and the recovery codes.
pub async fn enrol(m: &Merchant) -> (Vec<u8>, Vec<String>) {
    let page = m.get("/dashboard/two-step").await;
    assert_eq!(page.status, StatusCode::OK);
    let marker = "data-testid=\"two-step-secret\" class=\"secret\">";
    let start = page.html.find(marker).expect("the secret to type") + marker.len();
    let secret = base32(page.html[start..].split('<').next().unwrap());
    assert_eq!(secret.len(), 20);
    let qr = m.client.get(format!("{}/dashboard/two-step/qr.svg", m.base)).send().await.unwrap();
    assert_eq!(qr.headers()["content-type"], "image/svg+xml");
    assert!(qr.text().await.unwrap().starts_with("<?xml"));
    let wrong = m.post("/dashboard/two-step", &[("code", "000000")]).await;
    assert_eq!(wrong.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(wrong.html.contains("That code is not the one your app shows now."));
    assert!(wrong.html.contains(page.html[start..].split('<').next().unwrap()), "the same secret after a wrong code");
    let on = m.post("/dashboard/two-step", &[("code", &code(&secret, 0))]).await;
    assert_eq!((on.status, on.location.as_str()), (StatusCode::SEE_OTHER, "/dashboard/two-step/codes"), "{}", on.html);
    let shown = m.get("/dashboard/two-step/codes").await;
    let codes: Vec<String> =
        shown.html.split("<li><code>").skip(1).map(|c| c.split('<').next().unwrap().to_string()).collect();
    assert_eq!(codes.len(), 10, "{}", shown.html);
    assert_eq!(m.get("/dashboard/two-step/codes").await.status, StatusCode::SEE_OTHER, "shown once");
    (secret, codes)
}

/// Logs in with the password, then `code`: the browser, the answer to the code.
async fn log_in_with(app: &TestApp, email: &str, code: &str) -> (Merchant, Answer) {
    let (mut m, first) = log_in(app, email, PASSWORD).await;
    assert_eq!((first.status, first.location.as_str()), (StatusCode::SEE_OTHER, "/dashboard/login/code"));
    let page = m.get("/dashboard/login/code").await;
    assert_eq!(page.status, StatusCode::OK);
    let done = m.post_raw("/dashboard/login/code", &[("csrf", &csrf_of(&page.html)), ("code", code)]).await;
    if done.status == StatusCode::SEE_OTHER {
        m.csrf = m.csrf_after(&done.location).await;
    }
    (m, done)
}

db_tests! {
    async fn a_user_turns_two_step_login_on_and_each_code_works_once(app) {
        let m = sign_up(&app, "Books", "ann@example.com").await;
        let (secret, codes) = enrol(&m).await;
        assert!(m.get("/dashboard/two-step").await.html.contains("10 recovery codes left"));

        // The password alone opens nothing.
        let (half, first) = log_in(&app, "ann@example.com", PASSWORD).await;
        assert_eq!(first.location, "/dashboard/login/code");
        assert_eq!(half.get("/dashboard").await.status, StatusCode::SEE_OTHER, "not signed in before the code");

        // The code of the enrolment's step was spent by it; the next step's works, once.
        let next = code(&secret, 1);
        let (_, used) = log_in_with(&app, "ann@example.com", &code(&secret, 0)).await;
        assert_eq!(used.status, StatusCode::UNPROCESSABLE_ENTITY, "the enrolment's code works once");
        assert!(used.html.contains("That code is wrong or was used already."));
        let (signed, ok) = log_in_with(&app, "ann@example.com", &next).await;
        assert_eq!((ok.status, ok.location.as_str()), (StatusCode::SEE_OTHER, "/dashboard"));
        assert_eq!(signed.get("/dashboard").await.status, StatusCode::OK);
        assert_eq!(log_in_with(&app, "ann@example.com", &next).await.1.status, StatusCode::UNPROCESSABLE_ENTITY, "reused");
        assert_eq!(log_in_with(&app, "ann@example.com", &code(&secret, -3)).await.1.status, StatusCode::UNPROCESSABLE_ENTITY, "stale");
        assert_eq!(log_in_with(&app, "ann@example.com", &code(&secret, 3)).await.1.status, StatusCode::UNPROCESSABLE_ENTITY, "too early");

        // A recovery code, in any case and with spaces, once.
        let typed = codes[0].to_uppercase().replace('-', " ");
        assert_eq!(log_in_with(&app, "ann@example.com", &typed).await.1.status, StatusCode::SEE_OTHER);
        assert_eq!(log_in_with(&app, "ann@example.com", &codes[0]).await.1.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(signed.get("/dashboard/two-step").await.html.contains("9 recovery codes left"));

        // New codes and turning off ask for the password and a code; wrong ones change nothing.
        let refused = signed.post("/dashboard/two-step/codes", &[("password", "not the password"), ("code", &codes[1])]).await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
        let renewed = signed.post("/dashboard/two-step/codes", &[("password", PASSWORD), ("code", &codes[1])]).await;
        assert_eq!(renewed.location, "/dashboard/two-step/codes");
        let fresh = signed.get("/dashboard/two-step/codes").await;
        let new_code = fresh.html.split("<li><code>").nth(1).unwrap().split('<').next().unwrap().to_string();
        assert_eq!(log_in_with(&app, "ann@example.com", &codes[2]).await.1.status, StatusCode::UNPROCESSABLE_ENTITY, "old codes stop working");
        let off_refused = signed.post("/dashboard/two-step/off", &[("password", PASSWORD), ("code", "123456")]).await;
        assert_eq!(off_refused.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(signed.get("/dashboard/two-step").await.html.contains("two-step-on"), "still on");
        let off = signed.post("/dashboard/two-step/off", &[("password", PASSWORD), ("code", &new_code)]).await;
        assert_eq!(off.status, StatusCode::SEE_OTHER);
        assert_eq!(log_in(&app, "ann@example.com", PASSWORD).await.1.location, "/dashboard", "the password alone again");
    }

    async fn a_login_with_a_recovery_code_says_how_many_are_left_and_where_to_make_more(app) {
        let m = sign_up(&app, "Books", "ann@example.com").await;
        let (secret, codes) = enrol(&m).await;
        // Through the login's two steps by hand, to read the first page after them.
        let second_step = |code: String| {
            let app = &app;
            async move {
                let (m, first) = log_in(app, "ann@example.com", PASSWORD).await;
                assert_eq!(first.location, "/dashboard/login/code");
                let page = m.get("/dashboard/login/code").await;
                let done = m.post_raw("/dashboard/login/code", &[("csrf", &csrf_of(&page.html)), ("code", &code)]).await;
                assert_eq!((done.status, done.location.as_str()), (StatusCode::SEE_OTHER, "/dashboard"), "{}", done.html);
                (m.get("/dashboard").await, m.get("/dashboard").await)
            }
        };
        let (first, next) = second_step(codes[0].clone()).await;
        let notice = "<p class=\"notice\" role=\"status\" data-testid=\"notice\">You signed in with a recovery code; 9 codes are left. <a href=\"/dashboard/two-step\">Make new recovery codes</a></p>";
        assert!(first.html.contains(notice), "{}", first.html);
        assert!(!next.html.contains("data-testid=\"notice\""), "said once");
        let (first, _) = second_step(codes[1].clone()).await;
        assert!(first.html.contains("You signed in with a recovery code; 8 codes are left."), "{}", first.html);
        let (first, _) = second_step(code(&secret, 1)).await;
        assert!(!first.html.contains("data-testid=\"notice\""), "nothing to say after the app's code");

        // In Russian, with the count agreeing.
        m.post("/dashboard/settings/language", &[("language", "ru")]).await;
        let (first, _) = second_step(codes[2].clone()).await;
        assert!(first.html.contains("Вы вошли с резервным кодом; осталось 7 кодов. <a href=\"/dashboard/two-step\">Создать новые резервные коды</a>"), "{}", first.html);
    }

    async fn wrong_codes_are_throttled_like_passwords(app) {
        let m = sign_up(&app, "Books", "ann@example.com").await;
        let (secret, _) = enrol(&m).await;
        for _ in 0..10 {
            assert_eq!(log_in_with(&app, "ann@example.com", "000000").await.1.status, StatusCode::UNPROCESSABLE_ENTITY);
        }
        let (_, locked) = log_in_with(&app, "ann@example.com", &code(&secret, 1)).await;
        assert_eq!(locked.status, StatusCode::TOO_MANY_REQUESTS, "even the right code waits");
        assert!(locked.headers.contains_key("retry-after"));
    }

    async fn a_shop_that_requires_two_step_login_lets_a_user_without_it_only_set_it_up(app) {
        let owner = sign_up(&app, "Books", "owner@example.com").await;
        let admin = invite_as(&app, &owner, "admin@example.com", "administrator").await;
        let support = invite_as(&app, &owner, "sam@example.com", "support").await;
        assert_eq!(admin.post("/dashboard/settings/two-step", &[("required", "true")]).await.status, StatusCode::FORBIDDEN,
                   "only owners decide");
        let first = owner.post("/dashboard/settings/two-step", &[("required", "true")]).await;
        assert_eq!(first.status, StatusCode::CONFLICT, "an owner without it cannot require it");
        let (owner_secret, _) = enrol(&owner).await;
        assert_eq!(owner.post("/dashboard/settings/two-step", &[("required", "true")]).await.status, StatusCode::SEE_OTHER);
        assert!(owner.get("/dashboard/settings").await.html.contains("data-testid=\"two-step-required\""));

        // A signed-in user without it is sent to set it up, whatever they open.
        for path in ["/dashboard", "/dashboard/payments", "/dashboard/settings"] {
            let a = support.get(path).await;
            assert_eq!((a.status, a.location.as_str()), (StatusCode::SEE_OTHER, "/dashboard/two-step"), "{path}");
        }
        let asked = support.post("/dashboard/products", &[("name", "Sneaked in")]).await;
        assert_eq!(asked.location, "/dashboard/two-step");
        // The page says so plainly (no success), and offers nothing but setting it up and
        // logging out: no menu, no link that would only come back here.
        let setup = support.get("/dashboard/two-step").await;
        assert!(setup.html.contains("<p class=\"notice\" role=\"status\" data-testid=\"two-step-required\">This shop requires two-step login"), "{}", setup.html);
        assert!(!setup.html.contains("class=\"flash\"") && !setup.html.contains("<nav"), "{}", setup.html);
        let offered = super::role_pages::offers(&setup.html);
        assert!(offered.len() >= 2, "{offered:?}");
        for (method, path) in offered {
            assert!(ENROLMENT.contains(&path.as_str()), "{method} {path} is offered before two-step login is set up");
        }
        let (secret, _) = enrol(&support).await;
        assert!(support.get("/dashboard/two-step").await.html.contains("<nav"), "the menu once it is set up");
        assert_eq!(support.get("/dashboard/payments").await.status, StatusCode::OK);
        assert_eq!(support.post("/dashboard/two-step/off", &[("password", PASSWORD), ("code", &code(&secret, 1))]).await.status,
                   StatusCode::CONFLICT, "cannot be turned off while required");

        // The owner resets a user who lost device and codes; they set it up again at login.
        let team = owner.get("/dashboard/settings/users").await;
        let sam_id = paydesk::db::users::by_email(&app.db, "sam@example.com").await.unwrap().unwrap().id;
        assert!(team.html.contains(&format!("/dashboard/settings/users/{sam_id}/two-step")));
        let ask = owner.post(&format!("/dashboard/settings/users/{sam_id}/two-step"), &[]).await;
        assert!(ask.html.contains("Reset two-step login of sam@example.com?"));
        assert_eq!(owner.post(&format!("/dashboard/settings/users/{sam_id}/two-step"), &[("confirm", "yes")]).await.status,
                   StatusCode::SEE_OTHER);
        let (again, at) = log_in(&app, "sam@example.com", PASSWORD).await;
        assert_eq!(at.location, "/dashboard", "the password alone after a reset");
        assert_eq!(again.get("/dashboard").await.location, "/dashboard/two-step", "and straight to setting it up");
        // The last owner who lost both is helped by the operator, on the command line.
        let owner_id = paydesk::db::users::by_email(&app.db, "owner@example.com").await.unwrap().unwrap().id;
        assert_eq!(log_in_with(&app, "owner@example.com", &code(&owner_secret, 1)).await.1.status, StatusCode::SEE_OTHER);
        let out =
            crate::cli::output(crate::cli::paydesk(&app.database_url).args(["user", "reset-two-step", "--email", "Owner@Example.com"])).await;
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let said: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!((said["user_id"].as_str(), said["was_on"].as_bool()), (Some(owner_id.as_str()), Some(true)));
        assert_eq!(log_in(&app, "owner@example.com", PASSWORD).await.1.location, "/dashboard");
        let unknown = crate::cli::output(crate::cli::paydesk(&app.database_url).args(["user", "reset-two-step", "--email", "nobody@example.com"])).await;
        assert!(!unknown.status.success());
    }
}
