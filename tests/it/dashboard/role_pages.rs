//! Every dashboard page, opened by every role, offers only what that role may use: each link
//! goes to a page the role may open and each form to a route it may send, as the access table
//! (README's roles table) says; and a role that may only see a setting sees it read-only.

use paydesk::domain::access::{Permission, Role};
use paydesk::frontends::dashboard::access::ROUTES;
use reqwest::StatusCode;

use super::disputes::disputed;
use super::roles::{concrete, team};

/// The route of the access table that `path` goes to with `method`: the one that matches it
/// with the fewest parameters (`/products/new` before `/products/{id}`).
fn route_of(method: &str, path: &str) -> Option<(&'static str, Permission)> {
    let segments: Vec<&str> = path.split('/').collect();
    ROUTES
        .iter()
        .filter(|(m, route, _)| {
            let parts: Vec<&str> = route.split('/').collect();
            *m == method
                && parts.len() == segments.len()
                && parts.iter().zip(&segments).all(|(p, s)| p.starts_with('{') || p == s)
        })
        .min_by_key(|(_, route, _)| route.matches('{').count())
        .map(|(_, route, permission)| (*route, *permission))
}

/// The value of attribute `name` in one tag's text.
fn attribute(tag: &str, name: &str) -> Option<String> {
    let marker = format!(" {name}=\"");
    let start = tag.find(&marker)? + marker.len();
    Some(tag[start..].split('"').next()?.replace("&amp;", "&"))
}

/// What a page offers: `(method, path)` of each link and form into the dashboard, without
/// their queries.
pub(super) fn offers(html: &str) -> Vec<(String, String)> {
    let path = |url: &str| url.split(['?', '#']).next().unwrap_or("").to_string();
    let mut found = Vec::new();
    for tag in html.split('<').skip(1).map(|t| t.split('>').next().unwrap_or("")) {
        let tag = tag.replace(['\n', '\t'], " ");
        if let Some(href) = attribute(&tag, "href").filter(|h| h.starts_with("/dashboard")) {
            found.push(("GET".to_string(), path(&href)));
        }
        if tag.starts_with("form ")
            && let Some(action) = attribute(&tag, "action").filter(|a| a.starts_with("/dashboard"))
        {
            let method = attribute(&tag, "method").unwrap_or_else(|| "get".into()).to_uppercase();
            found.push((method, path(&action)));
        }
    }
    found
}

/// Words that ask the reader to do something, and what doing it needs.
const ASKING: &[(&str, Permission)] = &[
    ("fill in the refund form", Permission::ChangePayments),
    ("start a subscription below", Permission::ChangeCustomers),
    ("Start one below", Permission::ChangeCustomers),
    ("To subscribe this customer", Permission::ChangeCustomers),
    ("or when you add one", Permission::ChangeCustomers),
    ("start one from a customer", Permission::ChangeCustomers),
    ("Create one to", Permission::ChangeCatalog),
    ("Choose the e-mails", Permission::ChangeMails),
    ("For Standard Webhooks endpoints, see", Permission::ReadWebhooks),
    ("Payment processor", Permission::ReadProcessor),
];

/// The pages a role opens: every page of the access table it may open, but those that are
/// not pages (exports, images, previews) or that only show what a form just made.
fn pages(role: Role) -> impl Iterator<Item = &'static str> {
    let not_pages = [".csv", ".svg", "/preview/", "/settings/invitation", "/settings/key", "/two-step/codes"];
    ROUTES
        .iter()
        .filter(move |(method, route, permission)| {
            *method == "GET" && role.can(*permission) && !not_pages.iter().any(|n| route.contains(n))
        })
        .map(|(_, route, _)| *route)
}

db_tests! {
    async fn no_page_offers_a_role_a_link_or_a_form_it_may_not_use(app) {
        let mut t = team(&app).await;
        let (_, dispute) = disputed(&app, &t.shop).await;
        t.ids.push(("disputes", dispute));
        let (mut checked, mut wrong) = (0, Vec::new());
        for (role, m) in std::iter::once((Role::Owner, &t.owner)).chain(t.members.iter().map(|(r, m)| (*r, m))) {
            for route in pages(role) {
                let path = concrete(route, &t.ids);
                let page = m.get(&path).await;
                assert_eq!(page.status, StatusCode::OK, "{role} opens {path}: {}", page.html);
                for (words, permission) in ASKING {
                    if page.html.contains(words) && !role.can(*permission) {
                        wrong.push(format!("{role} on {path}: \"{words}\" asks for what its role may not do"));
                    }
                }
                for (method, offered) in offers(&page.html) {
                    match route_of(&method, &offered) {
                        Some((_, permission)) if role.can(permission) => {}
                        Some((target, _)) => wrong.push(format!("{role} on {path}: {method} {offered} ({target}) answers 403")),
                        None => wrong.push(format!("{role} on {path}: {method} {offered} is no dashboard route")),
                    }
                    checked += 1;
                }
            }
        }
        wrong.dedup();
        assert!(wrong.is_empty(), "pages offer what the role may not use:\n{}", wrong.join("\n"));
        assert!(checked > 500, "only {checked} links and forms seen");
    }

    async fn every_role_sees_the_e_mail_settings_and_only_those_who_may_choose_are_asked_to(app) {
        let t = team(&app).await;
        for (role, m) in std::iter::once((Role::Owner, &t.owner)).chain(t.members.iter().map(|(r, m)| (*r, m))) {
            let chooses = role.can(Permission::ChangeMails);
            let mails = m.get("/dashboard/settings/mails").await;
            assert_eq!(mails.status, StatusCode::OK, "{role}");
            let kinds = mails.html.matches("data-testid=\"mail-kind\"").count();
            assert_eq!(kinds, paydesk::domain::mail::MailKind::CHOSEN.len(), "{role} sees every e-mail: {}", mails.html);
            assert!(mails.html.contains("Receipt for each payment") && mails.html.contains("Cancellation confirmed"), "{role}");
            let lead = if chooses { "id=\"f-reminder_days\"" } else { "data-testid=\"reminder-days\"" };
            assert!(mails.html.contains(lead), "{role} sees the reminders' lead");
            assert_eq!(mails.html.contains("type=\"checkbox\""), chooses, "{role}: boxes to tick only for who may choose");
            if !chooses {
                let sent = mails.html.matches("data-testid=\"kind-on\"").count();
                assert_eq!(sent, paydesk::domain::mail::MailKind::CHOSEN.len(), "{role}: each is sent, and says so");
            }
            let settings = m.get("/dashboard/settings").await;
            assert_eq!(settings.html.contains("Choose the e-mails"), chooses, "{role}");
            assert_eq!(settings.html.contains("See the e-mails"), !chooses, "{role}");
        }
        // Those turned off read as off to those who only see.
        let off = t.owner.post("/dashboard/settings/mails", &[("reminder_days", "14"), ("send.refund_receipt", "true")]).await;
        assert_eq!(off.status, StatusCode::SEE_OTHER, "{}", off.html);
        let analyst = &t.members.iter().find(|(r, _)| *r == Role::Analyst).unwrap().1;
        let seen = analyst.get("/dashboard/settings/mails").await;
        assert_eq!(seen.html.matches("data-testid=\"kind-on\"").count(), 1, "{}", seen.html);
        assert_eq!(seen.html.matches("data-testid=\"kind-off\"").count(), 7);
        assert!(seen.html.contains("data-testid=\"reminder-days\">14 days"), "{}", seen.html);
    }
}
