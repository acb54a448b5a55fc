//! Developers → API keys: making a restricted key and using it, restricting, rolling with an
//! overlap and revoking, each after the password again; who may see the page.

use reqwest::StatusCode;

use super::*;

/// The secret a key's page shows once.
fn secret_of(page: &Answer) -> String {
    let at = page.html.find("data-testid=\"api-key-secret\"").expect("the secret, shown once");
    page.html[..at].rsplit("value=\"").next().unwrap().split('"').next().unwrap().to_string()
}

/// The id of the key the secret page links to.
fn key_of(page: &Answer) -> String {
    page.html
        .split("href=\"/dashboard/api_keys/key_")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .map(|id| format!("key_{id}"))
        .unwrap()
}

db_tests! {
    async fn a_merchant_makes_a_restricted_key_restricts_rolls_and_revokes_it(app) {
        let m = sign_up(&app, "Books", "ann@example.com").await;
        let shop = api_shop(&m).await;
        let list = m.get("/dashboard/api_keys").await;
        assert_eq!(list.status, StatusCode::OK);
        assert!(list.html.contains("href=\"/dashboard/api_keys\" aria-current=\"page\""), "in the navigation");
        assert!(list.html.contains("Secret key") && list.html.contains("standard key"), "the standard key");
        // A network that is not one: refused, named, nothing made.
        let refused = m.post("/dashboard/api_keys", &[("name", "Reporting"), ("access", "all"), ("networks", "203.0.113.7/24"), ("lifetime", "0")]).await;
        assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(refused.html.contains("`203.0.113.7/24` is not an address or a network"), "{}", refused.html);
        let fields = [
            ("name", "Reporting"), ("access", "restricted"), ("p_payments", "read"), ("p_products", "none"),
            ("networks", "127.0.0.1\n2001:db8::/32"), ("lifetime", "30"),
        ];
        let made = m.post("/dashboard/api_keys", &fields).await;
        assert_eq!(made.status, StatusCode::CREATED, "{}", made.html);
        let reporting = Shop { id: shop.id, secret: secret_of(&made) };
        let id = key_of(&made);
        assert_eq!(app.get(&reporting, "/payments").await.0, StatusCode::OK);
        let (status, body) = app.post(&reporting, "/products", &product_body()).await;
        assert_eq!((status, body["message"].as_str()), (StatusCode::FORBIDDEN, Some("This API key lacks the permission `products:write`: it may not make this request")));
        let page = m.get(&format!("/dashboard/api_keys/{id}")).await;
        assert!(page.html.contains("payments: read") && page.html.contains("127.0.0.1/32"), "{}", page.html);
        assert!(!page.html.contains(&reporting.secret), "the secret is shown once only");
        // Given products to write.
        let saved = m.post(&format!("/dashboard/api_keys/{id}"), &[("name", "Reporting"), ("access", "restricted"), ("p_payments", "read"), ("p_products", "write"), ("networks", "127.0.0.1")]).await;
        assert_eq!(saved.status, StatusCode::SEE_OTHER, "{}", saved.html);
        assert_eq!(app.post(&reporting, "/products", &product_body()).await.0, StatusCode::CREATED);
        // A time the form does not offer: refused, nothing rolled; a lifetime likewise.
        let odd = m.post(&format!("/dashboard/api_keys/{id}/roll"), &[("overlap", "99999999999999")]).await;
        assert_eq!(odd.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", odd.html);
        let (_, unrolled) = app.get(&shop, &format!("/api_keys/{id}")).await;
        assert!(unrolled["rolled_to"].is_null());
        let odd = m.post("/dashboard/api_keys", &[("name", "Odd"), ("access", "all"), ("lifetime", "400")]).await;
        assert_eq!(odd.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", odd.html);
        // Rolled with a day's overlap: both work; the successor has the same access.
        let rolled = m.post(&format!("/dashboard/api_keys/{id}/roll"), &[("overlap", "24")]).await;
        assert_eq!(rolled.status, StatusCode::CREATED, "{}", rolled.html);
        let successor = Shop { id: shop.id, secret: secret_of(&rolled) };
        let successor_id = key_of(&rolled);
        assert_eq!(app.get(&reporting, "/payments").await.0, StatusCode::OK);
        assert_eq!(app.get(&successor, "/payments").await.0, StatusCode::OK);
        assert_eq!(app.get(&successor, "/customers").await.0, StatusCode::FORBIDDEN);
        // A key rolls once: the second roll says so on the key's page.
        let again = m.post(&format!("/dashboard/api_keys/{id}/roll"), &[("overlap", "0")]).await;
        assert_eq!(again.status, StatusCode::SEE_OTHER);
        assert!(m.get(&again.location).await.html.contains("This key was rolled already: roll its successor instead."));
        // Revoked after a confirmation: refused at once.
        let asked = m.post(&format!("/dashboard/api_keys/{successor_id}/revoke"), &[]).await;
        assert!(asked.html.contains("Tick the box to confirm."), "{}", asked.html);
        assert_eq!(app.get(&successor, "/payments").await.0, StatusCode::OK, "nothing revoked while asked");
        let revoked = m.post(&format!("/dashboard/api_keys/{successor_id}/revoke"), &[("confirm", "yes")]).await;
        assert_eq!(revoked.status, StatusCode::SEE_OTHER);
        assert_eq!(app.get(&successor, "/payments").await.0, StatusCode::UNAUTHORIZED);
        // The trail names the user for each change, and holds no secret.
        let (_, trail) = app.get(&shop, "/audit_events?limit=100").await;
        let text = trail.to_string();
        for action in ["api_key.created", "api_key.updated", "api_key.rolled", "api_key.revoked"] {
            let record = trail.as_array().unwrap().iter().find(|r| r["action"] == action).unwrap_or_else(|| panic!("{action}"));
            assert_eq!(record["actor"]["name"], "ann@example.com", "{action}");
        }
        assert!(!text.contains(&reporting.secret) && !text.contains(&successor.secret));
        let list = m.get("/dashboard/api_keys").await;
        assert!(list.html.contains("Which keys made the last requests"));
    }

    async fn only_roles_with_the_api_keys_see_them(app) {
        let m = sign_up(&app, "Books", "ann@example.com").await;
        let support = super::accounts::invite_as(&app, &m, "sue@example.com", "support").await;
        assert_eq!(support.get("/dashboard/api_keys").await.status, StatusCode::FORBIDDEN);
        let refused = support.post("/dashboard/api_keys", &[("name", "Mine"), ("access", "all")]).await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN);
        assert!(!support.get("/dashboard").await.html.contains("href=\"/dashboard/api_keys\""));
        let developer = super::accounts::invite_as(&app, &m, "dev@example.com", "developer").await;
        assert_eq!(developer.get("/dashboard/api_keys").await.status, StatusCode::OK);
    }
}
