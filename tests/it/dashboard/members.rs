//! What the team's pages say: a change the shop's rules refuse told on the users page, the
//! shop and the role an invitation is for on both its pages, and a session's idle time in
//! the words of its setting.

use reqwest::StatusCode;

use super::*;
use crate::helpers::*;

/// The id of the user with `email`.
async fn id_of(app: &TestApp, email: &str) -> String {
    paydesk::db::users::by_email(&app.db, email).await.unwrap().unwrap().id
}

db_tests! {
    async fn the_last_owners_refusal_is_said_on_the_users_page(app) {
        let owner = sign_up(&app, "Books", "owner@example.com").await;
        let owner_id = id_of(&app, "owner@example.com").await;
        let alone = owner.post(&format!("/dashboard/settings/users/{owner_id}/role"), &[("role", "administrator")]).await;
        assert_eq!(alone.status, StatusCode::CONFLICT);
        assert!(alone.html.contains("<h1>Users and roles</h1>") && alone.html.contains("<nav"), "the users page: {}", alone.html);
        let said = "<div class=\"alert\" role=\"alert\" data-testid=\"refused\">The shop needs an owner who can sign in: make another user owner first.</div>";
        assert!(alone.html.contains(said), "{}", alone.html);
        assert!(alone.html.contains("data-testid=\"member\""), "with the users listed");
        let user = paydesk::db::users::by_email(&app.db, "owner@example.com").await.unwrap().unwrap();
        assert_eq!(user.role, paydesk::domain::access::Role::Owner, "nothing changed");

        let yourself = owner.post(&format!("/dashboard/settings/users/{owner_id}/remove"), &[("confirm", "yes")]).await;
        assert_eq!(yourself.status, StatusCode::CONFLICT);
        assert!(yourself.html.contains("data-testid=\"refused\">You cannot remove yourself; another user of the shop can</div>"), "{}", yourself.html);

        owner.post("/dashboard/settings/language", &[("language", "ru")]).await;
        let ru = owner.post(&format!("/dashboard/settings/users/{owner_id}/role"), &[("role", "analyst")]).await;
        assert_eq!(ru.status, StatusCode::CONFLICT);
        assert!(ru.html.contains("<h1>Пользователи и роли</h1>") && ru.html.contains("У магазина должен остаться владелец"), "{}", ru.html);
    }

    async fn both_pages_of_an_invitation_name_the_shop_and_the_role(app) {
        let owner = sign_up(&app, "Corner Books", "owner@example.com").await;
        let invited = owner.post("/dashboard/settings/users", &[("email", "sam@example.com"), ("role", "support")]).await;
        assert_eq!(invited.location, "/dashboard/settings/invitation");
        let page = owner.get("/dashboard/settings/invitation").await;
        assert!(page.html.contains("<p data-testid=\"invited\">sam@example.com joins Corner Books as Support.</p>"), "{}", page.html);
        let marker = "data-testid=\"invitation-link\"";
        let at = page.html.find(marker).unwrap();
        let link = page.html[..at].rsplit("value=\"").next().unwrap().split('"').next().unwrap().to_string();

        let opened = browser().get(&link).send().await.unwrap().text().await.unwrap();
        assert!(opened.contains("<p data-testid=\"invited-to\">You were invited to Corner Books on paydesk as Support.</p>"), "{opened}");
        assert!(opened.contains("<strong>sam@example.com</strong>"), "{opened}");
        let ru = browser().get(&link).header("accept-language", "ru").send().await.unwrap().text().await.unwrap();
        assert!(ru.contains("Вас пригласили в магазин «Corner Books» на paydesk с ролью «Поддержка»."), "{ru}");

        // A refused password keeps saying it.
        let newcomer = Merchant { base: app.base.clone(), client: browser(), csrf: String::new() };
        let path = link.strip_prefix(&app.base).unwrap().to_string();
        let token = csrf_of(&newcomer.get(&path).await.html);
        let short = newcomer.post_raw(&path, &[("csrf", &token), ("password", "short"), ("password_confirmation", "short")]).await;
        assert_eq!(short.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert!(short.html.contains("You were invited to Corner Books on paydesk as Support."), "{}", short.html);

        owner.post("/dashboard/settings/language", &[("language", "ru")]).await;
        owner.post("/dashboard/settings/users", &[("email", "ann@example.com"), ("role", "analyst")]).await;
        let page = owner.get("/dashboard/settings/invitation").await;
        assert!(page.html.contains("ann@example.com присоединится к магазину «Corner Books» с ролью «Аналитик»."), "{}", page.html);
    }

    async fn the_sessions_page_says_the_idle_time_as_its_setting_does(app) {
        let owner = sign_up(&app, "Books", "owner@example.com").await;
        let page = owner.get("/dashboard/sessions").await;
        assert!(page.html.contains("Each session ends after 15 minutes without use, and 12 hours after its login."), "{}", page.html);
        let set = owner.post("/dashboard/settings/sessions", &[("idle_minutes", "480")]).await;
        assert_eq!(set.status, StatusCode::SEE_OTHER, "{}", set.html);
        let settings = owner.get("/dashboard/settings").await;
        assert!(settings.html.contains("<option value=\"480\" selected>8 hours</option>"), "{}", settings.html);
        let page = owner.get("/dashboard/sessions").await;
        assert!(page.html.contains("Each session ends after 8 hours without use, and 12 hours after its login."), "{}", page.html);
        // Tokens and times on the page may hold the digits 480 by chance; the words may not.
        assert!(!page.html.contains("480 minutes"), "no minutes where the setting says hours");
        owner.post("/dashboard/settings/language", &[("language", "ru")]).await;
        let ru = owner.get("/dashboard/sessions").await;
        assert!(ru.html.contains("Сеанс без действий завершается через 8 часов"), "{}", ru.html);
    }
}
