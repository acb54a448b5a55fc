//! The subscriber page over HTTP: links that open it once (a GET changes nothing), the
//! e-mail request that never tells whether an address is known, the list of subscriptions
//! and payments, cancelling (now or at the end of the period) and undoing it, paying what is
//! overdue with another card, and one customer never reaching another's subscriptions.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::doubles::smtp::Smtp;
use crate::helpers::*;
use crate::mails::{address, flush, mailing_app, subscribe_as};
use crate::subscriptions::{advance, clock, make_card, plan};

/// A browser: its cookies, kept by hand.
#[derive(Default)]
pub struct Visitor {
    cookies: Vec<(String, String)>,
}

impl Visitor {
    fn cookie_header(&self) -> String {
        self.cookies.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("; ")
    }

    fn keep(&mut self, headers: &reqwest::header::HeaderMap) {
        for set in headers.get_all("set-cookie") {
            let pair = set.to_str().unwrap().split(';').next().unwrap();
            let (name, value) = pair.split_once('=').unwrap();
            self.cookies.retain(|(k, _)| k != name);
            self.cookies.push((name.to_string(), value.to_string()));
        }
    }

    /// GETs `url` (absolute, or a path of `app`).
    pub async fn get(&mut self, app: &TestApp, url: &str) -> Page {
        let url = if url.starts_with("http") { url.to_string() } else { format!("{}{url}", app.base) };
        let response = app.client.get(url).header("cookie", self.cookie_header()).send().await.unwrap();
        self.keep(response.headers());
        Page { status: response.status(), headers: response.headers().clone(), html: response.text().await.unwrap() }
    }

    /// POSTs a form with the page's CSRF token.
    pub async fn post(&mut self, app: &TestApp, url: &str, fields: &[(&str, &str)]) -> Page {
        let url = if url.starts_with("http") { url.to_string() } else { format!("{}{url}", app.base) };
        let csrf = self.cookies.iter().find(|(k, _)| k == "pd_csrf").map(|(_, v)| v.clone()).unwrap_or_default();
        let mut pairs = vec![("csrf", csrf.as_str())];
        pairs.extend_from_slice(fields);
        let body = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs).finish();
        let response = app
            .client
            .request(Method::POST, url)
            .header("cookie", self.cookie_header())
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await
            .unwrap();
        self.keep(response.headers());
        Page { status: response.status(), headers: response.headers().clone(), html: response.text().await.unwrap() }
    }
}

/// A link to the customer's page, minted through the API.
pub async fn minted(app: &TestApp, shop: &Shop, customer: &str) -> String {
    let (status, session) = app
        .post(
            shop,
            &format!("/customers/{customer}/portal_sessions"),
            &json!({"return_url": "https://shop.example/me"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{session}");
    assert_eq!(session["object"], "portal_session");
    session["url"].as_str().unwrap().to_string()
}

/// Opens the page through `link`: the GET changes nothing, the button opens it.
pub async fn open(app: &TestApp, visitor: &mut Visitor, link: &str) -> Page {
    let first = visitor.get(app, link).await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.html);
    let again = visitor.get(app, link).await;
    assert_eq!(again.status, StatusCode::OK, "a GET does not use the link");
    let opened = visitor.post(app, link, &[]).await;
    assert_eq!(opened.status, StatusCode::SEE_OTHER, "{}", opened.html);
    assert_eq!(opened.location(), "/portal/home");
    let home = visitor.get(app, "/portal/home").await;
    assert_eq!(home.status, StatusCode::OK, "{}", home.html);
    home
}

db_tests! {
    async fn an_api_link_opens_the_page_once_and_a_second_use_explains_itself(app) {
        let shop = app.shop("Corner Books").await;
        crate::invoices::set_seller(&app, &shop).await;
        let plan = plan(&app, &shop, json!({"title": "Weekly digest"})).await;
        let clock = clock(&app, &shop, "2027-01-01T10:00:00Z").await;
        let sub = subscribe_as(&app, &shop, &plan, &clock, "ann@example.com", cards::SUCCESS).await;
        let customer = sub["customer"]["id"].as_str().unwrap().to_string();
        let link = minted(&app, &shop, &customer).await;
        assert!(link.starts_with(&format!("{}/portal/links/", app.base)), "{link}");
        let mut ann = Visitor::default();
        let home = open(&app, &mut ann, &link).await;
        assert!(home.html.contains("Weekly digest") && home.html.contains("ann@example.com"), "{}", home.html);
        assert!(home.html.contains("Next payment"), "{}", home.html);
        assert!(home.html.contains("https://shop.example/me"), "back to the shop");
        // The invoice of the first charge, with its page and PDF.
        let (_, invoices) = app.get(&shop, "/invoices").await;
        let page = invoices[0]["hosted_url"].as_str().unwrap();
        assert!(home.html.contains("Invoices and credit notes") && home.html.contains("Invoice TEST-INV-000001"), "{}", home.html);
        assert!(home.html.contains(&format!("href=\"{page}\"")) && home.html.contains(&format!("href=\"{page}/pdf\"")), "{}", home.html);
        // The link again, from another browser: used, with a way to get a new one.
        let mut other = Visitor::default();
        let used = other.get(&app, &link).await;
        assert_eq!(used.status, StatusCode::GONE);
        assert!(used.html.contains("This link was already used"), "{}", used.html);
        assert!(!used.html.contains("Open your page"));
        let replay = other.post(&app, &link, &[]).await;
        assert_eq!(replay.status, StatusCode::GONE, "a used link opens no second session");
        // Without a session the page says it ended.
        let ended = other.get(&app, "/portal/home").await;
        assert_eq!(ended.status, StatusCode::UNAUTHORIZED);
        // A made-up link is not valid.
        let made_up = other.get(&app, "/portal/links/0123456789abcdef").await;
        assert_eq!(made_up.status, StatusCode::NOT_FOUND);
        // Two browsers using one fresh link at once: one page opens.
        let link = minted(&app, &shop, &customer).await;
        let (mut a, mut b) = (Visitor::default(), Visitor::default());
        a.get(&app, &link).await;
        b.get(&app, &link).await;
        let (ra, rb) = tokio::join!(a.post(&app, &link, &[]), b.post(&app, &link, &[]));
        let opened = [ra.status, rb.status].iter().filter(|s| **s == StatusCode::SEE_OTHER).count();
        assert_eq!(opened, 1, "{:?} {:?}", ra.status, rb.status);
    }

    async fn a_link_for_another_shops_customer_is_refused_and_sessions_stay_in_their_shop(app) {
        let shop = app.shop("A").await;
        let other = app.shop("B").await;
        let (status, _) = app.post(&other, "/customers/cst_0000000000000000/portal_sessions", &json!({})).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2027-01-01T10:00:00Z").await;
        let ann = subscribe_as(&app, &shop, &plan, &clock, "ann@example.com", cards::SUCCESS).await;
        let bob = subscribe_as(&app, &shop, &plan, &clock, "bob@example.com", cards::SUCCESS).await;
        let (status, _) =
            app.post(&other, &format!("/customers/{}/portal_sessions", ann["customer"]["id"].as_str().unwrap()), &json!({})).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "another shop's customer");
        let (status, body) = app.post(&shop, &format!("/customers/{}/portal_sessions", ann["customer"]["id"].as_str().unwrap()), &json!({"locale": "xx"})).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        let mut visitor = Visitor::default();
        let link = minted(&app, &shop, ann["customer"]["id"].as_str().unwrap()).await;
        open(&app, &mut visitor, &link).await;
        let bobs = format!("/portal/subscriptions/{}/cancel", bob["id"].as_str().unwrap());
        let refused = visitor.post(&app, &bobs, &[("when", "now"), ("confirm", "yes")]).await;
        assert_eq!(refused.status, StatusCode::NOT_FOUND);
        let (_, bob_now) = app.get(&shop, &format!("/subscriptions/{}", bob["id"].as_str().unwrap())).await;
        assert_eq!(bob_now["state"], "active");
    }

    async fn a_subscriber_cancels_at_the_period_end_undoes_it_and_then_cancels_now(app) {
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({"title": "Membership"})).await;
        let clock = clock(&app, &shop, "2027-01-01T10:00:00Z").await;
        let sub = subscribe_as(&app, &shop, &plan, &clock, "ann@example.com", cards::SUCCESS).await;
        let id = sub["id"].as_str().unwrap();
        let mut ann = Visitor::default();
        let link = minted(&app, &shop, sub["customer"]["id"].as_str().unwrap()).await;
        open(&app, &mut ann, &link).await;
        let action = format!("/portal/subscriptions/{id}/cancel");
        let confirm = ann.post(&app, &action, &[("when", "period_end"), ("reason", "too_expensive")]).await;
        assert_eq!(confirm.status, StatusCode::OK);
        assert!(confirm.html.contains("stays active until 1 February 2027"), "{}", confirm.html);
        assert!(confirm.html.contains("Subscription: Membership"), "it names what it cancels: {}", confirm.html);
        assert!(confirm.html.contains("class=\"danger\" data-testid=\"submit\""), "{}", confirm.html);
        assert_eq!(crate::subscriptions::get_sub(&app, &shop, id).await["cancel_at_period_end"], false, "asked, not done");
        let done = ann.post(&app, &action, &[("when", "period_end"), ("reason", "too_expensive"), ("confirm", "yes")]).await;
        assert_eq!(done.status, StatusCode::SEE_OTHER);
        let now = crate::subscriptions::get_sub(&app, &shop, id).await;
        assert_eq!((now["state"].as_str(), now["cancel_at_period_end"].as_bool()), (Some("active"), Some(true)));
        assert_eq!(now["cancel_reason"], "subscriber: too_expensive");
        let home = ann.get(&app, "/portal/home?done=ending").await;
        assert!(home.html.contains("Keep my subscription") && home.html.contains("Ends on"), "{}", home.html);
        let kept = ann.post(&app, &format!("/portal/subscriptions/{id}/keep"), &[]).await;
        assert_eq!(kept.status, StatusCode::SEE_OTHER);
        assert_eq!(crate::subscriptions::get_sub(&app, &shop, id).await["cancel_at_period_end"], false);
        let events: Vec<String> = crate::bepaid_pay::events_of(&app, &shop, "subscription.*")
            .await
            .iter()
            .map(|e| e["type"].as_str().unwrap().to_string())
            .collect();
        assert!(events.contains(&"subscription.cancellation_requested".to_string()), "{events:?}");
        assert!(events.contains(&"subscription.cancellation_withdrawn".to_string()), "{events:?}");
        let gone = ann.post(&app, &action, &[("when", "now"), ("confirm", "yes")]).await;
        assert_eq!(gone.status, StatusCode::SEE_OTHER);
        assert_eq!(crate::subscriptions::get_sub(&app, &shop, id).await["state"], "canceled");
        // A form without this browser's CSRF token changes nothing.
        let sub2 = subscribe_as(&app, &shop, &plan, &clock, "ann@example.com", cards::SUCCESS).await;
        let forged = app
            .anon(Method::POST, &format!("/portal/subscriptions/{}/cancel", sub2["id"].as_str().unwrap()))
            .header("cookie", ann.cookie_header().replace("pd_csrf=", "pd_csrf=x"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body("when=now&confirm=yes&csrf=forged")
            .send()
            .await
            .unwrap();
        assert_eq!(forged.status(), StatusCode::SEE_OTHER);
        assert_eq!(crate::subscriptions::get_sub(&app, &shop, sub2["id"].as_str().unwrap()).await["state"], "active");
    }
}

backend_tests! {
    async fn the_request_page_answers_alike_for_known_and_unknown_addresses(backend) {
        let server = Smtp::shared().await;
        let app = mailing_app(backend, server.url()).await;
        let shop = app.shop("Corner Books").await;
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2027-01-01T10:00:00Z").await;
        let known = address("known");
        subscribe_as(&app, &shop, &plan, &clock, &known, cards::SUCCESS).await;
        let unknown = address("unknown");
        let mut answers = Vec::new();
        for email in [&known, &unknown] {
            let mut visitor = Visitor::default();
            let form = visitor.get(&app, &format!("/portal/{}", shop.id)).await;
            assert_eq!(form.status, StatusCode::OK);
            let answer = visitor.post(&app, &format!("/portal/{}", shop.id), &[("email", email.to_uppercase().as_str()), ("lang", "en")]).await;
            answers.push((answer.status, answer.html.replace(&email.to_uppercase(), "")));
        }
        assert_eq!(answers[0], answers[1], "the answer never tells whether the address is known");
        assert_eq!(answers[0].0, StatusCode::OK);
        flush(&app).await;
        let got = server.wait_for(&known, 2).await;
        let link_mail = got.iter().find(|m| m.subject.contains("Your link to manage")).expect("a link");
        let link = link_mail.text.lines().find_map(|l| l.strip_prefix("Open my subscription page: ")).unwrap().to_string();
        let mut visitor = Visitor::default();
        let home = open(&app, &mut visitor, &link).await;
        assert!(home.html.contains(&known));
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        assert!(server.received(&unknown).is_empty());
        // A bad address is told so.
        let mut visitor = Visitor::default();
        visitor.get(&app, &format!("/portal/{}", shop.id)).await;
        let bad = visitor.post(&app, &format!("/portal/{}", shop.id), &[("email", "not an address")]).await;
        assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
    }

    async fn the_failed_renewal_mail_leads_to_paying_the_overdue_period_once(backend) {
        let server = Smtp::shared().await;
        let app = mailing_app(backend, server.url()).await;
        let shop = app.shop("Magazine").await;
        let plan = plan(&app, &shop, json!({"title": "Monthly issue"})).await;
        let clock = clock(&app, &shop, "2027-01-01T10:00:00Z").await;
        let to = address("reader");
        let sub = subscribe_as(&app, &shop, &plan, &clock, &to, cards::SUCCESS).await;
        let id = sub["id"].as_str().unwrap().to_string();
        make_card(&app, &shop, &id, "insufficient_funds").await;
        advance(&app, &shop, &clock, "2027-02-01T11:00:00Z").await;
        assert_eq!(crate::subscriptions::get_sub(&app, &shop, &id).await["state"], "failed_attempt");
        flush(&app).await;
        let got = server.wait_for(&to, 2).await;
        let failed = got.iter().find(|m| m.subject.contains("did not go through")).expect("the failed renewal mail");
        let link = failed.text.lines().find_map(|l| l.strip_prefix("Update your card: ")).unwrap().to_string();
        let mut reader = Visitor::default();
        let home = open(&app, &mut reader, &link).await;
        assert!(home.html.contains("Pay now with a card"), "{}", home.html);
        let pay = format!("/subscriptions/{id}/pay");
        let form = app.open_form(&pay).await;
        let paid = app.submit(&pay, &form, &card(cards::SUCCESS)).await;
        assert!(paid.status.is_redirection(), "{}", paid.html);
        // The same form again, and a second tab: no second charge.
        app.submit(&pay, &form, &card(cards::SUCCESS)).await;
        let second = app.page(&pay).await;
        assert_eq!(second.status, StatusCode::CONFLICT);
        let now = crate::subscriptions::get_sub(&app, &shop, &id).await;
        assert_eq!(now["state"], "active");
        let (_, payments) = app.get(&shop, &format!("/payments?subscription={id}")).await;
        let succeeded = payments.as_array().unwrap().iter().filter(|p| p["status"] == "succeeded").count();
        assert_eq!(succeeded, 2, "the first period and the overdue one, once: {payments}");
        let updated = crate::bepaid_pay::events_of(&app, &shop, "subscription.card_updated").await;
        assert_eq!(updated.len(), 1);
    }
}

db_tests! {
    async fn a_subscriber_saves_a_new_card_that_the_next_renewal_uses(app) {
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({"title": "Membership"})).await;
        let clock = clock(&app, &shop, "2027-01-01T10:00:00Z").await;
        let sub = subscribe_as(&app, &shop, &plan, &clock, "ann@example.com", cards::SUCCESS).await;
        let id = sub["id"].as_str().unwrap();
        let mut ann = Visitor::default();
        let link = minted(&app, &shop, sub["customer"]["id"].as_str().unwrap()).await;
        let home = open(&app, &mut ann, &link).await;
        assert!(home.html.contains("Update card"), "{}", home.html);
        let path = format!("/portal/subscriptions/{id}/card");
        let form = ann.get(&app, &path).await;
        assert_eq!(form.status, StatusCode::OK);
        assert!(form.html.contains("card_number") && form.html.contains("Save card"), "{}", form.html);
        // A wrong number is told, and nothing changes.
        let bad = ann
            .post(&app, &path, &[("card_number", "1234"), ("card_exp_month", "12"), ("card_exp_year", "2031"), ("card_cvc", "123"), ("card_holder", "Ann")])
            .await;
        assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", bad.html);
        // The card that declines: saved, and the next renewal uses it (and is declined).
        let mut fields = card(cards::DECLINED);
        fields.retain(|(k, _)| *k != "csrf");
        let saved = ann.post(&app, &path, &fields).await;
        assert_eq!(saved.status, StatusCode::SEE_OTHER, "{}", saved.html);
        assert_eq!(saved.location(), "/portal/home?done=card");
        let now = crate::subscriptions::get_sub(&app, &shop, id).await;
        assert_eq!(now["card"]["last_4"], "0019", "{now}");
        assert_eq!(crate::bepaid_pay::events_of(&app, &shop, "subscription.card_updated").await.len(), 1);
        advance(&app, &shop, &clock, "2027-02-01T11:00:00Z").await;
        assert_eq!(crate::subscriptions::get_sub(&app, &shop, id).await["state"], "failed_attempt");
        let (_, payments) = app.get(&shop, &format!("/payments?subscription={id}&limit=1")).await;
        assert_eq!(payments[0]["card"]["last_4"], "0019", "{payments}");
        // Another customer's session cannot open it.
        let bob = subscribe_as(&app, &shop, &plan, &clock, "bob@example.com", cards::SUCCESS).await;
        let mut bob_browser = Visitor::default();
        open(&app, &mut bob_browser, &minted(&app, &shop, bob["customer"]["id"].as_str().unwrap()).await).await;
        assert_eq!(bob_browser.get(&app, &path).await.status, StatusCode::NOT_FOUND);
    }

    async fn an_expired_link_explains_itself_and_mails_nothing_without_smtp(app) {
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2027-01-01T10:00:00Z").await;
        let sub = subscribe_as(&app, &shop, &plan, &clock, "ann@example.com", cards::SUCCESS).await;
        let link = minted(&app, &shop, sub["customer"]["id"].as_str().unwrap()).await;
        {
            use sea_orm::{ConnectionTrait, Statement};
            let sql = "UPDATE portal_tokens SET expires_at = created_at";
            app.db.execute(Statement::from_string(app.db.get_database_backend(), sql)).await.unwrap();
        }
        let mut ann = Visitor::default();
        let expired = ann.get(&app, &link).await;
        assert_eq!(expired.status, StatusCode::GONE);
        assert!(expired.html.contains("This link has expired") && expired.html.contains("Send me a new link"), "{}", expired.html);
        assert_eq!(ann.post(&app, &link, &[]).await.status, StatusCode::GONE, "an expired link opens nothing");
        let renewed = ann.post(&app, &format!("{link}/renew"), &[]).await;
        assert_eq!(renewed.status, StatusCode::OK);
        assert!(renewed.html.contains("A new link is on its way"));
    }

    async fn subscribers_pause_and_resume_on_their_page_only_where_the_shop_lets_them(app) {
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({})).await;
        let clock = clock(&app, &shop, "2027-01-01T10:00:00Z").await;
        let sub = subscribe_as(&app, &shop, &plan, &clock, "ann@example.com", cards::SUCCESS).await;
        let id = sub["id"].as_str().unwrap().to_string();
        let customer = sub["customer"]["id"].as_str().unwrap().to_string();
        let mut ann = Visitor::default();
        let home = open(&app, &mut ann, &minted(&app, &shop, &customer).await).await;
        assert!(!home.html.contains("data-testid=\"pause\""), "not unless the shop lets them");
        let refused = ann.post(&app, &format!("/portal/subscriptions/{id}/pause"), &[]).await;
        assert_eq!(refused.status, StatusCode::SEE_OTHER);
        assert_eq!(app.get(&shop, &format!("/subscriptions/{id}")).await.1["pause_at_period_end"], false);

        use paydesk::domain::audit::{Actor, Entry, Origin};
        let audit = Entry::new(shop.id, Actor::operator(), Origin::default(), "shop.updated");
        let allow = paydesk::db::shops::set_subscriber_pause(&app.db, shop.id, true, &audit, chrono::Utc::now());
        paydesk::services::shops::changing(&app.state, shop.id, allow).await.unwrap();
        let home = ann.get(&app, "/portal/home").await;
        assert!(home.html.contains("data-testid=\"pause\""), "{}", home.html);
        ann.post(&app, &format!("/portal/subscriptions/{id}/pause"), &[]).await;
        let home = ann.get(&app, "/portal/home?done=pausing").await;
        assert!(home.html.contains("Your subscription will pause at the end of the paid period."), "{}", home.html);
        assert!(home.html.contains("Do not pause"), "{}", home.html);
        assert_eq!(app.get(&shop, &format!("/subscriptions/{id}")).await.1["pause_at_period_end"], true);
        // Undone, then asked again; the period ends paused.
        ann.post(&app, &format!("/portal/subscriptions/{id}/resume"), &[]).await;
        assert_eq!(app.get(&shop, &format!("/subscriptions/{id}")).await.1["pause_at_period_end"], false);
        ann.post(&app, &format!("/portal/subscriptions/{id}/pause"), &[]).await;
        advance(&app, &shop, &clock, "2027-03-01T10:00:00Z").await;
        let (_, paused) = app.get(&shop, &format!("/subscriptions/{id}")).await;
        assert_eq!(paused["state"], "paused", "{paused}");
        let home = ann.get(&app, "/portal/home").await;
        assert!(home.html.contains("Paused") && home.html.contains("Resume now"), "{}", home.html);
        let resumed = ann.post(&app, &format!("/portal/subscriptions/{id}/resume"), &[]).await;
        assert_eq!(resumed.location(), "/portal/home?done=resumed");
        let (_, active) = app.get(&shop, &format!("/subscriptions/{id}")).await;
        assert_eq!((active["state"].as_str(), active["renew_at"].as_str()), (Some("active"), Some("2027-04-01T10:00:00.000Z")));
        assert_eq!(active["last_transaction"]["created_at"], "2027-03-01T10:00:00.000Z", "charged at the resume");
    }
}

db_tests! {
    async fn a_subscriber_gives_a_card_where_one_is_waited_for_and_may_change_it_while_paused(app) {
        let shop = app.shop("Gym").await;
        let plan = plan(&app, &shop, json!({"title": "Membership"})).await;
        let (_, waiting) = app.post(&shop, "/subscriptions", &json!({"plan": {"id": plan}, "customer": customer_body()})).await;
        let waiting_id = waiting["id"].as_str().unwrap();
        let mut ann = Visitor::default();
        let link = minted(&app, &shop, waiting["customer"]["id"].as_str().unwrap()).await;
        open(&app, &mut ann, &link).await;
        let home = ann.get(&app, "/portal/home").await;
        assert!(home.html.contains("Waiting for your card") && home.html.contains("Your subscription starts once you give your card."), "{}", home.html);
        let card_page = format!("/subscriptions/{waiting_id}/pay");
        assert!(home.html.contains(&card_page) && home.html.contains("data-testid=\"give-card\""), "{}", home.html);

        // A paused subscription's card can be changed; the card page says nothing is charged
        // and leads back.
        let clock = clock(&app, &shop, "2027-01-01T10:00:00Z").await;
        let body = json!({"plan": {"id": plan}, "customer": {"id": waiting["customer"]["id"]}, "test_clock": clock,
                          "card": crate::subscriptions::card_json(cards::SUCCESS)});
        let (status, sub) = app.post(&shop, "/subscriptions", &body).await;
        assert_eq!(status, StatusCode::CREATED, "{sub}");
        let id = sub["id"].as_str().unwrap();
        let (status, paused) = app.post(&shop, &format!("/subscriptions/{id}/pause"), &json!({})).await;
        assert_eq!((status, paused["state"].as_str()), (StatusCode::OK, Some("paused")), "{paused}");
        let home = ann.get(&app, "/portal/home").await;
        let update = format!("/portal/subscriptions/{id}/card");
        assert!(home.html.contains(&update), "{}", home.html);
        let form = ann.get(&app, &update).await;
        assert_eq!(form.status, StatusCode::OK);
        assert!(form.html.contains("Nothing is charged now"), "{}", form.html);
        assert!(form.html.contains("href=\"/portal/home\" data-testid=\"back\""), "{}", form.html);
    }
}
