//! Roles over HTTP: every dashboard route against every role (allowed or refused, and nothing
//! changed when refused), the routes the access table knows against those the code serves,
//! the team page's rules, and a shop that always keeps an owner.

use paydesk::domain::access::Role;
use paydesk::frontends::dashboard::access::{ROUTES, needed};
use reqwest::StatusCode;
use serde_json::{Value, json};

use super::accounts::invite_as;
use super::*;
use crate::helpers::*;

/// The dashboard's routes that need no signed-in user.
const ANONYMOUS: &[(&str, &str)] = &[
    ("GET", "/dashboard/signup"),
    ("POST", "/dashboard/signup"),
    ("GET", "/dashboard/login"),
    ("POST", "/dashboard/login"),
    ("GET", "/dashboard/login/code"),
    ("POST", "/dashboard/login/code"),
    ("GET", "/dashboard/invite/{token}"),
    ("POST", "/dashboard/invite/{token}"),
    ("GET", "/dashboard/unlock/{token}"),
    ("POST", "/dashboard/unlock/{token}"),
];

/// Every `(method, path)` the dashboard's source routes: `.route("/dashboard…", get(a).post(b))`,
/// in its files and its folders' files.
fn routes_in_source() -> Vec<(String, String)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let entries = |dir: &std::path::Path| -> Vec<std::path::PathBuf> {
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect()
    };
    let mut files: Vec<_> = entries(&root.join("src/frontends/dashboard"))
        .into_iter()
        .flat_map(|p| if p.is_dir() { entries(&p) } else { vec![p] })
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .collect();
    files.push(root.join("src/app/mod.rs"));
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for part in text.split(".route(\"").skip(1) {
            let (path, rest) = part.split_once('"').unwrap();
            if !path.starts_with("/dashboard") {
                continue;
            }
            let call = rest.split(")\n").next().unwrap();
            for method in ["get", "post", "put", "delete", "patch"] {
                if call.contains(&format!("{method}(")) {
                    found.push((method.to_uppercase(), path.to_string()));
                }
            }
        }
    }
    found
}

#[test]
fn every_dashboard_route_is_in_the_access_table_and_nothing_else_is() {
    let served = routes_in_source();
    assert!(served.len() > 70, "only {} routes found", served.len());
    for (method, path) in &served {
        let anonymous = ANONYMOUS.iter().any(|(m, p)| m == method && p == path);
        assert!(anonymous || needed(method, path).is_some(), "{method} {path} is missing from the access table");
    }
    for (method, path, _) in ROUTES {
        assert!(served.iter().any(|(m, p)| m == method && p == path), "{method} {path} is not served");
    }
}

#[test]
fn readmes_permission_matrix_is_the_one_the_server_checks() {
    use paydesk::domain::access::Permission::*;
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let section = readme.split("## Who may do what").nth(1).expect("README's matrix").split("\n## ").next().unwrap();
    let rows: Vec<Vec<&str>> = section
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| |"))
        .map(|l| l.trim_matches('|').split('|').map(str::trim).collect())
        .collect();
    // Each row of the table, in order, and the permissions it stands for.
    let meaning = [
        vec![ReadPayments, ReadCatalog, ReadCustomers, ReadMails],
        vec![ChangePayments],
        vec![ChangeCatalog],
        vec![ChangeCustomers],
        vec![Export],
        vec![ApiKeys],
        vec![ReadWebhooks],
        vec![ChangeWebhooks],
        vec![ReadProcessor],
        vec![ChangeProcessor],
        vec![ChangeMails],
        vec![ChangeShop],
        vec![ReadUsers],
        vec![ChangeUsers],
        vec![ShopSecurity],
        vec![ReadAudit],
        vec![ReadBooks],
        vec![ChangeBooks],
        vec![ReadRevenue],
        vec![Own],
    ];
    assert_eq!(rows.len(), meaning.len(), "{rows:?}");
    let covered: Vec<_> = meaning.iter().flatten().copied().collect();
    for (permission, _) in paydesk::domain::access::MATRIX {
        assert!(covered.contains(permission), "README's matrix lacks {permission:?}");
    }
    for (row, permissions) in rows.iter().zip(&meaning) {
        for (column, role) in Role::ALL.iter().enumerate() {
            let shown = row[column + 1] == "✓";
            for p in permissions {
                assert_eq!(shown, role.can(*p), "README says {role} {} for \"{}\"", row[column + 1], row[0]);
            }
        }
    }
}

/// A shop with an owner, one user of each other role, and one object of each kind.
pub(super) struct Team {
    pub(super) owner: Merchant,
    pub(super) members: Vec<(Role, Merchant)>,
    pub(super) shop: Shop,
    pub(super) ids: Vec<(&'static str, String)>,
}

pub(super) async fn team(app: &TestApp) -> Team {
    let owner = sign_up(app, "Books", "owner@example.com").await;
    let shop = api_shop(&owner).await;
    crate::invoices::set_seller(app, &shop).await;
    let mut members = Vec::new();
    for role in &Role::ALL[1..] {
        let email = format!("{role}@example.com");
        members.push((*role, invite_as(app, &owner, &email, role.as_str()).await));
    }
    let product = app.product(&shop, &test_product_body()).await;
    let payment_page = app.pay(product["id"].as_str().unwrap(), cards::SUCCESS, &[("email", "ann@example.com")]).await;
    assert!(payment_page.status.is_success() || payment_page.status.is_redirection());
    let (_, payments) = app.get(&shop, "/payments").await;
    let (_, plan) = app.post(&shop, "/plans", &plan_body()).await;
    let (_, customer) = app.post(&shop, "/customers", &customer_body()).await;
    let (_, sub) =
        app.post(&shop, "/subscriptions", &json!({"plan_id": plan["id"], "customer_id": customer["id"]})).await;
    let (_, hook) = app
        .post(&shop, "/webhook_endpoints", &json!({"url": "https://merchant.example/hooks", "enabled_events": ["*"]}))
        .await;
    let (_, coupon) = app.post(&shop, "/coupons", &json!({"code": "TEN", "percent_off": 10, "test": true})).await;
    let owner_id = paydesk::db::users::by_email(&app.db, "owner@example.com").await.unwrap().unwrap().id;
    let paid = payments[0]["id"].as_str().unwrap();
    let (status, _) = app.post(&shop, &format!("/payments/{paid}/refund"), &json!({"amount": 100})).await;
    assert_eq!(status, StatusCode::CREATED);
    let (_, invoices) = app.get(&shop, "/invoices").await;
    let (_, notes) = app.get(&shop, "/credit_notes").await;
    let (_, keys) = app.get(&shop, "/api_keys").await;
    let id = |v: &Value| v["id"].as_str().unwrap_or_else(|| panic!("{v}")).to_string();
    for (name, v) in [
        ("payments", &payments),
        ("plan", &plan),
        ("customer", &customer),
        ("sub", &sub),
        ("hook", &hook),
        ("coupon", &coupon),
    ] {
        assert!(v.get("id").is_some() || v.get(0).is_some(), "{name}: {v}");
    }
    let ids = vec![
        ("payments", id(&payments[0])),
        ("products", id(&product)),
        ("plans", id(&plan)),
        ("customers", id(&customer)),
        ("subscriptions", id(&sub)),
        ("webhooks", id(&hook)),
        ("coupons", id(&coupon)),
        ("users", owner_id),
        ("invoices", id(&invoices[0])),
        ("credit_notes", id(&notes[0])),
        ("api_keys", id(&keys[0])),
    ];
    Team { owner, members, shop, ids }
}

/// A route's path with real ids in place of its parameters.
pub(super) fn concrete(path: &str, ids: &[(&str, String)]) -> String {
    let mut out = Vec::new();
    let mut previous = "";
    for segment in path.split('/') {
        out.push(match segment {
            "{id}" => {
                ids.iter().find(|(kind, _)| *kind == previous).map(|(_, id)| id.clone()).unwrap_or_else(|| "x".into())
            }
            "{kind}" => "renewal_failed".into(),
            s => s.to_string(),
        });
        previous = segment;
    }
    out.join("/")
}

/// What the API shows of the shop: it must not move while refused requests arrive.
async fn fingerprint(app: &TestApp, shop: &Shop) -> Vec<Value> {
    let mut seen = Vec::new();
    for path in [
        "/products",
        "/plans",
        "/customers",
        "/payments",
        "/subscriptions",
        "/webhook_endpoints",
        "/coupons",
        "/shop",
        "/shop/processor",
        "/refunds",
        "/events",
    ] {
        let (status, body) = app.get(shop, path).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        seen.push(body);
    }
    let users = paydesk::db::users::of_shop(&app.db, shop.id).await.unwrap();
    seen.push(json!(users.iter().map(|u| (u.email.clone(), u.role.as_str())).collect::<Vec<_>>()));
    seen
}

/// Fields that would change something on any form, were the request let through.
const EVERYTHING: &[(&str, &str)] = &[
    ("confirm", "yes"),
    ("role", "owner"),
    ("email", "mallory@example.com"),
    ("amount", "1.00"),
    ("when", "now"),
    ("name", "Taken over"),
    ("title", "Taken over"),
    ("url", "https://evil.example/hooks"),
    ("kind", "simulated"),
    ("notification_url", "https://evil.example/n"),
    ("language", "ru"),
    ("billing", "new_period"),
    ("coupon", "TEN"),
    ("enabled_events", "*"),
    ("current_password", PASSWORD),
    ("password", "another long password"),
    ("password_confirmation", "another long password"),
    ("required", "true"),
];

db_tests! {
    async fn every_role_is_refused_what_it_may_not_do_and_nothing_changes(app) {
        let t = team(&app).await;
        let before = fingerprint(&app, &t.shop).await;
        let mut refused = 0;
        for (role, m) in std::iter::once((Role::Owner, &t.owner)).chain(t.members.iter().map(|(r, m)| (*r, m))) {
            for (method, route, permission) in ROUTES {
                let path = concrete(route, &t.ids);
                if role.can(*permission) {
                    // Let through, the handler runs: with a stale form token, nothing changes.
                    let a = match *method {
                        "GET" => m.get(&path).await,
                        _ => m.post_raw(&path, &[("csrf", "stale")]).await,
                    };
                    if *method == "GET" {
                        assert_ne!(a.status, StatusCode::FORBIDDEN, "{role} {method} {route}: {}", a.html);
                    } else {
                        assert_eq!(a.status, StatusCode::FORBIDDEN, "{role} {method} {route}");
                        assert!(a.html.contains("The form has expired"), "{role} {method} {route} reached its handler");
                    }
                } else {
                    let a = match *method {
                        "GET" => m.get(&path).await,
                        _ => m.post(&path, EVERYTHING).await,
                    };
                    assert_eq!(a.status, StatusCode::FORBIDDEN, "{role} {method} {route} must be refused");
                    assert!(a.html.contains("Your role in this shop does not allow this."), "{role} {method} {route}");
                    refused += 1;
                }
            }
        }
        assert!(refused > 100, "only {refused} refusals");
        assert_eq!(fingerprint(&app, &t.shop).await, before, "a refused request changed something");
        // Each refusal is in the trail once, as its user's; the stale forms are not changes.
        use sea_orm::{ConnectionTrait, Statement};
        paydesk::db::audit::seal_all(&app.db).await.unwrap();
        let sql = format!("SELECT COUNT(*) AS n FROM audit_events WHERE shop_id = {} AND action = 'access.refused'", t.shop.id);
        let row = app.db.query_one(Statement::from_string(app.db.get_database_backend(), sql)).await.unwrap().unwrap();
        assert_eq!(row.try_get::<i64>("", "n").unwrap(), refused as i64, "one record per refusal");
        let (_, page) = app.get(&t.shop, "/audit_events?action=access.refused&limit=100").await;
        for record in page.as_array().unwrap() {
            assert_ne!(record["actor"]["role"], "owner", "the owner is refused nothing: {record}");
            assert_eq!((record["outcome"].as_str(), record["target_type"].as_str()), (Some("refused"), Some("route")));
            assert!(record["changes"][0]["after"].as_str().unwrap().starts_with("POST /dashboard") || record["changes"][0]["after"].as_str().unwrap().starts_with("GET /dashboard"), "{record}");
        }
        for (role, m) in &t.members {
            assert_eq!(m.get("/dashboard").await.status, StatusCode::OK, "{role} is still signed in");
        }
    }

    async fn pages_show_only_what_the_role_may_do(app) {
        let t = team(&app).await;
        let role = |r: Role| &t.members.iter().find(|(x, _)| *x == r).unwrap().1;
        let payment = &t.ids[0].1;
        let (support, analyst, developer) = (role(Role::Support), role(Role::Analyst), role(Role::Developer));

        // Support refunds, and sees no API key, webhooks or exports.
        let page = support.get(&format!("/dashboard/payments/{payment}")).await;
        assert!(page.html.contains("/refund\""), "support may refund");
        let settings = support.get("/dashboard/settings").await;
        assert!(!settings.html.contains("data-testid=\"shop-id\"") && !settings.html.contains("Rotate secret key"));
        assert!(settings.html.contains("data-testid=\"role\">(Support)"));
        assert!(!support.get("/dashboard").await.html.contains("href=\"/dashboard/webhooks\""), "no webhooks in the menu");
        assert!(!support.get("/dashboard/payments").await.html.contains("data-testid=\"export\""));
        let path = format!("/dashboard/payments/{payment}/refund");
        let ask = support.post(&path, &[("amount", "1.00")]).await;
        let once = hidden(&ask.html, "once").expect("the confirmation's token");
        let refund = support.post(&path, &[("amount", "1.00"), ("once", &once), ("confirm", "yes")]).await;
        assert_eq!(refund.status, StatusCode::SEE_OTHER, "{}", refund.html);
        let (_, refunds) = app.get(&t.shop, "/refunds").await;
        assert_eq!(refunds.as_array().unwrap().len(), 2, "support's refund was made, beside the one the team began with");

        // The analyst reads and exports, and is offered no form that changes anything.
        for path in [format!("/dashboard/payments/{payment}"), "/dashboard/products".into(), "/dashboard/customers".into(),
                     format!("/dashboard/subscriptions/{}", t.ids[4].1), "/dashboard/coupons".into(), "/dashboard/settings".into()] {
            let page = analyst.get(&path).await;
            assert_eq!(page.status, StatusCode::OK, "{path}");
            let forms = page.html.matches("<form method=\"post\"").count();
            let own = page.html.matches("action=\"/dashboard/logout\"").count() + page.html.matches("action=\"/dashboard/settings/language\"").count();
            assert_eq!(forms, own, "{path} offers the analyst a change");
            assert!(!page.html.contains("/new\"") && !page.html.contains("/edit\""), "{path}");
        }
        assert!(analyst.get("/dashboard/payments").await.html.contains("data-testid=\"export\""));

        // The developer has the key and the webhooks, not refunds or the team.
        assert!(developer.get("/dashboard/settings").await.html.contains("Rotate secret key"));
        assert!(!developer.get(&format!("/dashboard/payments/{payment}")).await.html.contains("/refund\""));
        assert!(!developer.get("/dashboard/settings").await.html.contains("href=\"/dashboard/settings/users\""));
        assert!(t.owner.get("/dashboard/settings").await.html.contains("href=\"/dashboard/settings/users\""));
    }

    async fn a_shop_always_keeps_an_owner_and_administrators_leave_owners_alone(app) {
        let owner = sign_up(&app, "Books", "owner@example.com").await;
        let users = |app: &TestApp| {
            let db = app.db.clone();
            async move {
                let shop_id = paydesk::db::users::by_email(&db, "owner@example.com").await.unwrap().unwrap().shop_id;
                paydesk::db::users::of_shop(&db, shop_id).await.unwrap()
            }
        };
        let id_of = |email: &str, all: &[paydesk::db::entities::users::Model]| {
            all.iter().find(|u| u.email == email).unwrap().id.clone()
        };
        let owner_id = id_of("owner@example.com", &users(&app).await);
        let alone = owner.post(&format!("/dashboard/settings/users/{owner_id}/role"), &[("role", "administrator")]).await;
        assert_eq!(alone.status, StatusCode::CONFLICT);
        assert!(alone.html.contains("The shop needs an owner who can sign in"));

        // An invited owner who has not joined does not count.
        let invited = owner.post("/dashboard/settings/users", &[("email", "later@example.com"), ("role", "owner")]).await;
        assert_eq!(invited.status, StatusCode::SEE_OTHER);
        assert_eq!(owner.post(&format!("/dashboard/settings/users/{owner_id}/role"), &[("role", "analyst")]).await.status,
                   StatusCode::CONFLICT);

        let admin = invite_as(&app, &owner, "admin@example.com", "administrator").await;
        let all = users(&app).await;
        assert_eq!(all.iter().find(|u| u.email == "admin@example.com").unwrap().role, Role::Administrator, "the invitation's role");
        // Administrators neither touch owners nor make them.
        let at_owner = admin.post(&format!("/dashboard/settings/users/{owner_id}/role"), &[("role", "analyst")]).await;
        assert_eq!(at_owner.status, StatusCode::FORBIDDEN);
        assert_eq!(admin.post(&format!("/dashboard/settings/users/{owner_id}/remove"), &[("confirm", "yes")]).await.status,
                   StatusCode::FORBIDDEN);
        let make_owner = admin.post("/dashboard/settings/users", &[("email", "boss@example.com"), ("role", "owner")]).await;
        assert_eq!(make_owner.status, StatusCode::UNPROCESSABLE_ENTITY);
        let team_page = admin.get("/dashboard/settings/users").await;
        assert!(!team_page.html.contains("<option value=\"owner\""), "no owner among the roles an administrator gives");
        let dev = invite_as(&app, &admin, "dev@example.com", "developer").await;
        let dev_id = id_of("dev@example.com", &users(&app).await);
        assert_eq!(admin.post(&format!("/dashboard/settings/users/{dev_id}/role"), &[("role", "support")]).await.status,
                   StatusCode::SEE_OTHER);
        assert!(dev.get("/dashboard").await.html.contains("data-testid=\"role\">(Support)"), "a new role applies at once");
        assert_eq!(dev.get("/dashboard/settings/key").await.status, StatusCode::FORBIDDEN);

        // With a second owner who has joined, the first may step down.
        let second = invite_as(&app, &owner, "second@example.com", "owner").await;
        let second_id = id_of("second@example.com", &users(&app).await);
        let stepped = owner.post(&format!("/dashboard/settings/users/{owner_id}/role"), &[("role", "administrator")]).await;
        assert_eq!((stepped.status, stepped.location.as_str()), (StatusCode::SEE_OTHER, "/dashboard/settings/users"));
        assert_eq!(owner.post(&format!("/dashboard/settings/users/{second_id}/remove"), &[("confirm", "yes")]).await.status,
                   StatusCode::FORBIDDEN, "no longer an owner: cannot remove one");
        assert_eq!(second.post(&format!("/dashboard/settings/users/{second_id}/role"), &[("role", "support")]).await.status,
                   StatusCode::CONFLICT, "the last owner stays");
    }

    async fn owners_demoting_and_removing_each_other_at_once_leave_one_owner(app) {
        let first = sign_up(&app, "Books", "first@example.com").await;
        let shop_id = paydesk::db::users::by_email(&app.db, "first@example.com").await.unwrap().unwrap().shop_id;
        let second = invite_as(&app, &first, "second@example.com", "owner").await;
        let mut pair = ((first, "first@example.com".to_string()), (second, "second@example.com".to_string()));
        for round in 0..6 {
            let ((a, a_email), (b, b_email)) = pair;
            let all = paydesk::db::users::of_shop(&app.db, shop_id).await.unwrap();
            assert_eq!(all.iter().filter(|u| u.role == Role::Owner).count(), 2, "round {round}");
            let id = |email: &str| all.iter().find(|u| u.email == email).unwrap().id.clone();
            let (a_id, b_id) = (id(&a_email), id(&b_email));
            let (verb, fields): (&str, &[(&str, &str)]) =
                if round % 2 == 0 { ("role", &[("role", "analyst")]) } else { ("remove", &[("confirm", "yes")]) };
            let (a_path, b_path) =
                (format!("/dashboard/settings/users/{b_id}/{verb}"), format!("/dashboard/settings/users/{a_id}/{verb}"));
            let (by_a, by_b) = tokio::join!(a.post(&a_path, fields), b.post(&b_path, fields));
            // The loser is refused, or finds itself signed out (removed a moment before).
            let won = |a: &Answer| a.location == "/dashboard/settings/users";
            let done = [&by_a, &by_b].iter().filter(|a| won(a)).count();
            assert_eq!(done, 1, "round {round}: one change wins ({} and {})", by_a.status, by_b.status);
            let after = paydesk::db::users::of_shop(&app.db, shop_id).await.unwrap();
            assert_eq!(after.iter().filter(|u| u.role == Role::Owner).count(), 1, "round {round}: exactly one owner");
            // The owner left makes a second owner again for the next round, and clears the rest.
            let winner = if won(&by_a) { (a, a_email) } else { (b, b_email) };
            for u in after.iter().filter(|u| u.role != Role::Owner) {
                let gone = winner.0.post(&format!("/dashboard/settings/users/{}/remove", u.id), &[("confirm", "yes")]).await;
                assert_eq!(gone.status, StatusCode::SEE_OTHER);
            }
            let email = format!("owner{round}@example.com");
            let newcomer = invite_as(&app, &winner.0, &email, "owner").await;
            pair = (winner, (newcomer, email));
        }
    }
}
