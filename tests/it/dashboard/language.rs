//! The dashboard in English and Russian, chosen per user: the setting, what it changes (every
//! text, money, the forms' messages), what it leaves alone (other users, the hosted pages), and
//! the pages before login, which follow the browser.

use reqwest::StatusCode;

use super::accounts::invite_and_join;
use super::*;

/// A new browser that asks for `accept` languages.
fn browser_speaking(accept: &str) -> reqwest::Client {
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert("accept-language", accept.parse().unwrap());
    reqwest::Client::builder()
        .cookie_store(true)
        .redirect(reqwest::redirect::Policy::none())
        .default_headers(headers)
        .build()
        .unwrap()
}

db_tests! {
    async fn each_user_reads_the_dashboard_in_the_language_they_chose(app) {
        let ann = sign_up(&app, "Corner Books", "ann@example.com").await;
        let home = ann.get("/dashboard").await;
        assert!(home.html.contains("<html lang=\"en\">") && home.html.contains(">Products</a>"), "English by default");
        let cleo = invite_and_join(&app, &ann, "cleo@example.com").await;

        let chosen = ann.post("/dashboard/settings/language", &[("language", "ru")]).await;
        assert_eq!((chosen.status, chosen.location.as_str()), (StatusCode::SEE_OTHER, "/dashboard/settings"));
        let cookie = chosen.headers.get("set-cookie").unwrap().to_str().unwrap().to_string();
        assert!(cookie.starts_with("pd_lang=ru;") && cookie.contains("Path=/dashboard"), "{cookie}");
        let settings = ann.get("/dashboard/settings").await;
        assert!(settings.html.contains("<html lang=\"ru\">"), "{}", settings.html);
        assert!(settings.html.contains("Теперь панель говорит по-русски."), "said in the new language");
        assert!(settings.html.contains("<option value=\"ru\" lang=\"ru\" selected>Русский</option>"));
        assert!(!settings.html.contains(">Products</a>") && settings.html.contains(">Товары</a>"));

        // Money as Russian writes it, and a refused form's messages in Russian.
        let created = ann.post("/dashboard/products", &[("name", "Кружка"), ("description", "Белая"), ("amount", "1234.5"),
            ("currency", "EUR"), ("infinite", "true"), ("immortal", "true")]).await;
        let id = Merchant::created(&created, "prd_");
        let product = ann.get(&format!("/dashboard/products/{id}")).await;
        assert!(product.html.contains("1\u{a0}234,50\u{a0}€"), "{}", product.html);
        let refused = ann.post("/dashboard/products", &[("name", ""), ("amount", "1,000"), ("currency", "EUR")]).await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
        for english in ["be blank", "Please correct", "is ambiguous", "Name "] {
            assert!(!refused.html.contains(english), "{english} left in {}", refused.html);
        }
        assert!(refused.html.contains("1,000"), "the amount as typed is named");
        // Another user of the shop still reads English, and so does the API.
        let theirs = cleo.get(&format!("/dashboard/products/{id}")).await;
        assert!(theirs.html.contains("<html lang=\"en\">") && theirs.html.contains("€1,234.50"), "{}", theirs.html);

        let edit = ann.get(&format!("/dashboard/products/{id}/edit")).await;
        assert!(edit.html.contains("value=\"1234,50\""), "the price to edit as Russian types it: {}", edit.html);
        let new = ann.get("/dashboard/products/new").await;
        assert!(new.html.contains("<option value=\"ru\" lang=\"ru\" selected>Русский</option>"), "pages start in the user's language");
        assert!(new.html.contains("<option value=\"de\" lang=\"de\">Deutsch</option>"), "each language named in itself");
        let fewer = ann.post(&format!("/dashboard/products/{id}"), &[("name", "Кружка"), ("description", "Белая"), ("amount", "1 234,00"),
            ("currency", "EUR"), ("infinite", "true"), ("immortal", "true")]).await;
        assert_eq!(fewer.status, StatusCode::SEE_OTHER, "{}", fewer.html);
        let zero = ann.post(&format!("/dashboard/products/{id}"), &[("name", "Кружка"), ("amount", "0"), ("currency", "EUR")]).await;
        assert!(zero.html.contains("не меньше 0,01\u{a0}€"), "a bound said as money: {}", zero.html);


        // The language is checked like every form.
        let odd = ann.post("/dashboard/settings/language", &[("language", "xx")]).await;
        assert_eq!(odd.status, StatusCode::BAD_REQUEST);
        let forged = ann.post_raw("/dashboard/settings/language", &[("csrf", "0".repeat(32).as_str()), ("language", "en")]).await;
        assert_eq!(forged.status, StatusCode::FORBIDDEN);
        assert!(forged.html.contains("<html lang=\"ru\">"), "the error page speaks the user's language");
        let missing = ann.get("/dashboard/products/prd_0000000000000000").await;
        assert_eq!(missing.status, StatusCode::NOT_FOUND);
        assert!(missing.html.contains("<html lang=\"ru\">") && !missing.html.contains("not found"), "{}", missing.html);

        // Back to English.
        let back = ann.post("/dashboard/settings/language", &[("language", "en")]).await;
        assert_eq!(back.status, StatusCode::SEE_OTHER);
        let settings = ann.get("/dashboard/settings").await;
        assert!(settings.html.contains("<html lang=\"en\">") && settings.html.contains("From now on the dashboard speaks English."));
    }

    async fn pages_before_login_follow_the_browser_and_then_the_user(app) {
        // A browser asking for Russian signs up in Russian, and its shop's first user reads Russian.
        let client = browser_speaking("ru-RU,ru;q=0.9,en;q=0.8");
        let mut m = Merchant { base: app.base.clone(), client, csrf: String::new() };
        let page = m.get("/dashboard/signup").await;
        assert!(page.html.contains("<html lang=\"ru\">"), "{}", page.html);
        let token = csrf_of(&page.html);
        let done = m.post_raw("/dashboard/signup", &[("csrf", &token), ("shop_name", "Лавка"), ("email", "ivan@example.com"),
            ("password", PASSWORD), ("password_confirmation", PASSWORD)]).await;
        assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.html);
        let home = m.get("/dashboard").await;
        assert!(home.html.contains("<html lang=\"ru\">"), "{}", home.html);
        m.csrf = csrf_of(&home.html);

        // Logged out, the login page stays in the language this browser last used.
        m.post("/dashboard/logout", &[]).await;
        assert!(m.get("/dashboard/login").await.html.contains("<html lang=\"ru\">"));
        let refused = m.post_raw("/dashboard/login", &[("csrf", &csrf_of(&m.get("/dashboard/login").await.html)),
            ("email", "ivan@example.com"), ("password", "wrong password")]).await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(!refused.html.contains("Wrong e-mail or password"), "{}", refused.html);

        // An English browser sees English until the user logs in: then the user's language wins.
        let mut other = Merchant { base: app.base.clone(), client: browser_speaking("en-GB,en"), csrf: String::new() };
        let login = other.get("/dashboard/login").await;
        assert!(login.html.contains("<html lang=\"en\">") && login.html.contains("Log in"));
        let done = other.post_raw("/dashboard/login", &[("csrf", &csrf_of(&login.html)), ("email", "ivan@example.com"),
            ("password", PASSWORD)]).await;
        assert_eq!(done.status, StatusCode::SEE_OTHER);
        let cookie = done.headers.get("set-cookie").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
        assert!(done.headers.get_all("set-cookie").iter().any(|c| c.to_str().unwrap().starts_with("pd_lang=ru;")), "{cookie}");
        let home = other.get("/dashboard").await;
        assert!(home.html.contains("<html lang=\"ru\">"));
        other.csrf = csrf_of(&home.html);

        // A browser without Accept-Language nor cookie reads English.
        let plain = Merchant { base: app.base.clone(), client: browser(), csrf: String::new() };
        assert!(plain.get("/dashboard/login").await.html.contains("<html lang=\"en\">"));
    }
}
