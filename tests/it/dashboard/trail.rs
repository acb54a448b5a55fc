//! What the audit trail records beyond security: every change to the catalogue, customers,
//! subscriptions and payments made by the API key, a dashboard user or a subscriber on their
//! page, each once, by whom, linked to the event it caused; the billing engine's own work
//! stays in the event log alone.

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::*;
use crate::mails::subscribe_as;
use crate::portal::{Visitor, minted, open};
use crate::subscriptions::{advance, clock, plan};

async fn records(app: &TestApp, shop: &Shop) -> Vec<Value> {
    let (status, page) = app.get(shop, "/audit_events?limit=1000").await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let mut all = page.as_array().unwrap().clone();
    all.reverse();
    all
}

/// The one record of `action`.
fn one<'a>(all: &'a [Value], action: &str) -> &'a Value {
    let found: Vec<&Value> = all.iter().filter(|r| r["action"] == action).collect();
    assert_eq!(found.len(), 1, "{action}: {found:?}");
    found[0]
}

fn change<'a>(record: &'a Value, field: &str) -> (&'a Value, &'a Value) {
    let c = record["changes"].as_array().unwrap().iter().find(|c| c["field"] == field);
    let c = c.unwrap_or_else(|| panic!("no {field} in {record}"));
    (&c["before"], &c["after"])
}

db_tests! {
    async fn every_change_by_the_key_a_user_or_a_subscriber_is_recorded_once_and_the_engines_is_not(app) {
        let ann = sign_up(&app, "Gym", "ann@example.com").await;
        let shop = api_shop(&ann).await;
        // By the API key.
        let product = app.product(&shop, &product_body()).await;
        let product_id = product["id"].as_str().unwrap().to_string();
        let renamed = app.put(&shop, &format!("/products/{product_id}"), &json!({"name": "Gift voucher"})).await;
        assert_eq!(renamed.0, StatusCode::NO_CONTENT, "{}", renamed.1);
        assert_eq!(app.post(&shop, &format!("/products/{product_id}/archive"), &json!({})).await.0, StatusCode::OK);
        let (status, coupon) = app.post(&shop, "/coupons", &json!({"code": "SAVE10", "percent_off": 10, "test": true})).await;
        assert_eq!(status, StatusCode::CREATED, "{coupon}");
        let coupon_id = coupon["id"].as_str().unwrap().to_string();
        assert_eq!(app.post(&shop, &format!("/coupons/{coupon_id}/archive"), &json!({})).await.0, StatusCode::OK);
        let (status, customer) = app.post(&shop, "/customers", &json!({"email": "bo@example.org", "ip": "2001:db8::7"})).await;
        assert_eq!(status, StatusCode::CREATED, "{customer}");
        let plan = plan(&app, &shop, json!({"title": "Membership"})).await;
        let clock = clock(&app, &shop, "2027-01-01T10:00:00Z").await;
        let sub = subscribe_as(&app, &shop, &plan, &clock, "cy@example.com", cards::SUCCESS).await;
        let sub_id = sub["id"].as_str().unwrap().to_string();
        // By a dashboard user.
        let archived = ann.post(&format!("/dashboard/plans/{plan}/archive"), &[("archive", "yes")]).await;
        assert_eq!(archived.status, StatusCode::SEE_OTHER);
        // By the subscriber, on their page.
        let mut cy = Visitor::default();
        let link = minted(&app, &shop, sub["customer"]["id"].as_str().unwrap()).await;
        open(&app, &mut cy, &link).await;
        let action = format!("/portal/subscriptions/{sub_id}/cancel");
        let done = cy.post(&app, &action, &[("when", "period_end"), ("reason", "too_expensive"), ("confirm", "yes")]).await;
        assert_eq!(done.status, StatusCode::SEE_OTHER, "{}", done.html);
        let kept = cy.post(&app, &format!("/portal/subscriptions/{sub_id}/keep"), &[]).await;
        assert_eq!(kept.status, StatusCode::SEE_OTHER);
        // The engine renews it: its own work, in the event log only.
        let (_, before) = app.get(&shop, "/audit_events?limit=1000").await;
        advance(&app, &shop, &clock, "2027-02-01T11:00:00Z").await;
        let (_, events) = app.get(&shop, "/events?limit=100&type=subscription.renewed").await;
        assert_eq!(events.as_array().unwrap().len(), 2, "the first period by the key's request, the second by the engine");

        let all = records(&app, &shop).await;
        let created = one(&all, "product.created");
        assert_eq!((created["actor"]["type"].as_str(), created["target_id"].as_str()), (Some("api_key"), Some(product_id.as_str())));
        assert_eq!(change(created, "name"), (&Value::Null, &json!("Gift card")));
        assert_eq!(change(created, "amount"), (&Value::Null, &json!(990)));
        let updated = one(&all, "product.updated");
        assert_eq!(change(updated, "name"), (&json!("Gift card"), &json!("Gift voucher")));
        assert_eq!(updated["changes"].as_array().unwrap().len(), 1, "only what changed: {updated}");
        let archived = one(&all, "product.archived");
        let (_, event) = change(archived, "event");
        assert!(event.as_str().unwrap().starts_with("evt_"), "linked to its event: {archived}");
        assert_eq!(app.get(&shop, &format!("/events/{}", event.as_str().unwrap())).await.0, StatusCode::OK);
        assert_eq!(change(one(&all, "coupon.created"), "code"), (&Value::Null, &json!("SAVE10")));
        assert_eq!(one(&all, "coupon.archived")["target_id"], coupon_id.as_str());
        // Bo by the API's customers, Cy with her subscription.
        let customers: Vec<&Value> = all.iter().filter(|r| r["action"] == "customer.created").collect();
        let emails: Vec<&Value> = customers.iter().map(|r| change(r, "email").1).collect();
        assert_eq!(emails, [&json!("bo@example.org"), &json!("cy@example.com")]);
        for action in ["plan.created", "test_clock.created", "subscription.created"] {
            assert_eq!(one(&all, action)["actor"]["type"], "api_key", "{action}");
        }
        let by_user = one(&all, "plan.archived");
        assert_eq!((by_user["actor"]["type"].as_str(), by_user["actor"]["name"].as_str()), (Some("user"), Some("ann@example.com")));
        assert_eq!(by_user["actor"]["role"], "owner");
        let by_subscriber = one(&all, "subscription.cancellation_requested");
        assert_eq!(by_subscriber["actor"]["type"], "subscriber");
        assert_eq!(by_subscriber["actor"]["id"], sub["customer"]["id"]);
        assert_eq!(one(&all, "subscription.cancellation_withdrawn")["actor"]["type"], "subscriber");
        assert_eq!(one(&all, "customer.portal_link_created")["actor"]["type"], "api_key", "the link to a customer's page");
        assert_eq!(one(&all, "subscription.renewed")["actor"]["type"], "api_key", "the engine's renewal is not in the trail");
        assert_eq!(all.len(), before.as_array().unwrap().len(), "the advance recorded nothing");
        // Every record still chains.
        let checked = paydesk::services::audit::verify_all(&app.db, Some(shop.id)).await.unwrap();
        assert!(checked.iter().all(|c| c.broken.is_none()), "the chain holds");
    }
}
