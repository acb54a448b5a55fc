//! The merchant dashboard over HTTP with a cookie-keeping client: login everywhere, CSRF,
//! each form's success and error paths, and isolation between shops. `accounts` covers
//! signing up, logging in, sessions and settings; `sections` the shop's pages.

pub(crate) mod accounts;
mod audit;
mod books;
mod disputes;
mod keys;
mod language;
mod lockout;
mod members;
mod notices;
mod revenue;
mod role_pages;
mod roles;
mod search;
mod sections;
mod sessions;
mod trail;
pub(crate) mod two_step;

use reqwest::StatusCode;

use crate::helpers::*;

/// A browser of one merchant: keeps cookies, does not follow redirects.
pub struct Merchant {
    pub base: String,
    pub client: reqwest::Client,
    pub csrf: String,
}

/// An answer: status, where it redirects, the page.
pub struct Answer {
    pub status: StatusCode,
    pub location: String,
    pub html: String,
    pub headers: reqwest::header::HeaderMap,
}

pub fn browser() -> reqwest::Client {
    reqwest::Client::builder().cookie_store(true).redirect(reqwest::redirect::Policy::none()).build().unwrap()
}

/// The value of the first `name="csrf"` field of a page.
pub fn csrf_of(html: &str) -> String {
    let marker = "name=\"csrf\" value=\"";
    let start = html.find(marker).expect("a CSRF field") + marker.len();
    let end = html[start..].find('"').expect("the field's end") + start;
    html[start..end].to_string()
}

pub async fn answer(response: reqwest::Response) -> Answer {
    let status = response.status();
    let location = response.headers().get("location").map(|v| v.to_str().unwrap().to_string()).unwrap_or_default();
    let headers = response.headers().clone();
    Answer { status, location, headers, html: response.text().await.unwrap() }
}

impl Merchant {
    pub async fn get(&self, path: &str) -> Answer {
        answer(self.client.get(format!("{}{path}", self.base)).send().await.unwrap()).await
    }

    /// Posts a form with this session's CSRF token.
    pub async fn post(&self, path: &str, fields: &[(&str, &str)]) -> Answer {
        let mut pairs = vec![("csrf", self.csrf.as_str())];
        pairs.extend_from_slice(fields);
        self.post_raw(path, &pairs).await
    }

    pub async fn post_raw(&self, path: &str, pairs: &[(&str, &str)]) -> Answer {
        let body = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs).finish();
        let request = self
            .client
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body);
        answer(request.send().await.unwrap()).await
    }

    /// The CSRF token of the page at `path`, following one more redirect (to setting up
    /// two-step login); empty when it has none (the login's second step).
    pub async fn csrf_after(&self, path: &str) -> String {
        let mut page = self.get(path).await;
        if page.status == StatusCode::SEE_OTHER {
            page = self.get(&page.location).await;
        }
        if page.html.contains("name=\"csrf\"") { csrf_of(&page.html) } else { String::new() }
    }

    /// The id at the end of a redirect to a created object's page.
    pub fn created(a: &Answer, prefix: &str) -> String {
        assert_eq!(a.status, StatusCode::SEE_OTHER, "{}", a.html);
        let id = a.location.rsplit('/').next().unwrap().to_string();
        assert!(id.starts_with(prefix), "{}", a.location);
        id
    }
}

/// Signs a new shop up through the sign-up page; the browser is then logged in.
pub async fn sign_up(app: &TestApp, shop_name: &str, email: &str) -> Merchant {
    let mut m = Merchant { base: app.base.clone(), client: browser(), csrf: String::new() };
    let page = m.get("/dashboard/signup").await;
    assert_eq!(page.status, StatusCode::OK);
    let fields = [
        ("csrf", csrf_of(&page.html)),
        ("shop_name", shop_name.into()),
        ("email", email.into()),
        ("password", PASSWORD.into()),
        ("password_confirmation", PASSWORD.into()),
    ];
    let pairs: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let done = m.post_raw("/dashboard/signup", &pairs).await;
    assert_eq!((done.status, done.location.as_str()), (StatusCode::SEE_OTHER, "/dashboard"), "{}", done.html);
    m.csrf = csrf_of(&m.get("/dashboard").await.html);
    m
}

/// Logs in through the login page.
pub async fn log_in(app: &TestApp, email: &str, password: &str) -> (Merchant, Answer) {
    let mut m = Merchant { base: app.base.clone(), client: browser(), csrf: String::new() };
    let page = m.get("/dashboard/login").await;
    let token = csrf_of(&page.html);
    let done = m.post_raw("/dashboard/login", &[("csrf", &token), ("email", email), ("password", password)]).await;
    if done.status == StatusCode::SEE_OTHER {
        m.csrf = m.csrf_after(&done.location).await;
    }
    (m, done)
}

pub const PASSWORD: &str = "correct horse battery";

/// The shop id the settings page shows, and API credentials made by rotating its key.
pub async fn api_shop(m: &Merchant) -> Shop {
    let settings = m.get("/dashboard/settings").await;
    let marker = "data-testid=\"shop-id\">";
    let start = settings.html.find(marker).unwrap() + marker.len();
    let id: i64 = settings.html[start..].split('<').next().unwrap().parse().unwrap();
    let asked = m.post("/dashboard/settings/rotate", &[("confirm", "yes")]).await;
    assert_eq!(
        (asked.status, asked.location.as_str()),
        (StatusCode::SEE_OTHER, "/dashboard/settings/key"),
        "post/redirect/get"
    );
    let rotated = m.get("/dashboard/settings/key").await;
    let marker = "data-testid=\"secret-key\"";
    let at = rotated.html.find(marker).expect("the new key");
    let value = rotated.html[..at].rsplit("value=\"").next().unwrap();
    Shop { id, secret: value.split('"').next().unwrap().to_string() }
}
